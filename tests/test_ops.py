"""Every op of the op table (axes.OPS) against its torch function: every
dtype, shape and layout of the shared axes, reduced over all dims and over
each single dim with and without keepdim, on CPU and CUDA. Where torch
raises (amax of an empty dim), ours must raise an error of the same type.
And the sum-like ops over the passes their plans read in two steps."""
import math

import pytest
import torch

import reduce_op  # noqa: F401  (loads the operator library)
from axes import (DEVICES, LAYOUTS, OP_RTOL, OPS, SHAPES, assert_op_matches, cuda_kernels_run, float64_result,
                  random_tensor)


def _check(op, ours, ref, scale, exact=lambda: None):
    """ours() against ref(): the same result, or an error of the same type."""
    try:
        expected = ref()
    except Exception as e:  # noqa: BLE001 - compared by type
        with pytest.raises(type(e)):
            ours()
        return
    assert_op_matches(op, ours(), expected, scale(), exact())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op_name", sorted(OPS))
def test_op_matches_torch(op_name, shape, layout, device, gen):
    op = OPS[op_name]
    for dtype in op.dtypes:
        x = op.data(shape, dtype, layout, device, gen)
        _check(op, lambda: op.ours_all(x), lambda: op.ref_all(x), lambda: op.scale(x),
               lambda: float64_result(op.ref_all, x))
        for d in range(-x.dim(), max(x.dim(), 1)):
            for keepdim in (False, True):
                _check(op, lambda: op.ours_dim(x, d, keepdim), lambda: op.ref_dim(x, d, keepdim),
                       lambda: op.scale(x, d, keepdim), lambda: float64_result(op.ref_dim, x, d, keepdim))


# Short inner reduced rows under a second reduced dim, the kept dims dense
# against them ([N, C, r] over (0, 2), N >= 16; on the GPU rows of under
# 32 bytes and 8 MB or more, on the CPU up to 256 bytes and 64 KB): a
# columns pass over the N rows into partials of the accumulator dtype, then
# rows of r (reduce_plan.cpp, columns_first_pays). Cases on both sides of
# the GPU's limits (row bytes, rows, bytes; the fourth item says whether the
# GPU takes two steps); a layout whose logical order is not its memory
# order ([r, N, C] over (0, 1), dense as [N, C, r]); every op that hands
# partials on, against torch, on each device.
COLUMNS_FIRST_CASES = [
    ((4096, 1024, 2), (0, 2), torch.float32, True), ((260, 6, 2341, 2), (0, 3), torch.float32, True),
    ((2048, 683, 3), (0, 2), torch.bfloat16, True), ((512, 1041, 7), (0, 2), torch.float32, True),
    ((512, 1041, 8), (0, 2), torch.float32, False),  # a 32-byte row: the rows pass
    ((1024, 1024, 3), (0, 2), torch.float64, True), ((15, 100000, 2), (0, 2), torch.float32, False),
    ((16, 100000, 2), (0, 2), torch.float32, True), ((4095, 256, 2), (0, 2), torch.float32, False),  # 8 MB - 8 KB
    ((2070, 640, 2, 2), (0, 2, 3), torch.float32, True), ((2070, 640, 4, 4), (0, 2, 3), torch.float32, False),
]


def _columns_first_input(shape, dtype, permuted, device):
    x = random_tensor(shape, dtype, "cpu", torch.Generator().manual_seed(7)).to(device)
    return x.permute(2, 0, 1) if permuted else x


def _sum_like_ops():
    g = torch.ops.gpureduce
    return {
        "sum": (lambda x, d: g.sum.dim_IntList(x, d), lambda x, d: torch.sum(x, d), torch.sum),
        "mean": (lambda x, d: g.mean.dim(x, d), lambda x, d: torch.mean(x, d), torch.mean),
        "nansum": (lambda x, d: g.nansum(x, d), lambda x, d: torch.nansum(x, d), torch.sum),
        "amax": (lambda x, d: g.amax(x, d), lambda x, d: torch.amax(x, d), None),
        "logsumexp": (lambda x, d: g.logsumexp(x, d), lambda x, d: torch.logsumexp(x, d), None),
        "norm": (lambda x, d: g.linalg_vector_norm(x, 2, d), lambda x, d: torch.linalg.vector_norm(x, 2, d),
                 None),
    }


def _check_sum_like(op_name, x, d):
    """Ours against torch's op over dims d: dtype and shape, floats within
    OP_RTOL of the op's scale (amax exactly), and the same bits twice."""
    ours, theirs, scale_fn = _sum_like_ops()[op_name]
    got, ref = ours(x, d), theirs(x, d)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    if scale_fn is not None:
        scale = scale_fn(x.double().abs(), d)
    elif op_name == "amax":
        scale = torch.zeros_like(ref, dtype=torch.float64)
    else:  # logsumexp and the 2-norm: the result's own size, and 1 for logsumexp's log of a sum
        scale = ref.double().abs() + (1 if op_name == "logsumexp" else 0)
    err = (got.double() - ref.double()).abs()
    assert (err <= OP_RTOL[x.dtype] * scale + 1e-30).all(), (op_name, err.max().item())
    assert torch.equal(got, ours(x, d))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(COLUMNS_FIRST_CASES)))
@pytest.mark.parametrize("op_name", sorted(_sum_like_ops()))
def test_columns_first_plan(case, op_name, device):
    shape, dims, dtype, two_steps = COLUMNS_FIRST_CASES[case]
    ours = _sum_like_ops()[op_name][0]
    for permuted in (False, True) if len(shape) == 3 else (False,):
        x = _columns_first_input(shape, dtype, permuted, device)
        d = [(k + 1) % 3 for k in dims] if permuted else list(dims)  # the same dims of the permuted view
        _check_sum_like(op_name, x, d)
        if device == "cuda" and dtype == torch.float32 and op_name == "sum":
            names = cuda_kernels_run(lambda: ours(x, d))
            # The rows pass runs rows kernels only; the first step reads columns.
            columns = any(k in n for n in names for k in ("gpureduce_columns", "gpureduce_stream_columns",
                                                             "gpureduce_dense_tiles"))
            assert columns == two_steps, names


# Strided columns of floats a few elements apart on the CPU ([R, s W][:, ::s]
# over dim 0, s <= 4): summed over the dense span they lie in into
# partials, every s-th then picked (reduce_plan.cpp, superset_columns_span).
# The span runs to the next row's start where that is a step past the last
# column and the storage holds it. Taken where the dims after the span
# continue it (from 64 KB: kept dims before session 67's padding, or any
# dims where each output reduces at least as many elements as there are
# outputs; those of float32 and float64 sums 2 or 3 apart only from 1 MB,
# the columns tiles picking them below), or for a span of 256 elements or
# more from 1 MB. Steps on both
# sides of the limit, spans under 256, inputs under 1 MB, a second reduced
# dim, a sliced start (whose span the storage cannot pad), spans that
# merge with a kept dim (over 64 KB and under), padded spans with more
# outputs than rows, columns of two dims, and keepdim; every op that hands
# partials on, against torch, on each device.
SUPERSET_CASES = [
    ((2970, 441), 3, (0,), torch.float16), ((2970, 441), 3, (0,), torch.bfloat16),
    ((1000, 1024), 2, (0,), torch.float32), ((300, 2000), 4, (0,), torch.float64),
    ((3000, 640), 5, (0,), torch.float32),      # a step of 5: one pass
    ((9000, 254), 3, (0,), torch.float32),      # a span of 253 elements, not padded: one pass
    ((9000, 255), 3, (0,), torch.float32),      # padded to 255, continued by the rows
    ((200, 1024), 2, (0,), torch.float32),      # 800 KB, more outputs than rows: one pass
    ((8, 200, 1200), 3, (0, 1), torch.bfloat16), ((3000, 701), 2, (0,), torch.float32),
    ((43, 19, 52, 17), 2, (0, 1), torch.float32), ((400, 30, 17), 2, (0,), torch.bfloat16),
    ((2000, 4, 9), 2, (0,), torch.float16), ((1000, 100, 7), 3, (0,), torch.float64),
    ((64, 4, 9), 2, (0,), torch.float32),       # merges, 10 KB: one pass
    ((300, 8, 40), 4, (0, 1), torch.float32),   # padded to the next row
    ((300, 8, 40), 4, (0,), torch.float32),     # columns of two dims, padded
    ((1000, 6, 6), 2, (0,), torch.float32),
    ((50, 1000), 4, (0,), torch.float32),       # padded, more outputs than rows, 195 KB: one pass
    ((100, 30, 8), 2, (0,), torch.float64),     # padded, more outputs than rows: one pass
    ((139, 115), 3, (0,), torch.float64),       # 128 KB of span the tiles pick: one pass
    ((1200, 300), 3, (0,), torch.float32),      # padded, 1.4 MB of span: the superset
]


def _superset_expected(x, dims, step):
    """Whether the planner reads x = base[..., ::step] (base dense) through its span."""
    n, row = x.shape[-1], x.stride(-2)
    span, nbytes = (n - 1) * step + 1, x.numel() * step * x.element_size()
    padded = row == n * step
    dense_span = n * step if padded else span
    rows = math.prod(x.shape[d] for d in dims)
    dense = row == dense_span and rows >= x.numel() // rows
    merged = not padded and x.dim() >= 3 and x.dim() - 2 not in dims and row == span
    # (float32 and float64 columns 2 or 3 apart, of sums in their own dtype,
    # are read by the columns tiles under 1 MB: Lanes::fold_picked)
    tiles_pick = step <= 3 and x.dtype in (torch.float32, torch.float64) and nbytes < 1 << 20
    return step <= 4 and ((nbytes >= 64 << 10 and (merged or (dense and not tiles_pick))) or
                          (dense_span >= 256 and nbytes >= 1 << 20))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(SUPERSET_CASES)))
@pytest.mark.parametrize("op_name", sorted(_sum_like_ops()))
def test_superset_columns_plan(case, op_name, device):
    shape, step, dims, dtype = SUPERSET_CASES[case]
    ours = _sum_like_ops()[op_name][0]
    base = random_tensor(shape, dtype, "cpu", torch.Generator().manual_seed(11)).to(device)
    for x in (base[..., ::step], base[..., 1::step]):
        _check_sum_like(op_name, x, list(dims))
    if op_name == "sum":
        kd = torch.ops.gpureduce.sum.dim_IntList(base[..., ::step], list(dims), True)
        assert torch.equal(kd.squeeze(list(dims)), ours(base[..., ::step], list(dims)))
    if op_name == "sum" and device == "cpu":
        # The plan views the span and the picked partials with as_strided
        # (dispatched ops, which the profiler sees); one pass makes no view.
        from torch.profiler import ProfilerActivity, profile

        x = base[..., ::step]
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            ours(x, list(dims))
        viewed = any(e.name == "aten::as_strided" for e in prof.events())
        assert viewed == _superset_expected(x, list(dims), step), viewed


# Kept columns in runs of a few dense ones with gaps between them ([R, K,
# W][..., a:a + w] over dim 0) on the CPU: summed over the dense span of the
# kept dims into partials, the runs then picked (reduce_plan.cpp,
# gapped_kept_span). Taken for runs of up to 16 bytes filling a third of
# their span or more, spans of 256 elements or more, from 1 MB of span.
# Runs on both sides of each limit, an outer kept dim, a reduced dim
# between kept ones, a start past the storage's, and two runs of two dims.
GAPPED_CASES = [
    # (shape, start, width, dims, dtype, taken on the CPU)
    ((726, 592, 5), 0, 2, (0,), torch.float16, True),
    ((726, 592, 5), 3, 2, (0,), torch.float32, True),
    ((525, 521, 4), 0, 3, (0,), torch.bfloat16, True),
    ((448, 396, 5), 2, 2, (0,), torch.float64, True),      # a run of 16 bytes
    ((448, 396, 5), 1, 3, (0,), torch.float64, False),     # 24 bytes
    ((700, 300, 12), 8, 4, (0,), torch.float32, True),     # a third of the span
    ((700, 300, 13), 8, 4, (0,), torch.float32, False),    # under a third
    ((100, 300, 5), 0, 2, (0,), torch.float32, False),     # under 1 MB of span
    ((4000, 50, 5), 0, 2, (0,), torch.float32, False),     # a span of 247 elements
    ((3, 300, 350, 3), 1, 2, (1,), torch.float32, True),   # an outer kept dim
    ((300, 3, 350, 3), 1, 2, (0, 1), torch.float32, True),
    ((300, 20, 30, 6), 0, 2, (0,), torch.bfloat16, True),  # kept dims of three sizes
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(GAPPED_CASES)))
@pytest.mark.parametrize("op_name", sorted(_sum_like_ops()))
def test_gapped_kept_columns_plan(case, op_name, device):
    shape, start, width, dims, dtype, taken = GAPPED_CASES[case]
    base = random_tensor(shape, dtype, "cpu", torch.Generator().manual_seed(12)).to(device)
    x = base[..., start:start + width]
    _check_sum_like(op_name, x, list(dims))
    _check_sum_like(op_name, x.transpose(-1, -2)[..., ::2, :], list(dims))  # another gapped layout
    if op_name == "sum" and device == "cpu":
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            _sum_like_ops()["sum"][0](x, list(dims))
        viewed = any(e.name == "aten::as_strided" for e in prof.events())
        assert viewed == taken, viewed


# Three or more reduced dims that do not merge (a .step view, a permuted
# one): a CPU input of up to 4096 elements is copied by a loop with its
# reduced dims innermost and reduced in one pass; a larger one (and any
# CUDA one) in two passes, or through a copy for var and std.
SMALL_THREE_DIM_CASES = [
    # (shape, view, dims, packed on the CPU)
    ((3, 2, 5, 2), "step", (0, 2, 3), True),
    ((4, 3, 5, 2, 6), None, (0, 2, 4), True),  # kept dims between the reduced ones
    ((4, 3, 5, 2, 6), "permute", (0, 1, 4), True),
    ((4, 5, 6, 7), "permute", (0, 1, 3), False),  # two of them merge: one pass
    ((2, 3, 4, 5, 6), "step", (0, 2, 3, 4), True),
    ((6, 2, 10, 4, 9), "step", (0, 2, 3, 4), True),  # 2160 elements
    ((7, 3, 17, 4, 10), "step", (0, 2, 3, 4), False),  # 4760 elements
    ((9, 7, 11, 3), "permute", (1, 2, 3), False),  # 9 * 7 * 11 * 3 = 2079: two dims merge, one pass
]


def _three_dim_view(shape, view, dtype, device, gen):
    x = random_tensor(shape, dtype, "cpu", gen).to(device)
    if view == "step":
        return x[:, :, ::2]
    return x.permute(0, 2, 1, *range(3, x.dim())) if view == "permute" else x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(SMALL_THREE_DIM_CASES)))
@pytest.mark.parametrize("op_name", sorted(_sum_like_ops()) + ["prod", "var", "int_sum", "conj_sum"])
def test_small_inputs_over_three_reduced_dims(case, op_name, device):
    shape, view, dims, packed = SMALL_THREE_DIM_CASES[case]
    gen = torch.Generator().manual_seed(14)
    dims = list(dims)
    if op_name in _sum_like_ops():
        for dtype in (torch.float32, torch.float16):
            _check_sum_like(op_name, _three_dim_view(shape, view, dtype, device, gen), dims)
    elif op_name == "prod":
        x = 1 + 0.01 * _three_dim_view(shape, view, torch.float64, device, gen)
        torch.testing.assert_close(reduce_op.prod(reduce_op.prod(x, dims[-1]), dims[0]), torch.prod(torch.prod(x, dims[-1]), dims[0]))
        torch.testing.assert_close(reduce_op.amin(x, dims), torch.amin(x, dims))
    elif op_name == "var":
        x = _three_dim_view(shape, view, torch.float32, device, gen)
        torch.testing.assert_close(reduce_op.var(x, dims), torch.var(x, dims))
        torch.testing.assert_close(reduce_op.std(x, dims, correction=0), torch.std(x, dims, correction=0))
    elif op_name == "int_sum":
        for dtype in (torch.int8, torch.int64, torch.bool):
            x = _three_dim_view(shape, view, dtype, device, gen)
            assert torch.equal(reduce_op.sum(x, dims), torch.sum(x, dims)), dtype
    else:  # a conjugate view: its bit is read, not its raw bytes alone
        x = _three_dim_view(shape, view, torch.complex64, device, gen).conj()
        torch.testing.assert_close(reduce_op.sum(x, dims), torch.sum(x, dims))
    if op_name == "sum" and device == "cpu":
        from torch.profiler import ProfilerActivity, profile

        x = _three_dim_view(shape, view, torch.float32, device, gen)
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            reduce_op.sum(x, dims)
        # The copy is the one tensor of the input's size made (two passes
        # make a smaller one, their partials).
        made = [math.prod(e.concrete_inputs[0]) for e in prof.events() if e.name == "aten::empty_strided"]
        assert (x.numel() in made) == packed, made


# Integer and bool inputs of float32 and float64 results (sum, mean and
# nansum with dtype=, logsumexp's default float result). Into float32, the
# kernels read them at their own width, each element converted as torch's
# cast would, so no cast of the input runs first; into float64, and for
# logsumexp on the CPU, they are cast first, as torch does.
# Sizes around the vector widths, rows, columns, a middle dim, strided and
# expanded views and a channels_last map; large int64 values whose float32
# conversions round.
INTEGER_TO_FLOAT_CASES = [
    # (shape, view, dims)
    ((1,), None, None), ((17,), None, None), ((4099,), None, None), (((1 << 20) + 5,), None, None),
    ((37, 1000), None, [1]), ((1000, 37), None, [0]), ((6, 129, 5), None, [1]), ((64, 3, 40), None, [0, 2]),
    ((40, 64), "t", [1]), ((40, 130), "step", [1]), ((300,), "expand", [0]), ((300,), "expand", [1]),
    ((4, 16, 9, 9), "channels_last", [2, 3]), ((0, 5), None, [0]),
]
INTEGER_TO_FLOAT_OPS = {
    "sum": (lambda x, d, t: reduce_op.sum(x, d, dtype=t), lambda x, d, t: torch.sum(x, d, dtype=t)),
    "mean": (lambda x, d, t: reduce_op.mean(x, d, dtype=t), lambda x, d, t: torch.mean(x, d, dtype=t)),
    "nansum": (lambda x, d, t: reduce_op.nansum(x, d, dtype=t), lambda x, d, t: torch.nansum(x, d, dtype=t)),
    # logsumexp computes integers in the default float dtype, or in an out= of float64
    "logsumexp": (lambda x, d, t: reduce_op.logsumexp(x, d, out=torch.empty(0, dtype=t, device=x.device)),
                  lambda x, d, t: torch.logsumexp(x, d, out=torch.empty(0, dtype=t, device=x.device))),
}


def _integer_input(shape, view, dtype, device, large, gen):
    if dtype == torch.bool:
        base = torch.rand(shape, generator=gen) < 0.5
    elif large:  # 2^40 and above: float32 rounds each conversion
        base = torch.randint(-(1 << 45), 1 << 45, shape, generator=gen, dtype=torch.int64)
    else:
        info = torch.iinfo(dtype)
        base = torch.randint(max(info.min, -100), min(info.max, 100) + 1, shape, generator=gen, dtype=torch.int64)
    x = base.to(dtype).to(device)
    if view == "t":
        return x.t()
    if view == "step":
        return x[:, ::2]
    if view == "expand":
        return x[:, None].expand(-1, 7)
    if view == "channels_last":
        return x.contiguous(memory_format=torch.channels_last)
    return x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(INTEGER_TO_FLOAT_CASES)))
@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64],
                         ids=str)
@pytest.mark.parametrize("op_name", sorted(INTEGER_TO_FLOAT_OPS))
def test_integer_inputs_of_float_results(op_name, dtype, case, device):
    shape, view, dims = INTEGER_TO_FLOAT_CASES[case]
    ours, ref = INTEGER_TO_FLOAT_OPS[op_name]
    gen = torch.Generator().manual_seed(case)
    for large in ([False, True] if dtype == torch.int64 else [False]):
        x = _integer_input(shape, view, dtype, device, large, gen)
        d = dims if dims is not None else list(range(x.dim()))
        for result in (torch.float32, torch.float64):
            got, want = ours(x, d, result), ref(x, d, result)
            assert got.dtype == want.dtype == result and got.shape == want.shape
            # float64 of the cast elements: the reference both results approximate
            exact = ref(x.to(result).cpu().double(), d, torch.float64)
            scale = ref(x.to(result).cpu().double().abs(), d, torch.float64) if op_name != "logsumexp" else exact.abs()
            eps = torch.finfo(result).eps
            allowed = 8 * eps * scale + 4 * eps * exact.abs() + torch.finfo(result).tiny
            assert torch.equal(torch.isnan(got.cpu()), torch.isnan(want.cpu()))
            assert torch.equal(got.cpu().isinf(), want.cpu().isinf())  # logsumexp over nothing: -inf
            err = (got.cpu().double() - exact).abs().nan_to_num(0)
            assert (err <= allowed.nan_to_num(0)).all(), (op_name, result, err.max().item())
        if x.numel() > 0 and (op_name != "logsumexp" or device == "cuda"):
            # no cast of the integers first (an aten copy) ...
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                ours(x, d, torch.float32)
            names = {e.name for e in prof.events()}
            assert not names & {"aten::_to_copy", "aten::copy_", "aten::to"}, names
            if device == "cuda":
                # ... and on CUDA our kernels alone
                names = cuda_kernels_run(lambda: ours(x, d, torch.float32))
                assert names and all("gpureduce" in n for n in names), names


# Small expanded inputs reduced over their repeats and a real dim are read
# as they are (reduce_plan.cpp); on the CPU their rows of stride 0 are one
# row, reduced once, its accumulator then combined with itself by doubling
# (run_rows). Repeat counts odd, even and powers of two, rows shorter and
# longer than a vector, with a kept dim and without; every op of the table,
# against torch's op in float64 (or complex128) rounded to the result's
# dtype: torch's float32 prod of [16] expanded to [16, 64] was 2.1% from
# the float64 one, ours 6e-6.
def _wide(x):
    return x.to(torch.complex128) if x.is_complex() else x.double() if x.is_floating_point() else x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op_name", sorted(OPS))
def test_kept_repeats_broadcast_into_the_output(op_name, device, gen):
    # Expanded inputs over 256 KB whose kept dims of stride 0 are reduced at
    # index 0 and broadcast into the output (on the CPU by a loop up to 4096
    # outputs, else a copy): one and two such dims, keepdim, and outputs on
    # both sides of 4096; every op, against torch's in float64.
    op = OPS[op_name]
    for dtype in op.dtypes:
        base = op.data((33486,), dtype, "contiguous", device, gen)
        rows = op.data((3, 1, 20000), dtype, "contiguous", device, gen)
        short = op.data((70,), dtype, "contiguous", device, gen)
        for x, d in ((base[:, None].expand(33486, 2), 0), (rows.expand(3, 5, 20000), 2),
                     (rows[:, :, None, :].expand(3, 2, 3, 20000), 3), (short[:, None].expand(70, 4100), 0)):
            for keepdim in (False, True):
                _check(op, lambda: op.ours_dim(x, d, keepdim),
                       lambda: op.ref_dim(_wide(x), d, keepdim).to(op.ref_dim(x, d, keepdim).dtype),
                       lambda: op.scale(x, d, keepdim))


@pytest.mark.parametrize("device", DEVICES)
def test_reductions_of_size_one_into_another_float_dtype(device, gen):
    # A reduction over dims of size 1 into another float dtype (dtype=) is
    # the fold by one of each element, x + 0, in one step: the same bits as
    # torch's, -0.0 giving +0.0, for sum and mean from every float dtype into
    # every other, contiguous and channels_last, above and below 16 KB.
    for src in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        for shape in ((5, 2048, 1, 1), (3, 7, 1, 1)):
            x = random_tensor(shape, src, device, gen)
            x.view(-1)[:4] = torch.tensor([-0.0, 0.0, float("inf"), float("nan")], dtype=src)
            for v in (x, x.contiguous(memory_format=torch.channels_last)):
                for result in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
                    for ours, theirs in ((reduce_op.sum, torch.sum), (reduce_op.mean, torch.mean)):
                        got, want = ours(v, [2, 3], keepdim=True, dtype=result), theirs(v, [2, 3], keepdim=True, dtype=result)
                        assert got.dtype == want.dtype and got.shape == want.shape
                        got, want = got.cpu(), want.cpu()
                        assert torch.equal(got.isnan(), want.isnan()), (src, result)
                        ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}[got.element_size()]
                        numbers = ~want.isnan()
                        assert torch.equal(got[numbers].view(ints), want[numbers].view(ints)), (src, result)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op_name", sorted(OPS))
def test_repeated_rows_of_expanded_inputs(op_name, device, gen):
    op = OPS[op_name]
    for dtype in op.dtypes:
        for n, k in [(13, 1024), (5, 3), (40, 63), (9, 2), (300, 7), (16, 64)]:
            if op_name == "prod" and k > 64:
                continue  # 1024 copies' products leave the normal range, where orders round apart
            base = op.data((n,), dtype, "contiguous", device, gen)
            kept = op.data((3, n), dtype, "contiguous", device, gen)[:, None].expand(3, k, n)
            for x in (base[:, None].expand(n, k), base[None].expand(k, n), kept):
                _check(op, lambda: op.ours_all(x), lambda: op.ref_all(_wide(x)).to(op.ref_all(x).dtype),
                       lambda: op.scale(x))
            for d in (1, 2):
                _check(op, lambda: op.ours_dim(kept, d, False),
                       lambda: op.ref_dim(_wide(kept), d, False).to(op.ref_dim(kept, d, False).dtype),
                       lambda: op.scale(kept, d, False))
