"""gpureduce: a fast, deterministic drop-in replacement for ``torch.sum``.

The operator lives in a C++/CUDA library registered with the PyTorch
dispatcher as ``torch.ops.gpureduce.sum`` (CPU, CUDA, Meta and Autograd keys).
This package loads it and adds a Python front end:

* :func:`sum` mirrors ``torch.sum``; ``kernel=`` picks one of the classic
  teaching kernels (:func:`kernels` lists them);
* :func:`replace_torch_sum` routes ``torch.sum`` / ``Tensor.sum`` inside a
  ``with`` block to gpureduce, :func:`patch` / :func:`unpatch` process-wide.
"""
from __future__ import annotations

import glob
import os
from typing import List, Optional, Sequence, Union

import torch

__all__ = ["sum", "kernels", "replace_torch_sum", "patch", "unpatch", "library_path"]
__version__ = "0.1.0"

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
        raise ImportError(
            f"reduce_op was built against torch {_build_info.TORCH_VERSION} but torch "
            f"{torch.__version__} is running; its compiled library would not load safely. "
            "Rebuild it under this torch: `pip install --no-build-isolation -e .` in the "
            "gpureduce checkout."
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
from ._calls import _has_torch_function, _is_compiling  # noqa: E402
from ._dropin import patch, replace_torch_sum, unpatch  # noqa: E402

DimArg = Optional[Union[int, Sequence[int]]]


def kernels() -> List[str]:
    """Names of the classic kernels that :func:`sum` takes as ``kernel=``
    (only ``cpu`` in a build without the CUDA sources)."""
    from . import _build_info

    names = list(torch.ops.gpureduce.classic_kernels())
    return names if _build_info.WITH_CUDA else [k for k in names if k == "cpu"]


def sum(  # noqa: A001 - mirrors torch.sum on purpose
    input: torch.Tensor,
    dim: DimArg = None,
    keepdim: bool = False,
    *,
    dtype: Optional[torch.dtype] = None,
    out: Optional[torch.Tensor] = None,
    kernel: Optional[str] = None,
) -> torch.Tensor:
    """Sum of ``input`` over ``dim``, exactly as ``torch.sum`` computes it.

    Args:
        input: the tensor to sum.
        dim: a dim or dims to reduce (ints, numpy ints or 0-d integer
            tensors, alone or in a list or tuple); ``None`` or ``[]`` reduce
            all of them. Dims named by str (named tensors) are left to
            ``torch.sum``.
        keepdim: keep reduced dims with size 1.
        dtype: the result (and accumulation input) dtype, a torch dtype or a
            Python type (``float`` is float64); by default int and bool
            promote to int64 and other dtypes keep their own.
        out: optional output tensor, resized as torch.sum resizes it.
        kernel: one of :func:`kernels` to run a classic teaching kernel instead
            of the production engine. It sums every element (``dim``,
            ``keepdim``, ``dtype`` and ``out`` must be left at their defaults).

    Returns:
        The sum; ``out`` itself when ``out`` is given.
    """
    if kernel is not None:
        if dim is not None or keepdim or dtype is not None or out is not None:
            raise ValueError("kernel= sums every element: leave dim, keepdim, dtype and out unset")
        if kernel == "cpu" and input.device.type != "cpu":
            return torch.ops.gpureduce.classic_sum(input.cpu(), kernel).to(input.device)
        return torch.ops.gpureduce.classic_sum(input, kernel)
    # The common forms (a tensor; no dim, an int, or a list or tuple of ints;
    # a bool keepdim; a torch dtype or none; no out) go straight to the
    # operator, checked with as few attribute reads as can tell them apart:
    # every Python step here adds to each call (NOTES.md, per-call cost).
    # They take the typed bindings as _calls.call_sum would (the same test:
    # no __torch_function__ override, not compiling); call_sum takes the
    # other calls, and torch.ops where that test fails.
    if out is None and type(keepdim) is bool and isinstance(input, torch.Tensor) and not input.is_nested \
            and (dtype is None or type(dtype) is torch.dtype):
        kind = type(dim)
        if dim is None or kind is int or ((kind is list or kind is tuple) and _args.all_ints(dim)):
            dims = None if dim is None else ([dim] if kind is int else dim)
            if not _has_torch_function(input) and not _is_compiling():
                # Not through call_sum: a Python call more is 70 ns of a
                # 1.5 us call.
                return _fast.sum_all(input, dtype) if dims is None and not keepdim \
                    else _fast.sum_dims(input, dims, keepdim, dtype)
            return _calls.call_sum(input, dims, keepdim, dtype)
    if _args.names_dims(dim):
        # Dims by name belong to torch's named tensors, which the operator
        # does not take: torch.sum gives the result or the error, whichever
        # this torch version gives (2.11 raises RuntimeError for an unknown
        # name, later versions TypeError).
        return torch.sum(input, dim, keepdim, dtype=dtype, out=out)
    dim, keepdim, dtype = _args.normalize(input, dim, keepdim, dtype)
    if input.is_nested:
        raise NotImplementedError("gpureduce.sum does not take nested tensors")
    return _calls.call_sum(input, dim, keepdim, dtype, out)
