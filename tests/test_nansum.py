"""gpureduce::nansum against torch.nansum, on the CPU and the GPU: every
dtype, shape and layout of the shared axes with NaNs and infinities among
the inputs, reduced over all dims, each dim and pairs of dims; the random
cases of the benchmark's sampler; the NaN rules (NaN inputs count as zero,
inf + -inf stays NaN, across passes too), dtype= and out=, torch's errors,
torch's own sample inputs, autograd and opcheck."""
from __future__ import annotations

import itertools

import pytest
import torch
from torch.library import opcheck

import reduce_op
from axes import (DEVICES, DTYPES, HAS_CUDA, LAYOUTS, SHAPES, check_torch_samples, labelled, make_layout,
                  random_cases, sample_reduction_args)


NANSUM = torch.ops.gpureduce.nansum
REAL_DTYPES = [d for d in DTYPES if not d.is_complex]


def _with_nans(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """x (a view of any layout) with about a fifth of its floats NaN and a
    few +inf, written through the view. Not -inf beside +inf: where the two
    meet, torch's CPU nansum gives NaN or not by the order of its adds
    (NaN for [inf, -inf, 1.0], 0 for 4000 elements among which they lie),
    where ours always keeps the NaN (test_nansum_inf_minus_inf)."""
    if not x.dtype.is_floating_point or x.numel() == 0:
        return x
    base = x.clone() if x.stride().count(0) else x  # an expanded view cannot be written element-wise
    u = torch.rand(base.shape, generator=gen, device=gen.device).to(base.device)
    base[u < 0.2] = float("nan")
    base[(u >= 0.2) & (u < 0.22)] = float("inf")
    return base


def _check(ours: torch.Tensor, x: torch.Tensor, dim, keepdim: bool, dtype=None) -> None:
    """dtype and shape as torch.nansum's; integers exactly; floats NaN
    exactly where torch's are, infinities equal, and the rest within a few
    roundings of the result dtype of sum(|x|) over the non-NaN, finite
    inputs."""
    kw = {} if dtype is None else {"dtype": dtype}
    ref = torch.nansum(x, dim, keepdim, **kw) if dim is not None else torch.nansum(x, **kw)
    assert ours.dtype == ref.dtype and ours.shape == ref.shape, (ours.dtype, ref.dtype, ours.shape, ref.shape)
    if ref.dtype.is_complex:
        # Complex (torch's CUDA nansum): each part within a few roundings of
        # sum(|x|) over the inputs with no NaN part, as for floats below.
        o = torch.view_as_real(ours.to(torch.complex128))
        r = torch.view_as_real(ref.to(torch.complex128))
        assert torch.equal(torch.isnan(o), torch.isnan(r)), (o, r)
        wide = x.to(torch.complex128)
        finite = torch.where(torch.isfinite(torch.view_as_real(wide)).all(-1), wide.abs(), 0.0)
        mag = finite.sum(dim, keepdim) if dim is not None else finite.sum()
        real = {torch.complex32: torch.float16, torch.complex64: torch.float32}.get(ref.dtype, torch.float64)
        rtol = (4 if real == torch.float16 else 64) * torch.finfo(real).eps
        bound = rtol * mag.reshape(ref.shape).unsqueeze(-1) + torch.finfo(real).tiny
        assert bool((~torch.isfinite(r) | ((o - r).abs() <= bound)).all()), ((o - r).abs().max(), o, r)
        return
    if not ref.dtype.is_floating_point:
        assert torch.equal(ours, ref), (ours, ref)
        return
    o, r = ours.double(), ref.double()
    assert torch.equal(torch.isnan(o), torch.isnan(r)), (o, r)
    inf = torch.isinf(r)
    assert torch.equal(o[inf], r[inf]), (o, r)
    staged = x.to(ref.dtype) if x.dtype != ref.dtype else x
    finite = staged.double().nan_to_num(nan=0.0, posinf=0.0, neginf=0.0).abs()
    mag = finite.sum(dim, keepdim) if dim is not None else finite.sum()
    eps = torch.finfo(ref.dtype).eps
    rtol = 4 * eps if ref.dtype in (torch.float16, torch.bfloat16) else 64 * eps
    ok = ~torch.isfinite(r) | ((o - r).abs() <= rtol * mag.reshape(r.shape) + torch.finfo(ref.dtype).tiny)
    assert bool(ok.all()), ((o - r).abs().max(), o, r)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", REAL_DTYPES, ids=str)
def test_nansum_matches_torch(dtype, shape, layout, device, gen):
    x = _with_nans(make_layout(shape, dtype, layout, device, gen), gen)
    _check(NANSUM(x), x, None, False)
    _check(reduce_op.nansum(x), x, None, False)
    for d in range(-x.dim(), max(x.dim(), 1)):
        for keepdim in (False, True):
            _check(NANSUM(x, [d], keepdim), x, d, keepdim)
    for pair in itertools.combinations(range(x.dim()), 2):
        _check(reduce_op.nansum(x, pair), x, list(pair), False)


# Several passes (three reduced dims that kept dims keep apart) and expanded
# dims (k copies folded as k * x), with NaNs and infinities.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16], ids=str)
def test_nansum_passes_and_expanded(dtype, device, gen):
    x = _with_nans(torch.randn(6, 2, 70, 5, 300, generator=gen).to(dtype).to(device), gen)
    for dims in ([0, 2], [1, 3], [0, 2, 4], [0, 2, 3, 4], [1, 3, 4]):
        _check(reduce_op.nansum(x, dims), x, dims, False)
        _check(reduce_op.nansum(x.permute(4, 1, 0, 3, 2), dims), x.permute(4, 1, 0, 3, 2), dims, False)
    e = _with_nans(torch.randn(1, 4000, generator=gen).to(dtype).to(device), gen).expand(37, 4000)
    for dims in (None, [0], [1]):
        _check(reduce_op.nansum(e, dims), e, dims, False)


# NaN inputs count as zero; a NaN the adds make stays NaN, wherever in the
# order of adds inf meets -inf (within a leaf, across leaves, across
# passes), as torch's CUDA nansum keeps it.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16], ids=str)
def test_nansum_inf_minus_inf(dtype, device):
    rows = torch.tensor([[float("inf"), -float("inf"), 1.0], [float("nan")] * 3, [float("inf"), float("nan"), 2.0]])
    got = reduce_op.nansum(rows.to(dtype).to(device), 1).cpu()
    assert torch.equal(got.isnan(), torch.tensor([True, False, False]))
    assert got[1].item() == 0.0 and got[2].item() == float("inf")
    for n, i, j in ((4000, 5, 7), (100000, 3, 99000), (70000, 0, 65536)):
        x = torch.ones(n, dtype=dtype, device=device)
        x[i], x[j], x[(i + j) // 2] = float("inf"), -float("inf"), float("nan")
        assert reduce_op.nansum(x).isnan()
        assert reduce_op.nansum(x.view(10, n // 10), [0, 1]).isnan()
        assert reduce_op.nansum(x.view(10, n // 10).t(), [0, 1]).isnan()
    # Three reduced dims that kept dims keep apart take two passes: the
    # second reads the first's partials, one of which is the NaN of
    # inf + -inf (and one lost a NaN input).
    x = torch.ones(6, 2, 70, 5, 40, dtype=dtype, device=device)
    x[2, 1, 3, 1, 10], x[2, 1, 3, 1, 11], x[4, 0, 0, 3, 0] = float("inf"), -float("inf"), float("nan")
    got = reduce_op.nansum(x, [0, 2, 4]).cpu().double()
    want = torch.full((2, 5), 6 * 70 * 40.0, dtype=torch.float64)
    want[1, 1], want[0, 3] = float("nan"), 6 * 70 * 40 - 1
    assert torch.equal(got.isnan(), want.isnan()), got
    assert torch.equal(got.nan_to_num(), want.to(dtype).double().nan_to_num()), got


# Complex inputs on the GPU, as torch's CUDA nansum sums them: an element
# with a NaN in either part counts as zero. Rows, columns, full sums and a
# two-pass plan of complex64, complex128 and complex32 (read as complex64),
# within a few roundings of torch.nansum and of the NaN-free input's sum in
# complex128, the same bits on a second call; the gradient, as torch's. On
# the CPU torch refuses them, and so does ours
# (test_nansum_dtype_out_and_errors).
@pytest.mark.cuda
@pytest.mark.skipif(not HAS_CUDA, reason="needs a GPU")
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128, torch.complex32], ids=str)
def test_nansum_complex(dtype, gen):
    for shape, dims in (((7,), None), ((1000, 37), 1), ((37, 1000), 0), ((257, 9, 33), (0, 2)), ((4, 3), 1),
                        ((3, 70000), None), ((6, 2, 70, 5, 40), (0, 2, 4))):
        re = torch.randn(shape, generator=gen)
        im = torch.randn(shape, generator=gen)
        u = torch.rand(shape, generator=gen)
        re[u < 0.1] = float("nan")
        im[(u >= 0.1) & (u < 0.2)] = float("nan")
        x = torch.complex(re, im).to(dtype).cuda()
        got = reduce_op.nansum(x, dims) if dims is not None else reduce_op.nansum(x)
        want = torch.nansum(x, dims) if dims is not None else torch.nansum(x)
        assert got.dtype == want.dtype == dtype and got.shape == want.shape
        clean = torch.where(torch.isnan(x.to(torch.complex128)), torch.zeros((), dtype=torch.complex128, device="cuda"),
                            x.to(torch.complex128))
        exact = clean.sum(dims) if dims is not None else clean.sum()
        assert not torch.isnan(torch.view_as_real(got.to(torch.complex64))).any()
        tol = dict(rtol=1e-2, atol=1e-2) if dtype == torch.complex32 else dict(rtol=1e-5, atol=1e-4)
        torch.testing.assert_close(got.to(torch.complex128), exact, **tol)
        torch.testing.assert_close(got.to(torch.complex128), want.to(torch.complex128), **tol)
        again = reduce_op.nansum(x, dims) if dims is not None else reduce_op.nansum(x)
        assert torch.equal(torch.view_as_real(got), torch.view_as_real(again))
    # The gradient, as torch's: the incoming gradient where no part is NaN,
    # zero where one is.
    z = torch.complex(torch.randn(4, 6, generator=gen), torch.randn(4, 6, generator=gen)).to(torch.complex128).cuda()
    z[1, 2], z[3, 0] = complex(float("nan"), 1.0), complex(2.0, float("nan"))
    z.requires_grad_(True)
    ours, theirs = reduce_op.nansum(z, 1), torch.nansum(z, 1)
    grad = torch.randn_like(theirs)
    assert torch.equal(torch.autograd.grad(ours, z, grad)[0], torch.autograd.grad(theirs, z, grad)[0])
    clean = torch.complex(torch.randn(3, 5, generator=gen), torch.randn(3, 5, generator=gen))
    torch.autograd.gradcheck(lambda t: reduce_op.nansum(t, 0), (clean.to(torch.complex128).cuda().requires_grad_(True),))
    # A real input summed into a complex dtype= and out=, as torch's CUDA nansum.
    r = torch.randn(50, 40, generator=gen).cuda()
    r[3, 4] = float("nan")
    for dt in (torch.complex64, torch.complex128):
        torch.testing.assert_close(reduce_op.nansum(r, 1, dtype=dt), torch.nansum(r, 1, dtype=dt))
        out = torch.empty(40, dtype=dt, device="cuda")
        assert reduce_op.nansum(r, 0, out=out) is out
        torch.testing.assert_close(out, torch.nansum(r, 0, dtype=dt))


# Nothing but dims of size 1 or of stride 0 reduced: the input folded
# (k * x) with NaN counted as zero, infinities kept, and -0.0 made +0.0 as
# torch's sum makes it; small and large inputs (the planner reads the
# small ones as a pass).
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16], ids=str)
def test_nansum_size_one_and_repeats(dtype, device):
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 1.0], dtype=dtype, device=device)
    for n in (5, 1 << 18):
        x = special.repeat(n // 5 + 1)[:n]
        want_one = torch.where(x.isnan(), torch.zeros_like(x), x) + 0
        got = reduce_op.nansum(x.view(n, 1), 1)
        assert torch.equal(got, want_one) and not torch.signbit(got[3]), (n, got[:5])
        got = reduce_op.nansum(x.view(n, 1, 1), [1, 2], dtype=torch.float64)
        assert torch.equal(got, want_one.double()), (n, got[:5])
        for k in (3, 4096):
            e = x[:, None].expand(n, k)
            got = reduce_op.nansum(e, 1)
            assert torch.equal(got, (want_one.double() * k).to(dtype)), (n, k, got[:5])


# The benchmark's random sampler (shapes, views, dims, dtype=) with NaNs
# and infinities written into the base tensor before its view is taken.
@pytest.mark.parametrize("device,seed,n,max_bytes", [("cpu", 7, 80, 1 << 16)] + (
    [("cuda", s, 200, 1 << 25) for s in (21, 22)] if HAS_CUDA else []))
def test_nansum_random_cases(device, seed, n, max_bytes):
    for label, x, kw in random_cases(device, seed, n, max_bytes, alter=_with_nans):
        with labelled(label):
            _check(reduce_op.nansum(x, **kw), x, kw.get("dim"), kw.get("keepdim", False), kw.get("dtype"))


@pytest.mark.parametrize("device", DEVICES)
def test_nansum_dtype_out_and_errors(device, gen):
    x = _with_nans(torch.randn(33, 65, generator=gen).to(torch.float16).to(device), gen)
    _check(reduce_op.nansum(x, dtype=torch.float64), x, None, False, torch.float64)
    _check(reduce_op.nansum(x, 1, dtype=torch.float32), x, 1, False, torch.float32)
    i = torch.randint(-100, 100, (40, 9), generator=gen).to(torch.int8).to(device)
    _check(reduce_op.nansum(i, 0), i, 0, False)
    _check(reduce_op.nansum(i, 0, dtype=torch.float16), i, 0, False, torch.float16)
    out = torch.empty(3, dtype=torch.float64, device=device)
    assert reduce_op.nansum(x, 0, out=out) is out  # resized, as torch does
    _check(out, x, 0, False, torch.float64)
    z = torch.zeros(3, device=device)
    # Complex inputs and results: torch's CPU nansum refuses them, its CUDA
    # nansum sums them (test_nansum_complex): ours does as torch does.
    for call in (lambda f: f(z.to(torch.complex64)), lambda f: f(z, dtype=torch.complex64),
                 lambda f: f(z, out=torch.empty((), dtype=torch.complex64, device=device))):
        try:
            want, want_error = call(torch.nansum), None
        except Exception as e:  # noqa: BLE001 - compared by type
            want, want_error = None, e
        if want_error is not None:
            with pytest.raises(type(want_error), match="does not support complex inputs|nansum_cpu"):
                call(reduce_op.nansum)
        else:
            got = call(reduce_op.nansum)
            assert got.dtype == want.dtype and torch.equal(got, want)
    # A float input into an integer or bool out= with no dtype=: torch's
    # kernel has no integer version; with dtype= the input is cast first.
    for odt in (torch.int64, torch.int32, torch.bool):
        with pytest.raises(NotImplementedError, match=f"nansum_{device}"):
            reduce_op.nansum(x, 0, out=torch.empty(65, dtype=odt, device=device))
    # With an integer dtype=, torch 2.13 casts and sums; torch 2.11 raises
    # NotImplementedError: ours does what the torch it was built for does.
    finite = (torch.randn(33, 65, generator=gen) * 10).to(device)  # (NaN and inf have no int64 value)
    try:
        want = torch.nansum(finite, 0, dtype=torch.int64)
    except NotImplementedError:
        with pytest.raises(NotImplementedError, match=f"nansum_{device}"):
            reduce_op.nansum(finite, 0, dtype=torch.int64, out=torch.empty(65, dtype=torch.int64, device=device))
        with pytest.raises(NotImplementedError, match=f"nansum_{device}"):
            reduce_op.nansum(finite, 0, dtype=torch.int64)
    else:
        got = reduce_op.nansum(finite, 0, dtype=torch.int64, out=torch.empty(65, dtype=torch.int64, device=device))
        assert torch.equal(got, want)
    with pytest.raises(RuntimeError, match="provided dtype must match"):
        reduce_op.nansum(z, dtype=torch.float64, out=torch.empty((), dtype=torch.float32, device=device))
    with pytest.raises(IndexError):
        NANSUM(x, [2])
    with pytest.raises(NotImplementedError):
        NANSUM(z.to(torch.float8_e5m2))
    # The dims are checked first, as torch does: before a complex input's
    # error and a complex dtype='s.
    with pytest.raises(IndexError, match="Dimension out of range"):
        NANSUM(z.to(torch.complex64), [1])
    with pytest.raises(IndexError, match="Dimension out of range"):
        NANSUM(z, [1], dtype=torch.complex64)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        NANSUM(x.to(torch.complex64), [0, 0])
    # Integer and bool inputs hold no NaN: their nansum is their sum, with
    # sum's dtype= and out= rules (a complex dtype= and sum's out= message
    # included), as torch runs it.
    for src in (i, i > 0):
        for dt in (torch.complex64, torch.complex128):
            got = reduce_op.nansum(src, 0, dtype=dt)
            assert got.dtype == dt and torch.equal(got, torch.sum(src, 0, dtype=dt))
        out = torch.empty(9, dtype=torch.complex64, device=device)
        assert torch.equal(reduce_op.nansum(src, 0, out=out), torch.sum(src, 0, dtype=torch.complex64))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
        reduce_op.nansum(i, 0, dtype=torch.int16, out=torch.empty(9, dtype=torch.int64, device=device))
    # As torch: an int input needing no gradient, and the meta kernel's shapes.
    m = torch.empty(2, 3, 4, device="meta", dtype=torch.bfloat16)
    assert NANSUM(m, [1], True).shape == torch.nansum(m, 1, True).shape
    assert NANSUM(m.int()).dtype == torch.nansum(m.int()).dtype == torch.int64


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_nansum_on_torchs_samples(device):
    pytest.importorskip("expecttest")

    def check(ours, theirs, s):
        _check(ours, s.input, *sample_reduction_args(s))

    assert check_torch_samples("nansum", reduce_op.nansum, torch.nansum, device, check) > 0


@pytest.mark.parametrize("device", DEVICES)
def test_nansum_autograd(device, gen):
    x = torch.randn(5, 7, dtype=torch.float64, generator=gen).to(device)
    x[1, 2] = x[3, 0] = float("nan")
    x.requires_grad_(True)
    for dim, keepdim in ((None, False), (1, False), (0, True)):
        ours = reduce_op.nansum(x, dim, keepdim) if dim is not None else reduce_op.nansum(x)
        theirs = torch.nansum(x, dim, keepdim) if dim is not None else torch.nansum(x)
        grad = torch.randn_like(theirs)
        (g_ours,) = torch.autograd.grad(ours, x, grad)
        (g_theirs,) = torch.autograd.grad(theirs, x, grad)
        assert torch.equal(g_ours, g_theirs)
        assert g_ours[1, 2] == 0 and g_ours[3, 0] == 0
    clean = torch.randn(4, 6, dtype=torch.float64, generator=gen).to(device).requires_grad_(True)
    torch.autograd.gradcheck(lambda t: reduce_op.nansum(t, 1), (clean,))
    torch.autograd.gradgradcheck(lambda t: reduce_op.nansum(t, [0], True), (clean,))
    y = torch.randn(3, 4, device=device, requires_grad=True)
    z = reduce_op.nansum(y * 1, 1)
    w = y * 1
    r = reduce_op.nansum(w, 1)
    w.mul_(2)  # the saved input changed in place: backward must refuse, as torch's does
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        r.sum().backward()
    assert z.grad_fn is not None and z.grad_fn.name() == "GpureduceNansumBackward"
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        reduce_op.nansum(y, out=torch.empty((), device=device))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_nansum_opcheck(device, gen):
    a = torch.randn(3, 5, 4, generator=gen).to(device)
    a[0, 1, 2] = float("nan")
    b = a.clone().requires_grad_(True)
    opcheck(NANSUM.default, (a,))
    opcheck(NANSUM.default, (b, [1], True))
    opcheck(NANSUM.default, (b,), {"dtype": torch.float64})
    opcheck(NANSUM.out, (a, [0, 2], False), {"out": torch.empty(5, device=device)})


# torch.compile with fullgraph, static and dynamic shapes, of nansum and
# prod (their Meta kernels and Autograd nodes), forward and backward,
# against eager.
@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_nansum_and_prod_compile(device, dynamic):
    torch._dynamo.reset()

    def f(x):
        return NANSUM.default(x * 2, [1], False) + torch.ops.gpureduce.prod.dim_int(x, 1, False) + \
            torch.ops.gpureduce.prod.default(x[:, :2])

    compiled = torch.compile(f, fullgraph=True, dynamic=dynamic)
    for n in (5, 9, 17):
        x = torch.randn(3, n, device=device)
        x[0, 1] = float("nan")
        torch.testing.assert_close(compiled(x), f(x), equal_nan=True)
        a, b = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        (g_eager,) = torch.autograd.grad(f(a).nansum(), a)
        (g_compiled,) = torch.autograd.grad(compiled(b).nansum(), b)
        torch.testing.assert_close(g_compiled, g_eager, equal_nan=True)
