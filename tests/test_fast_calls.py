"""reduce_op.sum's typed bindings (reduce_op._fast) keep what torch.ops
gives: the profiler records the operator, autograd records its node,
__torch_function__ modes and subclasses still see the call, and results
are the operator's."""
import threading
import time

import pytest
import torch
from torch.overrides import TorchFunctionMode

import reduce_op
from axes import assert_matches_torch


def test_profiler_records_the_operator():
    x = torch.randn(4, 5)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        reduce_op.sum(x)
        reduce_op.sum(x, 1, keepdim=True)
    names = [e.name for e in prof.events()]
    assert names.count("gpureduce::sum") >= 2, names


def test_autograd_through_the_bindings():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    y = reduce_op.sum(x, [0], dtype=torch.float64)
    assert y.grad_fn is not None
    y.sum().backward()
    torch.testing.assert_close(x.grad, torch.ones_like(x))


class _Seen(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.funcs = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.funcs.append(func)
        return func(*args, **(kwargs or {}))


def test_torch_function_mode_sees_the_call():
    x = torch.randn(4, 5)
    with _Seen() as mode:
        out = reduce_op.sum(x, 0)
    assert any("gpureduce" in str(f) for f in mode.funcs), mode.funcs
    assert_matches_torch(out, x, 0, False)


class _Sub(torch.Tensor):
    calls = 0

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls += 1
        return super().__torch_function__(func, types, args, kwargs or {})


def test_torch_function_subclass_sees_the_call():
    x = torch.randn(4, 5).as_subclass(_Sub)
    _Sub.calls = 0
    reduce_op.sum(x, 1)
    assert _Sub.calls >= 1


def test_bindings_match_torch_on_every_plain_form():
    x = torch.randn(3, 4, 5)
    for dim, keepdim in [(None, False), (None, True), (1, False), ([0, 2], True), ((2,), False), ([], False)]:
        for dtype in (None, torch.float64):
            ours = reduce_op.sum(x, dim, keepdim, dtype=dtype)
            ref = torch.sum(x, dim, keepdim, dtype=dtype) if dim is not None else (
                torch.sum(x, dtype=dtype) if not keepdim else torch.sum(x, list(range(3)), True, dtype=dtype))
            assert ours.shape == ref.shape and ours.dtype == ref.dtype, (dim, keepdim, dtype)
            torch.testing.assert_close(ours, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("route", ["reduce_op.sum", "patch"])
def test_gil_released_during_the_call(route):
    # As torch's own bindings do: another Python thread runs while a long
    # CPU sum is in the operator. The other thread waits on an event set
    # just before the call; holding the GIL, the call would keep it from
    # running until the sum had returned (it then ran at the first Python
    # step after the call, so the test asks for it in the call's first half).
    x = torch.randn(100_000_000)
    ev, seen = threading.Event(), {}

    def other():
        ev.wait()
        seen["t"] = time.perf_counter()

    t = threading.Thread(target=other)
    t.start()
    if route == "patch":
        reduce_op.patch()
    # The sum on one thread, so that a core is left for the other one, and
    # long enough (about 20 ms) that a few ms of scheduling delay do not
    # count: with both cores of a 2-core machine summing 4*10^7 elements (and
    # a build beside them), the other thread ran 4.4 ms into a 7.5 ms call.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        start = time.perf_counter()
        ev.set()
        out = reduce_op.sum(x) if route == "reduce_op.sum" else x.sum()
        done = time.perf_counter()
    finally:
        reduce_op.unpatch()
        torch.set_num_threads(threads)
    t.join()
    assert seen["t"] < start + 0.5 * (done - start), (seen["t"] - start, done - start)
    torch.testing.assert_close(out, x.double().sum().float(), rtol=1e-4, atol=1e-2)


def test_sum_signature_is_torch_sums():
    import inspect

    params = inspect.signature(reduce_op.sum).parameters
    assert list(params) == ["input", "dim", "keepdim", "dtype", "out", "kernel"]
    assert [params[k].default for k in ("dim", "keepdim", "dtype", "out", "kernel")] == [None, False, None, None, None]
    assert all(params[k].kind == inspect.Parameter.KEYWORD_ONLY for k in ("dtype", "out", "kernel"))
    assert "torch.sum" in reduce_op.sum.__doc__


def test_forms_the_c_function_hands_to_python():
    # reduce_op.sum (C) takes the common forms and hands the rest, with the
    # arguments as given, to reduce_op._sum: each of these gives torch's
    # result or torch's error type.
    import numpy as np

    x = torch.randn(3, 4)
    for args, kwargs in [((x,), {"dim": np.int64(1)}), ((x, torch.tensor(0)), {}), ((x,), {"dtype": float}),
                         ((x, 1), {"out": torch.empty(3)}), ((x, (0, 1), True), {}), ((x,), {"input": None}),
                         ((), {"input": x, "dim": 1}), ((x, 1, False, torch.float64), {}),
                         ((x, 1), {"dim": 1}), ((x, 2**70), {}), ((x, [0, 2**70]), {})]:
        try:
            expected = torch.sum(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the error's type is what is compared
            with pytest.raises(type(e)):
                reduce_op.sum(*args, **kwargs)
            continue
        got = reduce_op.sum(*args, **kwargs)
        assert got.shape == expected.shape and got.dtype == expected.dtype, (args, kwargs)
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


def test_max_min_signatures_are_torchs():
    import inspect

    for fn, name in ((reduce_op.max, "torch.max"), (reduce_op.min, "torch.min")):
        params = inspect.signature(fn).parameters
        assert list(params) == ["input", "dim", "keepdim", "out"]
        assert [params[k].default for k in ("dim", "keepdim", "out")] == [None, False, None]
        assert params["out"].kind == inspect.Parameter.KEYWORD_ONLY
        assert name in fn.__doc__


def test_max_min_forms_the_c_functions_hand_to_python():
    # reduce_op.max and .min (C) take max(x), max(x, dim[, keepdim]) with a
    # plain int dim and bool keepdim, and hand the rest, as given, to _max and
    # _min: each of these gives torch's result (type, values, indices) or
    # torch's error type.
    import numpy as np

    x = torch.randn(3, 4)
    x[1, 2] = x[1, 0]  # a tie
    for args, kwargs in [((x,), {}), ((x, 1), {}), ((x, -1, True), {}), ((x,), {"dim": 0, "keepdim": True}),
                         ((), {"input": x, "dim": 1}), ((x,), {"dim": np.int64(1)}), ((x, 1.5), {}),
                         ((x, True), {}), ((x,), {"keepdim": True}), ((x, 1, 1), {}), ((x, 1), {"dim": 1}),
                         ((x, 1), {"foo": 2}), ((x, 2**70), {}), ((x, 5), {}), ((x, 1, False, None), {}),
                         ((x, 0), {"out": (torch.empty(4), torch.empty(4, dtype=torch.long))})]:
        for ours, theirs in ((reduce_op.max, torch.max), (reduce_op.min, torch.min)):
            _same_as_torchs(ours, theirs, args, kwargs)
    # torch.max(x, other) is the elementwise maximum, as torch binds it: a
    # tensor alone after the input; with a keepdim, a one-element integer
    # tensor is a dim. max(x, None), max(x, dim=None) and max(x,
    # keepdim=False) match none of torch's overloads (the signature's None
    # and False stand for a dim and keepdim left out).
    y = torch.randn(x.shape)
    for ours, theirs in ((reduce_op.max, torch.max), (reduce_op.min, torch.min)):
        for args, kwargs in (((x, y), {}), ((x, torch.tensor(0)), {}), ((x, y), {"out": torch.empty(0)}),
                             ((x, torch.tensor(1), True), {}), ((x, y, True), {}), ((x, y), {"keepdim": True}),
                             ((x, 1), {"other": y})):
            _same_as_torchs(ours, theirs, args, kwargs)
    for fn in (reduce_op.max, reduce_op.min):
        for args, kwargs in (((x, None), {}), ((x,), {"dim": None}), ((x,), {"keepdim": False}),
                             ((x, None, True), {}), ((x,), {"dim": None, "keepdim": False})):
            with pytest.raises(TypeError):
                fn(*args, **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("dynamo_first", [False, True])
def test_compile_traces_the_python_sum(dynamo_first):
    # torch.compile cannot trace the C function: reduce_op registers _sum in
    # its place, at once where torch._dynamo is loaded before reduce_op, else
    # when it is loaded. A fresh interpreter for each order.
    import subprocess
    import sys

    code = f"""
import torch
if {dynamo_first}:
    import torch._dynamo
import reduce_op
graphs = []
def record(gm, example_inputs):
    graphs.append(gm)
    return gm.forward
def f(x):
    return (reduce_op.sum(x, 1) + reduce_op.sum(x, dtype=torch.float64) + reduce_op.sum(x, [0, 1], keepdim=True)
            + reduce_op.max(x, 1).values + reduce_op.min(x))
x = torch.randn(3, 5)
torch.testing.assert_close(torch.compile(f, backend=record, fullgraph=True)(x), f(x))
targets = [str(n.target) for g in graphs for n in g.graph.nodes if n.op == "call_function"]
assert sum("gpureduce.sum" in t for t in targets) == 3, targets
assert sum("gpureduce.max.dim" in t for t in targets) == 1, targets
assert sum(t in ("gpureduce.min", "gpureduce.min.default") for t in targets) == 1, targets
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


# The family's ops call their overloads through reduce_op._fast too
# (_calls.fast_path_open): (name, our call, torch's call) on a [3, 4, 5]
# float64 input, every form the Python functions pass to a typed binding.
_FAMILY = [
    ("nansum", lambda m, x: m.nansum(x), lambda x: torch.nansum(x)),
    ("nansum", lambda m, x: m.nansum(x, (0, 2), True, dtype=torch.float32),
     lambda x: torch.nansum(x, (0, 2), True, dtype=torch.float32)),
    ("mean", lambda m, x: m.mean(x), lambda x: torch.mean(x)),
    ("mean", lambda m, x: m.mean(x, 1, True), lambda x: torch.mean(x, 1, True)),
    ("prod", lambda m, x: m.prod(x), lambda x: torch.prod(x)),
    ("prod", lambda m, x: m.prod(x, 2, dtype=torch.float32), lambda x: torch.prod(x, 2, dtype=torch.float32)),
    ("amax", lambda m, x: m.amax(x), lambda x: torch.amax(x)),
    ("amin", lambda m, x: m.amin(x, (1, 2)), lambda x: torch.amin(x, (1, 2))),
    ("max", lambda m, x: m.max(x), lambda x: torch.max(x)),
    ("min", lambda m, x: m.min(x), lambda x: torch.min(x)),
    ("max", lambda m, x: m.max(x, 1, True), lambda x: torch.max(x, 1, True)),
    ("min", lambda m, x: m.min(x, -1), lambda x: torch.min(x, -1)),
    ("argmax", lambda m, x: m.argmax(x), lambda x: torch.argmax(x)),
    ("argmin", lambda m, x: m.argmin(x, 0, keepdim=True), lambda x: torch.argmin(x, 0, keepdim=True)),
    ("logsumexp", lambda m, x: m.logsumexp(x, 1), lambda x: torch.logsumexp(x, 1)),
    ("var", lambda m, x: m.var(x, 1, correction=0), lambda x: torch.var(x, 1, correction=0)),
    ("std", lambda m, x: m.std(x), lambda x: torch.std(x)),
    ("var_mean", lambda m, x: m.var_mean(x, (0, 1), keepdim=True), lambda x: torch.var_mean(x, (0, 1), keepdim=True)),
    ("std_mean", lambda m, x: m.std_mean(x, 2, correction=2.5), lambda x: torch.std_mean(x, 2, correction=2.5)),
    ("linalg_vector_norm", lambda m, x: m.vector_norm(x, 3.0, (0, 2)), lambda x: torch.linalg.vector_norm(x, 3.0, (0, 2))),
    ("linalg_vector_norm", lambda m, x: m.vector_norm(x, 1, dtype=torch.float64),
     lambda x: torch.linalg.vector_norm(x, 1, dtype=torch.float64)),
]


def _parts(r):
    return list(r) if isinstance(r, tuple) else [r]


def _same_as_torchs(ours, theirs, args, kwargs):
    """ours(*args, **kwargs) gives theirs' result (its type, and each part
    equal) or raises an error of the type theirs raises."""
    try:
        expected = theirs(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the error's type is what is compared
        with pytest.raises(type(e)):
            ours(*args, **kwargs)
        return
    got = ours(*args, **kwargs)
    assert type(got) is type(expected), (args, kwargs, type(got))
    for g, e in zip(_parts(got), _parts(expected)):
        assert torch.equal(g, e), (args, kwargs)


@pytest.mark.parametrize("case", range(len(_FAMILY)), ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(_FAMILY)])
def test_family_bindings_keep_what_torch_ops_gives(case):
    name, ours, theirs = _FAMILY[case]
    x = torch.randn(3, 4, 5, dtype=torch.float64)
    x.view(-1)[7] = x.view(-1)[8]  # a tie for the indexed ops
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        got = ours(reduce_op, x)
    # the profiler records the operator
    assert f"gpureduce::{name}" in [e.name for e in prof.events()], name
    # torch's result, of torch's type (torch.return_types for max.dim)
    ref = theirs(x)
    assert type(got) is type(ref), (type(got), type(ref))
    for g, r in zip(_parts(got), _parts(ref)):
        assert g.shape == r.shape and g.dtype == r.dtype
        torch.testing.assert_close(g, r)
    # under a mode, the call goes through torch.ops and the mode sees it
    with _Seen() as mode:
        seen = ours(reduce_op, x)
    assert any(f"gpureduce.{name}" in str(f) for f in mode.funcs), mode.funcs
    for g, s in zip(_parts(got), _parts(seen)):
        assert torch.equal(g, s)
    # autograd records its node where torch's op has a gradient
    xg = x.clone().requires_grad_()
    out = _parts(ours(reduce_op, xg))[0]
    if out.dtype.is_floating_point:
        assert out.grad_fn is not None and "Gpureduce" in out.grad_fn.name(), out.grad_fn.name()


def test_family_bindings_leave_other_forms_to_torch_ops():
    from reduce_op import _fast

    x = torch.randn(3, 4)
    # forms the typed bindings do not take: NotImplemented, no error set
    assert _fast.amax(x, None, False) is NotImplemented  # amax's dim is not optional
    assert _fast.argmax(x, 1.5, False) is NotImplemented
    assert _fast.argmax(x, 1, 1) is NotImplemented  # keepdim not a bool
    assert _fast.nansum([1.0], None, False, None) is NotImplemented
    assert _fast.var(x, [0], "1", False) is NotImplemented
    assert _fast.vector_norm(x, None, None, False, None) is NotImplemented
    assert _fast.mean_all(x, float) is NotImplemented  # a Python type for a dtype
    # and the functions give torch's error type for them
    for ours, theirs in [(lambda: reduce_op.argmax(x, 1.5), lambda: torch.argmax(x, 1.5)),
                         (lambda: reduce_op.amax(x, 5), lambda: torch.amax(x, 5)),
                         (lambda: reduce_op.max(x, 2), lambda: torch.max(x, 2))]:
        with pytest.raises(Exception) as expected:
            theirs()
        with pytest.raises(expected.type):
            ours()
