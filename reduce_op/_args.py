"""torch.sum's argument forms, normalised to what the operator takes, with
torch's error types for the forms torch rejects.

torch's Python binding takes a dim as an int, a numpy integer or a 0-d
integer tensor (anything with ``__index__`` but a bool), or a list or tuple
of those; ``axis=`` for ``dim=``; a Python type for a dtype (``float`` is
float64); and a bool keepdim. The operator's schema takes ``int[]?``, so
these are converted here once, for :func:`reduce_op.sum` and the drop-in
mode alike.
"""
from __future__ import annotations

import operator
from typing import Any, Dict, List, Optional, Tuple

import torch

_PY_DTYPES = {float: torch.float64, int: torch.int64, bool: torch.bool, complex: torch.complex128}


class ArgumentError(TypeError):
    """A form torch.sum rejects with a TypeError."""


def is_numpy_array(v: Any) -> bool:
    """Whether v is a numpy array (0-d included), which torch's binding
    takes as no dim and no number (checked by name: numpy stays optional)."""
    t = type(v)
    return t.__module__ == "numpy" and t.__name__ == "ndarray"


def is_numpy_scalar(v: Any) -> bool:
    """Whether v is one of numpy's scalars (its ints, floats, bool), which
    torch's binding takes as the Python number."""
    return type(v).__module__ == "numpy" and not is_numpy_array(v)


def fits_int64(v: int) -> bool:
    return -(1 << 63) <= v < (1 << 63)


def _type_name(v: Any) -> str:
    """v's type as torch's argument errors name it (the C type's name:
    numpy's scalars and arrays with their module, ``numpy.bool``)."""
    t = type(v)
    return f"numpy.{t.__name__}" if t.__module__ == "numpy" else t.__name__


def _invalid(input: Any, *rest: Any) -> ArgumentError:
    got = ", ".join(["Tensor"] + [_type_name(r) for r in rest])
    return ArgumentError(f"sum() received an invalid combination of arguments - got ({got})")


def tensor_input(name: str, input: Any) -> None:
    """torch's TypeError for an input that is not a tensor (a list, a numpy
    array, a Python number, None), which its binding raises before any
    other check; the operator would raise a RuntimeError or say that no
    tensor was given."""
    if not isinstance(input, torch.Tensor):
        raise ArgumentError(f"{name}(): argument 'input' (position 1) must be Tensor, not {_type_name(input)}")


def _one_dim(d: Any, input: Any, dim: Any) -> int:
    if isinstance(d, bool) or is_numpy_array(d) or (
            isinstance(d, torch.Tensor) and (d.dim() != 0 or d.is_floating_point() or d.dtype == torch.bool)):
        raise _invalid(input, dim)
    try:
        return operator.index(d)
    except TypeError:
        raise _invalid(input, dim) from None


def numpy_names(dim: Any, keepdim: Any, names: Dict[str, Any]) -> Tuple[Any, Any]:
    """(dim, keepdim) with numpy's names ``axis=`` and ``keepdims=`` taken for
    them, as torch.sum takes them. reduce_op.sum (C) has raised torch's
    TypeError where one is given beside the name it stands for, or
    keepdims without a dim; here (also where torch.compile traces
    reduce_op._sum) any other name raises it."""
    for name in names:
        if name not in ("axis", "keepdims"):
            raise TypeError(f"sum() got an unexpected keyword argument '{name}'")
    if "axis" in names:
        if dim is not None:
            raise TypeError("sum() got an unexpected keyword argument 'axis'")
        dim = names["axis"]
    if "keepdims" in names:
        if keepdim is not False or dim is None:
            raise TypeError("sum() got an unexpected keyword argument 'keepdims'")
        keepdim = names["keepdims"]
    return dim, keepdim


def torch_decides(dim: Any) -> bool:
    """Whether dim is a form whose result or error torch.sum must give
    itself: dims named by str (torch's named-tensor overloads, which the
    operator does not have), or ints outside int64, for which torch raises
    ValueError alone and TypeError in a list (torch 2.13)."""
    for d in dim if isinstance(dim, (list, tuple)) else (dim,):
        if isinstance(d, str) or (type(d) is int and not -(1 << 63) <= d < (1 << 63)):
            return True
    return False


def normalize(input: Any, dim: Any, keepdim: Any, dtype: Any) -> Tuple[Optional[List[int]], bool, Optional[torch.dtype]]:
    """(dims, keepdim, dtype) in the operator's forms; raises ArgumentError
    (a TypeError, as torch raises) for a form torch rejects."""
    if not isinstance(input, torch.Tensor):
        raise ArgumentError(f"sum(): argument 'input' (position 1) must be Tensor, not {_type_name(input)}")
    if dim is None:
        dims = None
    elif isinstance(dim, (list, tuple)):
        dims = [_one_dim(d, input, dim) for d in dim]
    else:
        dims = [_one_dim(dim, input, dim)]
    keepdim = family_keepdim("sum", keepdim)
    if dtype is not None and not isinstance(dtype, torch.dtype):
        if dtype in _PY_DTYPES:
            dtype = _PY_DTYPES[dtype]
        else:
            raise ArgumentError("sum() received an invalid combination of arguments - got "
                                f"(Tensor, dtype={_type_name(dtype)})")
    return dims, keepdim, dtype


# ---- The reduction family's argument forms (nansum, mean, prod, amax/amin,
# argmax/argmin, logsumexp, var/std, vector_norm) ----
#
# Their Python functions hand the forms their C bindings do not take to
# torch.ops, whose boxed argument parsing is laxer than torch's binding: it
# took keepdim=None or 1, dtype=float and dim=True where torch raises
# TypeError, and answered dim=1.5 with a RuntimeError naming the schema.
# These checks give torch's TypeError (and take torch's Python-type dtypes)
# on that path only; the C bindings already take the plain forms alone.


def _index_or_raise(name: str, d: Any, expected: str, dim: Any, pos: int = 0) -> int:
    """d, the dim or the element at 1-based `pos` of the list `dim`, as an
    int, or torch's error: TypeError for a form that is not an index (a
    numpy array is not one here, where torch takes none of them or fails
    an internal assert), ValueError for an int beyond int64 alone and
    TypeError in a list."""
    if (isinstance(d, bool) or is_numpy_array(d) or
            (isinstance(d, torch.Tensor) and (d.dim() != 0 or d.is_floating_point() or d.is_complex()
                                              or d.dtype == torch.bool))):
        raise ArgumentError(f"{name}(): argument 'dim' must be {expected}, not {_type_name(dim)}")
    try:
        v = operator.index(d)
    except TypeError:
        raise ArgumentError(f"{name}(): argument 'dim' must be {expected}, not {_type_name(dim)}") from None
    if not fits_int64(v):
        if pos == 0:
            raise ValueError("Overflow when unpacking long long")
        raise ArgumentError(f"{name}(): argument 'dim' failed to unpack the object at pos {pos} with error "
                            "\"Overflow when unpacking long long\"")
    return v


def family_dims(name: str, dim: Any, required: bool = False) -> Optional[List[int]]:
    """An ``int[1]?`` dim (``int[1]`` where ``required``) as a list of ints,
    or None; a list of str dims (named tensors) is left as given for the
    operator (which has no such overload: RuntimeError, as torch's for an
    unnamed tensor)."""
    if dim is None:
        if required:
            raise ArgumentError(f"{name}(): argument 'dim' must be tuple of ints, not NoneType")
        return None
    if isinstance(dim, (list, tuple)) and any(isinstance(d, str) for d in dim):
        return dim
    if isinstance(dim, (list, tuple)):
        return [_index_or_raise(name, d, "tuple of ints", dim, i + 1) for i, d in enumerate(dim)]
    return [_index_or_raise(name, dim, "tuple of ints", dim)]


def family_dim(name: str, dim: Any) -> Optional[int]:
    """An ``int?`` dim (argmax, argmin, prod) as an int, or None."""
    if dim is None:
        return dim
    return _index_or_raise(name, dim, "int", dim)


def family_keepdim(name: str, keepdim: Any) -> bool:
    # (Python's bool only: torch refuses numpy's too.)
    if isinstance(keepdim, bool):
        return keepdim
    raise ArgumentError(f"{name}(): argument 'keepdim' must be bool, not {_type_name(keepdim)}")


def family_dtype(name: str, dtype: Any) -> Optional[torch.dtype]:
    """A dtype= as torch takes it: a torch dtype, or a Python type."""
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    if dtype in _PY_DTYPES:
        return _PY_DTYPES[dtype]
    raise ArgumentError(f"{name}(): argument 'dtype' must be torch.dtype, not {_type_name(dtype)}")


class Omitted:
    """The default of an argument whose omission is a different call from
    any value given for it: torch.mean and torch.prod take keepdim only with
    a dim (their overloads without one take no keepdim), and torch.prod no
    dim=None. Shown as the value that omitting it stands for."""

    __slots__ = ("means",)

    def __init__(self, means: Any) -> None:
        self.means = means

    def __repr__(self) -> str:
        return repr(self.means)


NO_DIM = Omitted(None)
NO_KEEPDIM = Omitted(False)


def keepdim_without_dim(name: str, keepdim: Any) -> ArgumentError:
    """torch's TypeError for mean's or prod's keepdim given with no dim."""
    return ArgumentError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                         f"keepdim={_type_name(keepdim)}): keepdim is taken only with a dim")
