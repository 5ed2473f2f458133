"""The reduction family's argument forms (nansum, mean, prod, amax/amin,
max/min, argmax/argmin, logsumexp, var/std and their _mean forms,
vector_norm), through reduce_op against torch's own functions: every call
gives torch's result, or raises an error of torch's type (ours may be a
subclass: reduce_op's ArgumentError is a TypeError). Forms listed by hand,
then calls sampled at random (a fixed seed) over dims of every kind
(ints, tuples, None, empty, out of range, repeated, bool, float, str,
sets), keepdim of every kind, dtype= and correction= values, on tensors
of 0 to 4 dims, some empty, some transposed."""
from __future__ import annotations

import random
import re

import numpy as np
import pytest
import torch

import reduce_op
from axes import vector_norm_of

OPS = {
    "sum": (reduce_op.sum, torch.sum), "nansum": (reduce_op.nansum, torch.nansum),
    "mean": (reduce_op.mean, torch.mean), "prod": (reduce_op.prod, torch.prod),
    "amax": (reduce_op.amax, torch.amax), "amin": (reduce_op.amin, torch.amin),
    "max": (reduce_op.max, torch.max), "min": (reduce_op.min, torch.min),
    "argmax": (reduce_op.argmax, torch.argmax), "argmin": (reduce_op.argmin, torch.argmin),
    "logsumexp": (reduce_op.logsumexp, torch.logsumexp), "var": (reduce_op.var, torch.var),
    "std": (reduce_op.std, torch.std), "var_mean": (reduce_op.var_mean, torch.var_mean),
    "std_mean": (reduce_op.std_mean, torch.std_mean),
    "vector_norm": (reduce_op.vector_norm, torch.linalg.vector_norm),
}

X = torch.randn(3, 4, generator=torch.Generator().manual_seed(3))

# (op, args after the input, kwargs): forms torch's binding refuses with a
# TypeError that torch.ops' boxed parsing took (keepdim=None or 1, dim=True)
# or answered with a RuntimeError naming the schema (dim=1.5, a str), and
# forms torch takes that it refused (dtype=float, amax's dim=None).
FORMS = [
    ("nansum", (0,), {"keepdim": None}), ("nansum", (0,), {"keepdim": 1}), ("nansum", (1.5,), {}),
    ("nansum", ("a",), {}), ("nansum", (0,), {"dtype": float}), ("nansum", (0,), {"dtype": "float32"}),
    ("mean", (0,), {"keepdim": None}), ("mean", (True,), {}), ("mean", (), {"dtype": float}),
    ("mean", ((0, 1.5),), {}), ("prod", (0,), {"keepdim": 1}), ("prod", (True,), {}),
    ("prod", (1.5,), {}), ("prod", (), {"dtype": float}), ("prod", (0,), {"dtype": "float32"}),
    ("amax", (None,), {}), ("amax", (None, True), {}), ("amax", (1.5,), {}), ("amax", (True,), {}),
    ("amax", ("a",), {}), ("amin", (0,), {"keepdim": None}), ("amin", ({0, 1},), {}),
    ("max", (None,), {}), ("max", (), {"dim": None}), ("max", (), {"keepdim": False}), ("max", (1.5,), {}),
    ("min", (None, True), {}), ("min", (0,), {"keepdim": None}),
    ("argmax", (True,), {}), ("argmax", (1.5,), {}), ("argmax", ("a",), {}), ("argmax", (0,), {"keepdim": 1}),
    ("argmin", (None,), {"keepdim": None}), ("argmin", (np.int64(1),), {}),
    ("logsumexp", (None,), {}), ("logsumexp", (0, None), {}), ("logsumexp", (1.5,), {}),
    ("logsumexp", ((0, 1),), {"keepdim": 1}),
    ("var", (0,), {"keepdim": 1}), ("std", (0,), {"keepdim": None}), ("var_mean", ((0, 1.5),), {}),
    ("std_mean", ("a",), {}), ("vector_norm", (2, 1.5), {}), ("vector_norm", (2, 0), {"keepdim": None}),
    ("vector_norm", (2,), {"dtype": float}), ("vector_norm", ("fro",), {}),
    ("sum", (), {"keepdim": True}), ("sum", (None, True), {}),
    ("mean", (), {"keepdim": True}), ("mean", (), {"keepdim": False, "dtype": torch.float64}),
    ("mean", (None, True), {}), ("mean", (), {"dim": None}), ("prod", (), {"keepdim": False}),
    ("prod", (None,), {}), ("prod", (), {"dim": None}), ("prod", (0, True), {}),
]


def _call(fn, x, args, kwargs):
    try:
        return fn(x, *args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - compared by type
        return None, e


def _same(ours, ref) -> bool:
    if isinstance(ref, tuple):
        return isinstance(ours, tuple) and len(ours) == len(ref) and all(_same(a, b) for a, b in zip(ours, ref))
    if ours.dtype != ref.dtype or ours.shape != ref.shape:
        return False
    if ref.is_floating_point() or ref.is_complex():
        return torch.allclose(ours.to(torch.complex128), ref.to(torch.complex128), rtol=1e-2, atol=1e-2,
                              equal_nan=True)
    return torch.equal(ours, ref)


_NAMED_DIM_ERROR = re.compile(r"look up dimensions by name|Name '.*' not found in Tensor")


def _check(name, x, args, kwargs):
    ours_fn, torch_fn = OPS[name]
    ref, ref_error = _call(torch_fn, x, args, kwargs)
    got, error = _call(ours_fn, x, args, kwargs)
    label = f"{name}({x.dtype}{list(x.shape)}, *{args}, **{kwargs})"
    if ref_error is not None:
        assert error is not None, f"{label}: torch raised {type(ref_error).__name__} ({ref_error}), ours returned"
        expected = type(ref_error)
        if expected is RuntimeError and _NAMED_DIM_ERROR.search(str(ref_error)):
            # torch before 2.13 had named-dim overloads: a None or str dim
            # went to them and raised RuntimeError where no dim has that
            # name. 2.13 has none and raises TypeError, as gpureduce does;
            # on 2.11 gpureduce's sum(x, dim="a") raised torch's same
            # RuntimeError (H200, session 59), which is torch's type too.
            expected = (RuntimeError, TypeError)
        assert isinstance(error, expected), \
            f"{label}: torch {type(ref_error).__name__} ({ref_error}), ours {type(error).__name__} ({error})"
    else:
        assert error is None, f"{label}: torch returned, ours raised {type(error).__name__}: {error}"
        assert _same(got, ref), f"{label}: {got} against torch's {ref}"


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f"{f[0]}{f[1]}{f[2]}")
def test_family_argument_forms(form):
    name, args, kwargs = form
    _check(name, X, args, kwargs)


# Known differences the sampler leaves out, each a documented gap rather
# than an argument form: var/std's dim=True by name (torch's TypeError;
# here the bool is read as `unbiased`, as torch reads it by position: a
# Python function cannot tell a keyword from a position; the drop-in,
# which sees the call's keywords, leaves it to torch), and 16-bit dtype=
# products, which this project accumulates in float (torch's CPU prod in
# float16 overflows to inf and inf * 0 gives NaN).
_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8,
           torch.int8, torch.bool]


def _sample(rnd: random.Random):
    name = rnd.choice(list(OPS))
    nd = rnd.choice([0, 1, 1, 2, 2, 3, 4])
    shape = [rnd.choice([0, 1, 2, 3, 5]) for _ in range(nd)]
    dtype = rnd.choice(_DTYPES)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(rnd.randrange(1 << 30))) * 3
    x = x > 0 if dtype == torch.bool else x.to(dtype)
    if nd >= 2 and rnd.random() < 0.3:
        x = x.transpose(0, -1)
    kwargs = {}
    r, n = rnd.random(), max(nd, 1)
    dim = None if r < 0.15 else rnd.randint(-n - 1, n) if r < 0.45 else [] if r < 0.55 else \
        rnd.choice([1.5, "a", True, (0, 0), {0}]) if r < 0.6 else tuple(rnd.sample(range(-n, n), rnd.randint(1, n)))
    if dim is not None or rnd.random() < 0.5:
        kwargs["dim"] = dim
    if rnd.random() < 0.5:
        kwargs["keepdim"] = rnd.choice([True, False, None, 1])
    if name in ("sum", "prod", "mean", "nansum", "vector_norm") and rnd.random() < 0.3:
        kwargs["dtype"] = rnd.choice(_DTYPES + [float, "float32"])
    if name in ("var", "std", "var_mean", "std_mean") and rnd.random() < 0.4:
        kwargs["correction"] = rnd.choice([0, 1, 2, -1, 0.5, None])
    if name == "vector_norm" and rnd.random() < 0.6:
        kwargs["ord"] = rnd.choice([0, 1, 2, 3.5, float("inf"), -float("inf"), -1, "fro"])
    if name == "prod" and not isinstance(kwargs.get("dim", 0), (int, float, str, type(None))):
        kwargs["dim"] = 0
    if name in ("max", "min") and "dim" not in kwargs:
        kwargs.pop("keepdim", None)
    known_gap = ((name in ("var", "std", "var_mean", "std_mean") and isinstance(kwargs.get("dim"), bool))
                 or (name == "prod" and kwargs.get("dtype") in (torch.float16, torch.bfloat16)))
    return name, x, kwargs, known_gap


@pytest.mark.parametrize("seed", [0, 1])
def test_family_argument_forms_sampled(seed):
    rnd = random.Random(seed)
    checked = 0
    for _ in range(600):
        name, x, kwargs, known_gap = _sample(rnd)
        if known_gap:
            continue
        _check(name, x, (), kwargs)
        checked += 1
    assert checked > 500


def _same_bits(ours, ref) -> bool:
    """Equal dtype, shape and values, NaN equal to NaN (parts of complex
    numbers compared one by one)."""
    if isinstance(ref, tuple):
        return isinstance(ours, tuple) and len(ours) == len(ref) and all(_same_bits(a, b) for a, b in zip(ours, ref))
    if ours.dtype != ref.dtype or ours.shape != ref.shape:
        return False
    wide = torch.complex64 if ref.is_complex() else torch.float64
    a, b = ours.cpu().to(wide), ref.cpu().to(wide)
    if ref.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(0), b.nan_to_num(0))


# Calls over an input with no elements, `x`, of a dtype that no kernel of
# torch's or ours takes; torch's reductions fill such a result with the
# op's identity and dispatch no kernel, so only the elementwise ops after
# some of them (mean's division, logsumexp's exp, a complex std's root)
# still raise.
_EMPTY_CALLS = {
    "sum": lambda m, x: m.sum(x), "sum_dim": lambda m, x: m.sum(x, 0, keepdim=True),
    "sum_dtype": lambda m, x: m.sum(x, -1, dtype=torch.float8_e4m3fn),
    "sum_out": lambda m, x: m.sum(x, 0, out=torch.empty(0, dtype=torch.complex32, device=x.device)),
    "nansum": lambda m, x: m.nansum(x, -1),
    "nansum_out": lambda m, x: m.nansum(x, 0, out=torch.empty(0, dtype=torch.int16, device=x.device)),
    "prod": lambda m, x: m.prod(x), "prod_dim": lambda m, x: m.prod(x, 0),
    "mean": lambda m, x: m.mean(x, 0),
    "amax": lambda m, x: m.amax(x, -1),
    "amin_out": lambda m, x: m.amin(x, -1, out=torch.empty(0, dtype=x.dtype, device=x.device)),
    "max_dim": lambda m, x: m.max(x, -1), "argmin": lambda m, x: m.argmin(x, -1),
    "logsumexp": lambda m, x: m.logsumexp(x, 0),
    "var": lambda m, x: m.var(x, 0),
    "std_out": lambda m, x: m.std(x, 0, out=torch.empty(0, dtype=x.dtype, device=x.device)),
    "var_mean": lambda m, x: m.var_mean(x, 0), "std_mean": lambda m, x: m.std_mean(x, -1),
    "vector_norm": lambda m, x: vector_norm_of(m)(x, 2, 0),
    "vector_norm_all": lambda m, x: vector_norm_of(m)(x, 1),
}


@pytest.mark.parametrize("device", ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2, torch.complex32, torch.uint16,
                                   torch.uint32, torch.uint64], ids=str)
def test_empty_input_of_a_dtype_without_kernels(device, dtype):
    import warnings
    checked = 0
    for shape in [(0,), (0, 3), (3, 0), (2, 0, 4)]:
        x = torch.empty(shape, device=device).to(dtype)
        for name, call in _EMPTY_CALLS.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # complex32's and var's degrees-of-freedom warnings
                ref, ref_error = _call(lambda t: call(torch, t), x, (), {})
                got, error = _call(lambda t: call(reduce_op, t), x, (), {})
            label = f"{name} of {dtype} {list(shape)} on {device}"
            if ref_error is not None:
                assert isinstance(error, type(ref_error)), f"{label}: torch {ref_error!r}, ours {error!r}"
            else:
                assert error is None, f"{label}: torch returned, ours raised {error!r}"
                assert _same_bits(got, ref), f"{label}: {got} against torch's {ref}"
            checked += 1
    assert checked == 4 * len(_EMPTY_CALLS)


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_variance_mean_of_complex32_and_integers(name):
    # torch averages complex32 one part at a time, in float16 (its kernels
    # take no complex32 on the CPU), and names the op in its dtype error.
    import warnings
    gen = torch.Generator().manual_seed(5)
    ours_fn, torch_fn = OPS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex32 is experimental
        for shape, dim in [((2, 3), 0), ((5, 7, 3), (0, 2)), ((33, 65), 1), ((4,), None)]:
            z = torch.randn(shape, dtype=torch.complex64, generator=gen).to(torch.complex32)
            for x in (z, z.conj()):
                got, ref = ours_fn(x, dim), torch_fn(x, dim)
                assert _same(got, ref), f"{name}{list(shape)} dim {dim}: {got} against {ref}"
    with pytest.raises(RuntimeError, match=f"^{name} only support floating point and complex dtypes"):
        ours_fn(torch.ones(3, dtype=torch.int32))
    with pytest.raises(RuntimeError, match=f"^{name} only support floating point and complex dtypes"):
        ours_fn(torch.empty(2, 3, dtype=torch.int64, device="meta"), 0)


def test_std_into_a_complex_out_roots_in_its_dtype():
    # torch takes the root of a complex input's variance in out's dtype:
    # NaN becomes NaN + NaN i, as an empty reduction's NaN does.
    x = torch.randn(4, 5, dtype=torch.complex64, generator=torch.Generator().manual_seed(6))
    x[1, 2] = complex(float("nan"), 0.0)
    for inp, dim in [(x, 0), (x[:0], 0), (x, None)]:
        ours = reduce_op.std(inp, dim, out=torch.empty(0, dtype=torch.complex64))
        ref = torch.std(inp, dim, out=torch.empty(0, dtype=torch.complex64))
        assert _same_bits(ours, ref), f"{ours} against {ref}"


# The out= forms of prod (with a dim: aten's prod.int_out) and of max and
# min of every element (aten's max.unary_out: any dtype the input's casts
# to, resized to a scalar, the op's identity for an empty input), and the
# forms torch refuses (out= with no dim for prod and sum), against torch.
_OUT_CALLS = {
    "prod_dim": lambda m, x, o: m.prod(x, 1, out=o(0, x.dtype)),
    "prod_dim_keepdim": lambda m, x, o: m.prod(x, 0, True, out=o(5, torch.float64)),
    "prod_dim_dtype": lambda m, x, o: m.prod(x, -1, dtype=torch.float64, out=o(0, torch.float64)),
    "prod_dtype_mismatch": lambda m, x, o: m.prod(x, -1, dtype=torch.float64, out=o(0, torch.float32)),
    "prod_into_int64": lambda m, x, o: m.prod(x, 0, out=o(0, torch.int64)),
    "prod_no_dim": lambda m, x, o: m.prod(x, out=o(0, x.dtype)),
    "prod_dim_none": lambda m, x, o: m.prod(x, None, out=o(0, x.dtype)),
    "prod_dim_out_of_range": lambda m, x, o: m.prod(x, 7, out=o(0, x.dtype)),
    "max": lambda m, x, o: m.max(x, out=o(0, x.dtype)),
    "max_resized": lambda m, x, o: m.max(x, out=o(3, x.dtype)),
    "max_into_float64": lambda m, x, o: m.max(x, out=o(0, torch.float64)),
    "max_into_bool": lambda m, x, o: m.max(x, out=o(0, torch.bool)),
    "min": lambda m, x, o: m.min(x, out=o(0, x.dtype)),
    "min_transposed": lambda m, x, o: m.min(x.mT, out=o(0, x.dtype)),
    "min_into_float64": lambda m, x, o: m.min(x, out=o(0, torch.float64)),
    "max_empty": lambda m, x, o: m.max(x[:0], out=o(0, x.dtype)),
    "min_empty": lambda m, x, o: m.min(x[:, :0], out=o(0, x.dtype)),
    "max_pair_without_dim": lambda m, x, o: m.max(x, out=(o(0, x.dtype), o(0, torch.int64))),
    "sum_no_dim": lambda m, x, o: m.sum(x, out=o(0, x.dtype)),
    "sum_no_dim_dtype": lambda m, x, o: m.sum(x, dtype=torch.float64, out=o(0, torch.float64)),
}


@pytest.mark.parametrize("device", ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.uint8, torch.bool], ids=str)
def test_out_forms_of_prod_max_and_min(device, dtype):
    import warnings
    gen = torch.Generator().manual_seed(7)
    x = (torch.randn(4, 5, generator=gen) * 3).to(dtype).to(device)
    if dtype == torch.bool:
        x = torch.randn(4, 5, generator=gen).to(device) > 0
    checked = 0
    for name, call in _OUT_CALLS.items():
        outs = []  # each call's out tensors, compared after the call

        def fresh_on(dev):
            def fresh(n, dt):
                t = torch.full((n,), 3, dtype=dt, device=dev)
                outs.append(t)
                return t
            return fresh
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # resizing an out= with elements
            ref, ref_error = _call(lambda t: call(torch, t, fresh_on(device)), x, (), {})
            if device == "cuda" and name.endswith("_empty") and "INTERNAL ASSERT FAILED" in str(ref_error):
                # torch's CUDA max/min of every element into an out= runs its
                # reduce kernel on an empty input, which trips the kernel's
                # own assert (torch 2.11); its CPU kernel returns the op's
                # identity, which is what ours gives on every device.
                outs = []
                ref, ref_error = _call(lambda t: call(torch, t, fresh_on("cpu")), x.cpu(), (), {})
                ref = ref.to(device)
                outs = [t.to(device) for t in outs]
            ref_outs, outs = outs, []
            got, error = _call(lambda t: call(reduce_op, t, fresh_on(device)), x, (), {})
        label = f"{name} of {dtype} on {device}"
        if ref_error is not None and "Please look up dimensions by name" in str(ref_error):
            # torch 2.11 bound prod(x, None, out=) to its named-dim overload
            # (a RuntimeError); 2.13 refuses the form with a TypeError, as
            # this project does on both.
            assert isinstance(error, TypeError), f"{label}: torch {ref_error!r}, ours {error!r}"
        elif ref_error is not None:
            assert isinstance(error, type(ref_error)), f"{label}: torch {ref_error!r}, ours {error!r}"
        else:
            assert error is None, f"{label}: torch returned, ours raised {error!r}"
            # Products of floats round differently (this project's are
            # accumulated in float, torch's float16 ones in float16);
            # everything else is exact.
            same = _same if name.startswith("prod") else _same_bits
            assert same(got, ref), f"{label}: {got} against torch's {ref}"
            assert got is outs[0], f"{label}: out= is not what was returned"
            for a, b in zip(outs, ref_outs):
                assert same(a, b), f"{label}: out {a} against torch's {b}"
        checked += 1
    assert checked == len(_OUT_CALLS)


@pytest.mark.parametrize("name", sorted(OPS) + ["fsum"])
def test_an_input_that_is_not_a_tensor_raises_torchs_type_error(name):
    ours_fn, torch_fn = OPS.get(name, (reduce_op.fsum, torch.sum))
    for bad in ([[1.0, 2.0]], np.ones((2, 2)), 1.5, None):
        for args in ((), (0,)):
            with pytest.raises(TypeError):
                torch_fn(bad, *args)
            # (logsumexp without a dim: Python's own missing-argument error)
            with pytest.raises(TypeError, match="must be Tensor" if args or name != "logsumexp" else "dim"):
                ours_fn(bad, *args)


# Calls wrong in two ways (an out= of the wrong dtype and a dim out of
# range, or a refused input): the error torch raises first, by type.
_TWICE_WRONG = {
    "nansum": lambda m, x, e: m.nansum(x, 5, dtype=torch.float64, out=e(torch.float32)),
    "nansum_complex": lambda m, x, e: m.nansum(x.to(torch.complex64), 5, out=e(torch.float32)),
    "nansum_complex_no_out": lambda m, x, e: m.nansum(x.to(torch.complex64), 5),
    "nansum_int": lambda m, x, e: m.nansum(x.int(), 5, dtype=torch.float64, out=e(torch.float32)),
    "mean": lambda m, x, e: m.mean(x, 5, dtype=torch.float64, out=e(torch.float32)),
    "mean_into_int": lambda m, x, e: m.mean(x, 5, out=e(torch.int64)),
    "mean_of_int": lambda m, x, e: m.mean(x.int(), 5, out=e(torch.float32)),
    "logsumexp_into_int": lambda m, x, e: m.logsumexp(x, 5, out=e(torch.int64)),
    "logsumexp_into_float8": lambda m, x, e: m.logsumexp(x, 5, out=e(torch.float8_e4m3fn)),
    "var_into_int": lambda m, x, e: m.var(x, 5, out=e(torch.int64)),
    "var_of_int": lambda m, x, e: m.var(x.int(), 5, out=e(torch.float32)),
    "norm_into_int": lambda m, x, e: vector_norm_of(m)(x, 2, 5,
                                                                                              out=e(torch.int64)),
    "sum": lambda m, x, e: m.sum(x, 5, dtype=torch.float64, out=e(torch.float32)),
    "prod": lambda m, x, e: m.prod(x, 5, dtype=torch.float64, out=e(torch.float32)),
    "argmax": lambda m, x, e: m.argmax(x, 5, out=e(torch.float64)),
}


@pytest.mark.parametrize("name", sorted(_TWICE_WRONG))
def test_the_first_of_two_errors_is_torchs(name):
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(8))
    call = _TWICE_WRONG[name]
    empty = lambda dt: torch.empty(0, dtype=dt)  # noqa: E731
    with pytest.raises(Exception) as theirs:
        call(torch, x, empty)
    with pytest.raises(Exception) as ours:
        call(reduce_op, x, empty)
    assert type(ours.value) is type(theirs.value), (theirs.value, ours.value)



# Calls on a tensor of 64 or 65 dims, the last two of sizes 2 and 3.
_MANY_DIMS_CALLS = {
    "sum": lambda m, x: m.sum(x), "sum_dim": lambda m, x: m.sum(x, -1), "sum_dims": lambda m, x: m.sum(x, (0, 1)),
    "sum_empty_dims": lambda m, x: m.sum(x, []), "sum_none": lambda m, x: m.sum(x, None),
    "sum_dim_none": lambda m, x: m.sum(x, dim=None, dtype=torch.float64),
    "sum_out": lambda m, x: m.sum(x, 0, out=torch.empty(0, device=x.device)),
    "nansum_none": lambda m, x: m.nansum(x, None), "nansum_dim": lambda m, x: m.nansum(x, 0),
    "mean": lambda m, x: m.mean(x), "mean_none": lambda m, x: m.mean(x, dim=None), "mean_dims": lambda m, x: m.mean(x, (0, -1), keepdim=True),
    "mean_out": lambda m, x: m.mean(x, [0], out=torch.empty(0, device=x.device)),
    "prod": lambda m, x: m.prod(x), "prod_dim": lambda m, x: m.prod(x, -1),
    "amax": lambda m, x: m.amax(x), "amin_dim": lambda m, x: m.amin(x, 0),
    "max": lambda m, x: m.max(x), "max_dim": lambda m, x: m.max(x, -1), "min_dim": lambda m, x: m.min(x, 0),
    "argmax": lambda m, x: m.argmax(x), "argmax_dim": lambda m, x: m.argmax(x, -1),
    "argmin_dim": lambda m, x: m.argmin(x, 0, keepdim=True),
    "logsumexp": lambda m, x: m.logsumexp(x, -1), "logsumexp_empty_dims": lambda m, x: m.logsumexp(x, []),
    "logsumexp_empty_dims_kept": lambda m, x: m.logsumexp(x, [], keepdim=True),
    "var": lambda m, x: m.var(x), "var_dim": lambda m, x: m.var(x, -1), "std_none": lambda m, x: m.std(x, None),
    "var_mean_dim": lambda m, x: m.var_mean(x, 0, correction=0), "std_mean": lambda m, x: m.std_mean(x),
    "vector_norm_dims": lambda m, x: vector_norm_of(m)(x, 2, (0, -1)), "vector_norm_inf": lambda m, x: vector_norm_of(m)(x, 1, -1),
}


@pytest.mark.parametrize("device", ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
@pytest.mark.parametrize("ndim", [64, 65])
def test_tensors_of_more_than_64_dims(device, ndim):
    # torch keeps a list of reduced dims in a 64-bit mask: naming dims of a
    # tensor of more raises ("only tensors with up to 64 dims are
    # supported"), and so do sum's and mean's dim=None (its structured
    # kernels list every dim) and logsumexp's dims [] (it squeezes its
    # maxima by them); reductions that name no dim take the tensor.
    import warnings
    x = torch.randn([1] * (ndim - 2) + [2, 3], generator=torch.Generator().manual_seed(9)).to(device)
    raised = 0
    for name, call in _MANY_DIMS_CALLS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # var's degrees of freedom
            ref, ref_error = _call(lambda t: call(torch, t), x, (), {})
            got, error = _call(lambda t: call(reduce_op, t), x, (), {})
        label = f"{name} of {ndim} dims on {device}"
        if ref_error is not None:
            assert type(error) is type(ref_error) and str(error).split("\n")[0] == str(ref_error).split("\n")[0], \
                f"{label}: torch {ref_error!r}, ours {error!r}"
            raised += 1
        else:
            assert error is None, f"{label}: torch returned, ours raised {error!r}"
            for g, r in zip(got if isinstance(got, tuple) else (got,), ref if isinstance(ref, tuple) else (ref,)):
                assert g.shape == r.shape and g.dtype == r.dtype, label
                # (flattened: assert_close's own reductions take no 65 dims)
                torch.testing.assert_close(g.reshape(-1), r.reshape(-1), equal_nan=True)
    # The forms naming dims raise on 65 dims, and only there.
    assert raised == (21 if ndim == 65 else 1)  # (on 64 dims: logsumexp([]) without keepdim, as torch)


def test_drop_in_sum_of_65_dims_by_overload():
    # Routed, torch.sum(x) and x.sum() take a tensor of 65 dims and
    # sum(x, None) (positional, dim= or axis=) raises, as torch's overloads:
    # the drop-in's C parser and its mode's binding both keep whether a dim
    # was passed.
    x = torch.randn([1] * 63 + [2, 3], generator=torch.Generator().manual_seed(3))
    forms = [lambda: torch.sum(x), lambda: x.sum(), lambda: torch.sum(x, dtype=torch.float64),
             lambda: torch.sum(x, None), lambda: torch.sum(x, dim=None), lambda: x.sum(None, False),
             lambda: x.sum(axis=None), lambda: torch.mean(x, None), lambda: x.mean()]

    def outcomes():
        result = []
        for form in forms:
            try:
                result.append(float(form()))
            except RuntimeError as e:
                result.append(str(e))
        return result

    expected = outcomes()
    assert sum(isinstance(r, str) for r in expected) == 5
    with reduce_op.replace_torch_reductions():
        routed = outcomes()
    for got, want in zip(routed, expected):
        assert type(got) is type(want) and (got == want if isinstance(want, str) else abs(got - want) < 1e-5)


def _out_calls(x, out):
    """Every out= overload, writing into out(dtype, shape) tensors."""
    return {
        "sum": lambda m: m.sum(x, 0, out=out(x.dtype, 5)), "nansum": lambda m: m.nansum(x, 0, out=out(x.dtype, 5)),
        "mean": lambda m: m.mean(x, 0, out=out(x.dtype, 5)), "prod": lambda m: m.prod(x, 0, out=out(x.dtype, 5)),
        "amax": lambda m: m.amax(x, 0, out=out(x.dtype, 5)), "amin": lambda m: m.amin(x, 0, out=out(x.dtype, 5)),
        "max_all": lambda m: m.max(x, out=out(x.dtype)), "min_all": lambda m: m.min(x, out=out(x.dtype)),
        "max_dim": lambda m: m.max(x, 0, out=(out(x.dtype, 5), out(torch.long, 5))),
        "min_dim": lambda m: m.min(x, 0, out=(out(x.dtype, 5), out(torch.long, 5))),
        "argmax": lambda m: m.argmax(x, 0, out=out(torch.long, 5)), "argmin": lambda m: m.argmin(x, out=out(torch.long)),
        "logsumexp": lambda m: m.logsumexp(x, 0, out=out(x.dtype, 5)),
        "logsumexp_cast": lambda m: m.logsumexp(x, 0, out=out(torch.complex128, 5)),
        "var": lambda m: m.var(x, 0, out=out(x.dtype, 5)), "std": lambda m: m.std(x, 0, out=out(x.dtype, 5)),
        "vector_norm": lambda m: vector_norm_of(m)(x, 2, 0, out=out(x.dtype, 5)),
    }


def _error_of(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 - compared by type and message
        return e
    return None


def test_an_out_on_another_device_raises_torchs_error():
    # A meta out= for a CPU input (the Meta kernels run): torch's error
    # type, and its message where torch's structured kernels give it.
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(10))
    meta_out = lambda dt, *shape: torch.empty(shape, dtype=dt, device="meta")  # noqa: E731
    for name, call in _out_calls(x, meta_out).items():
        ref, got = _error_of(lambda: call(torch)), _error_of(lambda: call(reduce_op))
        assert ref is not None and type(got) is type(ref), (name, ref, got)
        if name in ("argmax", "argmin", "max_dim", "min_dim"):
            assert str(got) == str(ref), (name, ref, got)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_an_out_on_another_device_raises_on_cuda():
    # A CUDA input with a CPU out=, and a CPU input with a CUDA out=, reach
    # the CUDA kernels (the dispatcher picks CUDA): each must raise before
    # a kernel writes or reads the other device's memory, and leave the
    # CUDA context usable.
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(11))
    for x_dev, out_dev in (("cuda", "cpu"), ("cpu", "cuda")):
        out = lambda dt, *shape: torch.empty(shape, dtype=dt, device=out_dev)  # noqa: E731
        for name, call in _out_calls(x.to(x_dev), out).items():
            ref, got = _error_of(lambda: call(torch)), _error_of(lambda: call(reduce_op))
            assert ref is not None and isinstance(got, RuntimeError), (name, x_dev, out_dev, ref, got)
            torch.cuda.synchronize()
    torch.testing.assert_close(reduce_op.argmax(x.cuda(), 0).cpu(), torch.argmax(x, 0))


@pytest.mark.parametrize("device", ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
def test_an_out_whose_elements_share_memory(device):
    # An expanded out= (stride 0): the kernels' writes would leave one of
    # its results; every op raises the error torch's TensorIterator raises
    # (torch itself raises it for mean and logsumexp, and writes one
    # element's result for the others).
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(12)).to(device)
    expanded = lambda dt, *shape: torch.zeros((1,) * len(shape), dtype=dt, device=device).expand(shape)  # noqa: E731
    checked = 0
    for name, call in _out_calls(x, expanded).items():
        if name in ("max_all", "min_all", "argmin"):
            continue  # a 0-d out= holds one element
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            call(reduce_op)
        checked += 1
    assert checked == 14
    # An out= that is a row of the input: the result of the input as it
    # was before the call (torch's sum-like kernels read rows they have
    # already written).
    for name in ("sum", "mean", "prod", "amax", "logsumexp", "var", "vector_norm"):
        y = x.clone()
        f = (lambda m, t, **k: vector_norm_of(m)(t, 2, 0, **k)) if name == "vector_norm" else \
            (lambda m, t, name=name, **k: getattr(m, name)(t, 0, **k))
        f(reduce_op, y, out=y[0])
        torch.testing.assert_close(y[0], f(torch, x), msg=name)
        torch.testing.assert_close(y[1:], x[1:], msg=name)


@pytest.mark.parametrize("device", ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
def test_nansum_of_complex_into_results_without_a_complex_type(device):
    # torch's CPU nansum refuses complex inputs; elsewhere it reads one in
    # the complex type of the result's, and an integer, bool or float8
    # result has none ("Unknown Complex ScalarType for Short"), empty inputs
    # included. Into float and complex results it sums.
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(4)).to(device, torch.complex64)
    forms = {
        "dtype_int16": lambda m: m.nansum(x, 1, dtype=torch.int16),
        "out_int32": lambda m: m.nansum(x, 1, out=torch.empty(0, dtype=torch.int32, device=device)),
        "dtype_bool_empty": lambda m: m.nansum(x[:0], 0, dtype=torch.bool),
        "dtype_float8": lambda m: m.nansum(x, 0, dtype=torch.float8_e5m2),
        "dim_out_of_range": lambda m: m.nansum(x, 5, dtype=torch.int16),
        "dtype_complex128": lambda m: m.nansum(x, 0, dtype=torch.complex128),
    }
    for name, form in forms.items():
        ref, ref_error = _call(lambda t: form(torch), x, (), {})
        got, error = _call(lambda t: form(reduce_op), x, (), {})
        label = f"{name} on {device}"
        if ref_error is not None:
            assert type(error) is type(ref_error) and str(error).split("\n")[0] == str(ref_error).split("\n")[0], \
                f"{label}: torch {ref_error!r}, ours {error!r}"
        else:
            assert error is None, f"{label}: torch returned, ours raised {error!r}"
            torch.testing.assert_close(got, ref)


# numpy's scalars and 0-d tensors where torch's binding takes a Python
# number: dims (numpy ints, 0-d integer tensors), var's correction (numpy
# ints, floats, bools and complex with no imaginary part, 0-d tensors), and
# where it refuses them (numpy's bool as keepdim or unbiased, a 0-d numpy
# array or a float tensor as a correction or dim).
def _numpy_scalar_forms():
    import numpy as np
    norm = lambda m: vector_norm_of(m)  # noqa: E731
    return {
        "sum_np_dim": lambda m, x: m.sum(x, np.int64(1)), "sum_np_dims": lambda m, x: m.sum(x, [np.int32(0), 1]),
        "mean_np_dim": lambda m, x: m.mean(x, np.int64(-1)), "prod_np_dim": lambda m, x: m.prod(x, np.int64(1)),
        "nansum_np_dim": lambda m, x: m.nansum(x, np.int16(0)), "amax_np_dim": lambda m, x: m.amax(x, np.int64(1)),
        "argmax_np_dim": lambda m, x: m.argmax(x, np.int64(1)), "max_np_dim": lambda m, x: m.max(x, np.int64(0)),
        "logsumexp_np_dim": lambda m, x: m.logsumexp(x, np.int64(1)),
        "var_np_dim": lambda m, x: m.var(x, np.int64(1)), "std_tensor_dim": lambda m, x: m.std(x, torch.tensor(0)),
        "var_mean_np_dim": lambda m, x: m.var_mean(x, np.int32(1)), "std_mean_np_dims": lambda m, x: m.std_mean(x, [np.int64(1)]),
        "norm_np_dim": lambda m, x: norm(m)(x, 2, np.int64(1)), "norm_np_ord": lambda m, x: norm(m)(x, np.float64(3), 1),
        "var_np_int_correction": lambda m, x: m.var(x, 1, correction=np.int64(0)),
        "std_np_float_correction": lambda m, x: m.std(x, 1, correction=np.float32(0.5)),
        "var_np_bool_correction": lambda m, x: m.var(x, 0, correction=np.bool_(True)),
        "var_np_complex_correction": lambda m, x: m.var(x, 0, correction=np.complex64(2)),
        "var_tensor_correction": lambda m, x: m.var(x, 1, correction=torch.tensor(2)),
        "var_complex_correction": lambda m, x: m.var(x, 1, correction=1j),
        "var_array_correction": lambda m, x: m.var(x, 1, correction=np.array(1)),
        "var_np_bool_dim": lambda m, x: m.var(x, np.bool_(True)),
        "var_float_tensor_dim": lambda m, x: m.var(x, torch.tensor(1.0)),
        "var_np_bool_unbiased": lambda m, x: m.var(x, 1, np.bool_(False)),
        "sum_np_bool_keepdim": lambda m, x: m.sum(x, 1, np.bool_(True)),
        "amax_np_bool_keepdim": lambda m, x: m.amax(x, 1, keepdim=np.bool_(True)),
    }


@pytest.mark.parametrize("routed", [False, True])
def test_numpy_and_tensor_scalars_as_torch_takes_them(routed):
    import warnings
    x = torch.randn(5, 7, generator=torch.Generator().manual_seed(12), dtype=torch.float64)
    taken = refused = 0
    for name, call in _numpy_scalar_forms().items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's complex to real
            ref, ref_error = _call(lambda t: call(torch, t), x, (), {})
            if routed:
                with reduce_op.replace_torch_reductions():
                    got, error = _call(lambda t: call(torch, t), x, (), {})
            else:
                got, error = _call(lambda t: call(reduce_op, t), x, (), {})
        if ref_error is not None:
            assert isinstance(error, type(ref_error)), f"{name}: torch {ref_error!r}, ours {error!r}"
            refused += 1
        else:
            assert error is None, f"{name}: torch returned, ours raised {error!r}"
            assert _same(got, ref), f"{name}: {got} against torch's {ref}"
            taken += 1
    assert (taken, refused) == (20, 7)


def test_dims_beyond_int64_and_numpy_arrays():
    # An int dim beyond int64: torch's ValueError alone, its TypeError in a
    # list. A numpy array as a dim: torch refuses it (TypeError for an int
    # dim; for an int[1] dim its parser fails an internal assert, a
    # RuntimeError), and this project raises TypeError for both.
    import numpy as np
    x = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(13))
    ops = {"sum": lambda m, d: m.sum(x, d), "nansum": lambda m, d: m.nansum(x, d), "mean": lambda m, d: m.mean(x, d),
           "amax": lambda m, d: m.amax(x, d), "logsumexp": lambda m, d: m.logsumexp(x, d),
           "var": lambda m, d: m.var(x, d), "std_mean": lambda m, d: m.std_mean(x, d),
           "norm": lambda m, d: vector_norm_of(m)(x, 2, d)}
    one_dim_ops = {"argmax": lambda m, d: m.argmax(x, d), "prod": lambda m, d: m.prod(x, d),
                   "max": lambda m, d: m.max(x, d)}
    for name, call in {**ops, **one_dim_ops}.items():
        forms = [2**63, -2**63 - 1, np.array(1)] + ([[1, 2**64]] if name in ops else [])
        for d in forms:
            _, ref_error = _call(lambda t: call(torch, t), d, (), {})
            _, error = _call(lambda t: call(reduce_op, t), d, (), {})
            label = f"{name} dim={d!r}"
            assert ref_error is not None and error is not None, label
            expected = TypeError if isinstance(d, np.ndarray) else type(ref_error)
            assert isinstance(error, expected), f"{label}: torch {ref_error!r}, ours {error!r}"
