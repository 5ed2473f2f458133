"""torch.func.vmap over every family op (reduce_op._vmap's batching rules):
the result of torch's own op applied sample by sample, for random batch
dims, dims, keepdim and dtypes, empty samples and batches of none; nested
vmap, vmap of grad, grad of vmap, jacrev and hessian; and no per-sample
fallback (torch warns when it takes one)."""
import random
import warnings

import pytest
import torch
from torch.func import grad, hessian, jacrev, vmap

import reduce_op
from axes import DEVICES, vector_norm_of



def _forms(dims, dim, keepdim, correction, ord):
    return {
        "sum": lambda m, t: m.sum(t), "sum_dims": lambda m, t: m.sum(t, dims, keepdim),
        "sum_dtype": lambda m, t: m.sum(t, dims, keepdim, dtype=torch.float64),
        "nansum": lambda m, t: m.nansum(t, dims, keepdim), "mean": lambda m, t: m.mean(t),
        "mean_dims": lambda m, t: m.mean(t, dims, keepdim), "prod": lambda m, t: m.prod(t),
        "prod_dim": lambda m, t: m.prod(t, dim, keepdim),
        "amax": lambda m, t: m.amax(t, dims if dims is not None else (), keepdim),
        "amin": lambda m, t: m.amin(t, dims if dims is not None else (), keepdim),
        "max": lambda m, t: m.max(t), "min": lambda m, t: m.min(t),
        "max_dim": lambda m, t: tuple(m.max(t, dim, keepdim)), "min_dim": lambda m, t: tuple(m.min(t, dim, keepdim)),
        "argmax": lambda m, t: m.argmax(t), "argmax_dim": lambda m, t: m.argmax(t, dim, keepdim),
        "argmin_keepdim": lambda m, t: m.argmin(t, None, True),
        "logsumexp": lambda m, t: m.logsumexp(t, dims if dims is not None else [0], keepdim),
        "var": lambda m, t: m.var(t, dims, correction=correction, keepdim=keepdim),
        "std": lambda m, t: m.std(t, dims, keepdim=keepdim),
        "var_mean": lambda m, t: tuple(m.var_mean(t, dims, correction=correction, keepdim=keepdim)),
        "std_mean": lambda m, t: tuple(m.std_mean(t, dims, keepdim=keepdim)),
        "vector_norm": lambda m, t: vector_norm_of(m)(t, ord, dims, keepdim),
    }


def _outcome(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = call()
            result = result if isinstance(result, tuple) else (result,)
        except Exception as e:  # noqa: BLE001 - compared by type
            result = e
    assert not any("performance drop" in str(w.message) for w in caught), "vmap took torch's per-sample fallback"
    return result


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(3))
def test_vmap_is_the_op_sample_by_sample(device, seed):
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    compared = 0
    for case in range(12):
        nd = rng.randint(0, 3)
        shape = [rng.choice([0, 1, 2, 3, 5]) if rng.random() < 0.95 else 0 for _ in range(nd)]
        batch, bdim = rng.choice([1, 2, 3]), rng.randint(0, nd)
        dtype = rng.choice([torch.float64, torch.float32, torch.int64, torch.complex128, torch.bool])
        x = torch.randn(shape[:bdim] + [batch] + shape[bdim:], dtype=torch.float64, generator=gen)
        x = ((x * 3).round().to(dtype) if dtype in (torch.int64, torch.bool) else x.to(dtype)).to(device)
        dims = (sorted(rng.sample(range(-nd, nd) if nd else [0, -1], rng.randint(1, max(1, nd))))
                if rng.random() < 0.8 else rng.choice([None, [], [5]]))
        dim = dims[0] if dims else 0
        forms = _forms(dims, dim, rng.random() < 0.5, rng.choice([0, 1]), rng.choice([1, 2, 3.0, float("inf")]))
        for name, f in forms.items():
            def sample_by_sample():
                outs = [f(torch, x.select(bdim, j)) for j in range(batch)]
                if isinstance(outs[0], tuple):
                    return tuple(torch.stack(parts) for parts in zip(*outs))
                return torch.stack(outs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # var's degrees of freedom
                want = _outcome(sample_by_sample)
            got = _outcome(lambda: vmap(lambda t: f(reduce_op, t), in_dims=bdim)(x))
            label = f"{name} of {dtype} {list(x.shape)}, batch dim {bdim}, dims {dims} on {device}"
            if isinstance(want, Exception):
                assert isinstance(got, type(want)), f"{label}: torch {want!r}, ours {got!r}"
                continue
            assert not isinstance(got, Exception), f"{label}: raised {got!r}"
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.dtype == w.dtype, f"{label}: {g.shape} {w.shape}"
                if name in ("max_dim", "min_dim") and g.dtype == torch.long:
                    continue  # the values above decide; a tie's index is the first in both
                torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6, equal_nan=True, msg=label)
                compared += 1
    assert compared > 150


@pytest.mark.parametrize("device", DEVICES)
def test_vmap_composes(device):
    x = torch.randn(3, 4, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(3)).to(device)
    pairs = {
        "nested": lambda m: vmap(vmap(lambda t: m.sum(t, 0)))(x),
        "nested, batch dim 2": lambda m: vmap(vmap(lambda t: m.var(t, 0)), in_dims=2)(x),
        "vmap of grad": lambda m: vmap(grad(lambda t: m.logsumexp(t, 1).sum()))(x),
        "grad of vmap": lambda m: grad(lambda t: vmap(lambda r: m.std(r, 0))(t).sum())(x),
        "jacrev": lambda m: jacrev(lambda t: m.prod(t, 1))(x[0]),
        "hessian": lambda m: hessian(lambda t: vector_norm_of(m)(t, 3))(x[0, 0]),
        "chunks": lambda m: vmap(lambda t: m.amax(t, 1), chunk_size=2)(x),
        "max.dim": lambda m: vmap(lambda t: m.max(t, 1))(x),
    }
    for name, call in pairs.items():
        got, want = _outcome(lambda: call(reduce_op)), _outcome(lambda: call(torch))
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, msg=name)
    with reduce_op.replace_torch_reductions():
        got = _outcome(lambda: vmap(lambda t: torch.sum(t, 1) + t.mean() + t.max(0)[0].sum())(x))
    torch.testing.assert_close(got[0], vmap(lambda t: torch.sum(t, 1) + t.mean() + t.max(0)[0].sum())(x))


def test_vmap_over_a_batch_of_none():
    # Results of no samples, each shaped as torch's op shapes a sample's
    # (torch's own vmap of argmin(dim=None, keepdim=True) drops dims).
    for shape in ((0, 4), (0,), (0, 2, 3)):
        x = torch.randn(shape)
        for name, f in _forms([0], 0, False, 1, 2).items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sample = _outcome(lambda: f(torch, torch.randn(shape[1:])))
                got = _outcome(lambda: vmap(lambda t: f(reduce_op, t))(x))
            if isinstance(sample, Exception):
                continue
            assert not isinstance(got, Exception), (name, shape, got)
            assert [(g.shape, g.dtype) for g in got] == [((0,) + s.shape, s.dtype) for s in sample], (name, shape)


@pytest.mark.parametrize("device", DEVICES)
def test_vmap_of_conv1d(device):
    # The batch folded into the rows (the input alone batched) or into the
    # channels (masks or biases batched too), against conv1d sample by
    # sample: every mask form, padding and batch dim; per-sample gradients
    # (vmap of grad, through _conv1d_weight_grad's rule); a sample's error.
    import itertools
    gen = torch.Generator().manual_seed(8)
    n = 3

    def make(shape, bdim):
        if bdim is not None:
            shape = list(shape)
            shape.insert(bdim if bdim >= 0 else len(shape), n)
        return torch.randn(shape, dtype=torch.float64, generator=gen).to(device)

    for x_shape, w_shape, b_shape in (((9,), (3,), (1,)), ((2, 9), (4,), (1,)), ((2, 3, 9), (3, 4), (3,)),
                                      ((2, 3, 9), (5,), (1,)), ((4, 9), (1,), None)):
        for padding in ("same", "causal", "valid"):
            for xb, wb, bb in itertools.product([None, 0, -1], [None, 0, -1], [None, 0]):
                if (xb, wb, bb) == (None, None, None) or (b_shape is None and bb is not None):
                    continue
                x, w = make(x_shape, xb), make(w_shape, wb)
                b = None if b_shape is None else make(b_shape, bb)
                f = lambda a, c, d: reduce_op.conv1d(a, c, d, padding)  # noqa: E731
                got = _outcome(lambda: vmap(f, in_dims=(xb, wb, bb if b is not None else None))(x, w, b))[0]
                pick = lambda t, d, i: t if d is None else t.select(d, i)  # noqa: E731
                want = torch.stack([f(pick(x, xb, i), pick(w, wb, i), None if b is None else pick(b, bb, i))
                                    for i in range(n)])
                torch.testing.assert_close(got, want, msg=f"{x_shape} {w_shape} {padding} {(xb, wb, bb)}")
    x, w, b = make((3, 11), 0), make((3, 4), None), make((3,), None)
    loss = lambda w, b, xi: (reduce_op.conv1d(xi.unsqueeze(0), w, b, "causal") ** 2).sum()  # noqa: E731
    got = _outcome(lambda: vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0))(w, b, x))
    for i in range(n):
        want = grad(loss, argnums=(0, 1))(w, b, x[i])
        torch.testing.assert_close(got[0][i], want[0])
        torch.testing.assert_close(got[1][i], want[1])
    mask = torch.ones(3, dtype=torch.float64, device=device)
    with pytest.raises(RuntimeError, match="at least as long as the mask"):
        vmap(lambda a: reduce_op.conv1d(a, mask, None, "valid"))(make((2,), 0))
