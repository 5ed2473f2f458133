"""gpureduce: a fast, deterministic drop-in replacement for ``torch.sum``.

The operator lives in a C++/CUDA library registered with the PyTorch
dispatcher as ``torch.ops.gpureduce.sum`` (CPU, CUDA, Meta and Autograd keys).
This package loads it and adds a Python front end:

* :func:`sum` mirrors ``torch.sum``; ``kernel=`` picks one of the classic
  teaching kernels (:func:`kernels` lists them);
* :func:`nansum`, :func:`mean`, :func:`prod`, :func:`amax`, :func:`amin`,
  :func:`logsumexp`, :func:`var`, :func:`std`, :func:`var_mean` and
  :func:`std_mean` mirror torch's functions of the same names, and
  :func:`vector_norm` mirrors ``torch.linalg.vector_norm``;
* :func:`fsum` is the correctly rounded sum (``math.fsum`` for tensors, CPU
  and CUDA);
* :func:`conv1d` is a 1-D cross-correlation under a short mask (``F.conv1d``'s,
  one mask or one a channel) and :class:`DepthwiseConv1d` a module of it
  (``kernel=`` picks one of the book's four CUDA kernels, :func:`conv1d_kernels`);
* :func:`replace_torch_sum` routes ``torch.sum`` / ``Tensor.sum`` inside a
  ``with`` block to gpureduce, :func:`patch` / :func:`unpatch` process-wide;
  :func:`replace_torch_reductions` routes every op above in a block.
"""
from __future__ import annotations

import glob
import importlib.abc
import importlib.util
import numbers
import operator
import os
import sys
import warnings
from typing import Any, List, Optional, Sequence, Tuple, Union

import torch

__all__ = ["sum", "nansum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "logsumexp", "var", "std", "var_mean", "std_mean", "vector_norm", "fsum", "conv1d", "conv1d_kernels", "DepthwiseConv1d", "kernels", "set_sharded_combine", "get_sharded_combine", "replace_torch_sum", "replace_torch_reductions", "patch", "unpatch", "library_path"]
from ._version import __version__  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))


def _check_torch_version() -> None:
    try:
        from . import _build_info
    except ImportError as e:  # pragma: no cover - only without a build
        raise ImportError(
            "reduce_op is not built. Build it with `pip install --no-build-isolation -e .` "
            "from the gpureduce checkout."
        ) from e
    if _build_info.TORCH_VERSION != torch.__version__:
        built_cuda = getattr(_build_info, "CUDA_VERSION", None)
        built = f"torch {_build_info.TORCH_VERSION} ({f'CUDA {built_cuda}' if built_cuda else 'no CUDA'})"
        running = f"torch {torch.__version__} ({f'CUDA {torch.version.cuda}' if torch.version.cuda else 'no CUDA'})"
        raise ImportError(
            f"reduce_op was built against {built} but {running} is running; its compiled library "
            "would not load safely (torch's C++ ABI changes between versions). Install the gpureduce "
            f"wheel built for torch {torch.__version__}, or build one under it: "
            "`pip wheel --no-build-isolation .` (or `pip install --no-build-isolation -e .`) "
            "in the gpureduce source tree."
        )


def library_path() -> str:
    """Path of the compiled operator library (for LibTorch programs, too)."""
    found = sorted(glob.glob(os.path.join(_HERE, "_C*.so")))
    if not found:
        raise ImportError(
            "reduce_op's compiled library (_C*.so) was not found next to the package; build it "
            "with `pip install --no-build-isolation -e .`."
        )
    return found[0]


_check_torch_version()
torch.ops.load_library(library_path())

from . import _args, _calls, _fast  # noqa: E402
from ._calls import fast_path_open as _fast_path_open  # noqa: E402
from ._dropin import patch, replace_torch_reductions, replace_torch_sum, unpatch  # noqa: E402
from ._conv import DepthwiseConv1d, conv1d, conv1d_kernels  # noqa: E402

# max.dim's and min.dim's results through reduce_op._fast, as torch's.
_fast.set_return_types(torch.return_types.max, torch.return_types.min)

# torch.func.vmap's batching rules (one call over the batch, not a loop).
from . import _vmap  # noqa: E402

_vmap.register()

DimArg = Optional[Union[int, Sequence[int]]]


def kernels() -> List[str]:
    """Names of the classic kernels that :func:`sum` takes as ``kernel=``
    (only ``cpu`` in a build without the CUDA sources)."""
    from . import _build_info

    names = list(torch.ops.gpureduce.classic_kernels())
    return names if _build_info.WITH_CUDA else [k for k in names if k == "cpu"]


def _sum(
    input: torch.Tensor,
    dim: DimArg = None,
    keepdim: bool = False,
    *,
    dtype: Optional[torch.dtype] = None,
    out: Optional[torch.Tensor] = None,
    kernel: Optional[str] = None,
    **numpy_names: Any,
) -> torch.Tensor:
    """:func:`sum` in Python, for every form of its arguments: what the C
    function that is :func:`sum` calls for the forms it does not take itself,
    and what torch.compile traces in its place. ``numpy_names`` takes
    numpy's ``axis=`` and ``keepdims=``, which torch.sum takes too."""
    if numpy_names:
        dim, keepdim = _args.numpy_names(dim, keepdim, numpy_names)
    if kernel is not None:
        if dim is not None or keepdim or dtype is not None or out is not None:
            raise ValueError("kernel= sums every element: leave dim, keepdim, dtype and out unset")
        if kernel == "cpu" and input.device.type != "cpu":
            return torch.ops.gpureduce.classic_sum(input.cpu(), kernel).to(input.device)
        return torch.ops.gpureduce.classic_sum(input, kernel)
    if _args.torch_decides(dim):
        # Dims by name belong to torch's named tensors, which the operator
        # does not take; torch's errors for them and for ints beyond int64
        # differ between versions (2.11 raises RuntimeError for an unknown
        # name, later versions TypeError): torch.sum gives the result or the
        # error.
        return torch.sum(input, dim, keepdim, dtype=dtype, out=out)
    dim, keepdim, dtype = _args.normalize(input, dim, keepdim, dtype)
    if input.is_nested:
        raise NotImplementedError("gpureduce.sum does not take nested tensors")
    return _calls.call_sum(input, dim, keepdim, dtype, out)


def _family_args(name: str, dim: Any, keepdim: Any, dtype: Any) -> Tuple[Any, bool, Optional[torch.dtype]]:
    """(dims, keepdim, dtype) of an op with an ``int[1]?`` dim, a bool
    keepdim and a dtype=, checked as torch's binding checks them
    (reduce_op._args), for the operator's boxed call."""
    return (_args.family_dims(name, dim), _args.family_keepdim(name, keepdim), _args.family_dtype(name, dtype))


def nansum(
    input: torch.Tensor,
    dim: DimArg = None,
    keepdim: bool = False,
    *,
    dtype: Optional[torch.dtype] = None,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Mirrors ``torch.nansum``: the sum of the elements over ``dim`` (all
    of them by default), NaN counted as zero; a NaN that the adds make
    (``inf + -inf``) stays. Integer and bool inputs sum to int64, as in
    torch. Complex inputs are summed on CUDA (an element with a NaN in
    either part counting as zero) and refused on the CPU, as torch's are.
    Runs on CPU, CUDA and meta tensors."""
    dims = [dim] if isinstance(dim, int) and not isinstance(dim, bool) else dim
    if out is None and _fast_path_open(input):
        r = _fast.nansum(input, dims, keepdim, dtype)
        if r is not NotImplemented:
            return r
    _args.tensor_input("nansum", input)
    dims, keepdim, dtype = _family_args("nansum", dim, keepdim, dtype)
    if out is None:
        return torch.ops.gpureduce.nansum(input, dims, keepdim, dtype=dtype)
    torch.ops.gpureduce.nansum.out(input, dims, keepdim, dtype=dtype, out=out)
    return out


def fsum(
    input: torch.Tensor,
    dim: DimArg = None,
    keepdim: bool = False,
    *,
    dtype: Optional[torch.dtype] = None,
) -> torch.Tensor:
    """The correctly rounded sum: the exact sum of the elements over ``dim``
    (all of them by default), rounded once to the result's dtype (``dtype``,
    or the input's), to nearest with ties to even; ``math.fsum`` for
    tensors. float16, bfloat16, float32 and float64. The result does not
    depend on the thread count or the order of the elements. A NaN, or
    +inf with -inf, gives NaN; an infinity otherwise gives itself; a
    finite sum past the dtype's largest value gives inf; a zero sum is -0.0
    only when every element is -0.0. Its gradient is sum's. CPU, CUDA and
    meta tensors; the CUDA result is bit for bit the CPU's."""
    _args.tensor_input("fsum", input)
    dims = [dim] if isinstance(dim, int) and not isinstance(dim, bool) else dim
    if dims is None:
        return torch.ops.gpureduce.fsum.dim_IntList(input, None, keepdim, dtype=dtype)
    return torch.ops.gpureduce.fsum.dim_IntList(input, list(dims), keepdim, dtype=dtype)


def mean(
    input: torch.Tensor,
    dim: DimArg = _args.NO_DIM,
    keepdim: bool = _args.NO_KEEPDIM,
    *,
    dtype: Optional[torch.dtype] = None,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Mirrors ``torch.mean``: the mean of the elements over ``dim`` (all of
    them by default), for floating and complex inputs, or others with a
    floating or complex ``dtype=``, as in torch; NaN over no elements. It
    runs sum's kernels, each output divided by its count in the same pass.
    ``keepdim`` only with a ``dim`` (None included), as torch's overloads.
    Runs on CPU, CUDA and meta tensors."""
    # (Inline: mean's per-call cost.) torch.mean(x) is the overload of every
    # element; mean(x, dim=None) is the dim overload, which refuses inputs of
    # more than 64 dims as torch's does.
    whole = dim is _args.NO_DIM
    if keepdim is _args.NO_KEEPDIM:
        keepdim = False
        if whole:
            dim = None
    elif whole:
        raise _args.keepdim_without_dim("mean", keepdim)
    dims = [dim] if isinstance(dim, int) and not isinstance(dim, bool) else dim
    if out is None and _fast_path_open(input):
        r = _fast.mean_all(input, dtype) if whole else _fast.mean_dims(input, dims, keepdim, dtype)
        if r is not NotImplemented:
            return r
    _args.tensor_input("mean", input)
    dims, keepdim, dtype = _family_args("mean", dim, keepdim, dtype)
    if out is None:
        if whole:
            return torch.ops.gpureduce.mean(input, dtype=dtype)
        return torch.ops.gpureduce.mean.dim(input, dims, keepdim, dtype=dtype)
    torch.ops.gpureduce.mean.out(input, dims, keepdim, dtype=dtype, out=out)
    return out


def prod(
    input: torch.Tensor,
    dim: Optional[int] = _args.NO_DIM,
    keepdim: bool = _args.NO_KEEPDIM,
    *,
    dtype: Optional[torch.dtype] = None,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Mirrors ``torch.prod``: the product of all elements, or over one
    ``dim`` (``keepdim`` keeps it as size 1; neither a keepdim without a dim
    nor dim=None, as torch's overloads), into ``out`` where given (with a
    dim only, as torch's overloads; computed in out's dtype, as torch's).
    Integer and bool inputs multiply to int64, as in torch; ``dtype=``
    casts the input first. Its gradient is right where the input holds
    zeros (one or several), as torch's is."""
    if keepdim is _args.NO_KEEPDIM:
        keepdim = False
    elif dim is _args.NO_DIM:
        raise _args.keepdim_without_dim("prod", keepdim)
    if dim is None:
        raise _args.ArgumentError("prod() received an invalid combination of arguments - got (Tensor, dim=NoneType): "
                                  "dim must be an int")
    if out is not None:
        _args.tensor_input("prod", input)
        if dim is _args.NO_DIM:
            raise _args.ArgumentError("prod() received an invalid combination of arguments - got (Tensor, out=Tensor):"
                                      " out= needs a dim")
        torch.ops.gpureduce.prod.int_out(input, _args.family_dim("prod", dim), _args.family_keepdim("prod", keepdim),
                                         dtype=_args.family_dtype("prod", dtype), out=out)
        return out
    if dim is _args.NO_DIM:
        if _fast_path_open(input):
            r = _fast.prod_all(input, dtype)
            if r is not NotImplemented:
                return r
        _args.tensor_input("prod", input)
        return torch.ops.gpureduce.prod(input, dtype=_args.family_dtype("prod", dtype))
    if _fast_path_open(input):
        r = _fast.prod_dim(input, dim, keepdim, dtype)
        if r is not NotImplemented:
            return r
    _args.tensor_input("prod", input)
    dim = _args.family_dim("prod", dim)
    keepdim = _args.family_keepdim("prod", keepdim)
    return torch.ops.gpureduce.prod.dim_int(input, dim, keepdim, dtype=_args.family_dtype("prod", dtype))


def amax(
    input: torch.Tensor,
    dim: DimArg = (),
    keepdim: bool = False,
    *,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Mirrors ``torch.amax``: the largest element over ``dim`` (all dims by
    default), in the input's dtype; NaN where the slice holds a NaN. Its
    gradient is split evenly among the elements equal to the result, as
    torch's is."""
    if out is None and _fast_path_open(input):
        r = _fast.amax(input, dim, keepdim)
        if r is not NotImplemented:
            return r
    return _extremum("amax", torch.ops.gpureduce.amax, input, dim, keepdim, out)


def amin(
    input: torch.Tensor,
    dim: DimArg = (),
    keepdim: bool = False,
    *,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Mirrors ``torch.amin``: the smallest element over ``dim`` (all dims by
    default), in the input's dtype; NaN where the slice holds a NaN. Its
    gradient is split evenly among the elements equal to the result."""
    if out is None and _fast_path_open(input):
        r = _fast.amin(input, dim, keepdim)
        if r is not NotImplemented:
            return r
    return _extremum("amin", torch.ops.gpureduce.amin, input, dim, keepdim, out)


def _with_indices(name: str, input: torch.Tensor, dim: Optional[int], keepdim: bool,
                  out: Optional[Any]) -> Any:
    """max's or min's (`name`) three forms: of every element, or (values,
    indices) along one dim, into out=(values, indices) where given. (The C
    functions max and min refuse dim=None, and keepdim without a dim, as
    torch does; here, where compiled code traces them, a dim of None is
    one left out.)"""
    _args.tensor_input(name, input)
    op = getattr(torch.ops.gpureduce, name)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}() received an invalid combination of arguments: keepdim= needs a dim")
        if out is None:
            return op(input)
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"{name}(): out= of every element must be a tensor, not {type(out).__name__}")
        # aten's max.unary_out: cast into out, resized to a scalar
        op.unary_out(input, out=out)
        return out
    if isinstance(dim, torch.Tensor) and keepdim is False:
        # max(input, other): torch's first overload for a tensor alone after
        # the input, the elementwise maximum (with a keepdim, a tensor is
        # read as a dim, as torch reads it)
        op = torch.maximum if name == "max" else torch.minimum
        return op(input, dim) if out is None else op(input, dim, out=out)
    if isinstance(dim, bool) or _args.is_numpy_array(dim) or not isinstance(keepdim, bool):
        raise TypeError(f"{name}(): dim must be an int and keepdim a bool (as torch.{name})")
    if not isinstance(dim, int):
        dim = operator.index(dim)
    if not _args.fits_int64(dim):
        raise ValueError("Overflow when unpacking long long")  # torch's, for a dim outside int64
    if out is None:
        return getattr(torch.return_types, name)(op.dim(input, dim, keepdim))
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{name}(): out= must be a (values, indices) pair of tensors")
    values, indices = out
    # aten's names for the two outputs
    names = {"max": ("max", "max_values"), "min": ("min", "min_indices")}[name]
    getattr(op, f"dim_{name}")(input, dim, keepdim, **{names[0]: values, names[1]: indices})
    return getattr(torch.return_types, f"{name}_out")((values, indices))


def _max(
    input: torch.Tensor,
    dim: Optional[int] = None,
    keepdim: bool = False,
    *,
    out: Optional[Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]] = None,
) -> Any:
    """:func:`max` in Python, for every form of its arguments, through
    torch.ops: what the C function that is :func:`max` calls for the forms
    it does not take itself, and what torch.compile traces in its place. Mirrors torch.max's
    reductions: ``max(input)`` is the largest element (NaN if any is), in
    the input's dtype; ``max(input, dim, keepdim=False)`` is the named tuple
    (values, indices) of each slice's largest element and the index of its
    first occurrence along ``dim`` (of the first NaN where the slice holds
    one), as torch's; ``out=`` is a tensor for the first form (the largest
    element cast into it, -inf for an empty input, as torch's max.unary_out)
    and a (values, indices) pair for the second. The values' gradient goes
    to the element each index names; of every element, it is split evenly
    among the ties.
    ``max(input, other)``, a tensor after the input without a keepdim, is
    the elementwise maximum, as torch binds it (torch.maximum's: not a
    reduction). (A tensor given as ``dim=`` is read so too: this signature,
    which torch.compile needs to be the C function's, cannot tell it from
    one given by position.)"""
    return _with_indices("max", input, dim, keepdim, out)


def _min(
    input: torch.Tensor,
    dim: Optional[int] = None,
    keepdim: bool = False,
    *,
    out: Optional[Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]] = None,
) -> Any:
    """:func:`min` in Python (as :func:`_max`): torch.min's forms, as
    :func:`max`, for the smallest element (``min(input, other)``:
    torch.minimum's)."""
    return _with_indices("min", input, dim, keepdim, out)


# reduce_op.max and reduce_op.min are C functions (reduce_op._fast.max and
# .min, fast_calls.cpp), as sum is: their common forms taken in C++, 0.19 us
# a call less than in Python (NOTES.md, session 45); every other form goes
# to _max and _min.
_max.__qualname__, _min.__qualname__ = "max", "min"  # (the names Python's argument errors give)
_fast.set_extreme_general(_max, _min)
max = _fast.max  # noqa: A001 - mirrors torch.max on purpose
min = _fast.min  # noqa: A001 - mirrors torch.min on purpose


def _arg(name: str, op: Any, fast_call: Any, input: torch.Tensor, dim: Optional[int], keepdim: bool,
         out: Optional[torch.Tensor]) -> torch.Tensor:
    """argmax's or argmin's (`name`) operator (`op`; `fast_call` its _fast
    binding). (The name is given, not read off the op: torch.compile
    traces this and cannot trace str.split.)"""
    if out is None and _fast_path_open(input):
        r = fast_call(input, dim, keepdim)
        if r is not NotImplemented:
            return r
    _args.tensor_input(name, input)
    dim = _args.family_dim(name, dim)
    keepdim = _args.family_keepdim(name, keepdim)
    if out is None:
        return op(input, dim, keepdim)
    op.out(input, dim, keepdim, out=out)
    return out


def argmax(
    input: torch.Tensor,
    dim: Optional[int] = None,
    keepdim: bool = False,
    *,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Mirrors ``torch.argmax``: the index (int64) of the first occurrence
    of each slice's largest element along ``dim`` (of its first NaN where
    it holds one); with ``dim=None``, the index into the flattened input.
    Bool and complex inputs raise, as in torch."""
    return _arg("argmax", torch.ops.gpureduce.argmax, _fast.argmax, input, dim, keepdim, out)


def argmin(
    input: torch.Tensor,
    dim: Optional[int] = None,
    keepdim: bool = False,
    *,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Mirrors ``torch.argmin``: as :func:`argmax`, for the smallest element."""
    return _arg("argmin", torch.ops.gpureduce.argmin, _fast.argmin, input, dim, keepdim, out)


def logsumexp(
    input: torch.Tensor,
    dim: Union[int, Sequence[int]],
    keepdim: bool = False,
    *,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Mirrors ``torch.logsumexp``: ``log(sum(exp(input)))`` over ``dim``,
    computed without overflow in one pass over memory (each slice's running
    maximum rescales its running sum). Integer and bool inputs give the
    default float dtype, as in torch; -inf over no elements. Complex inputs
    are not taken yet (NotImplementedError). Its gradient is the softmax of
    each slice times the incoming gradient, as torch's is."""
    dims = [dim] if isinstance(dim, int) and not isinstance(dim, bool) else dim
    if out is None and _fast_path_open(input):
        r = _fast.logsumexp(input, dims, keepdim)
        if r is not NotImplemented:
            return r
    _args.tensor_input("logsumexp", input)
    dims = _args.family_dims("logsumexp", dim, required=True)
    keepdim = _args.family_keepdim("logsumexp", keepdim)
    if out is None:
        return torch.ops.gpureduce.logsumexp(input, dims, keepdim)
    torch.ops.gpureduce.logsumexp.out(input, dims, keepdim, out=out)
    return out


def _correction_number(name: str, correction: Any) -> Any:
    """var's ``correction=`` as the operator takes it: torch's Number takes
    numpy's scalars and 0-d tensors as their Python value, and a complex
    one only with no imaginary part."""
    if correction is None or type(correction) in (int, float):
        return correction
    if isinstance(correction, torch.Tensor) and correction.dim() == 0:
        correction = correction.item()
    elif _args.is_numpy_scalar(correction):
        correction = correction.item()  # (its bool included)
    if isinstance(correction, complex):
        if correction.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        return correction.real
    if isinstance(correction, (int, float)):
        return correction
    raise _args.ArgumentError(f"{name}() received an invalid combination of arguments - got "
                              f"correction={_args._type_name(correction)}")


def _correction(name: str, input: torch.Tensor, dim: Any, unbiased: Optional[bool],
                correction: Any) -> Tuple[Any, Any]:
    """torch's forms of var's arguments as (dim, correction): ``unbiased``
    (positional in dim's place too, ``var(x, True)``) is a correction of 1
    or 0, and may not come with ``correction=`` (TypeError, as torch's).
    Warns as torch does where the count reduced into each output less the
    correction is not positive. (Here, not in the operator: a C++ warning
    of an op called through torch.ops goes to stderr, not to Python's
    warnings, aten's var's included.)"""
    if isinstance(dim, bool):
        if unbiased is not None:
            raise TypeError(f"{name}(): unbiased given twice")
        dim, unbiased = None, dim
    if unbiased is not None:
        if not isinstance(unbiased, bool):  # (numpy's bool too, as torch)
            raise _args.ArgumentError(f"{name}() received an invalid combination of arguments - got "
                                      f"unbiased={_args._type_name(unbiased)}")
        if correction is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments: unbiased= and correction= "
                            "are two forms of one argument, as in torch")
        correction = 1 if unbiased else 0
    correction = _correction_number(name, correction)
    if type(dim) is int and _args.fits_int64(dim):
        dim = [dim]  # (one beyond int64 raises torch's ValueError in family_dims)
    if isinstance(input, torch.Tensor):
        # torch's reduction factor: the input's numel over the result's, 0
        # where the result is empty.
        kept = 1
        listed = dim if isinstance(dim, (list, tuple)) or dim is None else [dim]
        if listed is not None and len(listed) > 0 and input.dim() > 0:
            try:
                # (numpy's ints and 0-d integer tensors are dims, as in torch)
                reduced = {operator.index(d) % input.dim() for d in listed}
            except TypeError:
                reduced = set()  # named dims and other forms: the operator's to refuse
            for d, s in enumerate(input.shape):
                if d not in reduced:
                    kept *= s
        factor = 0 if kept == 0 else input.numel() // kept
        if factor - (1 if correction is None else correction) <= 0:
            warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                          "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=4)
    return dim, correction


def _spread(name: str, input: torch.Tensor, dim: Any, unbiased: Optional[bool], keepdim: bool, correction: Any,
            out: Optional[torch.Tensor]) -> Any:
    """var, std, var_mean or std_mean (`name`) through its operator's
    .correction overload, or .correction_out where out is given."""
    dims, c = _correction(name, input, dim, unbiased, correction)
    op = getattr(torch.ops.gpureduce, name)
    if out is None and _fast_path_open(input):
        r = getattr(_fast, name)(input, dims, c, keepdim)
        if r is not NotImplemented:
            return r
    _args.tensor_input(name, input)
    dims = _args.family_dims(name, dims)
    keepdim = _args.family_keepdim(name, keepdim)
    if out is None:
        return op.correction(input, dims, correction=c, keepdim=keepdim)
    op.correction_out(input, dims, correction=c, keepdim=keepdim, out=out)
    return out


def var(
    input: torch.Tensor,
    dim: Optional[DimArg] = None,
    unbiased: Optional[bool] = None,
    keepdim: bool = False,
    *,
    correction: Optional[float] = None,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Mirrors ``torch.var``: the squared deviations from the mean over
    ``dim`` (all dims by default), summed and divided by ``max(0, N -
    correction)`` (correction 1 by default; ``unbiased=False`` is 0). One
    pass over memory (Welford's update, Chan's merge). Floating and complex
    inputs only; a complex input's is the sum of its real and imaginary
    parts' variances, real. Warns as torch does where ``N - correction <=
    0``."""
    return _spread("var", input, dim, unbiased, keepdim, correction, out)


def std(
    input: torch.Tensor,
    dim: Optional[DimArg] = None,
    unbiased: Optional[bool] = None,
    keepdim: bool = False,
    *,
    correction: Optional[float] = None,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Mirrors ``torch.std``: the square root of :func:`var`, computed by
    the same kernels."""
    return _spread("std", input, dim, unbiased, keepdim, correction, out)


def var_mean(
    input: torch.Tensor,
    dim: Optional[DimArg] = None,
    unbiased: Optional[bool] = None,
    keepdim: bool = False,
    *,
    correction: Optional[float] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Mirrors ``torch.var_mean``: (:func:`var`, :func:`mean`) over the same
    dims. The mean is a second pass over the input (mean's kernels)."""
    return _spread("var_mean", input, dim, unbiased, keepdim, correction, None)


def std_mean(
    input: torch.Tensor,
    dim: Optional[DimArg] = None,
    unbiased: Optional[bool] = None,
    keepdim: bool = False,
    *,
    correction: Optional[float] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Mirrors ``torch.std_mean``: (:func:`std`, :func:`mean`)."""
    return _spread("std_mean", input, dim, unbiased, keepdim, correction, None)


def vector_norm(
    x: torch.Tensor,
    ord: Union[int, float] = 2,
    dim: DimArg = None,
    keepdim: bool = False,
    *,
    dtype: Optional[torch.dtype] = None,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Mirrors ``torch.linalg.vector_norm``: ``sum(|x|^ord)^(1/ord)`` over
    ``dim`` (all dims by default), with ord ``inf`` the largest ``|x|``,
    ``-inf`` the smallest and ``0`` the count of nonzeros. Floating and
    complex inputs; the result is real, in ``dtype=``'s real dtype where it
    is given (the input is taken in ``dtype`` first, as in torch). Orders
    1, 2 and inf read the input once (a complex input's order 2 included);
    the others, and complex inputs' other orders, go through an
    elementwise op of torch's first. Its gradient is torch's formula."""
    if type(ord) is int or type(ord) is float:
        pass  # the common forms, before the slower checks below
    elif isinstance(ord, torch.Tensor) and ord.dim() == 0:
        ord = ord.item()  # torch takes a 0-d tensor as a Number
    elif not isinstance(ord, numbers.Number):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {type(ord).__name__}")
    dims = [dim] if isinstance(dim, int) and not isinstance(dim, bool) else dim
    if out is None and _fast_path_open(x):
        r = _fast.vector_norm(x, ord, dims, keepdim, dtype)
        if r is not NotImplemented:
            return r
    _args.tensor_input("linalg_vector_norm", x)
    dims, keepdim, dtype = _family_args("linalg_vector_norm", dim, keepdim, dtype)
    if out is None:
        return torch.ops.gpureduce.linalg_vector_norm(x, ord, dims, keepdim, dtype=dtype)
    torch.ops.gpureduce.linalg_vector_norm.out(x, ord, dims, keepdim, dtype=dtype, out=out)
    return out


def _extremum(name: str, op, input: torch.Tensor, dim: DimArg, keepdim: bool,
              out: Optional[torch.Tensor]) -> torch.Tensor:
    """amax's or amin's (`name`) operator (`op`), through its out= overload
    where out is given. dim=None is every dim, as torch takes it."""
    _args.tensor_input(name, input)
    dims = _args.family_dims(name, dim)
    dim = [] if dims is None else dims
    keepdim = _args.family_keepdim(name, keepdim)
    if out is None:
        return op(input, dim, keepdim)
    op.out(input, dim, keepdim, out=out)
    return out


# reduce_op.sum is a C function (reduce_op._fast.sum, fast_calls.cpp): the
# common forms of its arguments parsed and the operator called in C++, a
# third of a microsecond less a call than in Python (NOTES.md, session 19);
# it hands every other form to _sum.
_fast.set_sum_general(_sum, torch._C._has_torch_function_unary)
sum = _fast.sum  # noqa: A001 - mirrors torch.sum on purpose


def _trace_c_functions_in_compiled_code() -> None:
    """torch.compile cannot trace a C function: it traces _sum in sum's place
    (and _max, _min in max's and min's). Should a torch version refuse the
    registration, compiled code still runs the C function, outside the
    graph, and importing torch._dynamo must not fail for it."""
    for c_function, python_function in ((sum, _sum), (max, _max), (min, _min)):
        try:
            torch.compiler.substitute_in_graph(c_function)(python_function)
        except Exception as e:  # noqa: BLE001 - any refusal leaves compile working without the substitute
            import warnings

            warnings.warn(f"reduce_op: torch.compile will not trace reduce_op.{c_function.__name__} "
                          f"({type(e).__name__}: {e}); compiled code calls it outside the graph",
                          RuntimeWarning, stacklevel=2)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``then`` once the module ``name`` has been imported, rather than
    importing it here: torch._dynamo takes a second to import and only
    compiling needs it; torch.distributed.tensor only sharding."""

    def __init__(self, name: str, then: Any) -> None:
        self.name, self.then = name, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module
        then = self.then

        def exec_then_register(module):
            exec_module(module)
            then()

        spec.loader.exec_module = exec_then_register
        return spec


def _register_sharding_rules() -> None:
    """DTensor's rules for gpureduce's ops. They use DTensor's registry,
    which is not a public API: should a torch version refuse them, importing
    torch.distributed.tensor must still work (gpureduce's ops on DTensors
    then raise DTensor's "no sharding strategy" error)."""
    try:
        from ._sharding import register_sharding_rules

        register_sharding_rules()
    except Exception as e:  # noqa: BLE001 - any refusal leaves DTensor working without the rules
        warnings.warn(f"reduce_op: no sharding rules for DTensor ({type(e).__name__}: {e}); gpureduce's "
                      "ops will not take DTensors", RuntimeWarning, stacklevel=2)


def set_sharded_combine(mode: str) -> None:
    """How the partial sums and products of reductions of DTensors sharded
    on a reduced dim are combined: ``"rank_order"`` (the default) gathers them
    and adds them in rank order, the same bits for any NCCL algorithm or rank
    mapping; ``"all_reduce"`` all-reduces them."""
    from . import _sharding

    _sharding.set_sharded_combine(mode)


def get_sharded_combine() -> str:
    """The mode :func:`set_sharded_combine` set."""
    from . import _sharding

    return _sharding.get_sharded_combine()


for _name, _then in (("torch._dynamo", _trace_c_functions_in_compiled_code),
                     ("torch.distributed.tensor", _register_sharding_rules)):
    if _name in sys.modules:
        _then()
    else:
        sys.meta_path.insert(0, _AfterImport(_name, _then))
del _name, _then
