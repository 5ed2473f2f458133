"""The CPU kernels' two builds (baseline x86-64, and AVX2 with FMA and F16C
where the CPU has them) sum in the same order: a subprocess pinned to the
baseline build gives the same bits as this process, for every dtype the
kernels read, at sizes around the leaf, lane and vector widths, dense and
strided, rows and columns."""
import os
import subprocess
import sys

import torch

import reduce_op
from axes import assert_matches_torch

HERE = os.path.dirname(os.path.abspath(__file__))

# Each case: (shape, dim, transpose the last two dims first).
CASES = [((1,), None, False), ((15,), None, False), ((33,), None, False), ((255,), None, False),
         ((257,), None, False), ((4099,), None, False), ((100003,), None, False), ((7, 300), 1, False),
         ((300, 7), 0, False), ((65, 513), 0, False), ((513, 65), 1, True), ((3, 40, 17), (0, 2), False),
         ((1025,), None, False), ((32769,), None, False), ((3, 1030), 1, False), ((300, 5), 0, False),
         ((300, 12), 0, False), ((4100, 3), 0, False), ((3, 1, 9), 1, False), ((700, 5, 2), (0, 2), False),
         ((40000, 3, 3), (0, 2), False)]
DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "bool", "int16", "int32", "int64",
          "complex64"]

SCRIPT = r"""
import sys, torch, reduce_op
torch.manual_seed(11)
CASES, DTYPES = eval(sys.argv[1]), eval(sys.argv[2])
out = []
for dt in DTYPES:
    dtype = getattr(torch, dt)
    for shape, dim, transpose in CASES:
        x = (torch.randn(shape, dtype=torch.float64) * 50)
        x = x.to(dtype) if dtype.is_floating_point or dtype.is_complex else x.round().to(dtype)
        if transpose:
            x = x.transpose(-1, -2)
        s = reduce_op.sum(x, dim)
        out.append(s.reshape(-1).view(torch.uint8) if s.dtype != torch.bool else s.reshape(-1).to(torch.uint8))
        p = torch.ops.gpureduce.prod(x.to(torch.float64) if dtype == torch.bool else x)
        out.append(p.reshape(-1).view(torch.uint8))
torch.save(out, sys.argv[3])
"""


def _run(tmp_path, name, baseline):
    env = dict(os.environ)
    if baseline:
        env["GPUREDUCE_CPU_BASELINE"] = "1"
    else:
        env.pop("GPUREDUCE_CPU_BASELINE", None)
    path = str(tmp_path / f"{name}.pt")
    subprocess.run([sys.executable, "-c", SCRIPT, repr(CASES), repr(DTYPES), path], check=True, env=env,
                   cwd=os.path.dirname(HERE))
    return torch.load(path)


def test_baseline_and_avx2_builds_give_the_same_bits(tmp_path):
    best = _run(tmp_path, "best", baseline=False)
    baseline = _run(tmp_path, "baseline", baseline=True)
    assert len(best) == len(baseline) == 2 * len(CASES) * len(DTYPES)
    for i, (a, b) in enumerate(zip(best, baseline)):
        assert torch.equal(a, b), (i, DTYPES[i // (2 * len(CASES))], CASES[(i // 2) % len(CASES)])


def test_results_match_torch():
    # The in-process build (AVX2 where the CPU has it) against torch; the
    # subprocess comparison above carries the same answers to the baseline.
    g = torch.Generator().manual_seed(3)
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.float64):
        for n in (1, 7, 8, 9, 255, 256, 257, 1000, 65537):
            x = torch.randn(n, generator=g).to(dtype)
            assert_matches_torch(reduce_op.sum(x), x, None, False)
        x = torch.randn(33, 70, generator=g).to(dtype)
        for dim in (0, 1):
            assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
            assert_matches_torch(reduce_op.sum(x.t(), dim), x.t(), dim, False)
