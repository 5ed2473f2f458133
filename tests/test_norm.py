"""gpureduce::linalg_vector_norm against torch.linalg.vector_norm, on the CPU
and the GPU: floating and complex dtypes, shapes and layouts of the shared
axes, orders 2, 1, inf (the kernels' own), -inf, 0 and other p (staged),
over all dims, each dim and pairs of dims, no further from a float64
reference than torch is; special values at every place of rows around the
vector and block widths; large inputs (the GPU's split and column kernels),
three reduced dims that do not merge (passes that hand partials on to sum's
and amax's kernels), expanded dims and dims of size 1; the random cases of
the benchmark's sampler; dtype=, out=, empty inputs and torch's errors;
torch's own sample inputs; autograd, opcheck, torch.compile and the
drop-in."""
from __future__ import annotations

import itertools
import math

import pytest
import torch
from torch.library import opcheck

import reduce_op
from axes import (DEVICES, HAS_CUDA, LAYOUTS, SHAPES, assert_compiles_like_eager, check_torch_samples, labelled,
                  make_layout, random_cases)

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64]
INF = math.inf
# The kernels' own orders first, then the staged ones.
ORDS = [2, 1, INF, -INF, 0, 3, 0.5, -1.5]


def _check(ours: torch.Tensor, x: torch.Tensor, ord=2, dim=None, keepdim: bool = False, dtype=None,
           summed: bool = False) -> None:
    """dtype, shape and device as torch's; NaN and infinities where torch's
    result has them; elsewhere within a few roundings of the result dtype
    of the float64 norm, or no further from it than torch's own result plus
    one such rounding. summed: the float64 norm of orders other than 0 and
    +-inf as the root of torch.sum's (cascaded) sum of |x|^ord, where
    vector_norm's own float64 sum of many equal terms strays further than
    that tolerance (70001 copies of a square: 2^-40 of the norm)."""
    ref = torch.linalg.vector_norm(x, ord, dim, keepdim, dtype=dtype)
    assert ours.dtype == ref.dtype and ours.shape == ref.shape, (ours.dtype, ref.dtype, ours.shape, ref.shape)
    assert ours.device == ref.device
    wide = x.cpu().to(torch.complex128 if x.is_complex() else torch.float64)
    if summed and ord not in (0, INF, -INF):
        exact = torch.sum(wide.abs() ** ord, dim if dim is not None else [], keepdim) ** (1.0 / ord)
    else:
        exact = torch.linalg.vector_norm(wide, ord, dim, keepdim)
    o, r = ours.cpu().to(torch.float64), ref.cpu().to(torch.float64)
    finite = r.isfinite()
    assert torch.equal(o[~finite].nan_to_num(0.5), r[~finite].nan_to_num(0.5)), (o[~finite], r[~finite])
    # float64's reference is itself rounded as ours is (sums of 2^22 terms
    # in another order: 2^-43 measured): 2^-40 of the norm.
    eps = 2.0 ** -40 if ref.dtype == torch.float64 else torch.finfo(ref.dtype).eps * 4
    err, their_err = (o - exact).abs(), (r - exact).abs()
    ok = ~finite | (err <= eps * exact.abs()) | (err <= their_err + eps * exact.abs()) | (err < 1e-300)
    assert bool(ok.all()), (err[~ok][:4], their_err[~ok][:4], o[~ok][:4], exact[~ok][:4])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_norm_matches_torch(dtype, shape, layout, device, gen):
    x = make_layout(shape, dtype, layout, device, gen) * 3 + 1
    orders = itertools.cycle(ORDS)
    keeps = itertools.cycle([False, True, True])
    for ord in ORDS:
        if x.numel() == 0 and (ord < 0 or ord == INF):
            continue  # no identity: test_norm_empty_and_errors
        _check(reduce_op.vector_norm(x, ord), x, ord)
    for d in range(-x.dim(), max(x.dim(), 1)):
        for _ in range(3):
            ord, keepdim = next(orders), next(keeps)
            if x.dim() and x.shape[d] == 0 and (ord < 0 or ord == INF):
                continue
            _check(reduce_op.vector_norm(x, ord, d, keepdim), x, ord, d, keepdim)
    for pair in itertools.combinations(range(x.dim()), 2):
        ord = next(orders)
        if any(x.shape[d] == 0 for d in pair) and (ord < 0 or ord == INF):
            continue
        _check(reduce_op.vector_norm(x, ord, pair), x, ord, pair)


# A NaN anywhere makes a slice's norm NaN (an infinity makes it inf, but for
# -inf's smallest magnitude); -0.0 has magnitude +0.0; squares past float's
# range overflow to inf as torch's do. Each special value sits at a random
# place of rows of lengths around vector, block and CPU-block widths, so that
# vector loads, lanes and tails all meet it.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_norm_special_values(dtype, device, gen):
    for n in (2, 5, 8, 9, 33, 64, 65, 129, 1000, 70001):
        for special in (math.nan, math.inf, -math.inf, -0.0):
            x = torch.randn(n, generator=gen).to(dtype)
            x[int(torch.randint(0, n, (1,), generator=gen))] = special
            x = x.to(device)
            for ord in (2, 1, INF, -INF):
                _check(reduce_op.vector_norm(x, ord), x, ord)
                e = x.view(1, n).expand(3, n)
                _check(reduce_op.vector_norm(e, ord, 1), e, ord, 1)
    zeros = -torch.zeros(40, dtype=dtype, device=device)
    for ord in (2, 1, INF):
        got = reduce_op.vector_norm(zeros, ord)
        assert got.item() == 0 and not got.signbit(), (ord, got)
    big = torch.full((5,), torch.finfo(dtype).max / 2, dtype=dtype, device=device)
    _check(reduce_op.vector_norm(big, 2), big, 2)  # inf, as torch's: no scaling
    _check(reduce_op.vector_norm(big[:1], 2), big[:1], 2)  # one element: its magnitude, not a root of its square


# Reduced dims of stride 0 are read as one element, their copies scaling the
# sum before the root (orders 1 and 2) or changing nothing (inf), and the
# staged orders' powers taken of the distinct elements: k float64 squares
# overflow where one does not, as torch's k adds do; NaN, inf and -0.0
# among the repeats; repeats alone, with a dim read in full, and with a
# kept expanded dim; 3 to 1537 copies.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.complex64], ids=str)
def test_norm_of_repeats(dtype, device, gen):
    # float64: its square fits, three of them do not. The GPU kernels sum
    # narrower floats' norms in float64 where they can, which do not
    # overflow where torch's float sums do: there a large magnitude alone.
    big = math.sqrt(torch.finfo(dtype).max) / 1.5 if dtype == torch.float64 else 1e15
    wide = torch.complex128 if dtype.is_complex else torch.float64
    for n, k in ((5, 4), (33, 3), (257, 1537)):
        x = torch.randn(n, generator=gen).to(dtype)
        x[0], x[n // 2] = big, -0.0
        if n > 5:
            x[1], x[2] = math.nan, -math.inf
        x = x.to(device)
        cases = [(x[None].expand(k, n), [0]), (x[None].expand(k, n), [0, 1]), (x[:, None].expand(n, k), 1),
                 (x[None, :, None].expand(k, n, 3), [0, 1]), (x[None, :, None].expand(k, n, 3), 0)]
        for (e, dims), ord in itertools.product(cases, (2, 1, INF, -INF, 0, 3)):
            with labelled(f"[{n}] expanded to {tuple(e.shape)} over {dims}, ord {ord}"):
                _check(reduce_op.vector_norm(e, ord, dims), e, ord, dims, summed=True)
                _check(reduce_op.vector_norm(e, ord, dims, True, dtype=wide), e, ord, dims, True, wide, summed=True)


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.complex64], ids=str)
def test_norm_large_and_many_dims(dtype, device, gen):
    big = (torch.randn(1 << 22, generator=gen) * 3 + 2).to(dtype).to(device)
    for ord in (2, 1, INF):
        _check(reduce_op.vector_norm(big, ord), big, ord)
    for rows, cols in ((1 << 11, 1 << 11), (1 << 14, 1 << 8), (1 << 8, 1 << 14), (3, 1 << 20), (1 << 20, 3)):
        m = big[:rows * cols].view(rows, cols)
        _check(reduce_op.vector_norm(m, 2, 0), m, 2, 0)
        _check(reduce_op.vector_norm(m, INF, 1), m, INF, 1)
        _check(reduce_op.vector_norm(m, 1, 0, True), m, 1, 0, True)
    x = (torch.randn(6, 2, 70, 5, 30, generator=gen) * 3).to(dtype).to(device)
    for dims, ord in itertools.product(([0, 2], [0, 2, 4], [0, 2, 3, 4], [1, 3, 4]), (2, 1, INF)):
        _check(reduce_op.vector_norm(x, ord, dims), x, ord, dims)
        p = x.permute(4, 1, 0, 3, 2)
        _check(reduce_op.vector_norm(p, ord, dims), p, ord, dims)
        s = x[:, :, ::3]
        _check(reduce_op.vector_norm(s, ord, dims, True), s, ord, dims, True)
    for n, k in ((4000, 37), (70000, 3)):  # repeats are read as they are
        e = torch.randn(1, n, generator=gen).to(dtype).to(device).expand(k, n)
        for dims, ord in itertools.product(([0, 1], [0], [1]), (2, 1, INF, 0)):
            _check(reduce_op.vector_norm(e, ord, dims), e, ord, dims)


@pytest.mark.parametrize("device,seed,n,max_bytes", [("cpu", 7, 80, 1 << 16)] + (
    [("cuda", s, 200, 1 << 25) for s in (41, 42)] if HAS_CUDA else []))
def test_norm_random_cases(device, seed, n, max_bytes):
    checked = 0
    for i, (label, x, kw) in enumerate(random_cases(device, seed, n, max_bytes)):
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            x = x.float()
        ord = (2, 1, INF, 2, -INF, 3)[i % 6]
        dim, keepdim = kw.get("dim"), kw.get("keepdim", False)
        if x.numel() == 0 and (ord < 0 or ord == INF):
            ord = 2
        with labelled(label):
            _check(reduce_op.vector_norm(x, ord, dim, keepdim), x, ord, dim, keepdim)
        checked += 1
    assert checked == n


@pytest.mark.parametrize("device", DEVICES)
def test_norm_dtype_out_and_errors(device, gen):
    x = (torch.randn(33, 65, generator=gen) * 5).to(device)
    for inp, dtype in ((x.half(), torch.float32), (x.bfloat16(), torch.float64), (x, torch.float64),
                       (x.to(torch.complex64), torch.complex128), (x.half(), torch.half)):
        for ord in (2, 1, INF, -INF, 0, 3):
            _check(reduce_op.vector_norm(inp, ord, 1, dtype=dtype), inp, ord, 1, dtype=dtype)
    out = torch.empty(3, dtype=torch.float64, device=device)
    assert reduce_op.vector_norm(x, 2, 0, dtype=torch.float64, out=out) is out  # resized
    torch.testing.assert_close(out, torch.linalg.vector_norm(x, 2, 0, dtype=torch.float64))
    z = torch.empty(0, device=device)
    reduce_op.vector_norm(x.to(torch.complex64), 3, 1, True, out=z)
    torch.testing.assert_close(z, torch.linalg.vector_norm(x.to(torch.complex64), 3, 1, True))

    def same_error(*args, **kwargs):
        with pytest.raises(Exception) as theirs:
            torch.linalg.vector_norm(*args, **kwargs)
        with pytest.raises(type(theirs.value)) as ours:
            reduce_op.vector_norm(*args, **kwargs)
        assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0], (ours.value, theirs.value)

    for t in (torch.int64, torch.int8, torch.bool):
        same_error(x.to(t))
    same_error(x, dtype=torch.int64)
    same_error(x, dtype=torch.complex64)
    same_error(x.to(torch.complex64), dtype=torch.float32)
    same_error(x, dtype=torch.half)
    same_error(x.double(), dtype=torch.float32)
    same_error(x.bfloat16(), dtype=torch.half)
    same_error(x, 2, out=torch.empty(0, dtype=torch.float64, device=device))
    same_error(x, 2, dtype=torch.float64, out=torch.empty(0, device=device))
    same_error(x, 2, out=torch.empty(0, dtype=torch.complex64, device=device))
    same_error(x, 2, 2)
    same_error(x, 2, [1, -1])
    same_error(x, 1 + 2j)
    for ord in ("fro", None, [2]):  # not a Number: TypeError
        same_error(x, ord)
    torch.testing.assert_close(reduce_op.vector_norm(x, torch.tensor(3.0), 1), torch.linalg.vector_norm(x, 3, 1))
    with pytest.raises(NotImplementedError, match="not implemented for 'Float8_e4m3fn'"):
        reduce_op.vector_norm(x.to(torch.float8_e4m3fn))
    for shape, dim in (((0,), None), ((0, 3), None), ((0, 3), []), ((0, 3), 0), ((3, 0), (1,)), ((3, 0), -1),
                       ((0, 3), 1), ((2, 0, 3), (0, 2))):
        e = torch.empty(shape, device=device)
        for ord in ORDS:
            try:
                theirs = torch.linalg.vector_norm(e, ord, dim)
            except RuntimeError:
                same_error(e, ord, dim)
                continue
            ours = reduce_op.vector_norm(e, ord, dim)
            assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
            assert torch.equal(ours, theirs), (shape, dim, ord, ours, theirs)
    m = torch.empty(2, 3, 4, device="meta", dtype=torch.bfloat16)
    assert reduce_op.vector_norm(m, 1, 1, True).shape == (2, 1, 4)
    assert reduce_op.vector_norm(m.to(torch.complex64), INF, [0, 2]).dtype == torch.float32
    assert reduce_op.vector_norm(m, 2, dtype=torch.float64).dtype == torch.float64


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_norm_on_torchs_samples(device):
    pytest.importorskip("expecttest")

    def check(ours, theirs, s):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours.dtype, theirs.dtype)
        tol = 2e-2 if theirs.dtype in (torch.float16, torch.bfloat16) else 1e-5
        torch.testing.assert_close(ours, theirs, rtol=tol, atol=tol, equal_nan=True)

    assert check_torch_samples("linalg.vector_norm", reduce_op.vector_norm, torch.linalg.vector_norm, device,
                               check) > 0


@pytest.mark.parametrize("device", DEVICES)
def test_norm_autograd(device, gen):
    # Magnitudes away from 0 and from each other (no ties): every order is
    # smooth there.
    x = (torch.rand(5, 7, 3, dtype=torch.float64, generator=gen) + 0.5)
    x = (x * torch.where(torch.rand(5, 7, 3, generator=gen) < 0.5, -1.0, 1.0).double()).to(device).requires_grad_(True)
    for ord in ORDS:
        for dim, keepdim in (([0, 1, 2], False), (1, False), (0, True), ([0, 2], False)):
            ours = reduce_op.vector_norm(x, ord, dim, keepdim)
            theirs = torch.linalg.vector_norm(x, ord, dim, keepdim)
            grad = torch.randn_like(theirs)
            (g_ours,) = torch.autograd.grad(ours, x, grad, allow_unused=True)
            (g_theirs,) = torch.autograd.grad(theirs, x, grad, allow_unused=True)
            if ord == 0:  # no gradient, as torch's
                assert g_ours is None and g_theirs is None
                continue
            torch.testing.assert_close(g_ours, g_theirs, rtol=1e-10, atol=1e-12)
    assert reduce_op.vector_norm(x, 2, 1).grad_fn.name() == "GpureduceLinalgVectorNormBackward"
    for ord in (2, 1, INF, -INF, 3, 0.5):
        f = lambda t, ord=ord: reduce_op.vector_norm(t, ord, 1)  # noqa: E731
        torch.autograd.gradcheck(f, (x,))
        torch.autograd.gradgradcheck(f, (x,))
    z = torch.randn(4, 6, dtype=torch.complex128, generator=gen).to(device).requires_grad_(True)
    for ord in (2, 1, 3):
        (g_ours,) = torch.autograd.grad(reduce_op.vector_norm(z, ord, 1).sum(), z)
        (g_theirs,) = torch.autograd.grad(torch.linalg.vector_norm(z, ord, 1).sum(), z)
        torch.testing.assert_close(g_ours, g_theirs)
    torch.autograd.gradcheck(lambda t: reduce_op.vector_norm(t, 2, 0), (z,))
    h = x.detach().half().requires_grad_(True)  # dtype=: the gradient comes back in the input's dtype
    (g,) = torch.autograd.grad(reduce_op.vector_norm(h, 2, dtype=torch.float32), h)
    assert g.dtype == torch.float16
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        reduce_op.vector_norm(x, 2, 0, out=torch.empty((), dtype=torch.float64, device=device))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_norm_opcheck(device, gen):
    a = torch.randn(3, 5, 4, generator=gen).to(device)
    b = a.clone().requires_grad_(True)
    op = torch.ops.gpureduce.linalg_vector_norm
    for ord in (2, 1, INF, 0, 3):
        opcheck(op.default, (a, ord, [1]))
        opcheck(op.default, (b, ord, [0, 2], True))
    opcheck(op.default, (b,))
    opcheck(op.default, (a.half(), 2, None, False), {"dtype": torch.float32})
    opcheck(op.out, (a, 1, [0, 2]), {"out": torch.empty(5, device=device)})


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_norm_compiles(device, dynamic, gen):
    def f(t):
        return t / (reduce_op.vector_norm(t, 2, 1, keepdim=True) + 1e-5) + reduce_op.vector_norm(t, INF)

    assert_compiles_like_eager(f, device, dynamic, gen)


@pytest.mark.parametrize("device", DEVICES)
def test_norm_drop_in(device, gen):
    x = torch.randn(6, 9, dtype=torch.float64, generator=gen).to(device).requires_grad_(True)
    with reduce_op.replace_torch_reductions():
        routed = [torch.linalg.vector_norm(x), torch.linalg.vector_norm(x, 1, 0, keepdim=True),
                  torch.linalg.vector_norm(x=x, ord=INF, dim=[0, 1])]
        with pytest.raises(TypeError):
            torch.linalg.vector_norm(x, "fro")
    assert [t.grad_fn.name() for t in routed] == ["GpureduceLinalgVectorNormBackward"] * 3
    torch.testing.assert_close(routed[1], torch.linalg.vector_norm(x, 1, 0, keepdim=True))
    reduce_op.patch()
    try:
        # torch.norm, Tensor.norm and F.normalize call torch.linalg.vector_norm.
        calls = [torch.norm(x), x.norm(1, dim=1), torch.nn.functional.normalize(x, dim=1)]
    finally:
        reduce_op.unpatch()
    assert calls[0].grad_fn.name() == "GpureduceLinalgVectorNormBackward"
    assert calls[1].grad_fn.name() == "GpureduceLinalgVectorNormBackward"
    torch.testing.assert_close(calls[2], torch.nn.functional.normalize(x, dim=1))
    assert torch.linalg.vector_norm(x).grad_fn.name() != "GpureduceLinalgVectorNormBackward"
