"""Forward-mode AD (torch.autograd.forward_ad, torch.func's jvp, jacfwd and
hessian) through every family op, against torch's own ops: the result's
tangent, for random inputs (ties, zeros, complex, transposed, keepdim), in
first and second order; out= overloads refuse a tangent as torch's do.
Before these formulas a result carried no tangent, and forward AD read
every op as a constant."""
import random
import warnings

import pytest
import torch
import torch.autograd.forward_ad as fwAD
from torch.func import grad, hessian, jacfwd, jacrev, jvp, vmap

import reduce_op
from axes import DEVICES, vector_norm_of



def _forms(m, dims, keepdim, correction, ord):
    """One call of each op form, as a function of its input."""
    d0 = dims[0]
    return {
        "sum": lambda x: m.sum(x, dims, keepdim), "sum_all": lambda x: m.sum(x),
        "sum_dtype": lambda x: m.sum(x, dims, keepdim, dtype=torch.complex128 if x.is_complex() else torch.float64),
        "nansum": lambda x: m.nansum(x, dims, keepdim), "mean": lambda x: m.mean(x, dims, keepdim),
        "mean_all": lambda x: m.mean(x), "prod": lambda x: m.prod(x, d0, keepdim), "prod_all": lambda x: m.prod(x),
        "amax": lambda x: m.amax(x, dims, keepdim), "amin": lambda x: m.amin(x, dims, keepdim),
        "max_all": lambda x: m.max(x), "min_all": lambda x: m.min(x),
        "max_dim": lambda x: m.max(x, d0, keepdim)[0], "min_dim": lambda x: m.min(x, d0, keepdim)[0],
        "logsumexp": lambda x: m.logsumexp(x, dims, keepdim),
        "var": lambda x: m.var(x, dims, correction=correction, keepdim=keepdim),
        "var_all": lambda x: m.var(x, correction=correction),
        "std": lambda x: m.std(x, dims, correction=correction, keepdim=keepdim),
        "var_mean": lambda x: m.var_mean(x, dims, correction=correction, keepdim=keepdim),
        "std_mean": lambda x: m.std_mean(x, dims, correction=correction, keepdim=keepdim),
        "vector_norm": lambda x: vector_norm_of(m)(x, ord, dims, keepdim),
    }


_REAL_ONLY = {"amax", "amin", "max_all", "min_all", "max_dim", "min_dim", "nansum"}


def _tangents(f, x, t):
    with fwAD.dual_level():
        y = f(fwAD.make_dual(x, t))
        return [fwAD.unpack_dual(v).tangent for v in (y if isinstance(y, tuple) else (y,))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(3))
def test_tangents_match_torchs(device, seed):
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    compared = 0
    for case in range(25):
        nd = rng.randint(0, 3)
        shape = [rng.choice([1, 2, 3, 5]) for _ in range(nd)]
        dtype = rng.choice([torch.float64, torch.float32, torch.complex128])
        x = torch.randn(shape, dtype=dtype, generator=gen)
        if x.numel() > 2 and rng.random() < 0.4:  # a tie and a zero
            x.view(-1)[1] = x.view(-1)[0]
            x.view(-1)[2] = 0
        if nd > 1 and rng.random() < 0.3:
            x = x.transpose(0, 1)
        x, t = x.to(device), torch.randn(x.shape, dtype=dtype, generator=gen).to(device)
        dims = sorted(rng.sample(range(nd), rng.randint(1, nd))) if nd else [0]
        args = (dims, rng.random() < 0.5, rng.choice([0, 1, 2]), rng.choice([0, 1, 2, 3.5, 0.5, float("inf")]))
        theirs, ours = _forms(torch, *args), _forms(reduce_op, *args)
        for name in theirs:
            if dtype.is_complex and name in _REAL_ONLY:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # var's degrees of freedom
                want, got = _tangents(theirs[name], x, t), _tangents(ours[name], x, t)
            label = f"{name} of {dtype} {list(x.shape)} {args} on {device}"
            for g, w in zip(got, want):
                assert g is not None, f"{label}: no tangent"
                assert g.shape == w.shape, label
                tol = 1e-4 if dtype == torch.float32 else 1e-9
                torch.testing.assert_close(g, w.to(g.dtype), rtol=tol, atol=tol, equal_nan=True, msg=label)
                compared += 1
    assert compared > 400


@pytest.mark.parametrize("device", DEVICES)
def test_forward_ad_gradcheck(device):
    # Tangents against finite differences, torch's own check.
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(3, 4, dtype=torch.float64, generator=gen).to(device).requires_grad_()
    xc = torch.randn(3, 4, dtype=torch.complex128, generator=gen).to(device).requires_grad_()
    for f in (lambda t: reduce_op.sum(t, 1), lambda t: reduce_op.prod(t, 0), lambda t: reduce_op.logsumexp(t, 1),
              lambda t: reduce_op.var(t, 0), lambda t: reduce_op.std_mean(t, 1), lambda t: reduce_op.vector_norm(t, 3, 1),
              lambda t: reduce_op.amax(t, 1), lambda t: reduce_op.max(t, 0)[0], lambda t: reduce_op.mean(t)):
        assert torch.autograd.gradcheck(f, (x,), check_forward_ad=True, check_backward_ad=False,
                                        check_undefined_grad=False, check_batched_grad=False)
    for f in (lambda t: reduce_op.sum(t, 1), lambda t: reduce_op.prod(t, 0), lambda t: reduce_op.var(t, 1),
              lambda t: reduce_op.vector_norm(t, 2, 0), lambda t: reduce_op.logsumexp(t, 1)):
        assert torch.autograd.gradcheck(f, (xc,), check_forward_ad=True, check_backward_ad=False,
                                        check_undefined_grad=False, check_batched_grad=False)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_func_transforms_match_torchs(device):
    # jacfwd, jvp, and second order: forward over forward, and the hessian
    # (forward over reverse).
    x = torch.randn(3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(5)).to(device)
    ops = {
        "prod": lambda m, t: m.prod(t, 1), "amax": lambda m, t: m.amax(t * t, 1),
        "logsumexp": lambda m, t: m.logsumexp(t, 1), "std": lambda m, t: m.std(t, 0),
        "var_mean": lambda m, t: m.var_mean(t, 1)[0] + m.var_mean(t, 1)[1] ** 2,
        "vector_norm": lambda m, t: vector_norm_of(m)(t, 3.0, 1), "max_dim": lambda m, t: m.max(t.cos(), 0)[0],
    }
    transforms = {
        "jacfwd": lambda f: jacfwd(f)(x), "jvp": lambda f: jvp(f, (x,), (torch.ones_like(x),))[1],
        "jacfwd(jacfwd)": lambda f: jacfwd(jacfwd(lambda t: f(t).sum()))(x),
        "hessian": lambda f: hessian(lambda t: f(t).sum())(x),
        "jacrev(jacfwd)": lambda f: jacrev(jacfwd(lambda t: f(t).sum()))(x),
    }
    for name, op in ops.items():
        for tname, transform in transforms.items():
            torch.testing.assert_close(transform(lambda t: op(reduce_op, t)), transform(lambda t: op(torch, t)),
                                       msg=f"{tname} of {name} on {device}")


@pytest.mark.parametrize("device", DEVICES)
def test_out_overloads_refuse_a_tangent(device):
    x = torch.randn(3, 4, dtype=torch.float64).to(device)
    empty = lambda dt=torch.float64: torch.empty(0, dtype=dt, device=device)  # noqa: E731
    calls = {
        "sum": lambda m, d: m.sum(d, 0, out=empty()), "nansum": lambda m, d: m.nansum(d, 0, out=empty()),
        "mean": lambda m, d: m.mean(d, 0, out=empty()), "prod": lambda m, d: m.prod(d, 0, out=empty()),
        "amax": lambda m, d: m.amax(d, 0, out=empty()), "max": lambda m, d: m.max(d, out=empty()),
        "max_dim": lambda m, d: m.max(d, 0, out=(empty(), empty(torch.long))),
        "argmax": lambda m, d: m.argmax(d, 0, out=empty(torch.long)),
        "logsumexp": lambda m, d: m.logsumexp(d, 0, out=empty()), "var": lambda m, d: m.var(d, 0, out=empty()),
        "std": lambda m, d: m.std(d, 0, out=empty()), "vector_norm": lambda m, d: vector_norm_of(m)(d, 2, 0, out=empty()),
    }
    for name, call in calls.items():
        with fwAD.dual_level():
            dual = fwAD.make_dual(x, torch.ones_like(x))
            with pytest.raises(NotImplementedError) as theirs:
                call(torch, dual)
            with pytest.raises(NotImplementedError) as ours:
                call(reduce_op, dual)
        assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0], name


@pytest.mark.parametrize("device", DEVICES)
def test_variance_gradient_with_no_degrees_of_freedom(device):
    # torch's var_backward: a reduction of every element (dim=None or a 0-d
    # input) with N - correction <= 0 has gradient inf, NaN where x is the
    # mean; with dims, 2 (x - mean) / (N - correction) as ever. dim=[]
    # (every element too) keeps the formula's gradient, where torch's gives
    # inf (it counts no elements there).
    gen = torch.Generator().manual_seed(6)
    for shape, dim, correction in (((3, 2), None, 6), ((3, 2), None, 7), ((3, 2), [0, 1], 7), ((), None, 2),
                                   ((), 0, 2), ((), 0, 1), ((4,), 0, 4), ((2, 3), 1, 4)):
        x = torch.randn(shape, dtype=torch.float64, generator=gen).to(device)
        grads = []
        for m in (torch, reduce_op):
            xr = x.clone().requires_grad_()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                grads.append(torch.autograd.grad(m.var(xr, dim, correction=correction).sum(), xr)[0])
        torch.testing.assert_close(grads[1], grads[0], equal_nan=True, msg=f"{shape} {dim} {correction}")
    x = torch.randn(3, 2, dtype=torch.float64, generator=gen).to(device).requires_grad_()
    torch.testing.assert_close(torch.autograd.grad(reduce_op.var(x, []), x)[0],
                               torch.autograd.grad(torch.var(x, None), x)[0])


@pytest.mark.parametrize("device", DEVICES)
def test_conv1d_and_fsum_tangents_and_torch_func(device):
    # conv1d's tangent (bilinear: each tangent with the other primal, and
    # the bias's) against F.conv1d's for every mask form, padding and
    # tangent; fsum's, a sum's. Their backward nodes are plain Nodes, so
    # torch.func's grad, vmap of grad and hessian run (a C++
    # autograd::Function raised "cannot use C++ torch::autograd::Function
    # with functorch transforms").
    from test_conv1d import _reference
    gen = torch.Generator().manual_seed(7)
    rand = lambda *shape: torch.randn(shape, dtype=torch.float64, generator=gen).to(device)  # noqa: E731
    for x_shape, w_shape, b_shape in (((2, 3, 9), (3, 4), (3,)), ((2, 9), (5,), (1,)), ((9,), (3,), None),
                                      ((2, 3, 9), (4,), (1,))):
        for padding in ("same", "causal", "valid"):
            args = [rand(*x_shape), rand(*w_shape), None if b_shape is None else rand(*b_shape)]
            tangents = [rand(*x_shape), rand(*w_shape), None if b_shape is None else rand(*b_shape)]
            for which in ([0], [1], [2], [0, 1, 2]):
                if which == [2] and b_shape is None:
                    continue
                got = []
                for f in (lambda a, w, b: reduce_op.conv1d(a, w, b, padding),
                          lambda a, w, b: _reference(a.cpu(), w.cpu(), None if b is None else b.cpu(), padding)):
                    with fwAD.dual_level():
                        duals = [a if a is None or i not in which else fwAD.make_dual(a, tangents[i])
                                 for i, a in enumerate(args)]
                        got.append(fwAD.unpack_dual(f(*duals)).tangent.cpu())
                torch.testing.assert_close(got[0], got[1], msg=f"{x_shape} {w_shape} {padding} {which}")
    x, w = rand(2, 3, 9), rand(3, 4)
    ours = lambda a, c: (reduce_op.conv1d(a, c, None, "same") ** 2).sum()  # noqa: E731
    theirs = lambda a, c: (_reference(a, c, None, "same") ** 2).sum()  # noqa: E731 (F.conv1d's, padded by hand)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # vmap's fallback for conv1d
        for transform in (lambda f: grad(f, argnums=(0, 1))(x, w), lambda f: hessian(f, argnums=1)(x, w),
                          lambda f: jacfwd(jacrev(f, argnums=1), argnums=1)(x, w),
                          lambda f: vmap(grad(lambda a, c: f(a.unsqueeze(0), c), argnums=1), in_dims=(0, None))(x, w)):
            torch.testing.assert_close(transform(ours), transform(theirs))
    s = rand(4, 5)
    torch.testing.assert_close(grad(lambda t: reduce_op.fsum(t * t))(s), 2 * s)
    torch.testing.assert_close(vmap(grad(lambda t: reduce_op.fsum(t.sin())))(s), s.cos())
    torch.testing.assert_close(jacfwd(lambda t: reduce_op.fsum(t, 1))(s), jacfwd(lambda t: torch.sum(t, 1))(s))
    for check_x in (rand(2, 3, 7).requires_grad_(),):
        w3, b3 = rand(3, 4).requires_grad_(), rand(3).requires_grad_()
        f = lambda a, c, d: reduce_op.conv1d(a, c, d, "causal")  # noqa: E731
        assert torch.autograd.gradcheck(f, (check_x, w3, b3), check_forward_ad=True, check_undefined_grad=False)
        assert torch.autograd.gradgradcheck(f, (check_x, w3, b3), check_fwd_over_rev=True)
