"""On x86-64 the CPU kernels are built for AVX2, FMA and F16C only; a CPU
without them runs ATen's own kernels for the same ops (csrc/cpu/isa.h).
GPUREDUCE_CPU_BASELINE=1 makes this CPU take that path: a subprocess so
pinned must give torch's own bits for every op and overload the engine
registers on the CPU, where this process's kernels (the engine's) give
their own, on full reductions, rows, columns and strided inputs of every
dtype. (The engine's own cases are test_cpu_kernels.py's.)"""
import os
import platform
import subprocess
import sys

import pytest
import torch

import reduce_op
from axes import assert_matches_torch

HERE = os.path.dirname(os.path.abspath(__file__))

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64") or sys.platform.startswith("win"),
                                reason="the AVX2-only CPU build is x86-64's (GCC or Clang)")

# Each case: (shape, dim, transpose the last two dims first): a full
# reduction past a leaf, rows, columns, a transposed input, two dims of three.
CASES = [((4099,), None, False), ((7, 300), 1, False), ((300, 7), 0, False), ((65, 513), 1, True),
         ((3, 40, 17), (0, 2), False)]
DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "bool", "int32", "int64", "complex64"]

# Every case's result from reduce_op and from torch, as bytes, and the
# names of the ops a sum called.
SCRIPT = r"""
import sys, torch, reduce_op
torch.manual_seed(11)
CASES, DTYPES = eval(sys.argv[1]), eval(sys.argv[2])
out = []
def bits(t):
    t = t.detach().reshape(-1)
    return t.to(torch.uint8) if t.dtype == torch.bool else t.view(torch.uint8)
def both(name, ours, theirs):
    out.append((name, bits(ours), bits(theirs)))
for dt in DTYPES:
    dtype = getattr(torch, dt)
    floating = dtype.is_floating_point
    for shape, dim, transpose in CASES:
        x = torch.randn(shape, dtype=torch.float64) * 50
        x = x.to(dtype) if floating or dtype.is_complex else x.round().to(dtype)
        if transpose:
            x = x.transpose(-1, -2)
        dims = tuple(range(x.dim())) if dim is None else dim if isinstance(dim, tuple) else (dim,)
        at = f"{dt} {shape} dim={dim} transposed={transpose}"
        both(f"sum {at}", reduce_op.sum(x, dim), torch.sum(x, dim) if dim is not None else torch.sum(x))
        into = torch.empty(torch.sum(x, dims).shape, dtype=torch.sum(x, dims).dtype)
        torch.ops.gpureduce.sum.IntList_out(x, list(dims), False, out=into)
        both(f"sum out= {at}", into, torch.sum(x, dims))
        both(f"prod {at}", torch.ops.gpureduce.prod(x), torch.prod(x))
        if not dtype.is_complex:
            both(f"amax {at}", reduce_op.amax(x, dims), torch.amax(x, dims))
            both(f"amin {at}", reduce_op.amin(x, dims), torch.amin(x, dims))
            both(f"max {at}", torch.ops.gpureduce.max(x), torch.max(x))
        if floating or dtype.is_complex:
            both(f"mean {at}", reduce_op.mean(x, dims), torch.mean(x, dims))
            both(f"logsumexp {at}", reduce_op.logsumexp(x, dims), torch.logsumexp(x, dims))
        if floating:
            both(f"nansum {at}", reduce_op.nansum(x, dims), torch.nansum(x, dims))
            both(f"var {at}", reduce_op.var(x, dims), torch.var(x, dims))
            s, m = torch.ops.gpureduce.std_mean.correction(x, list(dims), correction=0)
            ts, tm = torch.std_mean(x, dims, correction=0)
            both(f"std_mean std {at}", s, ts)
            both(f"std_mean mean {at}", m, tm)
            for ord in (1, 2, 3, float("inf"), 0):
                both(f"vector_norm ord={ord} {at}", reduce_op.vector_norm(x, ord, dims),
                     torch.linalg.vector_norm(x, ord, dims))
x = torch.randn(1000)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
    reduce_op.sum(x)
called = sorted({e.name for e in prof.events()})
torch.save((out, called), sys.argv[3])
"""


@pytest.fixture(scope="module")
def routes(tmp_path_factory):
    """The script's results with this CPU's kernels and pinned to a CPU
    without AVX2, the two subprocesses run at once."""
    started = {}
    for without_avx2 in (False, True):
        env = dict(os.environ)
        env.pop("GPUREDUCE_CPU_BASELINE", None)
        if without_avx2:
            env["GPUREDUCE_CPU_BASELINE"] = "1"
        path = str(tmp_path_factory.mktemp("routes") / "results.pt")
        proc = subprocess.Popen([sys.executable, "-c", SCRIPT, repr(CASES), repr(DTYPES), path], env=env,
                                cwd=os.path.dirname(HERE), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        started[without_avx2] = (path, proc)
    results = {}
    for without_avx2, (path, proc) in started.items():
        output, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, output
        results[without_avx2] = torch.load(path)
    return results


@pytest.mark.slow
def test_cpu_without_avx2_gives_torchs_bits(routes):
    results, called = routes[True]
    assert len(results) > 5 * len(CASES) * len(DTYPES)
    for name, ours, theirs in results:
        assert torch.equal(ours, theirs), name
    assert "gpureduce::sum" in called and "aten::sum" in called, called


@pytest.mark.slow
@pytest.mark.skipif(torch.backends.cpu.get_cpu_capability() == "DEFAULT", reason="this CPU has no AVX2")
def test_cpu_with_avx2_runs_the_engine(routes):
    # The same script, this CPU's own kernels: a sum is the engine's, not
    # aten::sum, and the float results are its own bits, which differ from
    # torch's in some cases (another order of adds), so the comparison
    # above is one that a missing route would fail.
    results, called = routes[False]
    assert "gpureduce::sum" in called and "aten::sum" not in called, called
    differ = [name for name, ours, theirs in results if not torch.equal(ours, theirs)]
    assert any(name.startswith("sum float32") for name in differ), differ[:10]


def test_results_match_torch():
    # The in-process build (AVX2 where the CPU has it) against torch.
    g = torch.Generator().manual_seed(3)
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.float64):
        for n in (1, 7, 8, 9, 255, 256, 257, 1000, 65537):
            x = torch.randn(n, generator=g).to(dtype)
            assert_matches_torch(reduce_op.sum(x), x, None, False)
        x = torch.randn(33, 70, generator=g).to(dtype)
        for dim in (0, 1):
            assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
            assert_matches_torch(reduce_op.sum(x.t(), dim), x.t(), dim, False)
