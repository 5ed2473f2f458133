"""The operators' overloads, called the cheapest way that keeps what
torch.ops gives: through the typed bindings of reduce_op._fast (about
torch's own cost per call), or through torch.ops where it has something
to add: a __torch_function__ override or mode, or torch.compile tracing.
reduce_op.sum and the drop-in mode call call_sum; the other ops ask
fast_path_open."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

import torch

from . import _fast

# The overloads, looked up once (each lookup costs a call).
_SUM_ALL = torch.ops.gpureduce.sum.default
_SUM_DIMS = torch.ops.gpureduce.sum.dim_IntList
_SUM_OUT = torch.ops.gpureduce.sum.IntList_out
_has_torch_function = torch._C._has_torch_function_unary
_is_compiling = torch.compiler.is_compiling


def fast_path_open(x: Any) -> bool:
    """Whether an op may call its overload through reduce_op._fast's typed
    handles rather than torch.ops: not while torch.compile traces (it traces
    torch.ops) and not for an input with a __torch_function__ override or
    under a mode (which must see the call). reduce_op's other ops ask this
    before their _fast call, which returns NotImplemented for a form it
    does not take."""
    return not _has_torch_function(x) and not _is_compiling()


def call_sum(x: torch.Tensor, dims: Optional[Union[List[int], Sequence[int]]], keepdim: bool,
             dtype: Optional[torch.dtype], out: Optional[torch.Tensor] = None,
             dim_given: bool = False) -> torch.Tensor:
    """The operator on arguments already in its forms (dims: None or ints).
    dim_given: a dim was passed, None included; torch.sum(x, dim=None) is
    the dim overload, which refuses inputs of more than 64 dims."""
    if out is not None:
        _SUM_OUT(x, dims, keepdim, dtype=dtype, out=out)
        return out
    whole = dims is None and not keepdim and not dim_given
    if not _has_torch_function(x) and not _is_compiling():
        return _fast.sum_all(x, dtype) if whole else _fast.sum_dims(x, dims, keepdim, dtype)
    if dtype is None:
        return _SUM_ALL(x) if whole else _SUM_DIMS(x, dims, keepdim)
    return _SUM_ALL(x, dtype=dtype) if whole else _SUM_DIMS(x, dims, keepdim, dtype=dtype)
