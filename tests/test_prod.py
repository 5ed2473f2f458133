"""gpureduce::prod beyond the op table (tests/test_ops.py runs its matrix
of dtypes, shapes, layouts and dims, empty and expanded inputs included):
dtype= arguments and errors, and the gradient (with no zero, one zero and
several in a slice), against torch.prod."""
import pytest
import torch
from torch.library import opcheck

import reduce_op

from axes import DEVICES, check_torch_samples, near_one


def _assert_close(ours, ref):
    assert ours.dtype == ref.dtype and ours.shape == ref.shape
    if ref.dtype.is_floating_point or ref.dtype.is_complex:
        tol = {torch.float16: 2e-2, torch.bfloat16: 5e-2}.get(ref.dtype, 1e-4)
        torch.testing.assert_close(ours.cpu(), ref.cpu(), rtol=tol, atol=tol, equal_nan=True)
    else:
        assert torch.equal(ours.cpu(), ref.cpu()), (ours, ref)


@pytest.mark.parametrize("device", DEVICES)
def test_prod_dtype_argument_and_errors(device, gen):
    x = near_one((33, 65), torch.float16, "contiguous", device, gen)
    _assert_close(torch.ops.gpureduce.prod(x, dtype=torch.float64), torch.prod(x, dtype=torch.float64))
    _assert_close(torch.ops.gpureduce.prod.dim_int(x, 1, dtype=torch.float32), torch.prod(x, 1, dtype=torch.float32))
    with pytest.raises(IndexError):
        torch.ops.gpureduce.prod.dim_int(x, 2)


def _prod(t, dim, keepdim, **kw):
    return reduce_op.prod(t, dim, keepdim, **kw) if dim is not None else reduce_op.prod(t, **kw)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1])
def test_prod_of_float16_into_subnormals(device, dim, gen):
    # Products of 30 to 42 float16 factors in [0.5, 1) fall to float16's
    # subnormals (below 6.1e-5, steps of 6e-8): each output must be the
    # float64 product rounded once, within half a step. torch's CPU prod
    # rounds every partial product to float16 and was tens of steps off there
    # (2026-12-02), so the op table's comparison with torch accepts a result
    # nearer the float64 product than torch's (axes.assert_op_matches).
    step = torch.finfo(torch.float16).eps * torch.finfo(torch.float16).tiny
    for rows in (30, 36, 42):
        x = (torch.rand((rows, 257), generator=gen) * 0.5 + 0.5).to(torch.float16)
        x = (x if dim == 0 else x.t().contiguous()).to(device)
        ours = torch.ops.gpureduce.prod.dim_int(x, dim, False).cpu().double()
        exact = x.cpu().double().prod(dim)
        assert (exact < torch.finfo(torch.float16).tiny).any()
        err = (ours - exact).abs()
        assert (err <= 0.5 * step + 1e-3 * exact).all(), (err.max().item(), rows)


# Integer products of 1- and 2-byte inputs (and bool): every result exact
# modulo 2^64, as torch's CPU product computed in int64. The factors are
# odd (a product of evens would be 0 modulo 2^64 after 64 of them) and of
# the whole range, the extremes (-128, 255, -32768, 32767) at random
# places; lengths around the vectors (16 bytes), ragged rows, long rows for
# the split kernels, columns and a full product.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.bool], ids=str)
def test_prod_of_narrow_integers_is_exact(device, dtype, gen):
    def factors(shape):
        if dtype == torch.bool:  # True but for a few False
            return torch.rand(shape, generator=gen) > 1e-4
        info = torch.iinfo(dtype)
        x = torch.randint(info.min, info.max + 1, shape, generator=gen, dtype=torch.int64) | 1
        extremes = torch.tensor([info.min, info.max], dtype=torch.int64)
        spots = torch.rand(shape, generator=gen) < 0.01
        x[spots] = extremes[torch.randint(0, 2, (int(spots.sum()),), generator=gen)]
        return x.to(dtype)

    def check(x, *dim):
        ours = torch.ops.gpureduce.prod.dim_int(x.to(device), *dim) if dim else torch.ops.gpureduce.prod(x.to(device))
        ref = torch.prod(x.to(torch.int64), *dim)
        assert ours.dtype == torch.int64
        assert torch.equal(ours.cpu(), ref), (x.shape, dim)

    for n in (1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1000, (1 << 20) + 3):
        check(factors((n,)))
    for rows, width in ((300, 17), (64, 129), (7, 4099), (3, 100003), (33, 16)):
        x = factors((rows, width))
        check(x, 1)
        check(x, 0)
    check(factors((5, 9, 40))[:, 1:, 3:], 1)  # a strided view


# The gradient of each element is the product of the others in its slice:
# right with no zero, one zero, or several in a slice (then zero), as
# torch's is; gradcheck and gradgradcheck in float64; the backward node's
# name; and no gradient through an integer result, as torch refuses it.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("zeros", [0, 1, 3])
def test_prod_autograd(device, zeros, gen):
    x = torch.randn(4, 5, dtype=torch.float64, generator=gen).to(device)
    if zeros >= 1:
        x[1, 2] = 0
    if zeros >= 3:
        x[1, 4] = 0
        x[3, 0] = 0
    for dim, keepdim in ((None, False), (1, False), (0, True), (-1, True)):
        a = x.clone().requires_grad_(True)
        b = x.clone().requires_grad_(True)
        ours = _prod(a, dim, keepdim)
        theirs = torch.prod(b, dim, keepdim) if dim is not None else torch.prod(b)
        grad = torch.randn(theirs.shape, dtype=torch.float64, generator=gen).to(device)
        (g_ours,) = torch.autograd.grad(ours, a, grad)
        (g_theirs,) = torch.autograd.grad(theirs, b, grad)
        torch.testing.assert_close(g_ours, g_theirs, rtol=1e-12, atol=1e-12)
        assert ours.grad_fn.name() == "GpureduceProdBackward"
        torch.autograd.gradcheck(lambda t: _prod(t, dim, keepdim), (a,))
        torch.autograd.gradgradcheck(lambda t: _prod(t, dim, keepdim), (a,))
    # A zero gradient where a slice holds two zeros, an exact one where it
    # holds one.
    if zeros == 3:
        a = x.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(reduce_op.prod(a, 1).sum(), a)
        assert torch.equal(g[1], torch.zeros_like(g[1]))
        torch.testing.assert_close(g[3, 0], torch.prod(x[3, 1:]), rtol=1e-12, atol=0)
        assert torch.equal(g[3, 1:], torch.zeros_like(g[3, 1:]))


@pytest.mark.parametrize("device", DEVICES)
def test_prod_autograd_dtypes_and_shapes(device, gen):
    # dtype=: the gradient in the result's dtype, cast back to the input's.
    h = torch.randn(3, 40, generator=gen).to(torch.float16).to(device)
    a, b = h.clone().requires_grad_(True), h.clone().requires_grad_(True)
    reduce_op.prod(a, 1, dtype=torch.float32).sum().backward()
    torch.prod(b, 1, dtype=torch.float32).sum().backward()
    assert a.grad.dtype == torch.float16
    torch.testing.assert_close(a.grad, b.grad, rtol=2e-2, atol=1e-3)
    c = torch.randn(3, 4, dtype=torch.complex128, generator=gen).to(device).requires_grad_(True)
    torch.autograd.gradcheck(lambda t: reduce_op.prod(t, 1), (c,))
    s = torch.randn((), dtype=torch.float64, generator=gen).to(device).requires_grad_(True)
    torch.autograd.gradcheck(lambda t: reduce_op.prod(t), (s,))
    torch.autograd.gradcheck(lambda t: reduce_op.prod(t, 0), (s,))
    e = torch.zeros(0, 3, dtype=torch.float64, device=device, requires_grad=True)
    assert torch.autograd.grad(reduce_op.prod(e, 0).sum(), e)[0].shape == (0, 3)
    base = torch.randn(5, dtype=torch.float64, generator=gen).to(device).requires_grad_(True)
    torch.autograd.gradcheck(lambda t: reduce_op.prod(t.expand(4, 5), 0), (base,))  # an expanded input
    with pytest.raises(RuntimeError, match="Autograd not support dtype"):
        reduce_op.prod(torch.randn(3, device=device, requires_grad=True), dtype=torch.int64)
    y = torch.randn(3, 4, device=device, requires_grad=True)
    opcheck(torch.ops.gpureduce.prod.default, (y,))
    opcheck(torch.ops.gpureduce.prod.dim_int, (y, 1, True))
    opcheck(torch.ops.gpureduce.prod.int_out, (y.detach(), 1, True), {"out": torch.empty(3, 1, device=device)})
    opcheck(torch.ops.gpureduce.prod.int_out, (y.detach(), 0), {"dtype": torch.float64,
                                                                "out": torch.empty(4, dtype=torch.float64,
                                                                                   device=device)})


# PyTorch's own sample inputs for torch.prod (its OpInfo), through
# reduce_op.prod: the same result, or an error of the same type.
@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_prod_on_torchs_samples(device):
    pytest.importorskip("expecttest")
    compared = check_torch_samples("prod", reduce_op.prod, torch.prod, device,
                                   lambda ours, theirs, s: _assert_close(ours, theirs))
    assert compared > 0
