"""Test axes shared by every test module (dtypes, shapes, layouts, devices),
and the comparison every test uses: against torch.sum for dtype, shape and
integer values, and against a float64 reference with a dtype-aware bound."""
from __future__ import annotations

import contextlib
import itertools
import os
import sys
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
from random_cases import apply_view, random_data, sample_cases, sum_args  # noqa: E402

HAS_CUDA = torch.cuda.is_available()
DEVICES = ["cpu"] + (["cuda"] if HAS_CUDA else [])

DTYPES = [
    torch.float32, torch.float64, torch.float16, torch.bfloat16,
    torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool,
    torch.complex64,
]

# 0-d, one element, odd sizes, empty, up to 4-D, and sizes around the warp and
# 16-byte vector widths.
SHAPES = [(), (1,), (7,), (0,), (33,), (257,), (3, 0, 2), (33, 65), (5, 1, 17), (2, 3, 4, 5), (4, 131)]

LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]

# Extra dtype= arguments: (input dtype, requested dtype).
DTYPE_ARGS = [
    (torch.float16, torch.float32), (torch.bfloat16, torch.float32), (torch.float32, torch.float64),
    (torch.int8, torch.int32), (torch.int32, torch.float32), (torch.int64, torch.bool),
    (torch.uint8, torch.int16), (torch.float32, torch.int32),
]


def random_tensor(shape: Sequence[int], dtype: torch.dtype, device: str, gen: torch.Generator) -> torch.Tensor:
    """Fresh random data, never zeros: normal floats, small signed ints."""
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if dtype.is_complex:
        return torch.randn(shape, dtype=dtype, generator=gen)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(dtype)
    lo = 0 if dtype == torch.uint8 else -100
    # (drawn in dtype: the same values as int64 draws cast, a third of the
    # time for the CPU sweeps' inputs of tens of millions of elements)
    return torch.randint(lo, 100, shape, generator=gen, dtype=dtype)


def make_layout(shape: Sequence[int], dtype: torch.dtype, layout: str, device: str,
                gen: torch.Generator) -> torch.Tensor:
    """A tensor of `shape` whose memory layout is `layout`."""
    shape = tuple(shape)
    if layout == "contiguous" or len(shape) == 0:
        return random_tensor(shape, dtype, device, gen).to(device)
    if layout == "transposed":
        base = random_tensor(shape[::-1], dtype, device, gen).to(device)
        return base.permute(*reversed(range(len(shape))))
    if layout == "sliced":
        big = tuple(s * 2 + 1 for s in shape)
        base = random_tensor(big, dtype, device, gen).to(device)
        idx = tuple(slice(1, 1 + 2 * s, 2) for s in shape)
        return base[idx]
    if layout == "expanded":
        # Dim 0 is broadcast from size 1 (stride 0).
        small = (1,) + shape[1:]
        return random_tensor(small, dtype, device, gen).to(device).expand(*shape)
    raise ValueError(layout)


def dim_patterns(ndim: int) -> Iterator[Optional[object]]:
    """None, [], every single dim (also negative), and every subset of dims."""
    yield None
    yield []
    for d in range(ndim):
        yield d
        yield d - ndim
    for r in range(2, ndim + 1):
        for combo in itertools.combinations(range(ndim), r):
            yield list(combo)
    if ndim == 0:
        yield 0
        yield -1


def reduced_dims(ndim: int, dim) -> List[int]:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({d % ndim for d in dims}) if ndim else []


def bound_scale(dtype: torch.dtype) -> float:
    """Allowed |error| per unit of sum(|x|): a few roundings of the output dtype
    (float32 for the accumulators of 16-bit floats)."""
    if dtype in (torch.float16, torch.bfloat16):
        return 2 * torch.finfo(dtype).eps
    if dtype in (torch.float32, torch.complex64):
        return 64 * torch.finfo(torch.float32).eps
    if dtype in (torch.float64, torch.complex128):
        return 64 * torch.finfo(torch.float64).eps
    return 0.0


def cuda_kernel_launches(fn) -> list:
    """(name, grid, block) of each CUDA kernel that fn launches, from the
    profiler's trace: its kernel events, not the runtime calls that launched them."""
    import json
    import tempfile

    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    return [(e["name"], e["args"].get("grid"), e["args"].get("block")) for e in events if e.get("cat") == "kernel"]


def cuda_kernels_run(fn) -> set:
    """Names of the CUDA kernels that fn launches."""
    return {name for name, _, _ in cuda_kernel_launches(fn)}


def assert_matches_torch(ours: torch.Tensor, x: torch.Tensor, dim, keepdim: bool,
                         dtype: Optional[torch.dtype] = None) -> None:
    """ours must equal torch.sum(x, dim, keepdim, dtype=dtype) in dtype, shape,
    device and (integers) value; floats must lie within a float64-derived bound."""
    def torch_sum(t):
        if dim is None and not keepdim:
            return torch.sum(t, dtype=dtype)
        return torch.sum(t, dim if dim is not None else [], keepdim, dtype=dtype)

    # torch's dtype and shape from a meta copy (no data): a float result is
    # checked against the float64 sum below, and torch's own sum of a large
    # input was a quarter of the CPU sweeps' time.
    ref = torch_sum(x.to("meta"))
    assert ours.dtype == ref.dtype, (ours.dtype, ref.dtype)
    assert ours.shape == ref.shape, (ours.shape, ref.shape)
    assert ours.device == x.device
    assert ours.is_contiguous()
    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        ref = torch_sum(x)
        assert torch.equal(ours.cpu(), ref.cpu()), (ours, ref)
        return
    dims = reduced_dims(x.dim(), dim)
    staged = x.to(ref.dtype) if x.dtype != ref.dtype else x
    wide = torch.complex128 if ref.dtype.is_complex else torch.float64
    exact = staged.cpu().to(wide)
    ref64 = exact.sum(dims, keepdim=True) if dims else exact
    # |x| in place where exact is a copy of ours (a fresh large tensor's pages
    # cost more than the sum over it)
    absolute = exact.abs_() if exact is not x and dims and not exact.is_complex() else exact.abs()
    mag = absolute.sum(dims, keepdim=True) if dims else absolute
    if not keepdim:
        ref64 = ref64.reshape(ref.shape)
        mag = mag.reshape(ref.shape)
    err = (ours.cpu().to(wide) - ref64).abs()
    allowed = bound_scale(ref.dtype) * mag.real + torch.finfo(torch.float32).tiny
    if ref.dtype in (torch.float16, torch.bfloat16):
        allowed = allowed + ref64.abs() * torch.finfo(ref.dtype).eps  # final rounding
    nan_ok = torch.isnan(ref64) & torch.isnan(ours.cpu().to(wide))
    bad = (err > allowed) & ~nan_ok
    assert not bad.any(), f"max error {err.max().item():.3e}, allowed {allowed.min().item():.3e}"


# ------------------------------------------------------------ op table ----
# Every gpureduce op beside the torch function it must match, the inputs that
# suit it, and how close a floating result must be (relative to the result's
# scale, which the op gives: sum(|x|) for sum, |prod(x)| for prod).

def near_one(shape: Sequence[int], dtype: torch.dtype, layout: str, device: str,
             gen: torch.Generator) -> torch.Tensor:
    """Factors near 1 (floats in [0.5, 1.5), ints in [-2, 2], bools mostly
    True), so that products neither overflow nor vanish before ints wrap."""
    x = make_layout(shape, torch.float64, layout, device, gen)
    if dtype.is_floating_point or dtype.is_complex:
        return (x.remainder(1.0) + 0.5).to(dtype)
    if dtype == torch.bool:
        return x > -1.5
    return x.mul(2).round().clamp(-2, 2).to(dtype)


class OpCase:
    """One op: `ours_all(x)` / `ours_dim(x, d, keepdim)` against
    `ref_all(x)` / `ref_dim(x, d, keepdim)`, over `dtypes`, with inputs
    from `data(shape, dtype, layout, device, gen)`, and `scale(x, d, keepdim)`
    the magnitude a rounding error is measured against (float64)."""

    def __init__(self, name, ours_all, ours_dim, ref_all, ref_dim, dtypes, data, scale):
        self.name, self.ours_all, self.ours_dim = name, ours_all, ours_dim
        self.ref_all, self.ref_dim, self.dtypes, self.data, self.scale = ref_all, ref_dim, dtypes, data, scale


def _abs_reduce(fn, per_factor: bool = False):
    """The op's scale: fn over |x| in float64, times the number of elements
    reduced where every one of them rounds the result once more (prod)."""
    def scale(x, d=None, keepdim=False):
        a = x.cpu().to(torch.complex128 if x.dtype.is_complex else torch.float64).abs()
        out = fn(a) if d is None else fn(a, d, keepdim)
        if per_factor:
            out = out * (x.numel() if d is None or x.dim() == 0 else x.shape[d])
        return out
    return scale


def _exact(fn):
    """The scale of an op whose result is one of its inputs (amax, amin):
    zero, so that only the exact result (or NaN where torch's is) passes."""
    def scale(x, d=None, keepdim=False):
        a = x.cpu().to(torch.float64)
        return torch.zeros((fn(a) if d is None else fn(a, d, keepdim)).shape, dtype=torch.float64)
    return scale


def _logsumexp_scale(x, d=None, keepdim=False):
    """logsumexp's scale: |result| + 1 in float64, the size of max + log(sum)
    whose parts each round once more (the log of a sum near 1 is near 0)."""
    a = x.cpu().to(torch.float64)
    dims = list(range(a.dim())) if d is None else [d]
    return torch.logsumexp(a, dims, keepdim).abs().nan_to_num(0.0, 0.0, 0.0) + 1


def _all_dims(fn):
    """fn(x, every dim): logsumexp has no all-dims overload."""
    return lambda x: fn(x, list(range(x.dim())))


OPS = {
    "sum": OpCase("sum", lambda x: torch.ops.gpureduce.sum(x),
                  lambda x, d, k: torch.ops.gpureduce.sum.dim_IntList(x, [d], k),
                  torch.sum, lambda x, d, k: torch.sum(x, d, k), DTYPES, make_layout, _abs_reduce(torch.sum)),
    "mean": OpCase("mean", lambda x: torch.ops.gpureduce.mean(x),
                   lambda x, d, k: torch.ops.gpureduce.mean.dim(x, [d], k),
                   torch.mean, lambda x, d, k: torch.mean(x, d, k), DTYPES, make_layout, _abs_reduce(torch.mean)),
    "prod": OpCase("prod", lambda x: torch.ops.gpureduce.prod(x),
                   lambda x, d, k: torch.ops.gpureduce.prod.dim_int(x, d, k),
                   torch.prod, lambda x, d, k: torch.prod(x, d, k), DTYPES, near_one,
                   _abs_reduce(torch.prod, per_factor=True)),
    "amax": OpCase("amax", lambda x: torch.ops.gpureduce.amax(x),
                   lambda x, d, k: torch.ops.gpureduce.amax(x, [d], k),
                   torch.amax, lambda x, d, k: torch.amax(x, d, k),
                   [t for t in DTYPES if not t.is_complex], make_layout, _exact(torch.amax)),
    "amin": OpCase("amin", lambda x: torch.ops.gpureduce.amin(x),
                   lambda x, d, k: torch.ops.gpureduce.amin(x, [d], k),
                   torch.amin, lambda x, d, k: torch.amin(x, d, k),
                   [t for t in DTYPES if not t.is_complex], make_layout, _exact(torch.amin)),
    "logsumexp": OpCase("logsumexp", _all_dims(torch.ops.gpureduce.logsumexp),
                        lambda x, d, k: torch.ops.gpureduce.logsumexp(x, [d], k),
                        _all_dims(torch.logsumexp), lambda x, d, k: torch.logsumexp(x, d, k),
                        [t for t in DTYPES if not t.is_complex], make_layout, _logsumexp_scale),
}

# Allowed |ours - ref| per unit of the op's scale: a few dozen roundings of
# the result dtype (16-bit floats accumulate in float32 and round once).
OP_RTOL = {torch.float16: 4e-3, torch.bfloat16: 3e-2, torch.float32: 64 * torch.finfo(torch.float32).eps,
           torch.float64: 64 * torch.finfo(torch.float64).eps, torch.complex64: 64 * torch.finfo(torch.float32).eps,
           torch.complex128: 64 * torch.finfo(torch.float64).eps}


def assert_op_matches(op: OpCase, ours: torch.Tensor, ref: torch.Tensor, scale: torch.Tensor,
                      exact: Optional[torch.Tensor] = None) -> None:
    """dtype and shape equal to torch's; integers exactly; floats within
    OP_RTOL of the op's scale (NaN where torch has NaN), or, given `exact`
    (torch's op over the input in float64), no further from it than torch's
    result is: torch's CPU prod of float16 rounds each partial product to
    float16, tens of subnormal steps off where products fall below 6e-5."""
    assert ours.dtype == ref.dtype, (op.name, ours.dtype, ref.dtype)
    assert ours.shape == ref.shape, (op.name, ours.shape, ref.shape)
    assert ours.device == ref.device
    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        assert torch.equal(ours.cpu(), ref.cpu()), (op.name, ours, ref)
        return
    wide = torch.complex128 if ref.dtype.is_complex else torch.float64
    err = (ours.cpu().to(wide) - ref.cpu().to(wide)).abs()
    real = ref.real.dtype if ref.dtype.is_complex else ref.dtype
    step_at_zero = torch.finfo(real).eps * torch.finfo(real).tiny  # the smallest subnormal
    allowed = OP_RTOL[ref.dtype] * scale.reshape(ref.shape).real + step_at_zero
    o, r = ours.cpu().to(wide), ref.cpu().to(wide)
    same = (o == r) | (torch.isnan(o) & torch.isnan(r))  # equal infinities too
    bad = ((err > allowed) | torch.isnan(err)) & ~same  # a NaN on one side only is an error too
    if exact is not None:
        exact = exact.cpu().to(wide).reshape(ref.shape)
        bad &= ~((o - exact).abs() <= (r - exact).abs())
    assert not bad.any(), (f"{op.name} {ref.dtype}: ours {o[bad][:3].tolist()}, torch {r[bad][:3].tolist()}, "
                           f"allowed {allowed[bad][:3].tolist()}")


def float64_result(fn, x: torch.Tensor, *args) -> Optional[torch.Tensor]:
    """fn (one of torch's ops) over x in float64 (complex128), for a floating x."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        return None
    return fn(x.cpu().to(torch.complex128 if x.dtype.is_complex else torch.float64), *args)


def vector_norm_of(module):
    """The vector norm of `module`: torch.linalg.vector_norm for torch,
    reduce_op.vector_norm for reduce_op, so that one call form serves both."""
    return module.linalg.vector_norm if module is torch else module.vector_norm


def sample_reduction_args(s):
    """(dim, keepdim, dtype) of a torch sample input of a sum-like op
    (positional or keyword, torch's defaults where absent)."""
    dim = s.kwargs.get("dim", s.args[0] if s.args else None)
    keepdim = s.kwargs.get("keepdim", s.args[1] if len(s.args) > 1 else False)
    return dim, keepdim, s.kwargs.get("dtype")


def check_torch_samples(name: str, ours, theirs, device: str, check, skip_dtype=lambda dtype: False,
                        variant: str = "") -> int:
    """PyTorch's own sample inputs of the op `name` (its OpInfo in op_db of
    that `variant`, needing expecttest) through `ours` and `theirs`: an error of the same
    type where torch raises one, else check(ours_result, theirs_result,
    sample). Dtypes for which skip_dtype(dtype) holds are left out (an op's
    documented gap). Returns how many samples were compared."""
    from torch.testing._internal.common_methods_invocations import op_db

    info = next(o for o in op_db if o.name == name and o.variant_test_name == variant)
    compared = 0
    for dtype in sorted(info.supported_dtypes(device), key=str):
        if skip_dtype(dtype):
            continue
        for s in info.sample_inputs(device, dtype, requires_grad=False):
            try:
                their_result, their_error = theirs(s.input, *s.args, **s.kwargs), None
            except Exception as e:  # noqa: BLE001 - compared by type below
                their_result, their_error = None, e
            try:
                our_result, our_error = ours(s.input, *s.args, **s.kwargs), None
            except Exception as e:  # noqa: BLE001
                our_result, our_error = None, e
            where = f"{name} {tuple(s.input.shape)} {dtype} args={s.args} kwargs={s.kwargs}"
            if their_error is not None:
                assert type(our_error) is type(their_error), f"{where}: {our_error!r} against {their_error!r}"
                continue
            assert our_error is None, f"{where}: raised {our_error!r}"
            check(our_result, their_result, s)
            compared += 1
    return compared


def random_cases(device: str, seed: int, n: int, max_bytes: int,
                 alter: Optional[Callable[[torch.Tensor, torch.Generator], torch.Tensor]] = None
                 ) -> Iterator[Tuple[str, torch.Tensor, Dict[str, object]]]:
    """The random benchmark's sampler (shapes, views, dims, dtype=; inputs
    of 16 bytes to max_bytes), seeded: (label, x, kw) for each case, x its
    view of fresh random data (the base passed through alter(base, gen)
    first where given), kw its sum arguments."""
    gen = torch.Generator(device=device).manual_seed(seed)
    for case in sample_cases(n, seed, min_bytes=16, max_bytes=max_bytes):
        base = random_data(case.base, getattr(torch, case.dtype), device, gen)
        if alter is not None:
            base = alter(base, gen)
        yield case.label(), apply_view(base, case.view), sum_args(case)


@contextlib.contextmanager
def labelled(label: str) -> Iterator[None]:
    """An AssertionError inside the block, prefixed with the case's label."""
    try:
        yield
    except AssertionError as e:
        raise AssertionError(f"{label}: {e}") from e


def assert_compiles_like_eager(f, device: str, dynamic: bool, gen: torch.Generator) -> None:
    """f under torch.compile(fullgraph=True, dynamic=dynamic) against f itself
    on float32 inputs of two shapes: results and input gradients."""
    compiled = torch.compile(f, fullgraph=True, dynamic=dynamic)
    for shape in ((6, 9), (5, 13)):
        x = torch.randn(shape, generator=gen).to(device).requires_grad_(True)
        got, want = compiled(x), f(x)
        torch.testing.assert_close(got, want)
        (g_got,) = torch.autograd.grad(got.sum(), x)
        (g_want,) = torch.autograd.grad(want.sum(), x)
        torch.testing.assert_close(g_got, g_want)
