"""gpureduce::mean against torch.mean, on the CPU and the GPU: floating and
complex dtypes, shapes and layouts of the shared axes over all dims, each
dim and pairs of dims, with a float64 reference; several passes, expanded
dims and dims of size 1; the random cases of the benchmark's sampler; NaN
over no elements; dtype= and out=; torch's errors; torch's own sample
inputs; autograd, opcheck and torch.compile. (The op table of test_ops.py
runs mean too, integer inputs included, which raise as torch's do.)"""
from __future__ import annotations

import itertools

import pytest
import torch
from torch.library import opcheck

import reduce_op
from axes import (DEVICES, HAS_CUDA, LAYOUTS, SHAPES, assert_compiles_like_eager, check_torch_samples, labelled, make_layout,
                  random_cases, reduced_dims, sample_reduction_args)


MEAN = torch.ops.gpureduce.mean
FLOAT_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64]


def _check(ours: torch.Tensor, x: torch.Tensor, dim, keepdim: bool = False, dtype=None) -> None:
    """dtype, shape and device as torch.mean's; values within a few
    roundings of the result dtype of mean(|x|), against the float64 (or
    complex128) mean of the input cast as dtype= casts it; NaN exactly
    where torch has NaN (reductions over no elements)."""
    kw = {} if dtype is None else {"dtype": dtype}
    ref = torch.mean(x, dim, keepdim, **kw) if dim is not None else torch.mean(x, **kw)
    assert ours.dtype == ref.dtype and ours.shape == ref.shape, (ours.dtype, ref.dtype, ours.shape, ref.shape)
    assert ours.device == ref.device
    wide = torch.complex128 if ref.dtype.is_complex else torch.float64
    staged = (x.to(ref.dtype) if x.dtype != ref.dtype else x).cpu().to(wide)
    dims = reduced_dims(x.dim(), dim)
    exact = staged.mean(dims, keepdim=True) if dims else staged
    mag = staged.abs().mean(dims, keepdim=True) if dims else staged.abs()
    exact, mag = exact.reshape(ref.shape), mag.reshape(ref.shape)
    o, r = ours.cpu().to(wide), ref.cpu().to(wide)
    assert torch.equal(o.isnan(), r.isnan()), (o, r)
    real = ref.real.dtype if ref.dtype.is_complex else ref.dtype
    eps = torch.finfo(real).eps
    rtol = 4 * eps if real in (torch.float16, torch.bfloat16) else 64 * eps
    err = (o - exact).abs()
    ok = o.isnan() | (err <= rtol * mag.real + exact.abs() * eps + torch.finfo(real).tiny)
    assert bool(ok.all()), (err.max(), o.flatten()[:4], exact.flatten()[:4])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_mean_matches_torch(dtype, shape, layout, device, gen):
    x = make_layout(shape, dtype, layout, device, gen)
    _check(MEAN(x), x, None)
    _check(reduce_op.mean(x), x, None)
    for d in range(-x.dim(), max(x.dim(), 1)):
        for keepdim in (False, True):
            _check(MEAN.dim(x, [d], keepdim), x, d, keepdim)
    for pair in itertools.combinations(range(x.dim()), 2):
        _check(reduce_op.mean(x, pair), x, list(pair))


# Several passes (three reduced dims that kept dims keep apart: only the
# last divides), expanded dims (reduced repeats folded after the division,
# kept ones broadcast), dims of size 1 only (each output one element, over
# a count of 1), and counts beyond 2^24 (float32's exact integers).
@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16], ids=str)
def test_mean_passes_expanded_and_size_one(dtype, device, gen):
    x = torch.randn(6, 2, 70, 5, 300, generator=gen).to(dtype).to(device)
    for dims in ([0, 2], [1, 3], [0, 2, 4], [0, 2, 3, 4], [1, 3, 4]):
        _check(reduce_op.mean(x, dims), x, dims)
        _check(reduce_op.mean(x.permute(4, 1, 0, 3, 2), dims), x.permute(4, 1, 0, 3, 2), dims)
    for n, k in ((4000, 37), (70000, 3)):  # read as it is (small) and folded (large)
        e = torch.randn(1, n, generator=gen).to(dtype).to(device).expand(k, n)
        for dims in (None, [0], [1]):
            _check(reduce_op.mean(e, dims), e, dims)
        _check(reduce_op.mean(e.t(), 1), e.t(), 1)  # every reduced element a repeat
    one = torch.randn(50, 1, 3, generator=gen).to(dtype).to(device)
    _check(reduce_op.mean(one, [1]), one, [1])
    assert torch.equal(reduce_op.mean(one, 1), one[:, 0])  # x / 1 is x
    zeros = torch.tensor([[-0.0], [1.5]], dtype=dtype, device=device)  # -0.0 reduced gives +0.0, as in torch
    for got in (reduce_op.mean(zeros, 1), reduce_op.mean(zeros.expand(2, 6), 1)):
        assert torch.equal(got, torch.mean(zeros.expand(2, 6), 1)) and not torch.signbit(got[0]), got
    big = torch.randn(1 << 25, generator=gen).to(dtype).to(device)
    _check(reduce_op.mean(big), big, None)
    _check(reduce_op.mean(big.view(1 << 13, 1 << 12), 0), big.view(1 << 13, 1 << 12), 0)


# Reductions over no elements are NaN (complex: NaN + NaN i on the CPU,
# torch's 0 / 0, and NaN + 0 i on CUDA, torch's fill), as in torch; an
# empty result is empty.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_mean_of_nothing_is_nan(dtype, device):
    for shape, dim in (((0,), None), ((3, 0, 2), 1), ((3, 0, 2), [0, 1]), ((0, 4), 0), ((0, 4), 1)):
        x = torch.empty(shape, dtype=dtype, device=device)
        ours = reduce_op.mean(x, dim) if dim is not None else reduce_op.mean(x)
        theirs = torch.mean(x, dim) if dim is not None else torch.mean(x)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        assert torch.equal(ours.isnan(), theirs.isnan()), (ours, theirs)
        if dtype.is_complex:
            assert torch.equal(ours.imag.isnan(), theirs.imag.isnan())


@pytest.mark.parametrize("device,seed,n,max_bytes", [("cpu", 7, 80, 1 << 16)] + (
    [("cuda", s, 200, 1 << 25) for s in (31, 32)] if HAS_CUDA else []))
def test_mean_random_cases(device, seed, n, max_bytes):
    checked = 0
    for label, x, kw in random_cases(device, seed, n, max_bytes):
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            kw["dtype"] = torch.float32  # mean takes integers with a floating dtype= only
        elif kw.get("dtype") is not None and not (kw["dtype"].is_floating_point or kw["dtype"].is_complex):
            del kw["dtype"]
        with labelled(label):
            _check(reduce_op.mean(x, **kw), x, kw.get("dim"), kw.get("keepdim", False), kw.get("dtype"))
        checked += 1
    assert checked == n


@pytest.mark.parametrize("device", DEVICES)
def test_mean_dtype_out_and_errors(device, gen):
    x = torch.randn(33, 65, generator=gen).to(torch.float16).to(device)
    _check(reduce_op.mean(x, dtype=torch.float64), x, None, False, torch.float64)
    _check(reduce_op.mean(x, 1, dtype=torch.float32), x, 1, False, torch.float32)
    i = torch.randint(-100, 100, (40, 9), generator=gen).to(torch.int8).to(device)
    _check(reduce_op.mean(i, 0, dtype=torch.float32), i, 0, False, torch.float32)
    _check(reduce_op.mean(i, dtype=torch.complex64), i, None, False, torch.complex64)
    out = torch.empty(3, dtype=torch.float64, device=device)
    assert reduce_op.mean(x, 0, out=out) is out  # resized, as torch does
    _check(out, x, 0, False, torch.float64)
    kept = torch.empty(0, dtype=torch.float16, device=device)
    reduce_op.mean(x, [0, 1], True, out=kept)
    _check(kept, x, [0, 1], True)
    msg = "could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: "
    for t in (torch.int64, torch.int8, torch.bool, torch.uint8):
        with pytest.raises(RuntimeError, match=msg):
            MEAN(torch.zeros(3, dtype=t, device=device))
        with pytest.raises(RuntimeError, match=msg):
            reduce_op.mean(torch.zeros(3, dtype=t, device=device), 0, out=torch.empty(0, device=device))
    with pytest.raises(RuntimeError, match="Optional dtype must be either a floating point or complex dtype. Got: Long"):
        reduce_op.mean(x, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        reduce_op.mean(x, 1, dtype=torch.float32, out=torch.empty(33, dtype=torch.float64, device=device))
    for t in (torch.int64, torch.bool):
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            reduce_op.mean(x, 1, out=torch.empty(33, dtype=t, device=device))
    with pytest.raises(NotImplementedError):
        MEAN(torch.zeros(3, device=device).to(torch.float8_e5m2))
    with pytest.raises(IndexError):
        MEAN.dim(x, [2])
    with pytest.raises(RuntimeError, match="appears multiple times"):
        MEAN.dim(x, [1, -1])
    m = torch.empty(2, 3, 4, device="meta", dtype=torch.bfloat16)
    assert MEAN.dim(m, [1], True).shape == torch.mean(m, 1, True).shape
    assert MEAN(m, dtype=torch.float64).dtype == torch.float64
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        MEAN(m.int())


@pytest.mark.parametrize("device", DEVICES)
def test_mean_complex32_refused(device):
    z = torch.zeros(3, dtype=torch.float32, device=device).to(torch.complex32)
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexHalf'"):
        MEAN(z)


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_mean_on_torchs_samples(device):
    pytest.importorskip("expecttest")

    def check(ours, theirs, s):
        _check(ours, s.input, *sample_reduction_args(s))

    assert check_torch_samples("mean", reduce_op.mean, torch.mean, device, check) > 0


@pytest.mark.parametrize("device", DEVICES)
def test_mean_autograd(device, gen):
    x = torch.randn(5, 7, 3, dtype=torch.float64, generator=gen).to(device).requires_grad_(True)
    for dim, keepdim in ((None, False), (1, False), (0, True), ([0, 2], False)):
        ours = reduce_op.mean(x, dim, keepdim) if dim is not None else reduce_op.mean(x)
        theirs = torch.mean(x, dim, keepdim) if dim is not None else torch.mean(x)
        grad = torch.randn_like(theirs)
        (g_ours,) = torch.autograd.grad(ours, x, grad)
        (g_theirs,) = torch.autograd.grad(theirs, x, grad)
        torch.testing.assert_close(g_ours, g_theirs, rtol=1e-15, atol=0)
    torch.autograd.gradcheck(lambda t: reduce_op.mean(t, 1), (x,))
    torch.autograd.gradgradcheck(lambda t: reduce_op.mean(t, [0, 2], True), (x,))
    h = torch.randn(4, 6, generator=gen).to(device).half().requires_grad_(True)
    r = reduce_op.mean(h, 1, dtype=torch.float32)
    (g,) = torch.autograd.grad(r.sum(), h)
    assert g.dtype == torch.float16 and torch.equal(g, torch.full_like(h, 1 / 6))
    assert r.grad_fn is not None and r.grad_fn.name() == "GpureduceMeanBackward"
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        reduce_op.mean(h.detach().int().float().requires_grad_(True), dtype=torch.int32)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        reduce_op.mean(h, out=torch.empty((), device=device))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_mean_opcheck(device, gen):
    a = torch.randn(3, 5, 4, generator=gen).to(device)
    b = a.clone().requires_grad_(True)
    opcheck(MEAN.default, (a,))
    opcheck(MEAN.default, (b,), {"dtype": torch.float64})
    opcheck(MEAN.dim, (b, [1], True))
    opcheck(MEAN.dim, (b, None))
    opcheck(MEAN.out, (a, [0, 2], False), {"out": torch.empty(5, device=device)})


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_mean_compiles(device, dynamic, gen):
    def f(t):
        return reduce_op.mean(t, 1) * 2 + reduce_op.mean(t)

    assert_compiles_like_eager(f, device, dynamic, gen)