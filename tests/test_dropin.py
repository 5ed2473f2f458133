"""Drop-in mode: replace_torch_sum() and patch()/unpatch() route torch.sum,
Tensor.sum and x.sum(dim, ...) to gpureduce.sum, in forward and backward,
and the example scripts run."""
import os
import subprocess
import sys

import pytest
import torch

import reduce_op
from reduce_op import _dropin
from axes import DEVICES, assert_matches_torch

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")

CALLS = [
    ("torch.sum(x)", lambda x: torch.sum(x), None, False, None),
    ("x.sum()", lambda x: x.sum(), None, False, None),
    ("x.sum(1)", lambda x: x.sum(1), 1, False, None),
    ("torch.sum(x, (0, 2), True)", lambda x: torch.sum(x, (0, 2), True), [0, 2], True, None),
    ("x.sum(dim=-1, keepdim=True)", lambda x: x.sum(dim=-1, keepdim=True), -1, True, None),
    ("torch.sum(x, dtype=float64)", lambda x: torch.sum(x, dtype=torch.float64), None, False, torch.float64),
    ("x.sum(0, dtype=float64)", lambda x: x.sum(0, dtype=torch.float64), 0, False, torch.float64),
    ("x.sum(dim=1)", lambda x: x.sum(dim=1), 1, False, None),
    ("x.sum(2, keepdim=True)", lambda x: x.sum(2, keepdim=True), 2, True, None),
    ("torch.sum(x, dim=0, keepdim=False)", lambda x: torch.sum(x, dim=0, keepdim=False), 0, False, None),
    ("x.sum(1, keepdims=True)", lambda x: x.sum(1, keepdims=True), 1, True, None),
    ("torch.sum(x, axis=2, keepdims=True)", lambda x: torch.sum(x, axis=2, keepdims=True), 2, True, None),
]


@pytest.fixture
def spy(monkeypatch):
    calls = []
    real = _dropin._gpureduce_sum

    def counting(bound):
        calls.append(bound)
        return real(bound)

    monkeypatch.setattr(_dropin, "_gpureduce_sum", counting)
    return calls


def _devices():
    return [pytest.param(d, marks=[pytest.mark.cuda] if d == "cuda" else []) for d in DEVICES]


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("label,fn,dim,keepdim,dtype", CALLS, ids=[c[0] for c in CALLS])
def test_replace_torch_sum_routes(label, fn, dim, keepdim, dtype, device, spy):
    x = torch.randn(3, 4, 5, device=device)
    with reduce_op.replace_torch_sum():
        out = fn(x)
    assert len(spy) == 1, label
    assert_matches_torch(out, x, dim, keepdim, dtype)
    fn(x)  # outside the block: torch's own
    assert len(spy) == 1


@pytest.mark.parametrize("call", [lambda x: x.sum(1, dim=1), lambda x: x.sum(1, True, keepdim=True),
                                  lambda x: x.sum(1, True, keepdims=True), lambda x: torch.sum(x, 1, foo=2)])
def test_drop_in_leaves_bad_keywords_to_torch(call):
    x = torch.randn(3, 4)
    with pytest.raises(TypeError) as theirs:
        call(x)
    with reduce_op.replace_torch_sum():
        with pytest.raises(TypeError) as ours:
            call(x)
    assert type(ours.value) is type(theirs.value)


@pytest.mark.parametrize("device", _devices())
def test_module_forward_and_backward(device, spy):
    lin = torch.nn.Linear(6, 6).to(device)

    def loss_fn(x):
        return (lin(x) ** 2).sum(-1).sum()

    x = torch.randn(5, 6, device=device)
    ref = loss_fn(x)
    ref.backward()
    ref_grad = lin.weight.grad.clone()
    lin.weight.grad = None
    with reduce_op.replace_torch_sum():
        out = loss_fn(x)
        out.backward()
    assert len(spy) == 2
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(lin.weight.grad, ref_grad)


def test_patch_and_unpatch(spy):
    x = torch.randn(4, 3)
    reduce_op.patch()
    try:
        a, b = torch.sum(x, 0), x.sum()
    finally:
        reduce_op.unpatch()
    assert len(spy) == 2
    assert_matches_torch(a, x, 0, False)
    assert_matches_torch(b, x, None, False)
    torch.sum(x)
    x.sum(1)
    assert len(spy) == 2  # unpatched


def test_sparse_falls_back_to_torch(spy):
    dense = torch.tensor([[0.0, 2.0, 0.0], [1.5, 0.0, -3.0]])
    x = dense.to_sparse()
    with reduce_op.replace_torch_sum():
        out = torch.sum(x)
    assert len(spy) == 0  # gpureduce takes strided tensors only; torch handles the rest
    torch.testing.assert_close(out, dense.sum())


@pytest.mark.parametrize("device", _devices())
def test_dropin_example_losses_agree(device):
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "dropin_train.py"), "--device", device, "--steps", "4"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "losses agree: True" in r.stdout


@pytest.mark.parametrize("device", _devices())
def test_profiler_example_names_the_op(device, tmp_path):
    trace = tmp_path / "trace.json"
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "profile_step.py"), "--device", device,
                        "--trace", str(trace)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "gpureduce::sum" in r.stdout
    if device == "cuda":
        assert "gpureduce::cuda::gpureduce_" in r.stdout  # the engine's kernels by name
    assert trace.exists() and trace.stat().st_size > 0
