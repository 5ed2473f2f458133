"""torch.sum's argument forms, through reduce_op.sum and through the drop-in
mode: every call gives torch's result, or raises torch's error type."""
import numpy as np
import pytest
import torch

import reduce_op

X = torch.randn(3, 4, generator=torch.Generator().manual_seed(5))
XG = X.clone().requires_grad_()

# (label, args, kwargs) of a call sum(*args, **kwargs).
FORMS = [
    ("numpy int dim", (X, np.int64(1)), {}),
    ("0-d tensor dim", (X, torch.tensor(1)), {}),
    ("tuple dims", (X, (0, 1)), {}),
    ("list of numpy ints", (X, [np.int32(0), 1]), {}),
    ("python type dtype", (X,), {"dtype": float}),
    ("int type dtype", (X.to(torch.int32),), {"dtype": int}),
    ("keepdim as numpy bool", (X, 1), {"keepdim": np.bool_(True)}),
    ("positional dtype", (X, torch.float64), {}),
    ("list input", ([1, 2],), {}),
    ("None input", (None,), {}),
    ("str dim", (X, "a"), {}),
    ("float dim", (X, 1.5), {}),
    ("bool dim", (X, True), {}),
    ("set of dims", (X, {0, 1}), {}),
    ("float 0-d tensor dim", (X, torch.tensor(1.0)), {}),
    ("str dtype", (X,), {"dtype": "float32"}),
    ("str keepdim", (X, 1), {"keepdim": "yes"}),
    ("None keepdim", (X, 1), {"keepdim": None}),
    ("int dtype of a tensor that needs grad", (XG,), {"dtype": torch.int32}),
    ("meta input, cpu out", (torch.empty(4, 5, device="meta"), 0), {"out": torch.full((5,), 7.0)}),
    ("cpu input, meta out", (torch.empty(4, 5), 0), {"out": torch.empty(5, device="meta")}),
    # Forms the drop-in's C++ path takes: its errors must be torch's too.
    ("dim out of range", (X, 5), {}),
    ("repeated dim", (X, (1, 1)), {}),
    ("dim None, keepdim", (X, None, True), {}),
    ("empty dim list", (X, []), {}),
    ("dim, keepdim and dtype by name", (X,), {"dim": 1, "keepdim": True, "dtype": torch.float64}),
    ("keepdim twice", (X, 1, True), {"keepdim": True}),
    ("dim twice", (X, 1), {"dim": 1}),
    ("huge dim", (X, 2**70), {}),
    ("huge dim in a list", (X, [0, 2**70]), {}),
    ("input by name", (), {"input": X, "dim": 1}),
    ("numpy's axis", (X,), {"axis": 1}),
    ("numpy's axis and keepdims", (X,), {"axis": 0, "keepdims": True}),
    ("dim and axis", (X,), {"dim": 1, "axis": 1}),
    ("keepdims without a dim", (X,), {"keepdims": True}),
    ("dim None and axis", (X, None), {"axis": 1}),
    ("keepdim False and keepdims", (X, 1, False), {"keepdims": True}),
    ("axis, keepdim and keepdims by name", (X,), {"axis": 1, "keepdim": False, "keepdims": True}),
    ("an unknown keyword", (X,), {"axes": 1}),
    ("int input", (torch.arange(12).view(3, 4), -1), {}),
]


def _outcome(fn, args, kwargs):
    try:
        return "ok", fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the error type is what is compared
        return "error", e


def _assert_same(ours, ref, label):
    assert ours[0] == ref[0], (label, ours, ref)
    if ref[0] == "error":
        assert isinstance(ours[1], type(ref[1])), (label, type(ours[1]), type(ref[1]))
        assert "Please file an issue" not in str(ours[1])
    else:
        assert ours[1].dtype == ref[1].dtype and ours[1].shape == ref[1].shape, label
        torch.testing.assert_close(ours[1], ref[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("label,args,kwargs", FORMS, ids=[f[0] for f in FORMS])
def test_reduce_op_sum_forms(label, args, kwargs):
    _assert_same(_outcome(reduce_op.sum, args, kwargs), _outcome(torch.sum, args, kwargs), label)


def _method(*args, **kwargs):
    return args[0].sum(*args[1:], **kwargs)


@pytest.mark.parametrize("route", ["block", "patch"])
@pytest.mark.parametrize("as_method", [False, True], ids=["torch.sum", "Tensor.sum"])
@pytest.mark.parametrize("label,args,kwargs", FORMS, ids=[f[0] for f in FORMS])
def test_dropin_forms(label, args, kwargs, as_method, route):
    if as_method and (not args or not isinstance(args[0], torch.Tensor) or "out" in kwargs):
        pytest.skip("no method form")
    call = _method if as_method else (lambda *a, **k: torch.sum(*a, **k))
    ref = _outcome(call, args, kwargs)
    if route == "block":
        with reduce_op.replace_torch_sum():
            ours = _outcome(call, args, kwargs)
    else:
        reduce_op.patch()
        try:
            ours = _outcome(call, args, kwargs)
        finally:
            reduce_op.unpatch()
    _assert_same(ours, ref, label)


def test_dropin_axis_and_methods():
    with reduce_op.replace_torch_sum():
        torch.testing.assert_close(torch.sum(X, axis=0), X.double().sum(0).float())
        torch.testing.assert_close(X.sum(np.int64(1)), X.double().sum(1).float())
        assert X.sum(dtype=float).dtype == torch.float64


def test_dropin_falls_back_for_nested_tensors():
    n = torch.nested.nested_tensor([torch.randn(3), torch.randn(4)], layout=torch.jagged)
    ref = _outcome(torch.sum, (n,), {})
    with reduce_op.replace_torch_sum():
        ours = _outcome(torch.sum, (n,), {})
    assert ours[0] == ref[0]
    if ref[0] == "ok":
        torch.testing.assert_close(ours[1], ref[1])


def test_nested_input_raises_not_implemented():
    n = torch.nested.nested_tensor([torch.randn(3), torch.randn(4)])
    with pytest.raises(NotImplementedError):
        reduce_op.sum(n)
