"""gpureduce.fsum, the correctly rounded sum, against an exact reference: the
sum as a Fraction, rounded half to even to the result's format by hand."""
import math
import random
import sys
from fractions import Fraction

import pytest
import torch
from torch.library import opcheck

import reduce_op

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


def check(values, dtype, out_dtype=None):
    x = torch.tensor(values, dtype=torch.float64).to(dtype)
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


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fsum_adversarial(dtype):
    for values in ADVERSARIAL:
        check(values, dtype)
        check(values, dtype, torch.float64)
        check(values, dtype, torch.float32)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fsum_random_exponents_and_ties(dtype):
    rng = random.Random(17)
    p, min_exp, max_exp = FORMATS[dtype]
    for _ in range(150):  # cancellation, exponents over the whole range
        n = rng.randint(1, 40)
        xs = [rng.choice([-1, 1]) * rng.random() * 2.0 ** rng.randint(min_exp, max_exp - 1) for _ in range(n)]
        xs += [-x for x in xs[: rng.randint(0, n)]]
        rng.shuffle(xs)
        check(xs, dtype)
    for _ in range(150):  # a value, half its ulp (a tie) and a nudge either way, or none
        base = rng.uniform(-4, 4) * 2.0 ** rng.randint(min_exp + p + 2, max_exp - 3)
        e = math.frexp(base)[1] - p
        check([base, math.copysign(2.0 ** (e - 1), rng.choice([-1, 1])),
               rng.choice([0.0, 2.0 ** max(e - 6, min_exp), -2.0 ** max(e - 6, min_exp)])], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fsum_dims_keepdim_dtype(dtype):
    gen = torch.Generator().manual_seed(5)
    x = (torch.randn(3, 4, 50, generator=gen, dtype=torch.float64) * 1e3).to(dtype)
    for dim in (None, 0, 1, 2, -1, (0, 2), [1, 2], (), (0, 1, 2)):
        for keepdim in (False, True):
            for out_dtype in (None, torch.float64):
                got = reduce_op.fsum(x, dim, keepdim, dtype=out_dtype)
                want_shape = torch.sum(x, dim if dim is not None else (), keepdim).shape if dim not in (None, ()) \
                    else torch.sum(x, dtype=out_dtype).shape if not keepdim else (1, 1, 1)
                assert got.shape == want_shape, (dim, keepdim, got.shape, want_shape)
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
def test_fsum_compiles():
    f = torch.compile(lambda t: reduce_op.fsum(t, 1) * 2, fullgraph=True, dynamic=True)
    for n in (5, 9):
        x = torch.randn(3, n, dtype=torch.float64)
        assert torch.equal(f(x), reduce_op.fsum(x, 1) * 2)
