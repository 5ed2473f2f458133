"""torch.autocast: every op gives torch's dtype, and torch's values, inside
an autocast region, on the CPU and on CUDA. torch casts sum, prod,
linalg_vector_norm (dtype=float32 where none is given), logsumexp (its input
to float32) on CUDA, prod on the CPU, and conv1d (to the autocast dtype) on
both; the other ops run as they are (csrc/autograd/autocast.cpp)."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import reduce_op
from axes import DEVICES, vector_norm_of

# (name, call(module, x)): the family's forms, each run by torch and by
# reduce_op on the same input.
FORMS = {
    "sum": lambda m, x: m.sum(x), "sum_dim": lambda m, x: m.sum(x, 1), "sum_dtype": lambda m, x: m.sum(x, 0, dtype=torch.float64),
    "prod": lambda m, x: m.prod(x[:, :6]), "prod_dim": lambda m, x: m.prod(x, 1, keepdim=True),
    "prod_dtype": lambda m, x: m.prod(x, 1, dtype=torch.float64),
    "nansum": lambda m, x: m.nansum(x, 0), "mean": lambda m, x: m.mean(x, 1),
    "amax": lambda m, x: m.amax(x, 1), "max_dim": lambda m, x: m.max(x, 1), "argmin": lambda m, x: m.argmin(x, 1),
    "logsumexp": lambda m, x: m.logsumexp(x, 1), "var": lambda m, x: m.var(x, 1), "std_mean": lambda m, x: m.std_mean(x, 0),
    "vector_norm": lambda m, x: vector_norm_of(m)(x, 2, 1),
    "vector_norm_dtype": lambda m, x: vector_norm_of(m)(x, 1, 1, dtype=torch.float64),
}


def _autocast_cases():
    for device in DEVICES:
        for cast_to in ([torch.bfloat16, torch.float16] if device == "cuda" else [torch.bfloat16]):
            yield device, cast_to


def _check_same(ours, theirs, label):
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for o, t in zip(ours, theirs):
        assert o.dtype == t.dtype and o.shape == t.shape, f"{label}: ours {o.dtype} {tuple(o.shape)}, torch {t.dtype} {tuple(t.shape)}"
        if o.is_floating_point():
            # The 16-bit results are rounded once from float32; they may
            # differ by a unit in the last place from torch's order.
            tol = 1e-2 if o.dtype in (torch.float16, torch.bfloat16) else 1e-5
            torch.testing.assert_close(o, t, rtol=tol, atol=tol, msg=label)
        else:
            assert torch.equal(o, t), label


@pytest.mark.parametrize("device,cast_to", list(_autocast_cases()))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_family_dtypes_and_values_as_torch(device, cast_to, dtype):
    g = torch.Generator().manual_seed(5)
    # Factors near 1 keep the products finite in 16 bits.
    x = (1 + 0.1 * torch.randn(9, 33, generator=g)).to(device, dtype)
    cast_somewhere = False
    for name, call in FORMS.items():
        with torch.autocast(device, dtype=cast_to):
            theirs = call(torch, x)
            ours = call(reduce_op, x)
        label = f"{name} of {dtype} under autocast({device}, {cast_to})"
        _check_same(ours, theirs, label)
        first = theirs[0] if isinstance(theirs, tuple) else theirs
        cast_somewhere |= first.is_floating_point() and first.dtype != dtype and "dtype" not in name
    # The region changed some result's dtype (so the check above saw casts),
    # where the input was a 16-bit one.
    assert cast_somewhere == (dtype in (torch.float16, torch.bfloat16))


@pytest.mark.parametrize("device,cast_to", list(_autocast_cases()))
def test_drop_in_under_autocast(device, cast_to):
    # Routed torch.sum and torch.prod in a region give torch's dtypes.
    x = torch.randn(6, 40, generator=torch.Generator().manual_seed(2)).to(device, torch.float16)
    calls = [lambda: torch.sum(x), lambda: x.sum(1), lambda: torch.prod(x[:, :5], 1), lambda: x.logsumexp(1),
             lambda: x.mean(0)]
    with torch.autocast(device, dtype=cast_to):
        theirs = [c() for c in calls]
        with reduce_op.replace_torch_reductions():
            ours = [c() for c in calls]
    for i, (o, t) in enumerate(zip(ours, theirs)):
        _check_same(o, t, f"call {i} on {device}")


@pytest.mark.parametrize("device,cast_to", list(_autocast_cases()))
@pytest.mark.parametrize("padding", ["same", "causal", "valid"])
def test_conv1d_runs_in_the_autocast_dtype(device, cast_to, padding):
    # As F.conv1d: float32 input, mask and bias are cast to the autocast
    # dtype, and the gradients come back in float32.
    g = torch.Generator().manual_seed(7)
    x = torch.randn(2, 5, 37, generator=g).to(device).requires_grad_()
    w = torch.randn(5, 4, generator=g).to(device).requires_grad_()
    b = torch.randn(5, generator=g).to(device).requires_grad_()
    k = w.shape[1]
    with torch.autocast(device, dtype=cast_to):
        ours = reduce_op.conv1d(x, w, b, padding=padding)
        module = reduce_op.DepthwiseConv1d(5, k, padding).to(device)(x)
        if padding == "causal":
            theirs = F.conv1d(F.pad(x, (k - 1, 0)), w.unsqueeze(1), b, groups=5)
        else:
            theirs = F.conv1d(x, w.unsqueeze(1), b, groups=5, padding=padding)
    assert ours.dtype == theirs.dtype == module.dtype == cast_to
    torch.testing.assert_close(ours.float(), theirs.float(), rtol=2e-2, atol=2e-2)
    grads = torch.autograd.grad(ours.float().square().sum(), (x, w, b))
    assert all(t.dtype == torch.float32 for t in grads)
    torch.testing.assert_close(grads, torch.autograd.grad(theirs.float().square().sum(), (x, w, b)),
                               rtol=5e-2, atol=5e-2)


def test_no_cast_outside_a_region_or_for_another_device():
    # A CUDA region leaves CPU tensors alone (and the CPU region prod's
    # float32 dtype= stays as given).
    x = torch.randn(4, 9, dtype=torch.bfloat16)
    with torch.autocast("cuda", dtype=torch.float16, enabled=torch.cuda.is_available()):
        assert reduce_op.sum(x).dtype == torch.bfloat16
        assert reduce_op.prod(x, 1).dtype == torch.bfloat16
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False):
        assert reduce_op.prod(x, 1).dtype == torch.bfloat16
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert reduce_op.prod(x, 1).dtype == torch.float32
        assert reduce_op.prod(x, 1, dtype=torch.bfloat16).dtype == torch.bfloat16


@pytest.mark.parametrize("dynamic", [False, True])
def test_compiled_region(dynamic):
    # torch.compile traces the casts into the graph (fullgraph).
    x = torch.randn(4, 8, dtype=torch.bfloat16, generator=torch.Generator().manual_seed(1))
    xi = torch.randn(2, 4, 33)
    w = torch.randn(4, 3)

    def region(m, conv):
        def f(x, xi, w):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return m.prod(x, 1), m.prod(x), conv(xi, w)
        return f

    ours = torch.compile(region(reduce_op, reduce_op.conv1d), fullgraph=True, dynamic=dynamic)(x, xi, w)
    theirs = region(torch, lambda a, k: F.conv1d(a, k.unsqueeze(1), groups=4, padding="same"))(x, xi, w)
    for o, t in zip(ours, theirs):
        _check_same(o, t, f"compiled (dynamic={dynamic})")
