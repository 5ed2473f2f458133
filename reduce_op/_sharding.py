"""Sharding rules for gpureduce's operators on DTensor (torch.distributed.tensor).

Every operator gets a rule in DTensor's sharding-propagation registry, the
one torch's own reductions use, with a schema-info that names the
arguments a rule depends on (dim, keepdim, dtype, ord...). Without it DTensor
would key its sharding cache on the tensors alone, and a second call that
differs only in ``dim`` would reuse the first call's sharding.

The rule of a reduction, on each mesh dim:

* a replicated input gives a replicated result;
* an input sharded on a kept dim gives a result sharded on that dim
  (renumbered when ``keepdim=False`` removes dims before it);
* an input sharded on a reduced dim is reduced locally, and the result is a
  :class:`RankOrderPartial`: each rank holds its shard's result, and a
  redistribution combines them. Ops whose partial results cannot be
  combined (var, std, max.dim, argmax...) take no such rule: DTensor gathers
  the reduced dims first, as torch does for its own index-returning ops.

How partials are combined is set by :func:`set_sharded_combine`:
``"rank_order"`` (the default) gathers the partial results and reduces them
with gpureduce's kernels in rank order, so the bits do not depend on the
collective library's algorithm; ``"all_reduce"`` hands sums and products to
an all-reduce. Max, min, logsumexp, norms and means are always combined in
rank order: an all-reduce has no logsumexp, and NCCL's max does not
propagate NaN the way torch.amax does.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

import torch
import torch.distributed._functional_collectives as funcol
from torch.distributed.tensor import DTensor
from torch.distributed.tensor._op_schema import OpSchema, OpStrategy, RuntimeSchemaInfo
from torch.distributed.tensor._ops.utils import expand_to_full_mesh_op_strategy
from torch.distributed.tensor.placement_types import Partial, Replicate, Shard

_ops = torch.ops.gpureduce
# all_gather_single is all_gather_tensor's newer name (the old one warns).
_all_gather = getattr(funcol, "all_gather_single", None) or funcol.all_gather_tensor
_COMBINE_MODES = ("rank_order", "all_reduce")
_combine_mode = "rank_order"


def set_sharded_combine(mode: str) -> None:
    """How partial sums and products of sharded reductions are combined:
    ``"rank_order"`` (default; bitwise the same for any collective algorithm,
    channel count or rank mapping) or ``"all_reduce"`` (one all-reduce)."""
    global _combine_mode
    if mode not in _COMBINE_MODES:
        raise ValueError(f"set_sharded_combine: mode must be one of {_COMBINE_MODES}, got {mode!r}")
    _combine_mode = mode


def get_sharded_combine() -> str:
    """The mode :func:`set_sharded_combine` set."""
    return _combine_mode


# The combines a partial result can carry, with the all-reduce op that may
# replace the rank-order one (None where none may).
_ALL_REDUCE_OF = {"sum": "sum", "prod": "product", "amax": None, "amin": None,
                  "logsumexp": None, "mean": None, "norm": None}
_TORCH_REDUCE_OP = {"sum": "sum", "prod": "product", "amax": "max", "amin": "min", "mean": "avg"}


def _combine_stacked(combine: str, p: float, stacked: torch.Tensor) -> torch.Tensor:
    """Reduces the partial results stacked along dim 0, in rank order."""
    if combine == "sum":
        return _ops.sum.dim_IntList(stacked, [0], False, dtype=stacked.dtype)
    if combine == "prod":
        return _ops.prod.dim_int(stacked, 0, False, dtype=stacked.dtype)
    if combine == "amax":
        return _ops.amax(stacked, [0])
    if combine == "amin":
        return _ops.amin(stacked, [0])
    if combine == "logsumexp":
        return _ops.logsumexp(stacked, [0])
    if combine == "mean":
        return _ops.mean.dim(stacked, [0])
    # A p-norm's partial norms compose as a p-norm of them, for any p but 0.
    return _ops.linalg_vector_norm(stacked, p, [0])


def _identity_like(combine: str, p: float, tensor: torch.Tensor) -> torch.Tensor:
    """The value a rank holds so that it adds nothing to the combine."""
    if combine in ("amax", "amin", "mean"):
        return tensor  # idempotent: max(v, v) = v, mean(v, v) = v
    if combine == "prod":
        return torch.ones_like(tensor)
    if combine == "logsumexp":
        return torch.full_like(tensor, -math.inf)
    if combine == "norm" and p < 0:
        return torch.full_like(tensor, math.inf)  # |inf|^p = 0 for p < 0
    return torch.zeros_like(tensor)


@dataclass(frozen=True)
class RankOrderPartial(Partial):
    """A pending reduction of per-rank results of a gpureduce operator.

    ``combine`` names how they are combined: ``sum``, ``prod``, ``amax``,
    ``amin``, ``logsumexp``, ``mean`` or ``norm`` (a ``p``-norm of the
    partial norms). The combine gathers the partials and reduces them in rank
    order with gpureduce (or, for sums and products under
    ``set_sharded_combine("all_reduce")``, all-reduces them)."""

    combine: str = "sum"
    p: float = 2.0

    def __init__(self, combine: str = "sum", p: float = 2.0):
        if combine not in _ALL_REDUCE_OF:
            raise ValueError(f"RankOrderPartial: unknown combine {combine!r}")
        # The base class's reduce_op is what the rest of DTensor reads (to
        # merge sum and avg partials into one collective, for one): torch's
        # name where the combine is one of its reduce ops, ours where not.
        super().__init__(_TORCH_REDUCE_OP.get(combine, combine))
        object.__setattr__(self, "combine", combine)
        object.__setattr__(self, "p", float(p))

    def _reduce_value(self, tensor: torch.Tensor, mesh: Any, mesh_dim: int) -> torch.Tensor:
        all_reduce_op = _ALL_REDUCE_OF[self.combine]
        if _combine_mode == "all_reduce" and all_reduce_op is not None:
            return funcol.all_reduce(tensor, reduceOp=all_reduce_op, group=(mesh, mesh_dim))
        stacked = _all_gather(tensor.unsqueeze(0).contiguous(), 0, (mesh, mesh_dim))
        return _combine_stacked(self.combine, self.p, funcol.wait_tensor(stacked))

    def _reduce_shard_value(self, tensor: torch.Tensor, mesh: Any, mesh_dim: int,
                            shard_spec: Any) -> torch.Tensor:
        # The partials are results of reductions, small next to their inputs:
        # combine them whole, then keep this rank's shard.
        whole = self._reduce_value(tensor, mesh, mesh_dim)
        shards, _ = shard_spec._split_tensor(whole, mesh.size(mesh_dim), with_padding=False,
                                             contiguous=True)
        return shards[mesh.get_local_rank(mesh_dim)]

    def _partition_value(self, tensor: torch.Tensor, mesh: Any, mesh_dim: int) -> torch.Tensor:
        # Rank 0 holds the value, the others the combine's identity: exact,
        # where dividing by the rank count would round.
        if mesh.get_local_rank(mesh_dim) == 0:
            return tensor
        return _identity_like(self.combine, self.p, tensor)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, RankOrderPartial) and self.combine == other.combine
                and self.p == other.p)

    def __hash__(self) -> int:
        return hash(("RankOrderPartial", self.combine, self.p))

    def __repr__(self) -> str:
        return f"RankOrderPartial({self.combine!r}{', ' + repr(self.p) if self.combine == 'norm' else ''})"

    def __str__(self) -> str:
        return f"P(rank-order {self.combine}{' ' + str(self.p) if self.combine == 'norm' else ''})"


# --- the rules ----------------------------------------------------------------


def _bound_args(op_schema: OpSchema) -> Dict[str, Any]:
    """The op's arguments by name, defaults filled in."""
    schema = op_schema.op._schema
    values: Dict[str, Any] = {}
    for i, arg in enumerate(schema.arguments):
        if i < len(op_schema.args_schema) and not arg.kwarg_only:
            values[arg.name] = op_schema.args_schema[i]
        elif arg.name in op_schema.kwargs_schema:
            values[arg.name] = op_schema.kwargs_schema[arg.name]
        else:
            values[arg.name] = arg.default_value if arg.has_default_value() else None
    return values


def _reduced_dims(dim: Any, ndim: int) -> List[int]:
    """dim as the op reads it: None or [] reduce every dim."""
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(ndim))
    return sorted({d % ndim for d in dims}) if ndim > 0 else []


def _every_rank_holds_some(size: int, ranks: int) -> bool:
    """Whether torch.chunk-style shards of ``size`` leave no rank empty (an
    empty shard has no max)."""
    if size < ranks:
        return False
    chunk = -(-size // ranks)
    return -(-size // chunk) == ranks


@dataclass(frozen=True)
class _Reduction:
    """What a rule needs to know of an overload."""

    dims_arg: Optional[str]  # None: reduces every dim
    outputs: int = 1
    combine: Optional[str] = None  # None: no partial results, the reduced dims are gathered
    keepdim_arg: Optional[str] = "keepdim"
    linear: bool = False  # partial (sum) inputs give partial results
    needs_every_rank: bool = False  # an empty shard has no result (max, min)


def _combine_of(spec: _Reduction, args: Dict[str, Any]):
    """(combine, p, needs every rank) of a call; norms depend on ord."""
    if spec.combine != "norm":
        return spec.combine, 2.0, spec.needs_every_rank
    p = float(args["ord"])
    if p == 0:
        return "sum", 0.0, False  # the count of nonzeros
    if math.isinf(p):
        return ("amax" if p > 0 else "amin"), p, True
    return "norm", p, False


def _reduction_rule(spec: _Reduction, op_schema: OpSchema) -> OpStrategy:
    args = _bound_args(op_schema)
    input_strategy = op_schema.args_schema[0]
    in_spec = input_strategy.strategies[0].output_spec
    mesh = in_spec.mesh
    meta = in_spec.tensor_meta  # None where DTensor did not propagate it: no rule that needs it then
    shape = meta.shape if meta is not None else None
    ndim = in_spec.ndim
    reduced = _reduced_dims(args[spec.dims_arg] if spec.dims_arg else None, ndim)
    keepdim = bool(args[spec.keepdim_arg]) if spec.keepdim_arg else False
    combine, p, needs_every_rank = _combine_of(spec, args)
    ranks = mesh.size()

    def out(placement):
        return [placement] * spec.outputs

    strategies = [out(Replicate()) + [Replicate()]]
    for d in range(ndim):
        if d not in reduced:
            kept = d if keepdim else d - sum(1 for r in reduced if r < d)
            strategies.append(out(Shard(kept)) + [Shard(d)])
        elif combine is not None and shape is not None:
            if needs_every_rank and not _every_rank_holds_some(shape[d], ranks):
                continue
            if combine == "mean" and shape[d] % ranks != 0:
                continue  # a mean of uneven shards' means is not the mean
            strategies.append(out(RankOrderPartial(combine, p)) + [Shard(d)])
    if spec.linear and meta is not None and args.get("dtype") in (None, meta.dtype) and (
            meta.dtype.is_floating_point or meta.dtype.is_complex):
        for partial in (Partial("sum"), Partial("avg"), RankOrderPartial("sum")):
            strategies.append(out(partial) + [partial])
    return _expand(mesh, op_schema, strategies, spec.outputs)


_EXPAND_TAKES_UNEVEN = "allow_uneven_sharding" in inspect.signature(expand_to_full_mesh_op_strategy).parameters


def _expand(mesh, op_schema: OpSchema, strategies: List[list], outputs: int) -> OpStrategy:
    # Uneven shards are fine for every rule here: each rank reduces what it
    # holds, and the rules above exclude the combines that mind.
    kwargs = {"allow_uneven_sharding": True} if _EXPAND_TAKES_UNEVEN else {}
    return expand_to_full_mesh_op_strategy(mesh, op_schema, strategies, input_index=outputs, **kwargs)


def _conv1d_rule(op_schema: OpSchema) -> OpStrategy:
    """_conv1d_padded(input [L] | [B, L] | [B, C, L], weight [K] | [C, K], bias?):
    batch and channel shards are local; the sequence dim is gathered (a
    shard of it would need its neighbours' halo)."""
    in_spec = op_schema.args_schema[0].strategies[0].output_spec
    weight_spec = op_schema.args_schema[1].strategies[0].output_spec
    has_bias = isinstance(op_schema.args_schema[2], OpStrategy)
    ndim = in_spec.ndim
    per_channel = weight_spec.ndim == 2

    def rule(out, inp, weight, bias):
        return [out, inp, weight] + ([bias] if has_bias else [None])

    strategies = [rule(Replicate(), Replicate(), Replicate(), Replicate())]
    if ndim >= 2:
        strategies.append(rule(Shard(0), Shard(0), Replicate(), Replicate()))
    if ndim == 3:
        channel_weight = Shard(0) if per_channel else Replicate()
        channel_bias = Shard(0)
        strategies.append(rule(Shard(1), Shard(1), channel_weight, channel_bias))
    return _expand(in_spec.mesh, op_schema, strategies, 1)


def _conv1d_weight_grad_rule(op_schema: OpSchema) -> OpStrategy:
    """_conv1d_weight_grad(grad, input, weight, left): the mask's gradient,
    a sum over the batch (and, for one mask, the channels) and the sequence.
    Batch shards, and channel shards under one mask, give rank-order partial
    sums; channel shards of masks per channel give the channels' rows of the
    result; the sequence dim is gathered (its shards would need their
    neighbours' halo)."""
    in_spec = op_schema.args_schema[1].strategies[0].output_spec
    weight_spec = op_schema.args_schema[2].strategies[0].output_spec
    ndim = in_spec.ndim
    partial = RankOrderPartial("sum")
    strategies = [[Replicate(), Replicate(), Replicate(), Replicate()]]
    if ndim >= 2:
        strategies.append([partial, Shard(0), Shard(0), Replicate()])
    if ndim == 3:
        if weight_spec.ndim == 2:
            strategies.append([Shard(0), Shard(1), Shard(1), Shard(0)])
        else:
            strategies.append([partial, Shard(1), Shard(1), Replicate()])
    return _expand(in_spec.mesh, op_schema, strategies, 1)


_SUM_LIKE = _Reduction("dim", combine="sum", linear=True)
_RULES = {
    "sum.default": _Reduction(None, combine="sum", keepdim_arg=None, linear=True),
    "sum.dim_IntList": _SUM_LIKE,
    "nansum.default": _Reduction("dim", combine="sum"),
    "mean.default": _Reduction(None, combine="mean", keepdim_arg=None, linear=True),
    "mean.dim": _Reduction("dim", combine="mean", linear=True),
    "prod.default": _Reduction(None, combine="prod", keepdim_arg=None),
    "prod.dim_int": _Reduction("dim", combine="prod"),
    "amax.default": _Reduction("dim", combine="amax", needs_every_rank=True),
    "amin.default": _Reduction("dim", combine="amin", needs_every_rank=True),
    "max.default": _Reduction(None, combine="amax", keepdim_arg=None, needs_every_rank=True),
    "min.default": _Reduction(None, combine="amin", keepdim_arg=None, needs_every_rank=True),
    "max.dim": _Reduction("dim", outputs=2),
    "min.dim": _Reduction("dim", outputs=2),
    "argmax.default": _Reduction("dim"),
    "argmin.default": _Reduction("dim"),
    "logsumexp.default": _Reduction("dim", combine="logsumexp"),
    "var.correction": _Reduction("dim"),
    "std.correction": _Reduction("dim"),
    "var_mean.correction": _Reduction("dim", outputs=2),
    "std_mean.correction": _Reduction("dim", outputs=2),
    "linalg_vector_norm.default": _Reduction("dim", combine="norm"),
    "classic_sum.default": _Reduction(None, combine="sum", keepdim_arg=None),
    # Rounded partial sums would not round the exact sum once: gathered.
    "fsum.dim_IntList": _Reduction("dim"),
}


def _schema_info(op: Any) -> RuntimeSchemaInfo:
    """Every argument after the input, positional or keyword, keys the
    sharding cache: the rules read dim, keepdim, ord, dtype and correction."""
    kwarg_names = [a.name for a in op._schema.arguments if a.kwarg_only]
    return RuntimeSchemaInfo(static_argnum=1, static_kwargkey=kwarg_names or None, needs_pytree=False)


def register_sharding_rules() -> None:
    """Registers the rules with DTensor's sharding propagation."""
    from functools import partial

    propagator = DTensor._op_dispatcher.sharding_propagator
    for name, spec in _RULES.items():
        packet, overload = name.split(".")
        if not hasattr(_ops, packet):
            continue
        op = getattr(getattr(_ops, packet), overload)
        propagator.register_op_strategy(op, partial(_reduction_rule, spec), _schema_info(op))
    # conv1d's forward, and the book's kernels, which take the same tensors.
    for conv in (_ops._conv1d_padded.default, _ops.classic_conv1d.default):
        propagator.register_op_strategy(conv, _conv1d_rule, RuntimeSchemaInfo(static_argnum=3))
    propagator.register_op_strategy(_ops._conv1d_weight_grad.default, _conv1d_weight_grad_rule,
                                    RuntimeSchemaInfo(static_argnum=3))
