"""Batching rules of the family's operators for ``torch.func.vmap``: the
batch dim moved to the front and each per-sample dim shifted past it, so
that a vmapped reduction is one call of the operator over the whole batch.
Without them torch ran its per-sample fallback, a loop of calls with a
performance warning. Per-sample inputs of 0 dims, dims the per-sample
input would refuse (out of range, repeated) and, for the forms that raise
on them, empty inputs go through a loop of per-sample calls: the operator
then raises torch's error for the sample, or returns what it returns for
it. The out= overloads keep torch's fallback."""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

import torch

ops = torch.ops.gpureduce


def _per_sample(op: Callable[..., Any], x: torch.Tensor, args: Sequence[Any], kwargs: dict) -> Tuple[Any, Any]:
    """op over each sample (x's dim 0), stacked: what torch's fallback
    computes, for the cases the rules below do not rewrite. A batch of no
    samples gives results of no samples, shaped as the op's meta kernel
    says a sample's would be."""
    if x.shape[0] == 0:
        sample = op(torch.empty(x.shape[1:], dtype=x.dtype, device="meta"), *args, **kwargs)
        parts = sample if isinstance(sample, tuple) else (sample,)
        empty = tuple(torch.empty((0,) + tuple(p.shape), dtype=p.dtype, device=x.device) for p in parts)
        return (empty, tuple(0 for _ in empty)) if isinstance(sample, tuple) else (empty[0], 0)
    results = [op(x[i], *args, **kwargs) for i in range(x.shape[0])]
    if isinstance(results[0], tuple):
        return tuple(torch.stack(parts) for parts in zip(*results)), tuple(0 for _ in results[0])
    return torch.stack(results), 0


def _sample_is_empty(x: torch.Tensor) -> bool:
    return any(s == 0 for s in x.shape[1:])


def _shifted(dims: Optional[Sequence[int]], n: int) -> Optional[List[int]]:
    """Per-sample dims (None or [] for every one) as the batched tensor's
    (batch dim first), or None where the per-sample input would refuse
    them or has no dims."""
    if n == 0:
        return None
    if dims is None or len(dims) == 0:
        return list(range(1, n + 1))
    wrapped = []
    for d in dims:
        if not -n <= d < n:
            return None
        wrapped.append(d % n + 1)
    return wrapped if len(set(wrapped)) == len(wrapped) else None


def _register(name: str, rule: Callable[..., Tuple[Any, Any]]) -> None:
    def batched(info: Any, in_dims: Tuple[Any, ...], x: torch.Tensor, *args: Any, **kwargs: Any) -> Tuple[Any, Any]:
        op = getattr(ops, name.split(".")[0])
        op = getattr(op, name.split(".")[1] if "." in name else "default")
        if in_dims[0] is None:  # the input is not batched: the op as it is
            out = op(x, *args, **kwargs)
            return out, (tuple(None for _ in out) if isinstance(out, tuple) else None)
        x = x.movedim(in_dims[0], 0)
        out = rule(op, x, x.dim() - 1, *args, **kwargs)
        return out if out is not None else _per_sample(op, x, args, kwargs)

    torch.library.register_vmap(f"gpureduce::{name}", batched)


def _dims_rule(op: Callable[..., Any], x: torch.Tensor, n: int, dim: Any = None, *rest: Any, **kwargs: Any):
    """Ops whose second argument is a dim list (None or [] for every dim)."""
    dims = _shifted(dim, n)
    return None if dims is None else (op(x, dims, *rest, **kwargs), 0)


def _all_as_dims(dim_op: Callable[..., Any]):
    """An every-element overload (sum, mean, fsum) through its dim one."""
    def rule(op: Callable[..., Any], x: torch.Tensor, n: int, **kwargs: Any):
        dims = _shifted(None, n)
        return None if dims is None else (dim_op(x, dims, False, **kwargs), 0)
    return rule


def _one_dim_rule(op: Callable[..., Any], x: torch.Tensor, n: int, dim: int, *rest: Any, **kwargs: Any):
    """Ops of one int dim (prod.dim_int, max.dim, min.dim)."""
    dims = _shifted([dim], n)
    if dims is None or (op in (ops.max.dim, ops.min.dim) and x.shape[dims[0]] == 0):
        return None
    out = op(x, dims[0], *rest, **kwargs)
    return out, (tuple(0 for _ in out) if isinstance(out, tuple) else 0)


def _flat_rule(reduce_flat: Callable[..., torch.Tensor], extremum: bool):
    """An every-element overload without a dim list (prod, max, min) over
    each sample flattened; max's and min's errors (empty and complex
    inputs) per sample."""
    def rule(op: Callable[..., Any], x: torch.Tensor, n: int, *args: Any, **kwargs: Any):
        if n == 0 or (extremum and (_sample_is_empty(x) or x.is_complex())):
            return None
        return reduce_flat(x.flatten(1), *args, **kwargs), 0
    return rule


def _arg_rule(op: Callable[..., Any], x: torch.Tensor, n: int, dim: Optional[int] = None, keepdim: bool = False):
    if n == 0 or _sample_is_empty(x) or x.is_complex():
        return None
    if dim is not None:
        dims = _shifted([dim], n)
        return None if dims is None else (op(x, dims[0], keepdim), 0)
    flat = op(x.flatten(1), 1, keepdim)
    return (flat.reshape([x.shape[0]] + [1] * n) if keepdim else flat), 0


def _logsumexp_rule(op: Callable[..., Any], x: torch.Tensor, n: int, dim: Sequence[int], keepdim: bool = False):
    # dims [] keep torch's own rule (an error without keepdim): per sample.
    return None if len(dim) == 0 else _dims_rule(op, x, n, dim, keepdim)


def _norm_rule(op: Callable[..., Any], x: torch.Tensor, n: int, ord: Any = 2, dim: Any = None, keepdim: bool = False,
               **kwargs: Any):
    dims = _shifted(dim, n)
    return None if dims is None else (op(x, ord, dims, keepdim, **kwargs), 0)


def _spread_rule(op: Callable[..., Any], x: torch.Tensor, n: int, dim: Any = None, **kwargs: Any):
    dims = _shifted(dim, n)
    if dims is None:
        return None
    out = op(x, dims, **kwargs)
    return out, (tuple(0 for _ in out) if isinstance(out, tuple) else 0)


def register() -> None:
    _register("sum", _all_as_dims(ops.sum.dim_IntList))
    _register("sum.dim_IntList", _dims_rule)
    _register("fsum", _all_as_dims(ops.fsum.dim_IntList))
    _register("fsum.dim_IntList", _dims_rule)
    _register("nansum", _dims_rule)
    _register("mean", _all_as_dims(ops.mean.dim))
    _register("mean.dim", _dims_rule)
    _register("prod", _flat_rule(lambda x, **kw: ops.prod.dim_int(x, 1, False, **kw), extremum=False))
    _register("prod.dim_int", _one_dim_rule)
    for name in ("amax", "amin"):
        _register(name, lambda op, x, n, dim=(), keepdim=False: _dims_rule(op, x, n, dim, keepdim)
                  if not _sample_is_empty(x) else None)
    _register("max", _flat_rule(lambda x: ops.amax(x, [1]), extremum=True))
    _register("min", _flat_rule(lambda x: ops.amin(x, [1]), extremum=True))
    _register("max.dim", _one_dim_rule)
    _register("min.dim", _one_dim_rule)
    _register("argmax", _arg_rule)
    _register("argmin", _arg_rule)
    _register("logsumexp", _logsumexp_rule)
    for name in ("var", "std", "var_mean", "std_mean"):
        _register(f"{name}.correction", _spread_rule)
    _register("linalg_vector_norm", _norm_rule)
    register_conv1d()


# conv1d's two operators (conv1d itself is CompositeImplicitAutograd: it
# reaches _conv1d_padded). A sample's input is [L], [B, L] or [B, C, L]; the
# batch folds into the rows where only the input is batched, and otherwise
# into the channels, each sample's masks becoming channels of one
# per-channel correlation. Each batched call first runs the sample's shapes
# through the Meta kernel, so that a sample the operator refuses raises its
# own error.


def _front(t: Optional[torch.Tensor], bdim: Optional[int]) -> Optional[torch.Tensor]:
    return t if t is None or bdim is None else t.movedim(bdim, 0)


def _meta_sample(t: Optional[torch.Tensor], batched: bool) -> Optional[torch.Tensor]:
    """A sample of t (batch dim first, where batched) on the meta device."""
    if t is None:
        return None
    return torch.empty(t.shape[1:] if batched else t.shape, dtype=t.dtype, device="meta")


def _as_channels(x: torch.Tensor) -> Tuple[torch.Tensor, Tuple[int, ...]]:
    """A batched input [N, *sample] as [rows, N * channels, L] (sample
    [L]: one row of one channel; [B, L]: B rows of one; [B, C, L]: B rows
    of C), and the sample's leading shape to restore."""
    n, sample = x.shape[0], tuple(x.shape[1:])
    lead = sample[:-1]
    rows = sample[0] if len(sample) >= 2 else 1
    channels = sample[1] if len(sample) == 3 else 1
    x = x.reshape(n, rows, channels, sample[-1]).transpose(0, 1)
    return x.reshape(rows, n * channels, sample[-1]), lead


def _from_channels(y: torch.Tensor, n: int, lead: Tuple[int, ...]) -> torch.Tensor:
    rows, _, length = y.shape
    y = y.reshape(rows, n, -1, length).transpose(0, 1)
    return y.reshape((n,) + lead + (length,))


def _channel_masks(w: torch.Tensor, n: int, channels: int) -> torch.Tensor:
    """Batched masks [N, K] or [N, C, K] as [N * channels, K]."""
    if w.dim() == 2:
        w = w.unsqueeze(1).expand(n, channels, w.shape[-1])
    return w.reshape(n * channels, w.shape[-1])


def _conv1d_padded_rule(info: Any, in_dims: Tuple[Any, ...], x: torch.Tensor, w: torch.Tensor,
                        b: Optional[torch.Tensor], left: int, out_len: int):
    xd, wd, bd = in_dims[0], in_dims[1], in_dims[2] if len(in_dims) > 2 else None
    n = info.batch_size
    x, w, b = _front(x, xd), _front(w, wd), _front(b, bd)
    ops._conv1d_padded(_meta_sample(x, xd is not None), _meta_sample(w, wd is not None),
                       _meta_sample(b, bd is not None), left, out_len)
    x = x if xd is not None else x.expand((n,) + tuple(x.shape))
    if wd is None and bd is None:  # one mask for every sample: the batch is more rows
        sample = tuple(x.shape[1:])
        y = ops._conv1d_padded(x.reshape((-1,) + sample[1:]) if len(sample) > 1 else x, w, b, left, out_len)
        return y.reshape((n,) + sample[:-1] + (y.shape[-1],)), 0
    w = w if wd is not None else w.expand((n,) + tuple(w.shape))
    rows_x, lead = _as_channels(x)
    channels = rows_x.shape[1] // n
    masks = _channel_masks(w, n, channels)
    bias = None
    if b is not None:
        b = b if bd is not None else b.expand((n,) + tuple(b.shape))
        bias = (b.expand(n, channels) if b.shape[1] == 1 else b).reshape(n * channels)
    return _from_channels(ops._conv1d_padded(rows_x, masks, bias, left, out_len), n, lead), 0


def _conv1d_weight_grad_rule(info: Any, in_dims: Tuple[Any, ...], g: torch.Tensor, x: torch.Tensor,
                             w: torch.Tensor, left: int):
    gd, xd, wd = in_dims[:3]
    n = info.batch_size
    g, x, w = _front(g, gd), _front(x, xd), _front(w, wd)
    ops._conv1d_weight_grad(_meta_sample(g, gd is not None), _meta_sample(x, xd is not None),
                            _meta_sample(w, wd is not None), left)
    g = g if gd is not None else g.expand((n,) + tuple(g.shape))
    x = x if xd is not None else x.expand((n,) + tuple(x.shape))
    sample_w = tuple(w.shape[1:]) if wd is not None else tuple(w.shape)
    if len(sample_w) == 1:  # one mask: each sample's sum runs over all its rows and channels
        rows_g = g.reshape(n, -1, g.shape[-1]).transpose(0, 1)
        rows_x = x.reshape(n, -1, x.shape[-1]).transpose(0, 1)
        masks = torch.empty((n,) + sample_w, dtype=w.dtype, device=w.device)
    else:  # a mask per channel: the samples' channels side by side
        rows_g, _ = _as_channels(g)
        rows_x, _ = _as_channels(x)
        masks = torch.empty((n * sample_w[0], sample_w[1]), dtype=w.dtype, device=w.device)
    return ops._conv1d_weight_grad(rows_g, rows_x, masks, left).reshape((n,) + sample_w), 0


def _conv1d_rule(info: Any, in_dims: Tuple[Any, ...], x: torch.Tensor, w: torch.Tensor,
                 b: Optional[torch.Tensor] = None, padding: str = "same"):
    # conv1d names its padding; functorch does not decompose a custom
    # composite operator, so the name is resolved here (the Meta kernels
    # check the sample and the name, raising their errors) and the
    # padded operator's rule runs.
    xd, wd, bd = in_dims[0], in_dims[1], in_dims[2] if len(in_dims) > 2 else None
    x, w, b = _front(x, xd), _front(w, wd), _front(b, bd)
    sample = ops.conv1d(_meta_sample(x, xd is not None), _meta_sample(w, wd is not None),
                        _meta_sample(b, bd is not None), padding)
    k = w.shape[-1]
    left = {"same": (k - 1) // 2, "causal": k - 1, "valid": 0}[padding]
    batched = (None if d is None else 0 for d in (xd, wd, bd))
    return _conv1d_padded_rule(info, tuple(batched), x, w, b, left, sample.shape[-1])


def register_conv1d() -> None:
    torch.library.register_vmap("gpureduce::conv1d", _conv1d_rule)
    torch.library.register_vmap("gpureduce::_conv1d_padded", _conv1d_padded_rule)
    torch.library.register_vmap("gpureduce::_conv1d_weight_grad", _conv1d_weight_grad_rule)
