"""The CPU kernels' two builds (baseline x86-64, and AVX2 with FMA and F16C
where the CPU has them) reduce in the same order: a subprocess pinned to the
baseline build gives the same bits as this process, for every dtype the
kernels read, at sizes around the leaf, lane and vector widths, dense and
strided, rows and columns. Except where the AVX2 build fuses a multiply and
an add (FMA) that the baseline rounds twice: var's deviations, the squares
of vector_norm's ord 2 and logsumexp's exp; those agree to within float
rounding (torch.testing.assert_close)."""
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
def bits(t):  # compared bit for bit
    return True, t.reshape(-1).to(torch.uint8) if t.dtype == torch.bool else t.reshape(-1).view(torch.uint8)
def values(t):  # fused multiply-adds in the AVX2 build: compared as close
    return False, t.reshape(-1).clone()
for dt in DTYPES:
    dtype = getattr(torch, dt)
    for shape, dim, transpose in CASES:
        x = (torch.randn(shape, dtype=torch.float64) * 50)
        x = x.to(dtype) if dtype.is_floating_point or dtype.is_complex else x.round().to(dtype)
        if transpose:
            x = x.transpose(-1, -2)
        at = f"{dt} {shape} dim={dim} transposed={transpose}"
        out.append((f"sum {at}", bits(reduce_op.sum(x, dim))))
        out.append((f"prod {at}", bits(torch.ops.gpureduce.prod(x.to(torch.float64) if dtype == torch.bool else x))))
        # The rest of the family, where torch defines it for the dtype.
        dims = dim if dim is not None else tuple(range(x.dim()))
        if not dtype.is_complex:
            out.append((f"amax {at}", bits(reduce_op.amax(x, dims))))
        if dtype.is_floating_point or dtype.is_complex:
            out.append((f"logsumexp {at}", values(reduce_op.logsumexp(x, dims))))
        if dtype.is_floating_point:
            out.append((f"nansum {at}", bits(reduce_op.nansum(x, dims))))
            out.append((f"var {at}", values(reduce_op.var(x, dims))))
            for ord in (1, float("inf")):
                out.append((f"vector_norm ord={ord} {at}", bits(reduce_op.vector_norm(x, ord, dims))))
            out.append((f"vector_norm ord=2 {at}", values(reduce_op.vector_norm(x, 2, dims))))
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
    assert [name for name, _ in best] == [name for name, _ in baseline]
    assert len(best) > 2 * len(CASES) * len(DTYPES)
    for (name, (exact, a)), (_, (_, b)) in zip(best, baseline):
        if exact:
            assert torch.equal(a, b), name
        else:
            torch.testing.assert_close(a, b, equal_nan=True, msg=name)


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
