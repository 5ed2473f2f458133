"""gpureduce.sum against torch.sum: the conformance matrix, out=, errors,
opcheck, autograd and torch.compile. CUDA cases run where a GPU is present."""
import pytest
import torch
from torch.library import opcheck

import reduce_op
from axes import (DEVICES, DTYPE_ARGS, DTYPES, LAYOUTS, SHAPES, assert_matches_torch, dim_patterns, random_tensor,
                  make_layout)

OPS = torch.ops.gpureduce


def device_param(devices=DEVICES):
    return pytest.mark.parametrize(
        "device", [pytest.param(d, marks=[pytest.mark.cuda] if d == "cuda" else []) for d in devices])


@device_param()
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matrix(dtype, shape, layout, device, gen):
    x = make_layout(shape, dtype, layout, device, gen)
    for dim in dim_patterns(len(shape)):
        for keepdim in (False, True):
            ours = reduce_op.sum(x, dim, keepdim)
            assert_matches_torch(ours, x, dim, keepdim)
    # The default overload (no dim) directly.
    assert_matches_torch(OPS.sum(x), x, None, False)


# Expanded inputs too: where every reduced dim of more than one element has
# stride 0, the result is the op's fold of the input in one kernel, which
# must compute in the dtype the reduction would have (dtype= included).
@device_param()
@pytest.mark.parametrize("in_dtype,dtype", DTYPE_ARGS + [(torch.bfloat16, None), (torch.float16, torch.float64),
                                                         (torch.uint8, None), (torch.bool, None)], ids=str)
# (2, 3, 2, 3, 2): three reduced dims that do not merge take two passes,
# whose partials must be of the result's accumulator (float64 for dtype=float64).
@pytest.mark.parametrize("shape", [(), (7,), (33, 65), (2, 3, 4, 5), (2, 3, 2, 3, 2)], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "expanded"])
def test_dtype_argument(in_dtype, dtype, shape, layout, device, gen):
    x = make_layout(shape, in_dtype, layout, device, gen)
    for dim in dim_patterns(len(shape)):
        for keepdim in (False, True):
            assert_matches_torch(reduce_op.sum(x, dim, keepdim, dtype=dtype), x, dim, keepdim, dtype)
    assert_matches_torch(OPS.sum(x, dtype=dtype), x, None, False, dtype)


# Inputs expanded along several dims, kept and reduced ones together (a kept
# stride-0 dim is computed once and broadcast, a reduced one folded in), and
# small ones read as they are (256 KB with the repeats): sizes on both sides.
@device_param()
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("n,reps", [(7, 3), (1194, 2), (16384, 5)], ids=str)
def test_expanded_dims_kept_and_reduced(n, reps, dtype, device, gen):
    base = random_tensor((n,), dtype, device, gen).to(device)
    x = base[None, :, None].expand(2, -1, reps)  # strides (0, 1, 0)
    for dim in dim_patterns(3):
        for keepdim in (False, True):
            assert_matches_torch(reduce_op.sum(x, dim, keepdim), x, dim, keepdim)
    if dtype != torch.int32:
        assert_matches_torch(reduce_op.sum(x, (1, 2), dtype=torch.float64), x, (1, 2), False, torch.float64)


# Reduced dims that are all repeats fold as 0 + k * x, in every dtype that fold
# meets, below and above the size where the CPU's fold leaves its own loop
# for at::add_out (16K elements). A complex's parts are scaled each on its
# own: a complex multiply by k + 0j turned inf + 1j into inf + nan j, where
# torch.sum's k adds give inf + k j.
@device_param()
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128, torch.float16, torch.bfloat16, torch.float32,
                                   torch.float64, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("n", [5, 20000], ids=str)
def test_repeats_folded(dtype, n, device, gen):
    base = random_tensor((n,), dtype, device, gen)
    if dtype.is_complex:
        base[0] = complex(float("inf"), 1.0)
        base[1] = complex(-2.0, float("-inf"))
    for reps in (3, 70):
        x = base[:, None].expand(-1, reps)
        ours = reduce_op.sum(x, 1)
        if dtype.is_complex:
            torch.testing.assert_close(torch.view_as_real(ours[:2]), torch.view_as_real(torch.sum(x[:2], 1)),
                                       rtol=0, atol=0)
            ours, x = ours[2:], x[2:]
        assert_matches_torch(ours, x, 1, False)
        for keepdim in (False, True):
            assert_matches_torch(reduce_op.sum(x, (0, 1), keepdim), x, (0, 1), keepdim)


@device_param()
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16])
def test_out(dtype, device, gen):
    x = make_layout((6, 9, 4), dtype, "sliced", device, gen)
    for dim, keepdim in [([1], False), ([0, 2], True), (None, False)]:
        ref = torch.sum(x, dim if dim is not None else [], keepdim)
        out = torch.full((2,), 7, dtype=ref.dtype, device=device)  # wrong shape: resized
        ret = reduce_op.sum(x, dim, keepdim, out=out)
        assert ret is out
        assert_matches_torch(out, x, dim, keepdim)
    # out's dtype decides when dtype= is absent, as in torch.
    out = torch.empty(0, dtype=torch.float64, device=device)
    OPS.sum.IntList_out(x, [1], False, out=out)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, torch.sum(x, 1, out=torch.empty(0, dtype=torch.float64, device=device)))


def _raises_like_torch(fn_ours, fn_torch):
    with pytest.raises(Exception) as theirs:
        fn_torch()
    with pytest.raises(type(theirs.value)) as ours:
        fn_ours()
    return str(theirs.value), str(ours.value)


@device_param()
def test_errors_match_torch(device):
    x = torch.randn(2, 3, device=device)
    t, o = _raises_like_torch(lambda: reduce_op.sum(x, 5), lambda: torch.sum(x, 5))
    assert o == t  # IndexError: Dimension out of range (expected to be in range of [-2, 1], but got 5)
    t, o = _raises_like_torch(lambda: reduce_op.sum(x, -3), lambda: torch.sum(x, -3))
    assert o == t
    t, o = _raises_like_torch(lambda: reduce_op.sum(x, [0, -2]), lambda: torch.sum(x, [0, -2]))
    assert o == t  # dim 0 appears multiple times in the list of dims
    s = torch.tensor(3.0, device=device)
    t, o = _raises_like_torch(lambda: reduce_op.sum(s, 1), lambda: torch.sum(s, 1))
    assert o == t
    out = torch.empty(3, dtype=torch.float64, device=device)
    t, o = _raises_like_torch(lambda: reduce_op.sum(x, 0, dtype=torch.float32, out=out),
                              lambda: torch.sum(x, 0, dtype=torch.float32, out=out))
    assert o == t  # Expected out tensor to have dtype float, but got double instead
    xg = torch.randn(3, device=device, requires_grad=True)
    t, o = _raises_like_torch(lambda: reduce_op.sum(xg, 0, out=torch.empty((), device=device)),
                              lambda: torch.sum(xg, 0, out=torch.empty((), device=device)))
    assert o == t
    f8 = torch.randn(4, device=device).to(torch.float8_e4m3fn)
    with pytest.raises(NotImplementedError, match="not implemented for 'Float8_e4m3fn'"):
        reduce_op.sum(f8)


def test_zero_dim_accepts_dim_zero():
    s = torch.tensor(2.5)
    for dim in (0, -1, [0], []):
        assert_matches_torch(reduce_op.sum(s, dim), s, dim, False)
        assert_matches_torch(reduce_op.sum(s, dim, True), s, dim, True)


@pytest.mark.cuda
def test_out_on_other_device_is_rejected():
    x = torch.randn(4, device="cuda")
    with pytest.raises(RuntimeError, match="Expected out tensor to be on"):
        reduce_op.sum(x, 0, out=torch.empty(()))


def _opcheck_samples(device, requires_grad):
    g = torch.Generator().manual_seed(0)
    dt = torch.float64 if requires_grad else torch.float32
    a = torch.randn(5, 7, generator=g, dtype=dt).to(device).requires_grad_(requires_grad)
    b = torch.randn(3, 4, 6, generator=g, dtype=dt).to(device).permute(2, 0, 1).requires_grad_(requires_grad)
    return a, b


@pytest.mark.slow
@device_param()
@pytest.mark.parametrize("requires_grad", [False, True])
def test_opcheck(device, requires_grad):
    a, b = _opcheck_samples(device, requires_grad)
    opcheck(OPS.sum.default, (a,))
    opcheck(OPS.sum.default, (b,), {"dtype": torch.float64})
    opcheck(OPS.sum.dim_IntList, (a, [1], False))
    opcheck(OPS.sum.dim_IntList, (b, [0, 2], True))
    opcheck(OPS.sum.dim_IntList, (b, None, False), {"dtype": torch.float64})
    if not requires_grad:
        opcheck(OPS.sum.IntList_out, (a, [0], False), {"out": torch.empty(7, device=device)})
        opcheck(OPS.sum.IntList_out, (b, [1, 2], True), {"out": torch.empty(6, 1, 1, device=device)})
    else:
        # out= is not differentiable, in torch as here.
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            OPS.sum.IntList_out(a, [0], False, out=torch.empty(7, dtype=a.dtype, device=device))


@device_param()
def test_gradcheck(device):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, 5, generator=g, dtype=torch.float64).to(device).requires_grad_()
    for dim, keepdim in [(None, False), ([1], False), ([0, 2], True), ([-1], False), ([], True)]:
        f = lambda t: reduce_op.sum(t, dim, keepdim)  # noqa: E731
        assert torch.autograd.gradcheck(f, (x,))
        assert torch.autograd.gradgradcheck(f, (x,))
    # dtype= casts back in the backward.
    xf = torch.randn(4, 3, device=device, requires_grad=True)
    y = reduce_op.sum(xf, 1, dtype=torch.float64)
    (gx,) = torch.autograd.grad(y.sum(), xf)
    assert gx.dtype == torch.float32 and torch.equal(gx, torch.ones_like(xf))


@pytest.mark.slow
@device_param()
@pytest.mark.parametrize("dynamic", [False, True])
def test_torch_compile(device, dynamic):
    torch._dynamo.reset()

    def f(x):
        return OPS.sum.dim_IntList(x * 2, [1], False) + OPS.sum.default(x)

    compiled = torch.compile(f, fullgraph=True, dynamic=dynamic)
    for n in (5, 9, 17):
        x = torch.randn(3, n, device=device)
        torch.testing.assert_close(compiled(x), f(x))
        torch.testing.assert_close(compiled(x), torch.sum(x * 2, 1) + torch.sum(x))
