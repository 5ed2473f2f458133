"""Drop-in mode: route torch.sum and Tensor.sum to gpureduce.sum (and, in
replace_torch_reductions() blocks and under patch(), torch's other
reductions that gpureduce has: see the second half of this file).

Both forms replace torch.sum and Tensor.sum by a wrapper whose common calls
are parsed and run in C++ (reduce_op._fast.dropin_sum), so that a routed
call costs about what torch.sum does. patch() routes every thread's calls
until unpatch(). replace_torch_sum() routes only its own thread's: the
wrapper is installed while any block is open, and a thread outside a block
gets torch's function from it. A block also pushes a TorchFunctionMode,
which catches what the wrapper cannot: references to torch.sum taken before
the block, and forms the wrapper leaves to torch's function.
"""
from __future__ import annotations

import contextlib
import functools
import threading
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode

from . import _args, _build_info, _calls, _fast

__all__ = ["replace_torch_sum", "replace_torch_reductions", "patch", "unpatch"]

_TORCH_SUMS = {"torch.sum": torch.sum, "Tensor.sum": torch.Tensor.sum}


def _ours(x: torch.Tensor) -> bool:
    """Whether gpureduce has kernels for x: a dense strided tensor, not
    quantized or nested, on a device with gpureduce kernels. (x.is_cpu and
    friends, since x.device builds an object: 400 ns a call.)"""
    if x.layout is not torch.strided or x.is_quantized or x.is_nested:
        return False
    return x.is_cpu or x.is_meta or (x.is_cuda and _build_info.WITH_CUDA)


def _bind(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """torch.sum's arguments in the operator's forms, or None where the call
    is torch's to make: argument forms torch rejects (so that torch raises
    its own error), named dims, unknown keywords, and tensors gpureduce has
    no kernel for (sparse, nested, quantized, other devices)."""
    kwargs = dict(kwargs)
    rest = list(args)
    if rest:
        x = rest.pop(0)
    elif "input" in kwargs or "self" in kwargs:
        x = kwargs.pop("input", kwargs.pop("self", None))
    else:
        return None
    bound: Dict[str, Any] = {"input": x, "dim": None, "keepdim": False, "dtype": None, "out": None}
    if rest and isinstance(rest[0], torch.dtype):  # Tensor.sum(dtype) / torch.sum(x, dtype)
        bound["dtype"] = rest.pop(0)
    if len(rest) > 2:
        return None
    for name, value in zip(("dim", "keepdim"), rest):
        bound[name] = value
    if "axis" in kwargs:  # numpy's name, which torch takes too
        if "dim" in kwargs or len(rest) > 0:
            return None
        kwargs["dim"] = kwargs.pop("axis")
    if "keepdims" in kwargs:  # numpy's name again
        if "keepdim" in kwargs or len(rest) > 1:
            return None
        kwargs["keepdim"] = kwargs.pop("keepdims")
    for k, v in kwargs.items():
        if k not in bound:
            return None
        bound[k] = v
    if not isinstance(x, torch.Tensor) or (bound["out"] is not None and not isinstance(bound["out"], torch.Tensor)):
        return None
    if not _ours(x):
        return None
    d = bound["dim"]
    if _args.torch_decides(d):
        return None
    try:
        bound["dim"], bound["keepdim"], bound["dtype"] = _args.normalize(x, d, bound["keepdim"], bound["dtype"])
    except _args.ArgumentError:
        return None
    bound["dim_given"] = len(rest) > 0 or "dim" in kwargs
    return bound


def _gpureduce_sum(b: Dict[str, Any]) -> torch.Tensor:
    """The operator on arguments _bind has put in its forms."""
    return _calls.call_sum(b["input"], b["dim"], b["keepdim"], b["dtype"], b["out"], b["dim_given"])


class _ReplaceTorchSum(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        # (torch names a method by looking it up on the class, so while the
        # wrappers are installed, func is Tensor.sum's wrapper: a form the
        # operator does not take then goes to torch's own function, not
        # back to the wrapper.)
        torch_func = _torch_func_of(func)
        if torch_func is None:
            return func(*args, **kwargs)
        bound = _bind(args, kwargs)
        if bound is not None:
            return _gpureduce_sum(bound)
        return torch_func(*args, **kwargs)


_originals: Dict[str, Callable[..., Any]] = {}
_lock = threading.Lock()
_blocks_open = 0  # replace_torch_sum() blocks open, in all threads
_patched = False  # patch() in force
_is_compiling = torch.compiler.is_compiling
_dropin_sum = _fast.dropin_sum
_in_block = _fast.in_block


def _wrap(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def routed(*args: Any, **kwargs: Any) -> Any:
        if _is_compiling():  # torch.compile traces the Python binding
            bound = _bind(args, kwargs)
            return original(*args, **kwargs) if bound is None else _gpureduce_sum(bound)
        result = _dropin_sum(args, kwargs)
        if result is not None:
            return result
        if _in_block() or not _patched:
            # In a block, torch's function checks the arguments as torch does
            # and hands the call to this thread's mode; with no block here and
            # no patch(), the wrapper is installed for another thread's block.
            return original(*args, **kwargs)
        with _ReplaceTorchSum():
            return original(*args, **kwargs)

    return routed


_ROUTED = {name: _wrap(f) for name, f in _TORCH_SUMS.items()}


def _torch_func_of(func: Any) -> Optional[Callable[..., Any]]:
    """torch's sum for itself or for its wrapper, else None (by identity:
    what torch.compile traces)."""
    for name, torch_func in _TORCH_SUMS.items():
        if func is torch_func or func is _ROUTED[name]:
            return torch_func
    return None


def _install() -> None:
    """The wrappers in place of torch.sum and Tensor.sum (under _lock)."""
    if _originals:
        return
    _originals["torch.sum"] = torch.sum
    _originals["Tensor.sum"] = torch.Tensor.sum
    torch.sum = _ROUTED["torch.sum"]
    torch.Tensor.sum = _ROUTED["Tensor.sum"]


def _uninstall_if_unused() -> None:
    """torch's functions back once no block is open and patch() is off (under _lock)."""
    if _originals and not _patched and _blocks_open == 0:
        torch.sum = _originals.pop("torch.sum")
        torch.Tensor.sum = _originals.pop("Tensor.sum")


@contextlib.contextmanager
def replace_torch_sum() -> Iterator[None]:
    """Inside the block, torch.sum, Tensor.sum and x.sum(dim, ...) run
    gpureduce.sum on this thread, including in nn.Module forward and
    backward."""
    global _blocks_open
    with _lock:
        _blocks_open += 1
        _install()
    _fast.enter_block()
    try:
        with _ReplaceTorchSum():
            yield
    finally:
        _fast.exit_block()
        with _lock:
            _blocks_open -= 1
            _uninstall_if_unused()


def _set_patched(on: bool) -> None:
    global _patched
    with _lock:
        _patched = on
        _fast.set_patched(on)
        if on:
            _install()
            _install_reductions()
        else:
            _uninstall_if_unused()
            _uninstall_reductions()


def patch() -> None:
    """Route torch.sum, torch.nansum, torch.mean, torch.prod, torch.amax,
    torch.amin, torch.max and torch.min (their reductions), torch.argmax,
    torch.argmin, torch.logsumexp, torch.var, torch.std, torch.var_mean,
    torch.std_mean and torch.linalg.vector_norm (which torch.norm and
    Tensor.norm call for numeric orders), and their Tensor methods, to
    gpureduce's ops process-wide (on every thread), until :func:`unpatch`."""
    _set_patched(True)


def unpatch() -> None:
    """Undo :func:`patch`."""
    _set_patched(False)


# The other reductions, routed by replace_torch_reductions() on one thread
# and by patch() process-wide: torch's function and Tensor method of each,
# and the signature torch gives them (a call that does not bind, or that
# our op does not take, is torch's to make, so that torch raises its own
# error). No C++ fast path for them yet: a routed call costs a bind of its
# arguments in Python.
#
# Each signature is a function that returns the arguments the call gave, by
# name (those left out are absent, as in inspect's bind), or raises
# TypeError where the call does not bind; a plain function rather than
# inspect.Signature.bind, so that torch.compile traces a routed call
# inside a block (it cannot trace inspect).
_ABSENT = object()


def _given(**arguments: Any) -> Dict[str, Any]:
    return {k: v for k, v in arguments.items() if v is not _ABSENT}


def _nansum_sig(input, dim=_ABSENT, keepdim=_ABSENT, *, dtype=_ABSENT, out=_ABSENT):
    return _given(input=input, dim=dim, keepdim=keepdim, dtype=dtype, out=out)


def _mean_sig(input, dim=_ABSENT, keepdim=_ABSENT, *, dtype=_ABSENT, out=_ABSENT):  # keepdim only with a dim
    return _given(input=input, dim=dim, keepdim=keepdim, dtype=dtype, out=out)


def _prod_sig(input, dim=_ABSENT, keepdim=_ABSENT, *, dtype=_ABSENT, out=_ABSENT):  # out= only with a dim
    return _given(input=input, dim=dim, keepdim=keepdim, dtype=dtype, out=out)


def _extremum_sig(input, dim=_ABSENT, keepdim=_ABSENT, *, out=_ABSENT):
    return _given(input=input, dim=dim, keepdim=keepdim, out=out)


def _logsumexp_sig(input, dim, keepdim=_ABSENT, *, out=_ABSENT):
    return _given(input=input, dim=dim, keepdim=keepdim, out=out)


def _spread_sig(input, dim=_ABSENT, unbiased=_ABSENT, keepdim=_ABSENT, *, correction=_ABSENT, out=_ABSENT):  # var, std
    return _given(input=input, dim=dim, unbiased=unbiased, keepdim=keepdim, correction=correction, out=out)


def _spread_mean_sig(input, dim=_ABSENT, unbiased=_ABSENT, keepdim=_ABSENT, *, correction=_ABSENT):  # var_mean, std_mean
    return _given(input=input, dim=dim, unbiased=unbiased, keepdim=keepdim, correction=correction)


def _vector_norm_sig(x, ord=_ABSENT, dim=_ABSENT, keepdim=_ABSENT, *, dtype=_ABSENT, out=_ABSENT):  # torch.linalg's
    return _given(x=x, ord=ord, dim=dim, keepdim=keepdim, dtype=dtype, out=out)


def _with_indices_sig(input, dim=_ABSENT, keepdim=_ABSENT, *, out=_ABSENT):  # max, min
    return _given(input=input, dim=dim, keepdim=keepdim, out=out)


def _arg_sig(input, dim=_ABSENT, keepdim=_ABSENT, *, out=_ABSENT):  # argmax, argmin
    return _given(input=input, dim=dim, keepdim=keepdim, out=out)


_REDUCTION_SIGS = {"nansum": _nansum_sig, "mean": _mean_sig, "prod": _prod_sig,
                   "amax": _extremum_sig, "amin": _extremum_sig, "logsumexp": _logsumexp_sig,
                   "var": _spread_sig, "std": _spread_sig, "var_mean": _spread_mean_sig, "std_mean": _spread_mean_sig,
                   "vector_norm": _vector_norm_sig, "max": _with_indices_sig, "min": _with_indices_sig,
                   "argmax": _arg_sig, "argmin": _arg_sig}
# torch's own functions and methods, taken at import, before any patch()
# (var_mean and std_mean are functions only; vector_norm is torch.linalg's,
# which torch.norm and Tensor.norm call for numeric orders, so that patch()
# routes those too).
_TORCH_REDUCTIONS = {(owner, name): getattr(owner, name) for name in _REDUCTION_SIGS
                     for owner in (torch, torch.Tensor, torch.linalg) if hasattr(owner, name)}


def _reduction_table() -> Dict[Any, Tuple[Callable[..., Any], Callable[..., Any]]]:
    """torch's function or method -> (the package's wrapper, torch's signature)."""
    from . import (amax, amin, argmax, argmin, logsumexp, max, mean, min, nansum, prod, std,  # after the package's import
                   std_mean, var, var_mean, vector_norm)

    ours = {"nansum": nansum, "mean": mean, "prod": prod, "amax": amax, "amin": amin, "logsumexp": logsumexp,
            "var": var, "std": std, "var_mean": var_mean, "std_mean": std_mean, "vector_norm": vector_norm,
            "max": max, "min": min, "argmax": argmax, "argmin": argmin}
    return {func: (ours[name], _REDUCTION_SIGS[name]) for (_, name), func in _TORCH_REDUCTIONS.items()}


def _names_a_dim(dim: Any) -> bool:
    """Whether dim is a named dim or holds one (torch's to handle)."""
    if isinstance(dim, str):
        return True
    return isinstance(dim, (list, tuple)) and any(isinstance(d, str) for d in dim)


def _route(sig: Callable[..., Any], args, kwargs) -> Optional[Dict[str, Any]]:
    """The call's arguments for our op, or None where it is torch's."""
    try:
        given = sig(*args, **kwargs)
    except TypeError:
        return None
    if "x" in given:  # torch.linalg's name for the input
        given["input"] = given.pop("x")
    x = given.get("input")
    if not isinstance(x, torch.Tensor) or not _ours(x) or _names_a_dim(given.get("dim")):
        return None
    # prod(x, dim=None, ...), prod(x, keepdim=True) and mean(x, keepdim=True)
    # match none of torch.prod's and torch.mean's overloads, and var(x,
    # dim=True) none of var's (a bool is its unbiased, and positional only):
    # torch raises for them.
    if sig is _prod_sig and "dim" in given and given["dim"] is None:
        return None
    if (sig is _prod_sig or sig is _mean_sig) and "dim" not in given and "keepdim" in given:
        return None
    if sig is _prod_sig and "dim" not in given and "out" in given:
        return None
    if sig in (_spread_sig, _spread_mean_sig) and isinstance(kwargs.get("dim"), bool):
        return None
    # An order that is not a real number: torch's TypeError or RuntimeError.
    if sig is _vector_norm_sig and not isinstance(given.get("ord", 2), (int, float)):
        return None
    if sig is _with_indices_sig or sig is _arg_sig:
        dim = given.get("dim")
        # max(x, other) is the elementwise maximum; a dim must be an int
        # (torch's own TypeError for any other form), and max(x) takes no
        # keepdim, and out= only as one tensor (max.unary_out).
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
            return None
        if sig is _with_indices_sig and dim is None and ("dim" in given or "keepdim" in given or (
                "out" in given and not isinstance(given["out"], torch.Tensor))):
            return None
        if sig is _with_indices_sig and dim is not None and given.get("out") is not None and not (
                isinstance(given["out"], (tuple, list)) and len(given["out"]) == 2):
            return None
    if given.get("out", 0) is None:
        del given["out"]
    return given


class _ReplaceTorchReductions(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self._table = _reduction_table()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        entry = self._table.get(func)
        if entry is not None:
            ours, sig = entry
            given = _route(sig, args, kwargs)
            if given is not None:
                return ours(given.pop("input"), **given)
        return func(*args, **kwargs)


def _wrap_reduction(original: Callable[..., Any], ours: Callable[..., Any],
                    sig: Callable[..., Any]) -> Callable[..., Any]:
    """patch()'s stand-in for one of torch's reductions. While torch.compile
    traces, torch's own (the graph holds torch's op, as for sum under
    patch())."""
    @functools.wraps(original)
    def routed(*args: Any, **kwargs: Any) -> Any:
        if _patched and not _is_compiling():
            given = _route(sig, args, kwargs)
            if given is not None:
                return ours(given.pop("input"), **given)
        return original(*args, **kwargs)

    return routed


def _install_reductions() -> None:
    """patch()'s wrappers in place of torch's other reductions (under _lock)."""
    if any(getattr(owner, name) is not func for (owner, name), func in _TORCH_REDUCTIONS.items()):
        return  # installed already
    table = _reduction_table()
    for (owner, name), func in _TORCH_REDUCTIONS.items():
        setattr(owner, name, _wrap_reduction(func, *table[func]))


def _uninstall_reductions() -> None:
    """torch's own reductions back (under _lock)."""
    for (owner, name), func in _TORCH_REDUCTIONS.items():
        setattr(owner, name, func)


@contextlib.contextmanager
def replace_torch_reductions() -> Iterator[None]:
    """Inside the block, on this thread, torch.sum, torch.nansum,
    torch.mean, torch.prod, torch.amax, torch.amin, torch.max and torch.min (their
    reductions: not the elementwise form with a second tensor),
    torch.argmax, torch.argmin, torch.logsumexp, torch.var, torch.std,
    torch.var_mean, torch.std_mean and torch.linalg.vector_norm, and the
    Tensor methods of the same names, run gpureduce's ops (sum as replace_torch_sum() routes it;
    the others through a TorchFunctionMode). Calls gpureduce does not take
    (other devices and layouts, named dims, argument forms torch rejects)
    run torch's own function."""
    with replace_torch_sum(), _ReplaceTorchReductions():
        yield
