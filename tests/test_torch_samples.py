"""torch's own sample inputs for sum (its OpInfo in
torch.testing._internal.common_methods_invocations), through reduce_op.sum,
the drop-in mode (torch.sum and the Tensor method) and autograd, against
torch.sum on the same sample: the same dtype and shape, the same values
(within a float64-derived bound for floats), the same gradient, and, where
torch raises, the same error type."""
from __future__ import annotations

import functools
from typing import Any, Dict, Tuple

import pytest
import torch

import reduce_op
from axes import DEVICES, assert_matches_torch

pytest.importorskip("expecttest")  # common_methods_invocations imports it

# Every dtype torch.sum might list as supported; test_candidate_dtypes_cover_torchs
# fails if torch lists one that is not here.
CANDIDATE_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
                    torch.bfloat16, torch.float32, torch.float64, torch.complex32, torch.complex64, torch.complex128]


@functools.lru_cache(maxsize=None)
def _sum_info():
    """torch's OpInfo for sum, imported on first use: the import costs 6 s
    (2-core machine), paid only where the tests below run (the slow tier)."""
    from torch.testing._internal.common_methods_invocations import op_db

    return next(o for o in op_db if o.name == "sum" and o.variant_test_name == "")


def _bind(args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    """A sample's (dim, keepdim, dtype) as torch.sum reads them."""
    names = ("dim", "keepdim")
    bound = {"dim": None, "keepdim": False, "dtype": None}
    bound.update(dict(zip(names, args)))
    bound.update(kwargs)
    return bound["dim"], bound["keepdim"], bound["dtype"]


def _devices():
    return [pytest.param(d, marks=[pytest.mark.cuda] if d == "cuda" else []) for d in DEVICES]


def _supported_dtypes():
    return _sum_info().supported_dtypes("cpu")


@pytest.mark.slow
def test_candidate_dtypes_cover_torchs():
    assert set(_supported_dtypes()) <= set(CANDIDATE_DTYPES), set(_supported_dtypes()) - set(CANDIDATE_DTYPES)


def _outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - compared by type below
        return None, e


@pytest.mark.slow
@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", CANDIDATE_DTYPES, ids=str)
def test_sum_on_torchs_samples(device, dtype):
    if dtype not in _supported_dtypes():
        pytest.skip(f"torch.sum's OpInfo does not list {dtype}")
    samples = list(_sum_info().sample_inputs(device, dtype, requires_grad=False))
    assert samples, "torch gave no samples"
    for s in samples:
        x, args, kwargs = s.input, s.args, s.kwargs
        theirs, their_error = _outcome(lambda: torch.sum(x, *args, **kwargs))
        routes = {
            "reduce_op.sum": lambda: reduce_op.sum(x, *args, **kwargs),
            "torch.ops": lambda: torch.ops.gpureduce.sum(x, *args, **kwargs) if args or kwargs
            else torch.ops.gpureduce.sum(x),
        }

        def dropin_function():
            with reduce_op.replace_torch_sum():
                return torch.sum(x, *args, **kwargs)

        def dropin_method():
            with reduce_op.replace_torch_sum():
                return x.sum(*args, **kwargs)

        routes["replace_torch_sum: torch.sum"] = dropin_function
        routes["replace_torch_sum: Tensor.sum"] = dropin_method
        for name, call in routes.items():
            ours, our_error = _outcome(call)
            where = f"{name} on {tuple(x.shape)} {dtype} args={args} kwargs={kwargs}"
            if their_error is not None:
                assert our_error is not None, f"{where}: torch raised {their_error!r}, we did not"
                assert type(our_error) is type(their_error), f"{where}: {our_error!r} against {their_error!r}"
                continue
            assert our_error is None, f"{where}: raised {our_error!r}"
            dim, keepdim, out_dtype = _bind(args, kwargs)
            if dim is None and not keepdim:
                assert_matches_torch(ours, x, None, False, out_dtype)
            else:
                assert_matches_torch(ours, x, dim, keepdim, out_dtype)


@pytest.mark.slow
@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64], ids=str)
def test_sum_gradient_on_torchs_samples(device, dtype):
    for s in _sum_info().sample_inputs(device, dtype, requires_grad=True):
        x, args, kwargs = s.input, s.args, s.kwargs
        ours = reduce_op.sum(x, *args, **kwargs)
        theirs = torch.sum(x, *args, **kwargs)
        grad = torch.randn_like(theirs)
        (g_ours,) = torch.autograd.grad(ours, x, grad)
        (g_theirs,) = torch.autograd.grad(theirs, x, grad)
        assert g_ours.shape == g_theirs.shape and g_ours.dtype == g_theirs.dtype
        assert torch.equal(g_ours, g_theirs), f"{tuple(x.shape)} args={args} kwargs={kwargs}"
