"""gpureduce::var, std, var_mean and std_mean against torch's, on the CPU
and the GPU: floating and complex dtypes, shapes and layouts of the shared
axes over all dims, each dim and pairs of dims, with several corrections,
against a float64 reference and no further from it than torch is; special
values, large inputs (the GPU's split and column kernels), three reduced
dims that do not merge, expanded dims and dims of size 1; the random cases
of the benchmark's sampler; empty inputs and torch's degrees-of-freedom
warning; out=, torch's errors, torch's own sample inputs; autograd,
opcheck and torch.compile."""
from __future__ import annotations

import itertools
import math
import warnings

import pytest
import torch
from torch.library import opcheck

import reduce_op
from axes import (DEVICES, HAS_CUDA, LAYOUTS, SHAPES, assert_compiles_like_eager, check_torch_samples, labelled,
                  make_layout, random_cases)

# The degrees-of-freedom warning is test_variance_empty_and_dof_warning's.
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64]
OURS = {"var": reduce_op.var, "std": reduce_op.std}
THEIRS = {"var": torch.var, "std": torch.std}


def _check(ours: torch.Tensor, x: torch.Tensor, name: str, dim=None, correction=1, keepdim: bool = False) -> None:
    """dtype, shape and device as torch's; NaN and infinities where the
    float64 result has them; elsewhere, as a variance (std squared), within
    a few roundings of the result dtype of the scale its terms have (the
    sum of |x|^2 over N - correction: a slice's squared deviations are
    computed from values of that size, so their rounding is of it, as a
    sum's is of sum(|x|)), or no further from the float64 variance than
    torch's own result plus one such rounding."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the degrees-of-freedom warning is test_dof_warning's
        ref = THEIRS[name](x, dim, correction=correction, keepdim=keepdim)
        wide = x.cpu().to(torch.complex128 if x.is_complex() else torch.float64)
        exact = torch.var(wide, dim, correction=correction, keepdim=keepdim)
    assert ours.dtype == ref.dtype and ours.shape == ref.shape, (ours.dtype, ref.dtype, ours.shape, ref.shape)
    assert ours.device == ref.device
    o, r = ours.cpu().to(torch.float64), ref.cpu().to(torch.float64)
    if name == "std":
        o, r = o * o, r * r
    finite = exact.isfinite()
    assert torch.equal(o[~finite].nan_to_num(0.5), exact[~finite].nan_to_num(0.5)), (o[~finite], exact[~finite])
    dims = list(range(x.dim())) if dim is None or dim == [] or x.dim() == 0 else dim
    squares = wide.abs().square()
    total = squares.sum(dims, keepdim=keepdim) if x.dim() else squares
    count = x.numel() // max(total.numel(), 1)
    scale = total.reshape(exact.shape) / max(count - correction, 1)
    # float64's reference is itself rounded as ours is: 2^-40 of the scale.
    eps = 2.0 ** -40 if ref.dtype == torch.float64 else torch.finfo(ref.dtype).eps * 8
    err, their_err = (o - exact).abs(), (r - exact).abs()
    ok = ~finite | (err <= eps * scale) | (err <= their_err + eps / 8 * scale) | (err < 1e-30)
    assert bool(ok.all()), (err[~ok][:4], their_err[~ok][:4], scale[~ok][:4], o[~ok][:4], exact[~ok][:4])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_variance_matches_torch(dtype, shape, layout, device, gen):
    x = make_layout(shape, dtype, layout, device, gen) * 3 + 1
    corrections = itertools.cycle([1, 0, 2.5])
    for name in ("var", "std"):
        _check(OURS[name](x), x, name)
        for d in range(-x.dim(), max(x.dim(), 1)):
            for keepdim in (False, True):
                c = next(corrections)
                _check(OURS[name](x, d, keepdim=keepdim, correction=c), x, name, d, c, keepdim)
        for pair in itertools.combinations(range(x.dim()), 2):
            _check(OURS[name](x, pair), x, name, pair)


# NaN or an infinity anywhere makes a slice's spread NaN; a constant slice
# has none (0, not a rounding of the mean); values near float's range and
# far from zero keep their spread (no sum of squares is subtracted). Each
# special value sits at a random place in rows of lengths around vector,
# block and CPU-block widths, so that vector loads, lanes, the CPU's blocks
# of 64 and their tails all meet it.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_variance_special_values(dtype, device, gen):
    big = torch.finfo(dtype).max / 8 if dtype.itemsize > 2 else 1000.0
    for n in (2, 5, 33, 64, 65, 129, 1000, 70001):
        for special in (math.nan, math.inf, -math.inf):
            x = torch.randn(n, generator=gen).to(dtype)
            x[int(torch.randint(0, n, (1,), generator=gen))] = special
            x = x.to(device)
            _check(reduce_op.var(x, 0), x, "var", 0)
            _check(reduce_op.std(x.view(1, n).expand(3, n), 1), x.view(1, n).expand(3, n), "std", 1)
        constant = torch.full((n,), 7.25, dtype=dtype, device=device)
        assert torch.equal(reduce_op.var(constant), torch.zeros((), dtype=dtype, device=device))
        offset = ((torch.randn(n, generator=gen) + 1e4) if dtype.itemsize > 2 else torch.randn(n, generator=gen) + 50)
        offset = offset.to(dtype).to(device)
        _check(reduce_op.var(offset), offset, "var")
        scaled = (torch.randn(n, generator=gen) * big / 4).to(dtype).to(device)
        _check(reduce_op.std(scaled), scaled, "std")


# Rows at a pitch, which the GPU's lanes fold a round of kUnroll vectors
# at a time into one state (4- and 8-byte floats: VarianceOp::folds_rounds)
# and a part round vector by vector: widths around whole rounds of 1 to 32
# lanes, dense, at a pitch of one more and one element off a 16-byte
# boundary (ragged heads), against the float64 reference; and rows of one
# repeated value each, whose spread is exactly 0, as torch's is. Then the
# same for whole tensors and a few long rows (the split rows kernel's
# blocks fold their rounds likewise).
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16], ids=str)
def test_variance_rows_in_folded_rounds(dtype, device, gen):
    n = 300
    for width in (1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 384,
                  511, 512, 513, 1000, 1024, 1025, 2049):
        x = (torch.randn(n, width + 1, generator=gen) * 3 + 1).to(dtype).to(device)
        dense = (torch.randn(n, width, generator=gen) * 3 + 1).to(dtype).to(device)
        for rows in (dense, x[:, :width], x[:, 1:]):
            _check(reduce_op.var(rows, 1), rows, "var", 1)
            _check(reduce_op.std(rows, 1, correction=0), rows, "std", 1, 0)
        c = torch.randn(n, 1, generator=gen).to(dtype).to(device).expand(n, width + 1).contiguous()
        zeros = torch.zeros(n, dtype=dtype, device=device)
        for rows in (c[:, :width].contiguous(), c[:, :width], c[:, 1:]):
            assert torch.equal(reduce_op.var(rows, 1, correction=0), zeros), width
            assert torch.equal(reduce_op.std(rows, 1, correction=0), zeros), width
    for shape in (((1 << 18) + 3,), (3, 100003), (40, 5001)):
        x = (torch.randn(shape, generator=gen) * 3 + 1).to(dtype).to(device)
        for t in (x, x[..., 1:]):
            _check(reduce_op.var(t, -1), t, "var", -1)
            _check(reduce_op.var(t), t, "var")
        c = torch.randn(shape[:-1] + (1,), generator=gen).to(dtype).to(device).expand(shape)[..., 1:].contiguous()
        assert torch.equal(reduce_op.var(c, -1, correction=0), torch.zeros(shape[:-1], dtype=dtype, device=device))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
def test_variance_large_and_many_dims(dtype, device, gen):
    big = (torch.randn(1 << 22, generator=gen) * 3 + 2).to(dtype).to(device)
    _check(reduce_op.var(big), big, "var")
    for rows, cols in ((1 << 11, 1 << 11), (1 << 14, 1 << 8), (1 << 8, 1 << 14), (3, 1 << 20), (1 << 20, 3)):
        m = big[:rows * cols].view(rows, cols)
        _check(reduce_op.var(m, 0), m, "var", 0)
        _check(reduce_op.std(m, 1, correction=0), m, "std", 1, 0)
    x = (torch.randn(6, 2, 70, 5, 30, generator=gen) * 3).to(dtype).to(device)
    for dims in ([0, 2], [1, 3], [0, 2, 4], [0, 2, 3, 4], [1, 3, 4]):  # three that do not merge: packed first
        _check(reduce_op.var(x, dims), x, "var", dims)
        _check(reduce_op.std(x.permute(4, 1, 0, 3, 2), dims), x.permute(4, 1, 0, 3, 2), "std", dims)
        _check(reduce_op.var(x[:, :, ::3], dims, correction=0), x[:, :, ::3], "var", dims, 0)
    for n, k in ((4000, 37), (70000, 3)):  # read as they are, small or large (k copies do not fold)
        e = torch.randn(1, n, generator=gen).to(dtype).to(device).expand(k, n)
        for dims in ([0, 1], [0], [1]):
            _check(reduce_op.var(e, dims), e, "var", dims)
        _check(reduce_op.std(e.t(), 1), e.t(), "std", 1)  # every reduced element a repeat: 0
    one = torch.randn(50, 1, 3, generator=gen).to(dtype).to(device)
    _check(reduce_op.var(one, 1, correction=0), one, "var", 1, 0)
    _check(reduce_op.var(one, 1), one, "var", 1)  # N - correction = 0: NaN


# Complex inputs are reduced as their real view with the pair dim kept (the
# spreads of the real and imaginary parts side by side, added after): full
# reductions long enough for the split kernels, rows, columns, dims that do
# not merge, keepdim, a 0-dim input, an expanded one, and the conjugate and
# negative bits (which change no spread, and which the real view cannot
# take as they are).
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
def test_complex_variance_of_real_view(dtype, device, gen):
    def z(*shape):
        return (torch.randn(shape, dtype=dtype, generator=gen) * 3 + (1 - 2j)).to(device)

    full = z((1 << 20) + 3)
    _check(reduce_op.var(full), full, "var", None)
    _check(reduce_op.std(full, correction=0), full, "std", None, 0)
    x = z(7, 300, 33)
    for dims, keepdim in (([2], False), ([1], True), ([0], False), ([0, 2], True), (None, False)):
        _check(reduce_op.var(x, dims, keepdim=keepdim), x, "var", dims, 1, keepdim)
        _check(reduce_op.std(x.transpose(0, 2), dims, keepdim=keepdim), x.transpose(0, 2), "std", dims, 1, keepdim)
    s = z()
    _check(reduce_op.var(s, correction=0), s, "var", None, 0)
    e = z(1, 500).expand(40, 500)
    _check(reduce_op.var(e, [0]), e, "var", [0])
    _check(reduce_op.var(e, [1]), e, "var", [1])
    for view in (x.conj(), x._neg_view(), x.conj()._neg_view()):
        _check(reduce_op.var(view, [1]), view, "var", [1])
        _check(reduce_op.std(view, [0, 2], correction=2), view, "std", [0, 2], 2)


@pytest.mark.parametrize("device,seed,n,max_bytes", [("cpu", 7, 80, 1 << 16)] + (
    [("cuda", s, 200, 1 << 25) for s in (41, 42)] if HAS_CUDA else []))
def test_variance_random_cases(device, seed, n, max_bytes):
    checked = 0
    for i, (label, x, kw) in enumerate(random_cases(device, seed, n, max_bytes)):
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            x = x.float()
        name = ("var", "std")[i % 2]
        c = (1, 0, 2)[i % 3]
        dim, keepdim = kw.get("dim"), kw.get("keepdim", False)
        with labelled(label):
            _check(OURS[name](x, dim, correction=c, keepdim=keepdim), x, name, dim, c, keepdim)
        checked += 1
    assert checked == n


@pytest.mark.parametrize("device", DEVICES)
def test_variance_empty_and_dof_warning(device):
    for shape, dim in (((0,), None), ((3, 0, 2), 1), ((3, 0, 2), [0, 1]), ((0, 4), 0), ((0, 4), 1), ((2, 0), 0)):
        x = torch.empty(shape, device=device)
        for name in ("var", "std"):
            with warnings.catch_warnings(record=True) as theirs_w:
                warnings.simplefilter("always")
                theirs = THEIRS[name](x, dim)
            with warnings.catch_warnings(record=True) as ours_w:
                warnings.simplefilter("always")
                ours = OURS[name](x, dim)
            assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
            assert torch.equal(ours.isnan(), theirs.isnan())
            assert bool(theirs_w) == bool(ours_w), (shape, dim, [str(w.message) for w in ours_w])
    x = torch.randn(3, 4, device=device)
    for c, warns in ((1, False), (3, False), (4, True), (4.5, True), (-1, False), (0.5, False)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            _check(reduce_op.var(x, 1, correction=c), x, "var", 1, c)
        messages = [str(m.message) for m in w if "degrees of freedom" in str(m.message)]
        assert bool(messages) == warns, (c, messages)
        assert all(m.startswith("var(): degrees of freedom is <= 0") for m in messages)
    with pytest.warns(UserWarning, match=r"std_mean\(\): degrees of freedom is <= 0"):
        reduce_op.std_mean(x, 0, correction=3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_var_mean_and_std_mean(dtype, device, gen):
    x = (torch.randn(33, 65, generator=gen) * 2 + 1).to(dtype).to(device)
    for name, ours_f, theirs_f in (("var", reduce_op.var_mean, torch.var_mean),
                                   ("std", reduce_op.std_mean, torch.std_mean)):
        for dim, c, keepdim in ((None, 1, False), (0, 0, True), (1, 2, False), ([0, 1], 1, True)):
            spread, mean = ours_f(x, dim, correction=c, keepdim=keepdim)
            _check(spread, x, name, dim, c, keepdim)
            their_mean = theirs_f(x, dim, correction=c, keepdim=keepdim)[1]
            assert mean.dtype == their_mean.dtype == x.dtype and mean.shape == their_mean.shape
            torch.testing.assert_close(mean, their_mean, atol=1e-2 if dtype.itemsize <= 2 else 1e-5, rtol=1e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_variance_arguments_out_and_errors(device, gen):
    x = (torch.randn(33, 65, generator=gen) * 5).to(device)
    # torch's unbiased= forms, positional and keyword, as a correction.
    for args, kwargs in (((), {}), ((True,), {}), ((False,), {}), ((1, False), {}), ((1, True, True), {}),
                         ((), {"dim": 0, "unbiased": False, "keepdim": True}), ((), {"correction": 0})):
        for name in ("var", "std"):
            torch.testing.assert_close(OURS[name](x, *args, **kwargs), THEIRS[name](x, *args, **kwargs))
    with pytest.raises(TypeError):
        reduce_op.var(x, 0, unbiased=True, correction=1)
    out = torch.empty(3, dtype=torch.float64, device=device)
    assert reduce_op.var(x, 0, out=out) is out  # resized, and computed in float64 as torch does
    torch.testing.assert_close(out, torch.var(x, 0, out=torch.empty(0, dtype=torch.float64, device=device)))
    half = torch.empty(0, dtype=torch.float16, device=device)
    reduce_op.std(x, 1, keepdim=True, out=half)
    torch.testing.assert_close(half, torch.std(x, 1, keepdim=True, out=torch.empty(0, dtype=torch.float16,
                                                                                   device=device)))
    f = torch.empty(0, device=device)
    reduce_op.var(x.half(), 1, out=f)  # float16 read into a float32 result, not rounded to float16 first
    torch.testing.assert_close(f, torch.var(x.half(), 1, out=torch.empty(0, device=device)), rtol=1e-6, atol=1e-6)
    z = torch.empty(0, dtype=torch.complex64, device=device)
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexFloat'"):
        reduce_op.var(x, 1, out=z)  # a real input's spread into a complex out=, refused as torch's CPU kernel does
    c = torch.randn(40, 9, dtype=torch.complex64, generator=gen).to(device)
    reduce_op.std(c, 0, out=z)
    torch.testing.assert_close(z, torch.std(c, 0, out=torch.empty(0, dtype=torch.complex64, device=device)))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        reduce_op.var(x, 1, out=torch.empty(0, dtype=torch.int64, device=device))
    for t in (torch.int64, torch.int8, torch.bool):
        with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
            reduce_op.std(x.to(t), 0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Float8_e4m3fn'"):
        reduce_op.var(x.to(torch.float8_e4m3fn), 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        reduce_op.var(x, 2)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        reduce_op.std(x, [1, -1])
    m = torch.empty(2, 3, 4, device="meta", dtype=torch.bfloat16)
    assert reduce_op.var(m, 1, keepdim=True).shape == torch.var(m, 1, keepdim=True).shape
    assert reduce_op.std(m.to(torch.complex64), 0).dtype == torch.float32
    v, mean = reduce_op.var_mean(m.to(torch.complex64), [0, 2])
    assert v.dtype == torch.float32 and mean.dtype == torch.complex64 and v.shape == mean.shape == (3,)


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_variance_on_torchs_samples(name, device):
    pytest.importorskip("expecttest")
    ours_f, theirs_f = getattr(reduce_op, name), getattr(torch, name)

    def check(ours, theirs, s):
        ours = ours if isinstance(ours, tuple) else (ours,)
        theirs = theirs if isinstance(theirs, tuple) else (theirs,)
        for o, t in zip(ours, theirs):
            assert o.dtype == t.dtype and o.shape == t.shape, (o.dtype, t.dtype, o.shape, t.shape)
            tol = 2e-2 if t.dtype in (torch.float16, torch.bfloat16) else 1e-5
            torch.testing.assert_close(o, t, rtol=tol, atol=tol, equal_nan=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for variant in ("", "unbiased"):
            assert check_torch_samples(name, ours_f, theirs_f, device, check, variant=variant) > 0


@pytest.mark.parametrize("device", DEVICES)
def test_variance_autograd(device, gen):
    x = torch.randn(5, 7, 3, dtype=torch.float64, generator=gen).to(device).requires_grad_(True)
    for name in ("var", "std"):
        for dim, c, keepdim in (([0, 1, 2], 1, False), (1, 0, False), (0, 2.5, True), ([0, 2], 1, False)):
            ours = OURS[name](x, dim, correction=c, keepdim=keepdim)
            theirs = THEIRS[name](x, dim, correction=c, keepdim=keepdim)
            grad = torch.randn_like(theirs)
            (g_ours,) = torch.autograd.grad(ours, x, grad)
            (g_theirs,) = torch.autograd.grad(theirs, x, grad)
            torch.testing.assert_close(g_ours, g_theirs, rtol=1e-12, atol=1e-14)
    assert reduce_op.var(x, 1).grad_fn.name() == "GpureduceVarBackward"
    assert reduce_op.std_mean(x, 1)[1].grad_fn.name() == "GpureduceStdMeanBackward"
    for f in (lambda t: reduce_op.var(t, 1), lambda t: reduce_op.std(t, [0, 2], keepdim=True),
              lambda t: reduce_op.var_mean(t, 0, correction=0), lambda t: reduce_op.std_mean(t, [1, 2])):
        torch.autograd.gradcheck(f, (x,))
        torch.autograd.gradgradcheck(f, (x,))
    z = torch.randn(4, 6, dtype=torch.complex128, generator=gen).to(device).requires_grad_(True)
    (g_ours,) = torch.autograd.grad(reduce_op.var(z, 1).sum(), z)
    (g_theirs,) = torch.autograd.grad(torch.var(z, 1).sum(), z)
    torch.testing.assert_close(g_ours, g_theirs)
    torch.autograd.gradcheck(lambda t: reduce_op.std(t, 0), (z,))
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        reduce_op.var(x, 0, out=torch.empty((), dtype=torch.float64, device=device))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_variance_opcheck(device, gen):
    a = torch.randn(3, 5, 4, generator=gen).to(device)
    b = a.clone().requires_grad_(True)
    ops = torch.ops.gpureduce
    for op in (ops.var.correction, ops.std.correction, ops.var_mean.correction, ops.std_mean.correction):
        opcheck(op, (a, [1]), {"correction": 0})
        opcheck(op, (b, [0, 2]), {"keepdim": True})
        opcheck(op, (b,))
    for op in (ops.var.correction_out, ops.std.correction_out):
        opcheck(op, (a, [0, 2]), {"correction": 2, "out": torch.empty(5, device=device)})


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_variance_compiles(device, dynamic, gen):
    def f(t):
        v, m = reduce_op.var_mean(t, 1, keepdim=True)
        return (t - m) / (v + 1e-5) + reduce_op.std(t, [0, 1], correction=0)

    assert_compiles_like_eager(f, device, dynamic, gen)


@pytest.mark.parametrize("device", DEVICES)
def test_variance_drop_in(device, gen):
    x = torch.randn(6, 9, dtype=torch.float64, generator=gen).to(device).requires_grad_(True)
    with reduce_op.replace_torch_reductions():
        routed = [torch.var(x, 1), x.std(0, keepdim=True), torch.var_mean(x, [0, 1], correction=0)[0],
                  torch.std_mean(x, unbiased=False)[0], x.var(True)]
        with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
            torch.var(x[:1], 0)
    names = [t.grad_fn.name() for t in routed]
    assert names == ["GpureduceVarBackward", "GpureduceStdBackward", "GpureduceVarMeanBackward",
                     "GpureduceStdMeanBackward", "GpureduceVarBackward"], names
    torch.testing.assert_close(routed[0], torch.var(x, 1))
    torch.testing.assert_close(routed[3], torch.std(x, unbiased=False))
