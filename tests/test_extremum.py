"""gpureduce::amax and gpureduce::amin against torch.amax and torch.amin, on
the CPU and the GPU, beyond the op table (tests/test_ops.py runs their matrix
of dtypes, shapes, layouts and dims, empty and expanded inputs included):
NaN, infinities and integer extremes through every kernel shape, dims lists,
out=, torch's errors, the random cases of the benchmark's sampler, torch's
own sample inputs, the gradient (split among ties), opcheck and
torch.compile. Results are exact: each is one of the inputs."""
from __future__ import annotations


import pytest
import torch
from torch.library import opcheck

import reduce_op
from axes import DEVICES, DTYPES, HAS_CUDA, check_torch_samples, labelled, random_cases, random_data


OPS = {"amax": (reduce_op.amax, torch.amax, torch.ops.gpureduce.amax),
       "amin": (reduce_op.amin, torch.amin, torch.ops.gpureduce.amin)}
REAL_DTYPES = [d for d in DTYPES if not d.is_complex]


def _same(ours: torch.Tensor, ref: torch.Tensor) -> None:
    """The same dtype, shape and values, NaN where torch's is NaN (-0.0 and
    +0.0 tie, and either may win, as in torch)."""
    assert ours.dtype == ref.dtype and ours.shape == ref.shape, (ours.dtype, ref.dtype, ours.shape, ref.shape)
    assert ours.device == ref.device
    if ref.dtype.is_floating_point:
        o, r = ours.cpu().double(), ref.cpu().double()
        assert torch.equal(torch.isnan(o), torch.isnan(r)), (o, r)
        keep = ~torch.isnan(r)
        assert torch.equal(o[keep], r[keep]), (o[keep][(o != r)[keep]][:5], r[keep][(o != r)[keep]][:5])
    else:
        assert torch.equal(ours.cpu(), ref.cpu()), (ours, ref)


def _special(x: torch.Tensor, gen: torch.Generator, nan: bool = True) -> torch.Tensor:
    """x with NaN (about one in 500 elements, so that many slices hold none),
    +-inf and +-0.0 written into it, or integer extremes."""
    u = torch.rand(x.shape, generator=gen).to(x.device)
    if x.dtype.is_floating_point:
        if nan:
            x[u < 0.002] = float("nan")
        x[(u >= 0.01) & (u < 0.012)] = float("inf")
        x[(u >= 0.02) & (u < 0.022)] = float("-inf")
        x[(u >= 0.03) & (u < 0.04)] = 0.0
        x[(u >= 0.04) & (u < 0.05)] = -0.0
    elif x.dtype != torch.bool:
        info = torch.iinfo(x.dtype)
        x[u < 0.01] = info.max
        x[(u >= 0.01) & (u < 0.02)] = info.min
    return x


# Shapes that reach every kernel shape on the GPU: full reductions (split
# rows, ragged heads), short and long rows, columns of one, few and many
# rows, a middle dim, several reduced dims (a multi-pass plan), and passes of
# one-element rows (a dim of size 1 next to a reduced one); sizes around the
# vector widths and odd ones.
CASES = [((1 << 20) + 7, None), (4097, None), ((300, 1001), 1), ((4096, 16), 1), ((64, 8192), 1),
         ((100003, 16), 0), ((3, 100001), 0), ((8192, 257), 0), ((16, 64, 40), 1), ((7, 9, 11, 13), (0, 2)),
         ((6, 5, 4, 3, 2), (0, 2, 4)), ((1000003, 1), 1), ((33, 65), (0, 1)), ((2, 300016), 0)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8,
                                   torch.uint8, torch.int32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("name", sorted(OPS))
def test_extremum_kernel_shapes(name, dtype, case, device, gen):
    ours_fn, theirs_fn, _ = OPS[name]
    shape, dim = CASES[case]
    shape = shape if isinstance(shape, tuple) else (shape,)
    if device == "cpu" and torch.Size(shape).numel() > 1 << 18:
        shape = tuple(min(s, 257) for s in shape)
    x = random_data(shape, dtype, "cpu", gen)
    x = _special(x, gen, nan=case % 2 == 0).to(device)
    for xs in (x, x[..., 1:] if x.shape[-1] > 2 else x):
        ours = ours_fn(xs, dim) if dim is not None else ours_fn(xs)
        ref = theirs_fn(xs, dim) if dim is not None else theirs_fn(xs)
        _same(ours, ref)
        again = ours_fn(xs, dim) if dim is not None else ours_fn(xs)
        assert torch.equal(ours.view(-1).view(torch.uint8) if ours.dtype != torch.bool else ours,
                           again.view(-1).view(torch.uint8) if again.dtype != torch.bool else again)


# Rows of 1- and 2-byte integers and bools, whose CPU leaves compare in
# lanes of their own type (32 or 16 to a vector) where a leaf fills their
# four chains, in leaves of 8192: lengths around the lanes, the chains and
# the leaves (1024 for other types), each row's
# extreme alone at its first, its last or a random place, or the type's own
# extreme everywhere (the lanes' identity must not win), contiguous and a
# step apart.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.bool], ids=str)
@pytest.mark.parametrize("name", sorted(OPS))
def test_extremum_narrow_integer_rows(name, dtype, device, gen):
    ours_fn, theirs_fn, _ = OPS[name]
    lo, hi = (0, 2) if dtype == torch.bool else (torch.iinfo(dtype).min, torch.iinfo(dtype).max + 1)
    for n in (1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 1023, 1024, 1025, 4099, 8191, 8192, 8193,
              20000):
        x = torch.randint(max(lo, -50), min(hi, 50), (7, n), generator=gen).to(dtype)
        if dtype != torch.bool:
            extreme = hi - 1 if name == "amax" else lo
            x[0, 0], x[1, n - 1], x[2, int(torch.randint(0, n, (1,), generator=gen))] = extreme, extreme, extreme
            x[3].fill_(extreme)
            x[4].fill_(lo if name == "amax" else hi - 1)  # the other extreme: the lanes' identity
        else:
            x[3].fill_(name == "amax")
            x[4].fill_(name != "amax")
        x = x.to(device)
        for xs in (x, x[:, ::2]):
            _same(ours_fn(xs, 1), theirs_fn(xs, 1))
            _same(ours_fn(xs[3]), theirs_fn(xs[3]))
            _same(ours_fn(xs), theirs_fn(xs))


# The sums of the same rows, exact in int64: their CPU leaves walk int32
# lanes in leaves of 8192 (a lane holds at most 1024 of them).
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.bool], ids=str)
def test_sum_narrow_integer_rows_exact(dtype, device, gen):
    lo, hi = (0, 2) if dtype == torch.bool else (torch.iinfo(dtype).min, torch.iinfo(dtype).max + 1)
    for n in (31, 32, 33, 1023, 1025, 8191, 8192, 8193, 20000):
        x = torch.randint(lo, hi, (5, n), generator=gen).to(dtype)
        x[0].fill_(hi - 1)  # the largest sums a lane can take
        x[1].fill_(lo)
        x = x.to(device)
        for xs in (x, x[:, ::3]):
            assert torch.equal(reduce_op.sum(xs, 1), torch.sum(xs, 1))
            assert torch.equal(reduce_op.sum(xs), torch.sum(xs))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_extremum_nan_and_ties(name, device):
    ours_fn, theirs_fn, _ = OPS[name]
    nan, inf = float("nan"), float("inf")
    rows = torch.tensor([[1.0, nan, 3.0], [nan, nan, nan], [-inf, inf, 0.0], [2.0, 2.0, -2.0],
                         [-0.0, 0.0, -0.0], [inf, inf, inf]], device=device)
    for dim in (0, 1, None):
        for dt in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
            x = rows.to(dt)
            _same(ours_fn(x, dim) if dim is not None else ours_fn(x),
                  theirs_fn(x, dim) if dim is not None else theirs_fn(x))
    b = torch.tensor([[True, False], [False, False]], device=device)
    _same(ours_fn(b, 1), theirs_fn(b, 1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_extremum_dims_out_and_errors(name, device, gen):
    ours_fn, theirs_fn, op = OPS[name]
    x = torch.randn(4, 5, 6, generator=gen).to(device)
    for dim, keepdim in (((0, 2), False), ((-1, 0), True), ([], False), ((), True), (1, True), ([-2], False)):
        _same(ours_fn(x, dim, keepdim), theirs_fn(x, dim, keepdim))
    _same(ours_fn(torch.tensor(3.5, device=device)), theirs_fn(torch.tensor(3.5, device=device)))
    _same(ours_fn(torch.tensor(3.5, device=device), 0, True), theirs_fn(torch.tensor(3.5, device=device), 0, True))
    out = torch.empty(7, device=device)
    assert ours_fn(x, 1, out=out) is out  # resized, as torch does
    _same(out, theirs_fn(x, 1))
    # torch's errors, by type and message.
    e = torch.empty(3, 0, device=device)
    with pytest.raises(IndexError, match=rf"{name}\(\): Expected reduction dim 1 to have non-zero size"):
        op(e, [1])
    with pytest.raises(IndexError, match=rf"{name}\(\): Expected reduction dim -1 to have non-zero size"):
        op(e, [-1])
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified for input.numel"):
        op(e)
    _same(op(e, [0]), theirs_fn(e, 0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        op(x, [3])
    with pytest.raises(RuntimeError, match="appears multiple times"):
        op(x, [0, 0])
    kernel = ("max_values_" if name == "amax" else "min_values_") + device
    with pytest.raises(NotImplementedError, match=kernel):
        op(x.to(torch.complex64))
    with pytest.raises(NotImplementedError, match=kernel):
        op(x.to(torch.float8_e5m2))
    # An empty result of a dtype the kernels refuse (complex, uint64, float8,
    # complex32), as torch's (whose kernel never runs for one); its dims
    # checked as for any input.
    for dt in (torch.complex64, torch.complex128, torch.uint64, torch.float8_e5m2, torch.complex32):
        got = op(e.to(dt), [0])
        assert got.dtype == dt and got.shape == theirs_fn(e.to(dt), 0).shape
        assert op(e.to(dt), [0], True).shape == theirs_fn(e.to(dt), 0, True).shape
        with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
            op(e.to(dt), [1])
        with pytest.raises(RuntimeError, match="appears multiple times"):
            op(e.to(dt), [0, 0])
    with pytest.raises(RuntimeError, match="Expected the dtype for input and out to match"):
        ours_fn(x, 1, out=torch.empty(7, dtype=torch.float64, device=device))
    u = torch.randint(0, 60000, (5, 7), generator=gen)
    for dt in (torch.uint16, torch.uint32, torch.uint64):
        xu = u.to(dt).to(device)
        if device == "cpu" or dt == torch.uint64:
            with pytest.raises(NotImplementedError):
                op(xu, [1])
        else:  # reduced as int64 and cast back
            assert torch.equal(op(xu, [1]).to(torch.int64), theirs_fn(u, 1).to(device))
            assert op(xu, [1]).dtype == dt
    # The meta kernel's shapes and dtypes.
    m = torch.empty(2, 3, 4, device="meta", dtype=torch.bfloat16)
    assert op(m, [1], True).shape == theirs_fn(m, 1, True).shape
    assert op(m.int()).dtype == torch.int32


# The benchmark's random sampler (shapes, views, dims; its dtype= cases are
# left out, amax has none): results equal to torch's.
@pytest.mark.parametrize("device,seed,n,max_bytes", [("cpu", 7, 60, 1 << 16)] + (
    [("cuda", s, 200, 1 << 25) for s in (31, 32)] if HAS_CUDA else []))
@pytest.mark.parametrize("name", sorted(OPS))
def test_extremum_random_cases(name, device, seed, n, max_bytes):
    ours_fn, theirs_fn, _ = OPS[name]
    for label, x, kw in random_cases(device, seed, n, max_bytes):
        if x.dtype.is_complex or x.numel() == 0:
            continue
        dim, keepdim = kw.get("dim"), kw.get("keepdim", False)
        with labelled(label):
            ours = ours_fn(x, dim if dim is not None else (), keepdim)
            _same(ours, theirs_fn(x, dim if dim is not None else (), keepdim))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_extremum_on_torchs_samples(name, device):
    pytest.importorskip("expecttest")
    ours_fn, theirs_fn, _ = OPS[name]
    assert check_torch_samples(name, ours_fn, theirs_fn, device, lambda o, t, s: _same(o, t)) > 0


# The gradient split evenly among the elements equal to the result, as
# torch's (ties of two and three, a NaN slice), gradcheck and gradgradcheck
# in float64 (no ties), the node's name, a refusal to differentiate out=,
# and one where the result was changed in place before backward.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_extremum_autograd(name, device, gen):
    ours_fn, theirs_fn, _ = OPS[name]
    x = torch.randn(4, 6, dtype=torch.float64, generator=gen).to(device)
    x[1, 1] = x[1, 4] = x[1].amax() + 1 if name == "amax" else x[1].amin() - 1
    x[2, :3] = x[2].amax() + 1 if name == "amax" else x[2].amin() - 1
    x[3, 2] = float("nan")
    for dim, keepdim in (((), False), (1, False), (0, True), ((0, 1), True)):
        a = x.clone().requires_grad_(True)
        b = x.clone().requires_grad_(True)
        ours, theirs = ours_fn(a, dim, keepdim), theirs_fn(b, dim, keepdim)
        grad = torch.randn(theirs.shape, dtype=torch.float64, generator=gen).to(device)
        (g_ours,) = torch.autograd.grad(ours, a, grad)
        (g_theirs,) = torch.autograd.grad(theirs, b, grad)
        torch.testing.assert_close(g_ours, g_theirs, equal_nan=True, rtol=1e-15, atol=0)
        assert ours.grad_fn.name() == ("GpureduceAmaxBackward" if name == "amax" else "GpureduceAminBackward")
    clean = torch.randn(3, 5, dtype=torch.float64, generator=gen).to(device).requires_grad_(True)
    torch.autograd.gradcheck(lambda t: ours_fn(t, 1), (clean,))
    torch.autograd.gradgradcheck(lambda t: ours_fn(t, (0, 1), True), (clean,))
    y = torch.randn(3, 4, device=device, requires_grad=True)
    r = ours_fn(y * 1, 1)
    r.mul_(2)  # the saved result changed in place: backward must refuse, as torch's does
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        r.sum().backward()
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        ours_fn(y, 1, out=torch.empty(3, device=device))
    with pytest.raises(RuntimeError):  # an integer result cannot need a gradient
        ours_fn(torch.ones(3, dtype=torch.int64, device=device).requires_grad_(True))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_extremum_opcheck(name, device, gen):
    op = OPS[name][2]
    # (no NaN: opcheck compares eager and traced outputs with NaN != NaN)
    a = torch.randn(3, 5, 4, generator=gen).to(device)
    b = torch.randn(3, 5, 4, generator=gen).to(device).requires_grad_(True)
    opcheck(op.default, (a,))
    opcheck(op.default, (b, [1], True))
    opcheck(op.default, (a.to(torch.int16), [0, 2]))
    opcheck(op.out, (a, [0, 2], False), {"out": torch.empty(5, device=device)})


# torch.compile with fullgraph, static and dynamic shapes (the Meta kernel
# and the Autograd node), forward and backward, against eager.
@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_extremum_compile(device, dynamic):
    torch._dynamo.reset()

    def f(x):
        return torch.ops.gpureduce.amax.default(x * 2, [1], False) - torch.ops.gpureduce.amin.default(x, [1])

    compiled = torch.compile(f, fullgraph=True, dynamic=dynamic)
    for n in (5, 9, 17):
        x = torch.randn(3, n, device=device)
        torch.testing.assert_close(compiled(x), f(x))
        a, b = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        (g_eager,) = torch.autograd.grad(f(a).sum(), a)
        (g_compiled,) = torch.autograd.grad(compiled(b).sum(), b)
        torch.testing.assert_close(g_compiled, g_eager)
