"""gpureduce::logsumexp against torch.logsumexp, on the CPU and the GPU:
floating and complex dtypes, shapes and layouts of the shared axes over all dims, each
dim and pairs of dims, against a float64 reference and no further from it
than torch is; infinities and NaN; several passes, expanded dims and dims of
size 1; the random cases of the benchmark's sampler; -inf over no elements;
integer inputs, out= and torch's errors; torch's own sample inputs;
autograd, opcheck and torch.compile. (The op table of test_ops.py runs
logsumexp too, integer inputs included.)"""
from __future__ import annotations

import itertools
import math

import pytest
import torch
from torch.library import opcheck

import reduce_op
from axes import (DEVICES, HAS_CUDA, LAYOUTS, SHAPES, assert_compiles_like_eager, check_torch_samples, labelled, make_layout,
                  random_cases)


LSE = torch.ops.gpureduce.logsumexp
FLOAT_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """|a - b|; of complex results with the imaginary parts' difference
    taken modulo 2 pi (log's branch cut: a sum just either side of the
    negative real axis has a logarithm of imaginary part pi or -pi)."""
    d = a - b
    if d.is_complex():
        d = torch.complex(d.real, torch.remainder(d.imag + math.pi, 2 * math.pi) - math.pi)
    return d.abs()


def _check(ours: torch.Tensor, x: torch.Tensor, dim, keepdim: bool = False) -> None:
    """dtype, shape and device as torch.logsumexp's; infinities and NaN
    where torch has them; elsewhere within a few roundings of the result
    dtype of (|result| + 1) from the float64 logsumexp, and no further from
    it than torch's own result plus one rounding."""
    dims = list(range(x.dim())) if dim is None else dim
    ref = torch.logsumexp(x, dims, keepdim)
    assert ours.dtype == ref.dtype and ours.shape == ref.shape, (ours.dtype, ref.dtype, ours.shape, ref.shape)
    assert ours.device == ref.device
    wide = torch.complex128 if ref.dtype.is_complex else torch.float64
    staged = (x.to(ref.dtype) if x.dtype != ref.dtype else x).cpu().to(wide)
    exact = torch.logsumexp(staged, dims, keepdim).reshape(ref.shape)
    o, r = ours.cpu().to(wide), ref.cpu().to(wide)
    finite = exact.isfinite()
    assert torch.equal(o[~finite].nan_to_num(0.5), exact[~finite].nan_to_num(0.5)), (o[~finite], exact[~finite])
    eps = torch.finfo(ref.dtype).eps
    scale = exact.abs() + 1
    if ref.dtype.is_complex:
        # (complex128 has no wider reference than torch's own result: a sum
        # of n terms, rounded in another order, may be sqrt(n) roundings away)
        scale = scale * math.sqrt(max(1, x.numel() // max(1, ref.numel())))
    err, their_err = _distance(o, exact), _distance(r, exact)
    ok = ~finite | (err <= 8 * eps * scale) | (err <= their_err + eps * scale)
    assert bool(ok.all()), (err.max(), their_err.max(), o.flatten()[:4], exact.flatten()[:4])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_logsumexp_matches_torch(dtype, shape, layout, device, gen):
    x = make_layout(shape, dtype, layout, device, gen) * 4
    _check(LSE(x, list(range(x.dim()))), x, None)
    for d in range(-x.dim(), max(x.dim(), 1)):
        for keepdim in (False, True):
            _check(LSE(x, [d], keepdim), x, [d], keepdim)
    for pair in itertools.combinations(range(x.dim()), 2):
        _check(reduce_op.logsumexp(x, pair), x, list(pair))


# +inf anywhere gives +inf; only -inf (or nothing) gives -inf; NaN wins;
# inputs near float32's exp overflow (88.7) and far beyond it stay finite;
# -inf next to finite values counts as exp(-inf) = 0. Each pair of values
# goes into a random stretch (all -inf where the second is -inf) at two
# random places; a second value of 1.0 stands for none.
def _special_pairs(dtype: torch.dtype) -> list:
    inf, nan = math.inf, math.nan
    big = torch.finfo(dtype).max / 4
    return [[inf, 1.0], [-inf, -inf], [nan, 1.0], [inf, -inf], [inf, inf], [-inf, 1.0], [inf, nan],
            [-inf, nan], [88.0, 88.0], [big, big], [-big, -big], [1.0, 1.0]]


def _with_pair(x: torch.Tensor, pair: list, gen: torch.Generator) -> torch.Tensor:
    """x (1-D, of the test's dtype, random) with the pair placed in it."""
    if pair[1] == -math.inf:
        x.fill_(-math.inf)
    pos = torch.randint(0, x.numel(), (2,), generator=gen).tolist()
    x[pos[0]] = pair[0]
    if pair[1] != 1.0:
        x[pos[1]] = pair[1]
    return x


# Each pair sits at a different place in a longer row, so that vector
# loads, lanes, the CPU's blocks and the block tree all meet the value.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_logsumexp_special_values(dtype, device, gen):
    for n in (2, 5, 33, 64, 65, 129, 1000, 70001):  # around the CPU's blocks of 64 too
        for pair in _special_pairs(dtype):
            x = _with_pair(torch.randn(n, generator=gen).to(dtype), pair, gen).to(device)
            _check(LSE(x, [0]), x, [0])
            _check(LSE(x.view(1, n).expand(3, n), [1]), x.view(1, n).expand(3, n), [1])


# The same pairs down columns: each in a column of its own of an [n, 13]
# input (the last a plain random column; a tile of columns with a part
# vector: the CPU's columns fold states side by side, a vector exp a row),
# reduced over dim 0; in every other column of a wider one (strided
# columns); and the transpose's copy over dim 1 (the same columns as rows).
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_logsumexp_special_values_in_columns(dtype, device, gen):
    pairs = _special_pairs(dtype)
    for n in (1, 3, 16, 17, 100, 1000):
        x = torch.randn(n, 2 * (len(pairs) + 1), generator=gen).to(dtype)
        for j, pair in enumerate(pairs):
            x[:, 2 * j] = _with_pair(x[:, 2 * j].clone(), pair, gen)
        x = x.to(device)
        dense = x[:, ::2].contiguous()
        for view, dims in ((dense, [0]), (x[:, ::2], [0]), (dense.t().contiguous(), [1])):
            with labelled(f"n={n} {tuple(view.shape)} {view.stride()} dims={dims}"):
                _check(LSE(view, dims), view, dims)


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_logsumexp_passes_expanded_and_size_one(dtype, device, gen):
    x = (torch.randn(6, 2, 70, 5, 300, generator=gen) * 3).to(dtype).to(device)
    for dims in ([0, 2], [1, 3], [0, 2, 4], [0, 2, 3, 4], [1, 3, 4]):
        _check(reduce_op.logsumexp(x, dims), x, dims)
        _check(reduce_op.logsumexp(x.permute(4, 1, 0, 3, 2), dims), x.permute(4, 1, 0, 3, 2), dims)
    for n, k in ((4000, 37), (70000, 3)):  # read as it is (small) and folded as x + log(k) (large)
        e = torch.randn(1, n, generator=gen).to(dtype).to(device).expand(k, n)
        for dims in ([0, 1], [0], [1]):
            _check(reduce_op.logsumexp(e, dims), e, dims)
        _check(reduce_op.logsumexp(e.t(), 1), e.t(), [1])  # every reduced element a repeat
    one = torch.randn(50, 1, 3, generator=gen).to(dtype).to(device)
    _check(reduce_op.logsumexp(one, [1]), one, [1])
    assert torch.equal(reduce_op.logsumexp(one, 1), one[:, 0])  # one element: itself
    big = (torch.randn(1 << 25, generator=gen) * 10).to(dtype).to(device)
    _check(reduce_op.logsumexp(big, 0), big, [0])
    _check(reduce_op.logsumexp(big.view(1 << 13, 1 << 12), 0), big.view(1 << 13, 1 << 12), [0])
    _check(reduce_op.logsumexp(big.view(1 << 12, 1 << 13), 1), big.view(1 << 12, 1 << 13), [1])


# Complex inputs, as torch computes them: the largest real part m shifts
# every input, m + log(sum exp(z - m)), an infinite m taken as 0; rows,
# columns, several dims, strided views, passes over millions of elements,
# expanded dims; the special values of torch's own complex exp and log.
@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
def test_logsumexp_complex(dtype, device, gen):
    def make(*shape):
        return torch.complex(torch.randn(shape, generator=gen) * 4, torch.randn(shape, generator=gen) * 3).to(dtype)

    for shape, dims in (((3, 4), [1]), ((5,), [0]), ((7, 300), [1]), ((300, 7), [0]), ((4, 5, 6), [0, 2]),
                        ((33, 17, 9), [1]), ((2, 3), [0, 1]), ((1, 1), [0]), ((1 << 20,), [0]), ((1000, 1000), [0]),
                        ((1000, 1000), [1])):
        x = make(*shape).to(device)
        with labelled(f"{shape} {dtype} {dims}"):
            _check(reduce_op.logsumexp(x, dims), x, dims)
            _check(reduce_op.logsumexp(x, dims, True), x, dims, True)
            if x.dim() > 1:
                t = x.transpose(0, -1)
                _check(reduce_op.logsumexp(t, dims), t, dims)
                _check(reduce_op.logsumexp(x[..., ::2], dims), x[..., ::2], dims)
    e = make(40, 1).to(device).expand(40, 70000)
    _check(reduce_op.logsumexp(e, [1]), e, [1])
    inf, nan = float("inf"), float("nan")
    special = [[complex(inf, 1), 1 + 1j], [complex(-inf, 1), complex(-inf, 2)], [complex(nan, 1), 1 + 1j],
               [complex(1, inf), 1 + 1j], [complex(inf, 0), complex(inf, 0)], [complex(inf, 0), 1 - 1j],
               [complex(1, nan), complex(inf, 0)], [complex(-inf, 0), 2 + 3j], [complex(-inf, 0), complex(-inf, 0)]]
    for row in special:
        z = torch.tensor(row, dtype=dtype, device=device)
        ours, theirs = reduce_op.logsumexp(z, 0).cpu(), torch.logsumexp(z.cpu(), 0)
        assert torch.equal(ours.real.isnan(), theirs.real.isnan()), (row, ours, theirs)
        assert torch.equal(ours.imag.isnan(), theirs.imag.isnan()), (row, ours, theirs)
        torch.testing.assert_close(ours.nan_to_num(0.0), theirs.nan_to_num(0.0), msg=lambda m: f"{row}: {m}")
    empty = torch.empty(3, 0, dtype=dtype, device=device)
    assert torch.equal(reduce_op.logsumexp(empty, 1).cpu(), torch.logsumexp(empty.cpu(), 1))
    x = make(3, 4).to(device)
    real_out = torch.empty(0, dtype=x.real.dtype, device=device)
    reduce_op.logsumexp(x, 1, out=real_out)  # computed in complex, then cast as torch casts
    torch.testing.assert_close(real_out, torch.logsumexp(x, 1).real)
    z = make(5, 6).to(torch.complex128).to(device).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda t: reduce_op.logsumexp(t, 1), (z,))
    assert torch.autograd.gradgradcheck(lambda t: reduce_op.logsumexp(t, [0, 1]), (z,))
    with reduce_op.replace_torch_reductions():
        torch.testing.assert_close(torch.logsumexp(x, 1), reduce_op.logsumexp(x, 1), rtol=0, atol=0)


@pytest.mark.parametrize("device,seed,n,max_bytes", [("cpu", 7, 80, 1 << 16)] + (
    [("cuda", s, 200, 1 << 25) for s in (41, 42)] if HAS_CUDA else []))
def test_logsumexp_random_cases(device, seed, n, max_bytes):
    checked = 0
    for label, x, kw in random_cases(device, seed, n, max_bytes):
        dim, keepdim = kw.get("dim"), kw.get("keepdim", False)
        dims = list(range(x.dim())) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
        with labelled(label):
            _check(reduce_op.logsumexp(x, dims, keepdim), x, dims, keepdim)
        checked += 1
    assert checked > n // 2


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_logsumexp_of_nothing_is_minus_inf(dtype, device):
    for shape, dim in (((0,), [0]), ((3, 0, 2), [1]), ((3, 0, 2), [0, 1]), ((0, 4), [0]), ((0, 4), [1]),
                       ((0, 4), [])):
        x = torch.empty(shape, dtype=dtype, device=device)
        ours, theirs = LSE(x, dim), torch.logsumexp(x, dim)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        assert torch.equal(ours, theirs), (ours, theirs)


# Integers of up to 16 bits are taken on the GPU as the float 1.5 * 2^23 +
# x (no conversion), their differences from the running max exact: each
# type's whole range, ragged lengths around the vectors (16 bytes) and long
# enough for the split rows kernel, and rows of a few vectors; the max at
# either end of a row, or everywhere.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.bool], ids=str)
def test_logsumexp_integer_ranges(device, dtype, gen):
    if dtype == torch.bool:
        lo, hi = 0, 2
    else:
        lo, hi = torch.iinfo(dtype).min, torch.iinfo(dtype).max + 1
    for n in (1, 15, 17, 33, 1000, (1 << 20) + 3):
        x = torch.randint(lo, hi, (n,), generator=gen).to(dtype)
        _check(reduce_op.logsumexp(x.to(device), 0), x.to(device), [0])
    rows = torch.randint(lo, hi, (300, 47), generator=gen).to(dtype)
    rows[:, 0] = hi - 1
    rows[:7, -1] = lo
    _check(reduce_op.logsumexp(rows.to(device), 1), rows.to(device), [1])
    same = torch.full((5, 4099), lo, dtype=dtype)
    _check(reduce_op.logsumexp(same.to(device), [0, 1]), same.to(device), [0, 1])


@pytest.mark.parametrize("device", DEVICES)
def test_logsumexp_integer_inputs_and_out(device, gen):
    for t in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool):
        i = torch.randint(-20, 20, (40, 9), generator=gen).to(t).to(device)
        _check(reduce_op.logsumexp(i, 0), i, [0])
        _check(reduce_op.logsumexp(i, [0, 1], True), i, [0, 1], True)
    previous = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        i = torch.arange(12, device=device).view(3, 4)
        assert reduce_op.logsumexp(i, 1).dtype == torch.float64
        _check(reduce_op.logsumexp(i, 1), i, [1])
    finally:
        torch.set_default_dtype(previous)
    x = (torch.randn(33, 65, generator=gen) * 5).to(device)
    out = torch.empty(3, dtype=torch.float64, device=device)
    assert reduce_op.logsumexp(x, 0, out=out) is out  # resized, as torch does
    ref = torch.logsumexp(x.double(), 0)
    torch.testing.assert_close(out, ref, rtol=1e-6, atol=1e-6)  # computed from the float32 input in float64
    half = torch.empty(0, dtype=torch.float16, device=device)
    reduce_op.logsumexp(x, [1], True, out=half)  # the float32 result, rounded once into out
    assert torch.equal(half, reduce_op.logsumexp(x, [1], True).half())
    z = torch.empty(0, dtype=torch.complex64, device=device)
    reduce_op.logsumexp(x, 1, out=z)
    torch.testing.assert_close(z, torch.logsumexp(x, 1, out=torch.empty(0, dtype=torch.complex64, device=device)))


@pytest.mark.parametrize("device", DEVICES)
def test_logsumexp_errors(device, gen):
    x = torch.randn(3, 4, generator=gen).to(device)
    for t in (torch.int64, torch.bool):
        with pytest.raises(RuntimeError, match="Expected floating point type for result tensor, but got: "):
            reduce_op.logsumexp(x, 0, out=torch.empty(0, dtype=t, device=device))
    with pytest.raises(NotImplementedError, match="not implemented for 'Float8_e4m3fn'"):
        reduce_op.logsumexp(x, 0, out=torch.empty(0, device=device).to(torch.float8_e4m3fn))
    with pytest.raises(NotImplementedError, match="not implemented for 'Float8_e5m2'"):
        LSE(x.to(torch.float8_e5m2), [0])
    with pytest.raises(IndexError, match="Dimension out of range"):
        LSE(x, [2])
    with pytest.raises(RuntimeError, match="appears multiple times"):
        LSE(x, [1, -1])
    # An empty dim list: every dim with keepdim=True, torch's error without.
    with pytest.raises(RuntimeError, match=r"output with shape \[\] doesn't match the broadcast shape \[1, 1\]"):
        LSE(x, [])
    _check(LSE(x, [], True), x, [0, 1], True)
    assert torch.equal(LSE(x[0, 0], []), x[0, 0])
    m = torch.empty(2, 3, 4, device="meta", dtype=torch.bfloat16)
    assert LSE(m, [1], True).shape == torch.logsumexp(m, 1, True).shape
    assert LSE(m, [1]).dtype == torch.bfloat16 and LSE(m.int(), [0]).dtype == torch.float32
    with pytest.raises(RuntimeError, match="Expected floating point type for result tensor"):
        LSE.out(m, [0], out=torch.empty(0, dtype=torch.int32, device="meta"))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_logsumexp_on_torchs_samples(device):
    pytest.importorskip("expecttest")

    def check(ours, theirs, s):
        dim = s.args[0] if s.args else s.kwargs["dim"]
        keepdim = s.args[1] if len(s.args) > 1 else s.kwargs.get("keepdim", False)
        dims = [dim] if isinstance(dim, int) else list(dim)
        _check(ours, s.input, dims if dims or keepdim else None, keepdim)

    assert check_torch_samples("logsumexp", reduce_op.logsumexp, torch.logsumexp, device, check) > 0


@pytest.mark.parametrize("device", DEVICES)
def test_logsumexp_autograd(device, gen):
    x = torch.randn(5, 7, 3, dtype=torch.float64, generator=gen).to(device).requires_grad_(True)
    for dim, keepdim in (([0, 1, 2], False), (1, False), (0, True), ([0, 2], False)):
        ours, theirs = reduce_op.logsumexp(x, dim, keepdim), torch.logsumexp(x, dim, keepdim)
        grad = torch.randn_like(theirs)
        (g_ours,) = torch.autograd.grad(ours, x, grad)
        (g_theirs,) = torch.autograd.grad(theirs, x, grad)
        torch.testing.assert_close(g_ours, g_theirs, rtol=1e-13, atol=1e-15)
    assert reduce_op.logsumexp(x, 1).grad_fn.name() == "GpureduceLogsumexpBackward"
    torch.autograd.gradcheck(lambda t: reduce_op.logsumexp(t, 1), (x,))
    torch.autograd.gradgradcheck(lambda t: reduce_op.logsumexp(t, [0, 2], True), (x,))
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        reduce_op.logsumexp(x, 0, out=torch.empty((), dtype=torch.float64, device=device))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_logsumexp_opcheck(device, gen):
    a = torch.randn(3, 5, 4, generator=gen).to(device)
    b = a.clone().requires_grad_(True)
    opcheck(LSE.default, (a, [1]))
    opcheck(LSE.default, (b, [1], True))
    opcheck(LSE.default, (b, [0, 2]))
    opcheck(LSE.out, (a, [0, 2], False), {"out": torch.empty(5, device=device)})


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_logsumexp_compiles(device, dynamic, gen):
    def f(t):
        return reduce_op.logsumexp(t, 1) * 2 + reduce_op.logsumexp(t, [0, 1])

    assert_compiles_like_eager(f, device, dynamic, gen)