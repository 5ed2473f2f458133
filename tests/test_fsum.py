"""gpureduce.fsum, the correctly rounded sum, against an exact reference: the
sum as a Fraction, rounded half to even to the result's format by hand."""
import math
import os
import random
import sys
from fractions import Fraction

import pytest
import torch
from torch.library import opcheck

import reduce_op
from axes import DEVICES, HAS_CUDA

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
from random_cases import apply_view, sample_cases  # noqa: E402

# Significant bits, smallest subnormal exponent, largest exponent.
FORMATS = {torch.float64: (53, -1074, 1023), torch.float32: (24, -149, 127), torch.float16: (11, -24, 15),
           torch.bfloat16: (8, -133, 127)}
DTYPES = list(FORMATS)


def exact_rounded(xs, dtype):
    """The exact sum of the floats `xs`, rounded once to `dtype`."""
    p, min_exp, max_exp = FORMATS[dtype]
    if any(math.isnan(x) for x in xs) or (math.inf in xs and -math.inf in xs):
        return math.nan
    if math.inf in xs or -math.inf in xs:
        return math.inf if math.inf in xs else -math.inf
    q = sum((Fraction(x) for x in xs), Fraction(0))
    if q == 0:
        return -0.0 if xs and all(x == 0 and math.copysign(1, x) < 0 for x in xs) else 0.0
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    lo = max(e - (p - 1), min_exp)
    v = Fraction(round(a / Fraction(2) ** lo)) * Fraction(2) ** lo  # round() takes ties to even
    r = math.inf if v > (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** max_exp else float(v)
    return -r if q < 0 else r


def same_bits(got, want):
    return (math.isnan(got) and math.isnan(want)) or (got == want and math.copysign(1, got) == math.copysign(1, want))


def check(values, dtype, out_dtype=None, device="cpu"):
    x = torch.tensor(values, dtype=torch.float64).to(dtype).to(device)
    exact_inputs = x.double().tolist()  # what the tensor holds
    got = reduce_op.fsum(x, dtype=out_dtype)
    want = exact_rounded(exact_inputs, out_dtype or dtype)
    assert got.dtype == (out_dtype or dtype)
    assert same_bits(got.double().item(), want), (dtype, out_dtype, got.item(), want, exact_inputs[:8])


TINY, BIG = 5e-324, sys.float_info.max
ADVERSARIAL = [
    [], [0.0], [-0.0], [-0.0, -0.0], [-0.0, 0.0], [1.0, -1.0], [BIG, BIG, -BIG], [BIG, BIG], [TINY, TINY], [TINY, -TINY],
    [1e308, 1e-308, -1e308], [1.0, 2 ** -53], [1.0, 2 ** -53, 2 ** -105], [1.0, -2 ** -54], [math.inf, 1.0],
    [math.inf, -math.inf], [math.nan, 1.0], [-math.inf, 5.0], [2.0 ** 127, 2.0 ** 127], [65504.0, 16.0],
    [65504.0, 15.99], [3.0, 2 ** -24], [1.0, 2.0 ** -25], [2.0 ** -149, 2.0 ** -151], [2.0 ** -150],
    [3 * 2.0 ** -151], [1e16, 1.0, -1e16], [0.1] * 10, [2.0 ** 60, -2.0 ** 60, 2.0 ** -60],
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fsum_adversarial(dtype, device):
    for values in ADVERSARIAL:
        check(values, dtype, device=device)
        check(values, dtype, torch.float64, device)
        check(values, dtype, torch.float32, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fsum_random_exponents_and_ties(dtype, device):
    rng = random.Random(17)
    p, min_exp, max_exp = FORMATS[dtype]
    for _ in range(150):  # cancellation, exponents over the whole range
        n = rng.randint(1, 40)
        xs = [rng.choice([-1, 1]) * rng.random() * 2.0 ** rng.randint(min_exp, max_exp - 1) for _ in range(n)]
        xs += [-x for x in xs[: rng.randint(0, n)]]
        rng.shuffle(xs)
        check(xs, dtype, device=device)
    for _ in range(150):  # a value, half its ulp (a tie) and a nudge either way, or none
        base = rng.uniform(-4, 4) * 2.0 ** rng.randint(min_exp + p + 2, max_exp - 3)
        e = math.frexp(base)[1] - p
        check([base, math.copysign(2.0 ** (e - 1), rng.choice([-1, 1])),
               rng.choice([0.0, 2.0 ** max(e - 6, min_exp), -2.0 ** max(e - 6, min_exp)])], dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fsum_dims_keepdim_dtype(dtype, device):
    gen = torch.Generator().manual_seed(5)
    x = (torch.randn(3, 4, 50, generator=gen, dtype=torch.float64) * 1e3).to(dtype).to(device)
    for dim in (None, 0, 1, 2, -1, (0, 2), [1, 2], (), (0, 1, 2)):
        for keepdim in (False, True):
            for out_dtype in (None, torch.float64):
                got = reduce_op.fsum(x, dim, keepdim, dtype=out_dtype)
                want_shape = torch.sum(x, dim if dim is not None else (), keepdim).shape if dim not in (None, ()) \
                    else torch.sum(x, dtype=out_dtype).shape if not keepdim else (1, 1, 1)
                assert got.shape == want_shape and got.device == x.device, (dim, keepdim, got.shape, want_shape)
                reduced = sorted({d % 3 for d in (dim if isinstance(dim, (tuple, list)) else [dim])}) \
                    if dim not in (None, ()) else [0, 1, 2]
                rows = x.double().permute([d for d in range(3) if d not in reduced] + reduced)
                rows = rows.reshape(-1, math.prod(x.shape[d] for d in reduced))
                flat = got.double().reshape(-1).tolist()
                for i, row in enumerate(rows.tolist()):
                    assert same_bits(flat[i], exact_rounded(row, out_dtype or dtype)), (dim, keepdim, i)


def test_fsum_does_not_depend_on_order_or_threads():
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(3 * 10 ** 5, generator=gen, dtype=torch.float64) * torch.exp2(torch.randint(-60, 60, (3 * 10 ** 5,),
                                                                                                 generator=gen))
    want = math.fsum(x.tolist())
    threads = torch.get_num_threads()
    try:
        results = []
        for n in (1, 2, threads):
            torch.set_num_threads(n)
            results.append(reduce_op.fsum(x).item())
            results.append(reduce_op.fsum(x[torch.randperm(x.numel(), generator=gen)]).item())
            results.append(reduce_op.fsum(x.view(3, -1), 1).tolist())
    finally:
        torch.set_num_threads(threads)
    assert all(r == want for r in results[0::3] + results[1::3])
    rows = [math.fsum(r) for r in x.view(3, -1).tolist()]
    assert all(r == rows for r in results[2::3])


def test_fsum_long_input_matches_math_fsum():
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(2 * 10 ** 6, generator=gen, dtype=torch.float64) * 1e10
    x[::7] *= -1e-12
    assert reduce_op.fsum(x).item() == math.fsum(x.tolist())
    # float32 input, float32 result: the exact sum rounded once (not the
    # float64 sum rounded again).
    y = x.float()
    assert reduce_op.fsum(y).item() == exact_rounded(y.double().tolist(), torch.float32)


def assert_same_bits(got, want, what=None):
    """The same values, NaN where NaN, and zeros of the same sign."""
    g, w = got.cpu(), want.cpu()
    assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, w.shape, g.dtype, w.dtype)
    g, w = g.double(), w.double()
    assert torch.equal(g.isnan(), w.isnan()), what
    g, w = g.masked_fill(g.isnan(), 1.0), w.masked_fill(w.isnan(), 1.0)
    assert torch.equal(g, w) and torch.equal(g.signbit(), w.signbit()), (what, (g - w).abs().max())


def spread(n, gen, low, high):
    """n float64 values of either sign, scaled by 2^k for k random in [low, high)."""
    scale = torch.exp2(torch.randint(low, high, (n,), generator=gen).double())
    return torch.randn(n, generator=gen, dtype=torch.float64) * scale


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fsum_cuda_matches_cpu_bits(dtype):
    """The CUDA kernel's paths against the CPU kernel (checked against the
    exact sum above), bit for bit: rows in one block and rows in chunks
    (added into a total that the last one rounds); lengths around a warp's
    tile (512 elements, 1024 of the 16-bit types) and odd ones; rows off
    16-byte boundaries; exponents close together and spread far enough that some
    elements fall below both windows of their tile's largest (straight to
    the block's digits); results in the input's dtype and in float64."""
    gen = torch.Generator().manual_seed(23)
    spans = (4, 12) if dtype == torch.float16 else (4, 40)
    for length in (1, 7, 511, 512, 513, 1023, 1024, 1025, 4097, 100003):
        for rows in (1, 3, 40):
            for span in spans:
                base = spread(rows * length + 1, gen, -span, span)
                for off in (0, 1):
                    x = base.to(dtype).cuda()[off:off + rows * length].view(rows, length)
                    for out_dtype in (None, torch.float64):
                        for dim in ((1,), None):
                            got = reduce_op.fsum(x, dim, dtype=out_dtype)
                            want = reduce_op.fsum(x.cpu(), dim, dtype=out_dtype)
                            assert_same_bits(got, want, (length, rows, span, off, out_dtype, dim))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fsum_small_element_spans(dtype, device):
    """One element with every significand bit set, `span` exponents below
    the largest of its tile, among pairs that cancel: the sum is that
    element exactly, so any of its bits dropped shows. The spans cross the
    points where a kernel stops taking a tile's elements whole (float32:
    25, bfloat16: 40, float16: 37 on CUDA) and where a second window is
    needed."""
    p, min_exp, max_exp = FORMATS[dtype]
    rng = random.Random(37)
    top = max_exp if dtype == torch.float16 else 0
    for span in range(20, 55):
        low = top - span
        if low < min_exp:
            break
        small = 2.0 ** (low + 1) - 2.0 ** max(low + 1 - p, min_exp)  # subnormals: fewer bits
        for _ in range(5):  # exponents down to 7 below the top: some lanes of a tile lack the largest
            pairs = [rng.choice([1, -1]) * (1 + rng.randrange(8) / 8) * 2.0 ** (top - rng.randrange(8)) for _ in range(2047)]
            values = pairs + [-v for v in pairs] + [small, 0.0]
            rng.shuffle(values)
            x = torch.tensor(values, dtype=torch.float64).to(dtype).to(device)
            got = reduce_op.fsum(x)
            assert same_bits(got.double().item(), small), (span, got.item(), small)
            if device == "cuda":
                assert_same_bits(reduce_op.fsum(x.view(2, -1), 1), reduce_op.fsum(x.view(2, -1).cpu(), 1), span)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fsum_special_values_in_long_rows(dtype, device):
    """inf, nan, -0.0 and exact cancellation where they meet the blocks,
    tiles and chunks: long rows, one special value among many ordinary
    ones, against the exact sum (and on CUDA, bit for bit the CPU's)."""
    gen = torch.Generator().manual_seed(29)
    n = 70001
    big = torch.finfo(dtype).max
    cases = {
        "all -0.0": torch.full((n,), -0.0, dtype=torch.float64),
        "-0.0 and one 0.0": torch.full((n,), -0.0, dtype=torch.float64).index_fill(0, torch.tensor([n // 2]), 0.0),
    }
    y = spread(n, gen, -10, 10).to(dtype).double()
    cases["cancels"] = torch.cat([y, -y])[torch.randperm(2 * n, generator=gen)]
    for name, value in (("inf", math.inf), ("-inf", -math.inf), ("nan", math.nan)):
        cases[name] = y.clone().index_fill(0, torch.tensor([n // 3]), value)  # inside a CPU block
    cases["inf and -inf"] = y.clone().index_fill(0, torch.tensor([5]), math.inf).index_fill(0, torch.tensor([n - 5]), -math.inf)
    cases["nan in the tail"] = y.clone().index_fill(0, torch.tensor([n - 3]), math.nan)
    cases["max, no overflow"] = torch.tensor([big] * 3 + [-big] * 2 + [0.5] * (n - 5), dtype=torch.float64)
    cases["max, overflow"] = torch.tensor([big] * 2 + [0.0] * (n - 2), dtype=torch.float64)
    for name, values in cases.items():
        x = values.to(dtype).to(device)
        for v in (x, x.view(7, -1) if x.numel() % 7 == 0 else x.view(1, -1)):
            dim = None if v.dim() == 1 else 1
            if device == "cuda":
                assert_same_bits(reduce_op.fsum(v, dim), reduce_op.fsum(v.cpu(), dim), name)
            elif dim is not None:
                got = reduce_op.fsum(v, dim).double().tolist()
                assert all(same_bits(g, exact_rounded(row, dtype)) for g, row in zip(got, v.double().tolist())), name
        want = exact_rounded(x.double().tolist(), dtype)
        assert same_bits(reduce_op.fsum(x).double().item(), want), (name, want)


@pytest.mark.cuda
def test_fsum_cuda_layouts_streams_and_graphs():
    gen = torch.Generator().manual_seed(31)
    x = spread(6 * 50 * 70, gen, -30, 30).float().view(6, 50, 70)
    for dim in (0, 1, (0, 2), (2, 0), (1, 2)):  # columns and planes: moved last, made contiguous
        xc = x.cuda()
        assert_same_bits(reduce_op.fsum(xc, dim), reduce_op.fsum(x, dim), dim)
        assert_same_bits(reduce_op.fsum(xc.transpose(0, 2), dim), reduce_op.fsum(x.transpose(0, 2), dim), dim)
    big = spread(1 << 20, gen, -60, 60).cuda()
    want = reduce_op.fsum(big.cpu())
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        got = reduce_op.fsum(big)
    side.synchronize()
    assert_same_bits(got, want)
    # Captured in a graph and replayed on new values (chunks and merge both)
    static = big.clone()
    reduce_op.fsum(static)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = reduce_op.fsum(static)
    fresh = spread(1 << 20, gen, -60, 60)
    static.copy_(fresh)
    graph.replay()
    assert_same_bits(captured, reduce_op.fsum(fresh))
    opcheck(torch.ops.gpureduce.fsum.dim_IntList, (torch.randn(3, 4, device="cuda"), [1], True),
            {"dtype": torch.float64})
    assert_same_bits(reduce_op.fsum(torch.empty(0, 3, device="cuda"), 0), torch.zeros(3))
    assert_same_bits(reduce_op.fsum(torch.empty(4, 0, device="cuda"), 1), torch.zeros(4))
    assert reduce_op.fsum(torch.empty(0, 4, device="cuda"), 1).shape == (0,)


FLOAT_NAMES = ("float32", "bfloat16", "float16", "float64")


def random_fsum_inputs(n, seed, min_bytes, max_bytes, device):
    """The random-shape sampler's cases (benchmarks/random_cases.py: model
    layouts, views, dims, keepdim, dtype=), each with a floating dtype (an
    integer case takes one at random) and values spread over exponents of
    2^-span to 2^span, span 12 for float16 and 40 for the others. Yields the
    input and fsum's arguments."""
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    for case in sample_cases(n, seed, min_bytes, max_bytes):
        dtype = case.dtype if case.dtype in FLOAT_NAMES else rng.choice(FLOAT_NAMES)
        out = case.out_dtype if case.out_dtype in FLOAT_NAMES else None
        span = 12 if dtype == "float16" else 40
        base = spread(math.prod(case.base), gen, -span, span).view(case.base).to(getattr(torch, dtype)).to(device)
        x = apply_view(base, case.view)
        yield case.label(), x, case.dim, case.keepdim, (getattr(torch, out) if out else None)


def assert_rows_exact(got, x, dim, keepdim, out_dtype, label):
    """fsum's result `got` for x (over dim, as torch.sum reads it: None or
    empty for all, an int or a tuple) has torch.sum's shape and the
    requested dtype, and each element is its row's exact sum rounded once."""
    want_shape = torch.sum(x.double(), dim, keepdim).shape if dim is not None else torch.Size([])
    assert got.shape == want_shape and got.dtype == (out_dtype or x.dtype), (label, got.shape, want_shape)
    dims = (dim,) if isinstance(dim, int) else tuple(dim or ())
    reduced = sorted({d % x.dim() for d in dims}) if dims and x.dim() else list(range(x.dim()))
    kept = [d for d in range(x.dim()) if d not in reduced]
    rows = x.double().permute(kept + reduced).reshape(math.prod(x.shape[d] for d in kept), -1)
    flat = got.double().reshape(-1).tolist()
    for i, row in enumerate(rows.tolist()):
        assert same_bits(flat[i], exact_rounded(row, out_dtype or x.dtype)), (label, i, flat[i])


@pytest.mark.parametrize("seed", [41, 42])
def test_fsum_random_cases_cpu_exact(seed):
    """Small random cases on the CPU, every output element against the exact
    sum of its row rounded once."""
    for label, x, dim, keepdim, out_dtype in random_fsum_inputs(100, seed, 16, 1 << 12, "cpu"):
        assert_rows_exact(reduce_op.fsum(x, dim, keepdim, dtype=out_dtype), x, dim, keepdim, out_dtype, label)


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fsum_on_torchs_sum_samples(dtype, device):
    """torch.sum's own sample inputs (its OpInfo) through fsum: where torch
    raises, an error of the same type; otherwise torch.sum's shape and every
    element the exact sum of its row rounded once."""
    pytest.importorskip("expecttest")  # common_methods_invocations imports it
    from torch.testing._internal.common_methods_invocations import op_db

    info = next(o for o in op_db if o.name == "sum" and o.variant_test_name == "")
    samples = list(info.sample_inputs(device, dtype, requires_grad=False))
    assert samples
    for s in samples:
        x, args, kwargs = s.input, s.args, s.kwargs
        where = (tuple(x.shape), args, kwargs)
        try:
            torch.sum(x, *args, **kwargs)
            their_error = None
        except Exception as e:  # noqa: BLE001 - compared by type below
            their_error = e
        if their_error is not None:
            with pytest.raises(type(their_error)):
                reduce_op.fsum(x, *args, **kwargs)
            continue
        dim = kwargs.get("dim", args[0] if args else None)
        keepdim = kwargs.get("keepdim", args[1] if len(args) > 1 else False)
        got = reduce_op.fsum(x, *args, **kwargs)
        assert_rows_exact(got.cpu(), x.cpu(), dim, keepdim, kwargs.get("dtype"), where)


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
@pytest.mark.parametrize("seed", [43, 44, 45])
def test_fsum_random_cases_cuda_match_cpu_bits(seed):
    """Random cases of up to 16 MB on the GPU, bit for bit the CPU kernel's
    (which the test above checks against the exact sum)."""
    for label, x, dim, keepdim, out_dtype in random_fsum_inputs(150, seed, 16, 1 << 24, "cuda"):
        assert_same_bits(reduce_op.fsum(x, dim, keepdim, dtype=out_dtype),
                         reduce_op.fsum(x.cpu(), dim, keepdim, dtype=out_dtype), label)


def test_fsum_errors():
    with pytest.raises(RuntimeError, match="expected a float16, bfloat16, float32 or float64 input, got Long"):
        reduce_op.fsum(torch.arange(3))
    with pytest.raises(RuntimeError, match="dtype must be float16, bfloat16, float32 or float64, got Int"):
        reduce_op.fsum(torch.ones(3), dtype=torch.int32)
    with pytest.raises(IndexError, match="Dimension out of range"):
        reduce_op.fsum(torch.ones(2, 3), 2)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        reduce_op.fsum(torch.ones(2, 3), (1, 1))


def test_fsum_gradients_and_opcheck():
    x = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: reduce_op.fsum(t, 1), (x,))
    assert torch.autograd.gradgradcheck(lambda t: reduce_op.fsum(t, (0, 1), keepdim=True) ** 2, (x,))
    g = torch.autograd.grad(reduce_op.fsum(x.float(), 0, dtype=torch.float64).sum(), x)[0]
    assert torch.equal(g, torch.ones_like(x))
    for args, kwargs in (((torch.randn(3, 4),), {}), ((torch.randn(3, 4), [1], True), {"dtype": torch.float64})):
        op = torch.ops.gpureduce.fsum.default if len(args) == 1 else torch.ops.gpureduce.fsum.dim_IntList
        opcheck(op, args, kwargs)
    meta = reduce_op.fsum(torch.empty(2, 3, 4, device="meta"), (0, 2), dtype=torch.float64)
    assert meta.shape == (3,) and meta.dtype == torch.float64


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_fsum_compiles(device):
    torch._dynamo.reset()  # a fresh count of recompiles (see test_conv1d_compiles)
    f = torch.compile(lambda t: reduce_op.fsum(t, 1) * 2, fullgraph=True, dynamic=True)
    for n in (5, 9):
        x = torch.randn(3, n, dtype=torch.float64, device=device)
        assert torch.equal(f(x), reduce_op.fsum(x, 1) * 2)
