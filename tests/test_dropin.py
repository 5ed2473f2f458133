"""Drop-in mode: replace_torch_sum() and patch()/unpatch() route torch.sum,
Tensor.sum and x.sum(dim, ...) to gpureduce.sum, in forward and backward,
and the example scripts run."""
import contextlib
import os
import subprocess
import sys
import threading

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

import reduce_op
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


class _OpLog(TorchDispatchMode):
    """The operators that reach the dispatcher, by schema name, whichever
    path called them (the drop-in's C++ path, torch.ops or torch's own).
    len() is the number of gpureduce::sum calls."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(func._schema.name)
        return func(*args, **(kwargs or {}))

    def __len__(self):
        return self.names.count("gpureduce::sum")


@pytest.fixture
def spy():
    with _OpLog() as log:
        yield log


def _devices():
    return [pytest.param(d, marks=[pytest.mark.cuda] if d == "cuda" else []) for d in DEVICES]


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("label,fn,dim,keepdim,dtype", CALLS, ids=[c[0] for c in CALLS])
def test_replace_torch_sum_routes(label, fn, dim, keepdim, dtype, device, spy):
    x = torch.randn(3, 4, 5, device=device)
    with reduce_op.replace_torch_sum():
        out = fn(x)
    assert len(spy) == 1 and "aten::sum" not in spy.names, (label, spy.names)
    assert_matches_torch(out, x, dim, keepdim, dtype)
    fn(x)  # outside the block: torch's own
    assert len(spy) == 1 and "aten::sum" in spy.names


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


@pytest.mark.slow
@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("amp", [None, "bfloat16", "float16"])
def test_dropin_example_losses_agree(device, amp):
    # Also in mixed precision (a torch.autocast region): the routed ops
    # cast as torch's, so the two runs agree to the region's precision.
    if amp == "float16" and device == "cpu":
        pytest.skip("float16 autocast is CUDA's mixed precision; the CPU's is bfloat16")
    args = ["--device", device, "--steps", "4"] + (["--autocast", amp] if amp else [])
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "dropin_train.py"), *args],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "losses agree: True" in r.stdout
    for op in ("gpureduce::sum", "gpureduce::mean", "gpureduce::amax", "gpureduce::logsumexp", "gpureduce::var",
               "gpureduce::linalg_vector_norm"):  # the profiler's table of the routed step
        assert op in r.stdout, r.stdout


@pytest.mark.slow
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


def test_block_routes_only_its_own_thread():
    x = torch.randn(4, 5)
    seen = {}

    def other_thread():
        with _OpLog() as log:
            seen["result"] = x.sum(1)
        seen["names"] = log.names

    with _OpLog() as here:
        with reduce_op.replace_torch_sum():
            t = threading.Thread(target=other_thread)
            t.start()
            t.join()
            ours = x.sum(1)
    assert len(here) == 1
    assert "gpureduce::sum" not in seen["names"] and "aten::sum" in seen["names"]
    assert torch.equal(seen["result"], torch.sum(x, 1))
    assert_matches_torch(ours, x, 1, False)


def test_torch_functions_restored_after_blocks_and_patch():
    torch_sum, tensor_sum = torch.sum, torch.Tensor.sum
    with reduce_op.replace_torch_sum():
        with reduce_op.replace_torch_sum():  # nested: still routed, through the modes
            pass
        assert torch.sum is not torch_sum
    assert torch.sum is torch_sum and torch.Tensor.sum is tensor_sum
    reduce_op.patch()
    try:
        with reduce_op.replace_torch_sum():
            pass
        assert torch.sum is not torch_sum  # patch() outlives the block
    finally:
        reduce_op.unpatch()
    assert torch.sum is torch_sum and torch.Tensor.sum is tensor_sum


def test_nested_blocks_route(spy):
    x = torch.randn(4, 5)
    with reduce_op.replace_torch_sum():
        with reduce_op.replace_torch_sum():
            out = x.sum(0)
    assert len(spy) == 1
    assert_matches_torch(out, x, 0, False)


def test_reference_taken_before_the_block_is_routed(spy):
    x = torch.randn(4, 5)
    early_sum, early_method = torch.sum, torch.Tensor.sum  # as a library might hold them
    with reduce_op.replace_torch_sum():
        a, b = early_sum(x, 1), early_method(x, 0)
    assert len(spy) == 2
    assert_matches_torch(a, x, 1, False)
    assert_matches_torch(b, x, 0, False)


class _SeenFuncs(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.funcs = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.funcs.append(str(func) if isinstance(func, torch._ops.OpOverload) else func.__name__)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("route", ["block", "patch"])
def test_a_users_mode_inside_still_sees_the_call(route, spy):
    x = torch.randn(4, 5)
    if route == "patch":
        reduce_op.patch()
    try:
        with contextlib.ExitStack() as stack:
            if route == "block":
                stack.enter_context(reduce_op.replace_torch_sum())
            mode = stack.enter_context(_SeenFuncs())
            out = x.sum(1)
    finally:
        reduce_op.unpatch()
    # torch's sum inside a block (the user's mode sees torch's function
    # first); after patch(), which replaces torch.sum itself, the operator.
    assert ("sum" if route == "block" else "gpureduce.sum.dim_IntList") in mode.funcs, mode.funcs
    assert len(spy) == 1
    assert_matches_torch(out, x, 1, False)


@pytest.mark.slow
def test_compiled_function_uses_the_operator():
    torch._dynamo.reset()
    graphs = []

    def record(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(x):
        return x.sum(1) + torch.sum(x, dim=0, keepdim=True)

    x = torch.randn(4, 4)
    with reduce_op.replace_torch_sum():
        out = torch.compile(f, backend=record, fullgraph=True)(x)
    torch.testing.assert_close(out, f(x))
    targets = [str(n.target) for g in graphs for n in g.graph.nodes if n.op == "call_function"]
    assert sum("gpureduce.sum" in t for t in targets) == 2, targets


# Every op in a function torch.compile traces whole (fullgraph), static and
# dynamic: called as reduce_op's function, and as torch's inside a
# replace_torch_reductions() block, where the graph holds gpureduce's op.
# (Dynamo traces the block's mode: a routed call once reached inspect's
# bind, which it cannot trace, and argmax's and argmin's functions a
# str.split.)
_COMPILED_FORMS = {
    "sum": lambda m, t: m.sum(t, 1), "nansum": lambda m, t: m.nansum(t, 0), "mean": lambda m, t: m.mean(t, 1),
    "prod": lambda m, t: m.prod(t, 1), "amax": lambda m, t: m.amax(t, 1), "amin": lambda m, t: m.amin(t, 0),
    "max": lambda m, t: m.max(t, 1).values, "min": lambda m, t: m.min(t, 0)[1], "argmax": lambda m, t: m.argmax(t, 1),
    "argmin": lambda m, t: m.argmin(t), "logsumexp": lambda m, t: m.logsumexp(t, 1), "var": lambda m, t: m.var(t, 1),
    "std": lambda m, t: m.std(t, 0, correction=0), "var_mean": lambda m, t: m.var_mean(t, 1)[1],
    "std_mean": lambda m, t: m.std_mean(t)[0],
    "vector_norm": lambda m, t: (m.linalg.vector_norm if m is torch else m.vector_norm)(t, 2, 1),
}


@pytest.mark.slow
@pytest.mark.parametrize("dynamic", [False, True])
def test_every_op_compiles_whole_direct_and_routed(dynamic):
    x = torch.randn(5, 9, generator=torch.Generator().manual_seed(6))
    for name, form in _COMPILED_FORMS.items():
        want = form(torch, x)
        torch._dynamo.reset()
        got = torch.compile(lambda t: form(reduce_op, t), fullgraph=True, dynamic=dynamic)(x)
        torch.testing.assert_close(got, want, msg=f"{name} compiled")
        graphs = []

        def record(gm, example_inputs):
            graphs.append(gm)
            return gm.forward

        torch._dynamo.reset()
        with reduce_op.replace_torch_reductions():
            got = torch.compile(lambda t: form(torch, t), backend=record, fullgraph=True, dynamic=dynamic)(x)
        torch.testing.assert_close(got, want, msg=f"{name} compiled in a block")
        targets = [str(n.target) for g in graphs for n in g.graph.nodes if n.op == "call_function"]
        assert any(t.startswith("gpureduce.") for t in targets), (name, targets)


@pytest.mark.slow
def test_compiled_function_under_patch_gives_torchs_result():
    # torch.compile resolves torch.sum and Tensor.sum itself, past patch()'s
    # wrappers: the graph has torch's sum (README, drop-in mode).
    torch._dynamo.reset()

    def f(x):
        return x.sum(1) + torch.sum(x, dim=0, keepdim=True) + x.mean(1) + torch.amax(x, 0)

    x = torch.randn(4, 4)
    reduce_op.patch()
    try:
        out = torch.compile(f, fullgraph=True)(x)
    finally:
        reduce_op.unpatch()
    torch.testing.assert_close(out, f(x))


# replace_torch_reductions(): torch.nansum, torch.mean, torch.prod,
# torch.amax, torch.amin and torch.logsumexp and their Tensor methods (and sum, as replace_torch_sum routes
# it) run gpureduce's ops inside the block, with torch's results and
# gradients; calls in forms torch rejects raise torch's error there too.
REDUCTION_CALLS = [
    ("torch.amax(x, 1)", lambda x: torch.amax(x, 1), "gpureduce::amax"),
    ("x.amax()", lambda x: x.amax(), "gpureduce::amax"),
    ("x.amin((0, 2), keepdim=True)", lambda x: x.amin((0, 2), keepdim=True), "gpureduce::amin"),
    ("torch.amin(x, dim=-1)", lambda x: torch.amin(x, dim=-1), "gpureduce::amin"),
    ("torch.prod(x)", lambda x: torch.prod(x), "gpureduce::prod"),
    ("x.prod(1, keepdim=True)", lambda x: x.prod(1, keepdim=True), "gpureduce::prod"),
    ("torch.prod(x, 0, dtype=float64)", lambda x: torch.prod(x, 0, dtype=torch.float64), "gpureduce::prod"),
    ("torch.nansum(x, 1)", lambda x: torch.nansum(x, 1), "gpureduce::nansum"),
    ("x.nansum(dtype=float64)", lambda x: x.nansum(dtype=torch.float64), "gpureduce::nansum"),
    ("torch.mean(x)", lambda x: torch.mean(x), "gpureduce::mean"),
    ("x.mean((0, 2), keepdim=True)", lambda x: x.mean((0, 2), keepdim=True), "gpureduce::mean"),
    ("torch.mean(x, -1, dtype=float64)", lambda x: torch.mean(x, -1, dtype=torch.float64), "gpureduce::mean"),
    ("torch.logsumexp(x, 1)", lambda x: torch.logsumexp(x, 1), "gpureduce::logsumexp"),
    ("x.logsumexp((0, 2), keepdim=True)", lambda x: x.logsumexp((0, 2), keepdim=True), "gpureduce::logsumexp"),
    ("x.sum(2)", lambda x: x.sum(2), "gpureduce::sum"),
]


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("label,fn,op_name", REDUCTION_CALLS, ids=[c[0] for c in REDUCTION_CALLS])
def test_replace_torch_reductions_routes(label, fn, op_name, device, spy):
    x = (torch.rand(3, 4, 5, dtype=torch.float64) + 0.5).to(device)
    x[0, 1, 2] = x[0, 1, 3]  # a tie
    a, b = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    ref = fn(a)
    spy.names.clear()
    with reduce_op.replace_torch_reductions():
        got = fn(b)
    assert op_name in spy.names, spy.names
    torch.testing.assert_close(got, ref, rtol=1e-12, atol=0)
    grad = torch.rand(ref.shape, dtype=ref.dtype).to(device)
    (g_ref,) = torch.autograd.grad(ref, a, grad)
    (g_got,) = torch.autograd.grad(got, b, grad)
    torch.testing.assert_close(g_got, g_ref, rtol=1e-12, atol=0)


@pytest.mark.parametrize("call", [lambda x: x.prod(None), lambda x: x.prod(keepdim=True),
                                  lambda x: x.mean(keepdim=True), lambda x: torch.mean(x, keepdim=False),
                                  lambda x: torch.var(x, dim=True), lambda x: torch.std_mean(x, dim=False),
                                  lambda x: x.amax(dim="a"), lambda x: torch.amax(x, 3),
                                  lambda x: torch.nansum(x, 0, out=torch.empty(2, 2, dtype=torch.int64)),
                                  lambda x: x.amin(1, True, True), lambda x: x.int().mean(),
                                  lambda x: torch.mean(x, 0, out=torch.empty(4, dtype=torch.int64)),
                                  lambda x: torch.logsumexp(x), lambda x: x.logsumexp(()),
                                  lambda x: torch.logsumexp(x, 0, out=torch.empty(4, dtype=torch.int64)),
                                  lambda x: torch.prod(x, out=torch.empty(())), lambda x: x.prod(out=None),
                                  lambda x: torch.max(x, out=(torch.empty(()), torch.empty((), dtype=torch.int64))),
                                  lambda x: torch.min(x, out=torch.empty((), dtype=torch.int64))])
def test_replace_torch_reductions_errors_are_torchs(call, spy):
    x = torch.rand(3, 4)
    with pytest.raises(Exception) as theirs:
        call(x)
    with reduce_op.replace_torch_reductions():
        with pytest.raises(type(theirs.value)):
            call(x)


# The out= forms routed too: prod with a dim (prod.int_out), and max and
# min of every element into one tensor (max.unary_out, cast into out).
@pytest.mark.parametrize("call,op_name", [
    (lambda x, o: torch.prod(x, 1, out=o(3)), "gpureduce::prod"),
    (lambda x, o: torch.prod(x, 0, True, dtype=torch.float64, out=o(1, 4, dtype=torch.float64)), "gpureduce::prod"),
    (lambda x, o: torch.max(x, out=o(())), "gpureduce::max"),
    (lambda x, o: torch.min(x.int(), out=o((), dtype=torch.float64)), "gpureduce::min"),
])
def test_replace_torch_reductions_routes_out_forms(call, op_name, spy):
    x = torch.rand(3, 4) * 4
    made = []

    def o(*shape, dtype=torch.float32):
        made.append(torch.empty(*shape, dtype=dtype))
        return made[-1]
    ref = call(x, o)
    spy.names.clear()
    with reduce_op.replace_torch_reductions():
        got = call(x, o)
    assert op_name in spy.names, spy.names
    assert got is made[-1] and got.dtype == ref.dtype and got.shape == ref.shape
    torch.testing.assert_close(got, ref, rtol=1e-6, atol=0)


def test_patch_routes_every_reduction(spy):
    # patch(): the same calls routed on every thread until unpatch(), then
    # torch's functions and methods themselves again.
    names = ("nansum", "mean", "prod", "amax", "amin", "logsumexp")
    originals = {n: (getattr(torch, n), getattr(torch.Tensor, n)) for n in names}
    x = torch.rand(3, 4, 5, dtype=torch.float64) + 0.5
    refs = [fn(x) for _, fn, _ in REDUCTION_CALLS]
    with pytest.raises(Exception) as theirs:
        x.prod(None)  # a form torch rejects (TypeError in torch 2.13, RuntimeError in 2.11)
    reduce_op.patch()
    try:
        for (label, fn, op_name), ref in zip(REDUCTION_CALLS, refs):
            spy.names.clear()
            got = fn(x)
            assert op_name in spy.names, (label, spy.names)
            torch.testing.assert_close(got, ref, rtol=1e-12, atol=0)
        # Another thread (the spy sees this one only): its gradient node says who ran it.
        seen = []
        xg = x.clone().requires_grad_(True)
        worker = threading.Thread(target=lambda: seen.append(torch.mean(xg, 1).grad_fn.name()))
        worker.start()
        worker.join()
        assert seen == ["GpureduceMeanBackward"], seen
        with pytest.raises(type(theirs.value)):
            x.prod(None)  # torch's error
    finally:
        reduce_op.unpatch()
    assert all(getattr(torch, n) is f and getattr(torch.Tensor, n) is m for n, (f, m) in originals.items())
    spy.names.clear()
    torch.mean(x), x.amax(1)
    assert not any(n.startswith("gpureduce::") for n in spy.names), spy.names


def test_complex_logsumexp_is_routed(spy):
    z = torch.randn(3, 4, dtype=torch.complex64)
    with reduce_op.replace_torch_reductions():
        spy.names.clear()
        got = torch.logsumexp(z, 1)
    assert "gpureduce::logsumexp" in spy.names, spy.names
    torch.testing.assert_close(got, torch.logsumexp(z, 1))


def test_replace_torch_reductions_leaves_other_threads_and_after(spy):
    x = torch.rand(3, 4)
    with reduce_op.replace_torch_reductions():
        pass
    spy.names.clear()
    torch.amax(x, 1)
    x.prod()
    assert not any(n.startswith("gpureduce::") for n in spy.names), spy.names
