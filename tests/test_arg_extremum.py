"""gpureduce::argmax, argmin, max and min (of every element, and along a dim
with indices) against torch's, on the CPU and the GPU: every dtype, shape,
layout and dim of the shared axes; every kernel shape of the indexed pass
(groups of lanes sized to the row, split blocks, columns, split columns)
with NaN, infinities, signed zeros and ties; dim=None and keepdim; out=;
torch's errors; the benchmark's random cases; torch's own sample inputs;
the gradient; opcheck and torch.compile. Results are exact: the values are
inputs and the indices those of torch (the first occurrence, or the first
NaN)."""
from __future__ import annotations

import pytest
import torch
from torch.library import opcheck

import reduce_op
from axes import (DEVICES, DTYPES, HAS_CUDA, LAYOUTS, SHAPES, check_torch_samples, cuda_kernels_run, labelled,
                  make_layout, random_cases)

REAL = [d for d in DTYPES if not d.is_complex]
ARG = {"argmax": (reduce_op.argmax, torch.argmax), "argmin": (reduce_op.argmin, torch.argmin)}
WITH_INDICES = {"max": (reduce_op.max, torch.max), "min": (reduce_op.min, torch.min)}


def _same_values(ours: torch.Tensor, ref: torch.Tensor) -> None:
    """The same dtype, shape and bits, NaN where torch's is NaN."""
    assert ours.dtype == ref.dtype and ours.shape == ref.shape, (ours.dtype, ref.dtype, ours.shape, ref.shape)
    assert ours.device == ref.device
    o, r = ours.cpu(), ref.cpu()
    if r.dtype.is_floating_point:
        nan = torch.isnan(r)
        assert torch.equal(torch.isnan(o), nan), (o, r)
        o, r = o[~nan], r[~nan]
        # the same element: signed zeros too
        assert torch.equal(torch.signbit(o), torch.signbit(r)), (o, r)
    assert torch.equal(o, r), (o[o != r][:5], r[o != r][:5])


def _same_indices(ours: torch.Tensor, ref: torch.Tensor) -> None:
    assert ours.dtype == torch.int64 and ref.dtype == torch.int64
    assert ours.shape == ref.shape and ours.device == ref.device, (ours.shape, ref.shape)
    assert torch.equal(ours.cpu(), ref.cpu()), (ours.cpu().flatten()[:8], ref.cpu().flatten()[:8])


def _check_all_forms(x: torch.Tensor, dim, keepdim: bool) -> None:
    """argmax, argmin, max.dim and min.dim (or, with dim None, argmax and
    argmin flattened and max and min of every element) against torch's,
    or an error of the same type where torch raises."""
    for name, (ours, theirs) in {**ARG, **WITH_INDICES}.items():
        if dim is None and name in WITH_INDICES:
            call_ours, call_theirs = (lambda f: f(x)), (lambda f: f(x))
        else:
            call_ours = call_theirs = (lambda f: f(x, dim, keepdim))
        try:
            ref = call_theirs(theirs)
        except Exception as e:  # noqa: BLE001 - compared by type
            with pytest.raises(type(e)):
                call_ours(ours)
            continue
        got = call_ours(ours)
        if isinstance(ref, tuple):
            assert type(got) is type(ref)
            _same_values(got.values, ref.values)
            _same_indices(got.indices, ref.indices)
        elif name in ARG:
            _same_indices(got, ref)
        else:
            _same_values(got, ref)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_indexed_matches_torch(shape, layout, device, gen):
    for dtype in REAL:
        x = make_layout(shape, dtype, layout, device, gen)
        _check_all_forms(x, None, False)
        _check_all_forms(x, None, True)
        for d in range(-x.dim(), max(x.dim(), 1)):
            for keepdim in (False, True):
                _check_all_forms(x, d, keepdim)


def _special(x: torch.Tensor, gen: torch.Generator, nan: bool) -> torch.Tensor:
    """x with NaN (one in 500), +-inf, +-0.0 and repeated values (ties), or
    integer extremes (ties too)."""
    u = torch.rand(x.shape, generator=gen)
    if x.dtype.is_floating_point:
        if nan:
            x[u < 0.002] = float("nan")
        x[(u >= 0.01) & (u < 0.011)] = float("inf")
        x[(u >= 0.02) & (u < 0.021)] = float("-inf")
        x[(u >= 0.03) & (u < 0.04)] = 0.0
        x[(u >= 0.04) & (u < 0.05)] = -0.0
        x[(u >= 0.05) & (u < 0.07)] = 3.0
        x[(u >= 0.07) & (u < 0.09)] = -3.0
    elif x.dtype != torch.bool:
        info = torch.iinfo(x.dtype)
        x[u < 0.01] = info.max
        x[(u >= 0.01) & (u < 0.02)] = info.min
    return x


# Shapes that reach every kernel shape on the GPU: rows of 1 to 32 vectors
# (groups of 1 to 32 lanes), long rows few enough for split blocks (a full
# reduction of 2^20 + 7, 3 rows of 100001), columns of many outputs, of few
# outputs and many rows (split columns, more row threads than 8), columns
# of a dense inner dim read several outputs a load (and, in the views one
# element off, one), a middle dim, and sizes around the vector widths;
# columns of a few rows a thread, with a partial last batch, in a pass too
# small for vectors ([15, 7, 256], [6, 23, 640]) and in one large enough
# ([24, 80, 512]), and of a short walk each ([5000, 3, 7]).
CASES = [((1 << 20) + 7, None), (4097, None), ((300, 1001), 1), ((4096, 16), 1), ((64, 8192), 1),
         ((1000, 3), 1), ((5000, 1), 1), ((100003, 16), 0), ((3, 100001), 1), ((8192, 257), 0),
         ((16, 64, 40), 1), ((7, 9, 11, 13), 2), ((2, 300016), 0), ((20, 33, 130), 2), ((3, 50000, 4), 1),
         ((5, 200000, 2), 1), ((64, 48, 32), 1), ((9, 300, 256), 0), ((15, 7, 256), 1), ((6, 23, 640), 1),
         ((24, 80, 512), 1), ((5000, 3, 7), 1)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8,
                                   torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool], ids=str)
def test_indexed_kernel_shapes(dtype, case, device, gen):
    shape, dim = CASES[case]
    shape = shape if isinstance(shape, tuple) else (shape,)
    if device == "cpu" and torch.Size(shape).numel() > 1 << 18:
        shape = tuple(min(s, 257) for s in shape)
    if dtype == torch.bool:
        x = torch.rand(shape, generator=gen) > 0.9
    elif dtype.is_floating_point:
        x = torch.randn(shape, generator=gen).to(dtype)
    else:
        x = torch.randint(-20 if dtype != torch.uint8 else 0, 20, shape, generator=gen).to(dtype)
    x = _special(x, gen, nan=case % 2 == 0).to(device)
    views = [x, x[..., 1:] if x.shape[-1] > 2 else x, x[..., ::2]]
    if x.dim() >= 2:
        views.append(x.transpose(0, -1))
    for xs in views:
        d = dim if dim is not None else None
        if d is not None and d >= xs.dim():
            d = xs.dim() - 1
        with labelled(f"{tuple(xs.shape)} {xs.stride()} dim={d}"):
            _check_all_forms(xs, d, False)
            if d is not None:
                first = reduce_op.max(xs, d)
                again = reduce_op.max(xs, d)  # the same bits on every run
                assert torch.equal(first.indices, again.indices)


# Rows whose groups' lanes walk at most two batches of four loads (the
# short walk: the row's extreme, then its first position) and rows just
# past that (the long walk), for each width of element: in passes of 1 MB
# and more (4 loads a lane or more) and under (a load a lane), dense and one
# element off; rows of three vectors one element off, whose head and tail
# are more elements than their group's two lanes; on CUDA, which of the two
# kernels ran.
SHORT_ROWS = {1: (4096, 4112), 2: (2048, 2056), 4: (1024, 1028), 8: (512, 514)}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8,
                                   torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool], ids=str)
def test_indexed_short_rows(dtype, device, gen):
    size = dtype.itemsize
    short, long_ = SHORT_ROWS[size]
    cases = [(short, True), (long_, False)]
    for n, short_walk in cases:
        for rows in ((1 << 20) // (n * size) + 3, 5):
            if device == "cpu" and rows > 5:
                rows = 40
            if dtype == torch.bool:
                x = torch.rand(rows, n, generator=gen) > 0.95
            elif dtype.is_floating_point:
                x = torch.randn(rows, n, generator=gen).to(dtype)
            else:
                x = torch.randint(-50 if dtype != torch.uint8 else 0, 50, (rows, n), generator=gen).to(dtype)
            x = _special(x, gen, nan=(rows > 5) == short_walk).to(device)
            for xs in (x, x[:, 1:], x[:, 3:-2], x[:, : n // 8 + 1]):
                with labelled(f"{tuple(xs.shape)} {xs.stride()}"):
                    _check_all_forms(xs, 1, False)
            if device == "cuda" and rows > 5:
                names = cuda_kernels_run(lambda: reduce_op.max(x, 1))  # (argmax refuses bool)
                groups = [k for k in names if "indexed_rows_groups" in k]
                assert len(groups) == 1, names
                kshort = groups[0].split("(")[0].rstrip(">").rsplit(",", 1)[1].strip()
                assert kshort == ("true" if short_walk else "false"), groups
    vec = 16 // size
    x = torch.randint(0, 2, (300, 3 * vec + 1), generator=gen).to(dtype)
    x = _special(x, gen, nan=True).to(device)[:, 1:]
    _check_all_forms(x, 1, False)


# Rows of 4- and 8-byte elements in passes of 1 MB and more whose groups'
# lanes take 16 loads or more (kGroupLoadsPerLaneWide): 8-byte rows of 64 to
# 600 walked the long way by groups of 2 to 16 lanes; 4-byte rows of whole
# short walks (8 loads a lane: 32 to 512 elements, groups of 1 to 16) and
# of 64 loads or more (300 to 1017). Dense, one element off (a head and
# tail of single elements) and with NaN in some rows; on CUDA, the walk the
# groups kernel takes (kShort) for the rows named in WIDE_LANES_WALKS. On
# the CPU, a few rows of each.
WIDE_LANES_WIDTHS = {8: (64, 100, 130, 384, 600), 4: (32, 64, 128, 256, 512, 300, 384, 498, 1017)}
WIDE_LANES_WALKS = {8: {64: "false", 384: "false"}, 4: {384: "false", 512: "true"}}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.int64, torch.float32, torch.int32], ids=str)
def test_indexed_rows_of_wide_lanes(dtype, device, gen):
    size = dtype.itemsize
    for n in WIDE_LANES_WIDTHS[size]:
        rows = (70000 if size == 4 and n <= 64 else 34000) if device == "cuda" else 7
        if dtype.is_floating_point:
            x = torch.randn(rows, n, generator=gen, dtype=dtype)
        else:
            bound = 2**40 if size == 8 else 2**30
            x = torch.randint(-bound, bound, (rows, n), generator=gen, dtype=dtype)
        x = _special(x, gen, nan=n % 2 == 0).to(device)
        for xs in (x, x[:, 1:], x[:, 1:-1]):
            with labelled(f"{tuple(xs.shape)} {xs.stride()} {dtype}"):
                _check_all_forms(xs, 1, False)
        if device == "cuda" and n in WIDE_LANES_WALKS[size]:
            names = cuda_kernels_run(lambda: reduce_op.max(x, 1))
            groups = [k for k in names if "indexed_rows_groups" in k]
            assert len(groups) == 1, names
            kshort = groups[0].split("(")[0].rstrip(">").rsplit(",", 1)[1].strip()
            assert kshort == WIDE_LANES_WALKS[size][n], groups


# Columns of few tiles (fewer than the CPU's threads) whose rows the CPU key
# splits into chunks, a task each, merged by combine: one tile of 8 columns,
# one of 3 (a reduced outer dim), two tiles, with 1 to 3 threads (one
# thread: no split).
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_indexed_columns_split_rows(threads, device, gen):
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for shape, dim in (((1, 19681, 8), 1), ((30001, 3), 0), ((2, 40000, 5), 1)):
            # (values drawn wide, so that a column's extreme lies in any
            # chunk, not in the first with many ties; then ties and NaN)
            cases = [torch.randn(shape, generator=gen), torch.randn(shape, generator=gen).bfloat16(),
                     torch.randint(-30000, 30000, shape, generator=gen).to(torch.int16),
                     _special(torch.randn(shape, generator=gen), gen, nan=True)]
            for x in cases:
                with labelled(f"{shape} {x.dtype} dim={dim} threads={threads}"):
                    _check_all_forms(x.to(device), dim, False)
    finally:
        torch.set_num_threads(before)


# Dims of one element a slice: size 1 (as the last dim, a middle one and
# the first, of contiguous and channels_last inputs) and stride 0 (an
# expanded dim). The CUDA key runs max.dim and min.dim over small ones as
# a pass of one element an output (one launch), over the rest (from 256 KB,
# and channels_last maps whose outputs it would stage) a fill and a copy;
# argmax fills its zeros.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64, torch.uint8, torch.int64, torch.bool],
                         ids=str)
def test_indexed_single_element_slices(dtype, device, gen):
    def make(shape):
        if dtype == torch.bool:
            return torch.rand(shape, generator=gen) > 0.5
        if dtype.is_floating_point:
            return _special(torch.randn(shape, generator=gen).to(dtype), gen, nan=True)
        return torch.randint(0, 100, shape, generator=gen).to(dtype)

    cases = [(make((5593, 1, 3)), 1), (make((700, 1)), 1), (make((1, 64, 5, 5)), 0),
             (make((3, 2, 1, 1)).contiguous(memory_format=torch.channels_last), 2),
             (make((1, 384, 14, 14)).contiguous(memory_format=torch.channels_last), 0),
             (make((2000,))[:, None].expand(-1, 7), 1), (make((300,))[None].expand(5, -1), 0)]
    for x, dim in cases:
        x = x.to(device)
        for keepdim in (False, True):
            with labelled(f"{tuple(x.shape)} {x.stride()} dim={dim} keepdim={keepdim}"):
                _check_all_forms(x, dim, keepdim)
        ref = torch.min(x, dim)
        vals = torch.empty(ref.values.numel() + 1, dtype=dtype, device=device)[1:].view(ref.values.shape)
        idx = torch.full(ref.indices.shape, 7, dtype=torch.long, device=device)
        reduce_op.min(x, dim, out=(vals, idx))
        _same_values(vals, ref.values)
        _same_indices(idx, ref.indices)
    if device == "cuda":
        x = cases[0][0].to(device)
        names = cuda_kernels_run(lambda: reduce_op.max(x, 1))
        assert any("indexed_" in k for k in names), names
        assert not any("copy" in k.lower() or "fill" in k.lower() for k in names), names


def _fresh_and_shifted(shape, dtype, device, gen):
    """Small integers (floats with NaN and infinities among them; bool
    mostly False) of `shape` on `device`: a fresh tensor, and the same
    values one element into their storage (no 16-byte alignment)."""
    if dtype == torch.bool:
        base = torch.rand(shape, generator=gen) < 0.1
    elif dtype.is_floating_point:
        base = _special((torch.randn(shape, generator=gen) * 4).round().to(dtype), gen, nan=True)
    else:
        base = _special(torch.randint(-9, 9, shape, generator=gen).to(dtype), gen, nan=False)
    shifted = torch.empty(base.numel() + 1, dtype=dtype)
    shifted[1:] = base.flatten()
    return base.to(device), shifted.to(device)[1:].view(shape)


def _check_fresh_and_shifted(base, shifted):
    for label, x in (("fresh", base), ("one element in", shifted)):
        with labelled(f"{tuple(x.shape)} {x.dtype} {label}"):
            _check_all_forms(x, 1, False)


# Columns of few outputs and a few hundred rows or more, and a few long rows:
# the CUDA key splits their rows among up to 8 blocks of a cluster, which
# combine their states in it (no finish kernel); more blocks, through
# partials and a finish. Columns of an element a thread and of vectors
# (whose states merge in rounds where the block has many columns), rows in
# blocks.
@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [((60, 334, 7), torch.bfloat16), ((961, 328, 15), torch.int32),
                                  ((1, 3642, 3), torch.float32), ((2, 1390, 3), torch.float16),
                                  ((341, 477, 15), torch.float64), ((3, 20000, 5), torch.float32),
                                  ((49, 128, 1024), torch.uint8), ((8, 512, 4096), torch.float32),
                                  ((2, 3000, 2048), torch.bfloat16), ((84, 8192), torch.int64),
                                  ((12, 8193), torch.float16), ((30, 20000), torch.float32)], ids=str)
def test_indexed_split_in_cluster(case, device, gen):
    shape, dtype = case
    x = torch.randn(shape, generator=gen) if dtype.is_floating_point else torch.randint(-9, 9, shape, generator=gen)
    x = x.to(dtype)
    if dtype.is_floating_point:
        x = _special(x, gen, nan=True)
    x = x.to(device)
    for keepdim in (False, True):
        with labelled(f"{shape} {dtype} dim=1 keepdim={keepdim}"):
            _check_all_forms(x, 1, keepdim)
    if device == "cuda" and shape in ((60, 334, 7), (49, 128, 1024), (84, 8192)):
        names = cuda_kernels_run(lambda: reduce_op.max(x, 1))
        kernel = "indexed_rows_blocks" if len(shape) == 2 else "indexed_columns_vec" if shape[2] == 1024 else "indexed_columns"
        assert any(kernel in k for k in names), names
        assert not any("indexed_finish" in k for k in names), names


# Dense columns that no 16- or 8-byte vector fits but a 4-byte one does
# (16-bit columns of 2 mod 4, bytes of 4 mod 8), too wide for the tiles: the
# CUDA key reads them two or four columns a thread. One element into their
# storage, an element a thread.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [((40, 17, 4094), torch.bfloat16), ((9, 40, 2050), torch.float16),
                                  ((100, 6, 1030), torch.int16), ((300, 8, 1028), torch.uint8),
                                  ((64, 5, 4100), torch.int8), ((100, 9, 1292), torch.bool)], ids=str)
def test_indexed_narrow_column_vectors(case, device, gen):
    shape, dtype = case
    base, shifted = _fresh_and_shifted(shape, dtype, device, gen)
    _check_fresh_and_shifted(base, shifted)
    if device == "cuda":
        names = cuda_kernels_run(lambda: reduce_op.min(base, 1))
        assert any("indexed_columns_vec" in k for k in names), names


# Dense planes of columns that no vector fits ([O, R, C] over dim 1, C odd
# or not a whole vector), from 256 KB: the CUDA key reads them through
# tiles in shared memory, a tile of whole planes with an output a thread
# (many planes) or a few threads an output (few planes), or a plane a
# block in tiles of rows (planes larger than a tile). The views start one
# element into their storage, so that no tile starts on a 16-byte boundary.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [((20000, 3, 7), torch.float32), ((250, 30, 127), torch.int16),
                                  ((600, 100, 127), torch.bfloat16), ((600, 19, 127), torch.float64),
                                  ((30000, 2, 12), torch.uint8), ((70000, 3, 5), torch.bool),
                                  ((9000, 4, 9), torch.int64)], ids=str)
def test_indexed_dense_planes_of_columns(case, device, gen):
    shape, dtype = case
    base, shifted = _fresh_and_shifted(shape, dtype, device, gen)
    _check_fresh_and_shifted(base, shifted)
    if device == "cuda":
        names = cuda_kernels_run(lambda: reduce_op.min(shifted, 1))
        assert any("indexed_dense_tiles" in k for k in names), names


# Columns of a dense inner dim a 16-byte vector divides, few rows an output,
# many outputs: the CUDA key's vector columns kernel stores each thread's
# results in 16-byte stores where the outputs are aligned to them, else an
# element at a time. out= tensors one element into their storage take the
# second way; a fresh result the first.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8,
                                   torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool], ids=str)
def test_indexed_columns_result_stores(dtype, device, gen):
    vec = 16 // dtype.itemsize if dtype.itemsize > 1 else 8
    # (on CUDA, 1.5 MB: smaller passes are bound by latency and read an
    # output a thread)
    rows = (3 << 19) // (6 * vec * dtype.itemsize) if device == "cuda" else 64
    shape = (rows, 3, 2 * vec)
    if dtype == torch.bool:
        x = torch.rand(shape, generator=gen) > 0.7
    elif dtype.is_floating_point:
        x = torch.randn(shape, generator=gen).to(dtype)
    else:
        x = torch.randint(0 if dtype == torch.uint8 else -3, 3, shape, generator=gen).to(dtype)
    x = _special(x, gen, nan=True).to(device) if dtype.is_floating_point else x.to(device)
    with labelled(f"{shape} {dtype} dim=1"):
        _check_all_forms(x, 1, False)
        ref = torch.max(x, 1)
        for offset in (0, 1):
            vals = torch.empty(rows * 2 * vec + offset, dtype=dtype, device=device)[offset:].view(rows, 2 * vec)
            idx = torch.empty(rows * 2 * vec + offset, dtype=torch.long, device=device)[offset:].view(rows, 2 * vec)
            got = reduce_op.max(x, 1, out=(vals, idx))
            assert got[0].data_ptr() == vals.data_ptr() and got[1].data_ptr() == idx.data_ptr()
            _same_values(vals, ref.values)
            _same_indices(idx, ref.indices)
    if device == "cuda":
        names = cuda_kernels_run(lambda: reduce_op.max(x, 1))
        assert any("indexed_columns_vec" in k for k in names), names


# channels_last feature maps over H: the outputs of neighbouring channels lie
# W apart in the result. The CUDA key writes them there directly where W is
# small (2, 3) and through a scratch tensor and a copy where it is not (4,
# 7), from 2^16 outputs; fewer outputs are written directly at any W.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(1100, 32, 3, 2), (700, 32, 2, 3), (600, 32, 3, 4), (300, 32, 2, 7), (9, 32, 3, 7)],
                         ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=str)
def test_indexed_channels_last_outputs(shape, dtype, device, gen):
    x = torch.randn(shape, generator=gen) if dtype.is_floating_point else torch.randint(-9, 9, shape, generator=gen)
    x = _special(x.to(dtype), gen, nan=True).to(device).contiguous(memory_format=torch.channels_last)
    for d in (1, 2, 3):
        for keepdim in (False, True):
            with labelled(f"{tuple(x.shape)} channels_last dim={d} keepdim={keepdim}"):
                _check_all_forms(x, d, keepdim)


# channels_last feature maps over N or H, whose neighbouring channels' outputs
# lie a plane or a row apart: the CUDA key numbers the outputs in tiles of a
# few channels by a run along W (cuda/indexed_cuda.cpp), whatever divides
# C and W (8 x 4, 3 x 7, 6 x 5, ...), or, where no tile pays, stages them.
# The tiles change which thread takes which output, not the results.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [((3, 128, 32, 32), 0), ((2, 96, 28, 28), 0), ((2, 96, 28, 28), 2),
                                  ((4, 3, 20, 7), 0), ((2, 12, 9, 35), 0), ((5, 40, 6, 5), 2), ((1, 64, 3, 31), 2),
                                  ((2, 33, 13, 17), 0)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.uint8, torch.float64], ids=str)
def test_indexed_scattered_outputs(case, dtype, device, gen):
    shape, d = case
    x = torch.randn(shape, generator=gen) if dtype.is_floating_point else torch.randint(0, 9, shape, generator=gen)
    x = _special(x.to(dtype), gen, nan=dtype.is_floating_point).to(device).contiguous(memory_format=torch.channels_last)
    for keepdim in (False, True):
        with labelled(f"{tuple(x.shape)} {dtype} channels_last dim={d} keepdim={keepdim}"):
            _check_all_forms(x, d, keepdim)
    if device == "cuda" and shape == (2, 96, 28, 28) and d == 0:
        # 150528 outputs a plane apart: a tile of 8 channels by 4 of W, not a scratch and a copy
        kernels = [k for k in cuda_kernels_run(lambda: reduce_op.max(x, d)) if k.startswith("void ")]
        assert len(kernels) == 1 and "indexed_columns" in kernels[0], kernels


# Transposed inputs whose innermost kept dim (in memory) is a few elements
# a plane apart in the result: with 8 or fewer there, the pass's own order
# stores each warp's indices in whole sectors, and the CUDA key writes them
# directly for elements of 2 bytes or more (a scratch and a copy for bytes,
# and from 16 there). The same results either way.
@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [((2, 6000, 20, 8), 3), ((3, 9000, 10, 4), 3), ((3, 4000, 30, 2), 3),
                                  ((2, 3000, 20, 16), 3), ((5, 3000, 16, 4), 2)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.uint8, torch.int64], ids=str)
def test_indexed_transposed_outputs(case, dtype, device, gen):
    shape, d = case
    x = torch.randn(shape, generator=gen) if dtype.is_floating_point else torch.randint(0, 9, shape, generator=gen)
    x = _special(x.to(dtype), gen, nan=dtype.is_floating_point).to(device).transpose(0, 3)
    for keepdim in (False, True):
        with labelled(f"{tuple(shape)}.transpose(0, 3) {dtype} dim={d} keepdim={keepdim}"):
            _check_all_forms(x, d, keepdim)
    if device == "cuda" and shape == (2, 6000, 20, 8):
        kernels = [k for k in cuda_kernels_run(lambda: reduce_op.max(x, d)) if k.startswith("void ")]
        direct = dtype.itemsize >= 2  # (bytes: the kernel into a scratch, then copies)
        assert (len(kernels) == 1) == direct and any("indexed_columns" in k for k in kernels), kernels


# Transposed inputs reduced over their innermost dim: rows of 2 to 16
# elements whose neighbours' results lie a plane apart. On the CUDA key
# max.dim and min.dim of the first two take them in the result's order
# (their values and indices two scattered sectors an output otherwise);
# the others, and argmax and argmin, in the input's. The same results
# either way.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [((3000, 47, 3), torch.int32), ((2000, 64, 2), torch.int64),
                                  ((1500, 12, 8), torch.bfloat16), ((900, 5, 16), torch.uint8),
                                  ((700, 9, 5), torch.float32), ((500, 13, 4), torch.float64)], ids=str)
def test_indexed_rows_of_scattered_outputs(case, device, gen):
    shape, dtype = case
    x = torch.randn(shape, generator=gen) if dtype.is_floating_point else torch.randint(0, 9, shape, generator=gen)
    x = _special(x.to(dtype), gen, nan=dtype.is_floating_point).to(device).transpose(0, 2)
    for keepdim in (False, True):
        with labelled(f"{shape}.transpose(0, 2) {dtype} dim=0 keepdim={keepdim}"):
            _check_all_forms(x, 0, keepdim)
    if device == "cuda":
        kernels = [k for k in cuda_kernels_run(lambda: reduce_op.max(x, 0)) if k.startswith("void ")]
        assert len(kernels) == 1 and "indexed_rows" in kernels[0], kernels


@pytest.mark.parametrize("device", DEVICES)
def test_indexed_nan_ties_and_extremes(device):
    nan, inf = float("nan"), float("inf")
    rows = torch.tensor([[1.0, nan, 3.0, nan], [nan, nan, nan, nan], [-inf, inf, 0.0, inf], [2.0, 2.0, -2.0, -2.0],
                         [-0.0, 0.0, -0.0, 0.0], [0.0, -0.0, 0.0, -0.0], [inf, inf, inf, inf],
                         [-inf, -inf, -inf, -inf]], device=device)
    for dt in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        x = rows.to(dt)
        for dim in (0, 1, -1):
            _check_all_forms(x, dim, False)
        for r in x:
            _check_all_forms(r, None, False)
    # every element the same: index 0, for rows of every kernel's width
    for n in (1, 2, 15, 16, 17, 1000, 9000, 100000):
        for dt in (torch.float32, torch.int8, torch.bool):
            x = torch.full((3, n), 5 if dt != torch.bool else True, dtype=dt, device=device)
            _check_all_forms(x, 1, False)
            _check_all_forms(x.t(), 0, True)
            _check_all_forms(x, None, False)
    # the extreme at the last position of a long row, and a NaN after it
    x = torch.randn(2, 70001, device=device)
    x[0, -1] = 100.0
    x[1, -2], x[1, -1] = 100.0, nan
    _check_all_forms(x, 1, False)
    # integer lowest and largest, where an identity of the type's range could win
    for dt in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64):
        info = torch.iinfo(dt)
        x = torch.tensor([[info.min, info.min, info.min], [info.max, info.max, info.min]], dtype=dt, device=device)
        _check_all_forms(x, 1, False)
        _check_all_forms(x, None, False)


@pytest.mark.parametrize("device", DEVICES)
def test_indexed_out_and_results(device, gen):
    x = torch.randn(4, 5, 6, generator=gen).to(device)
    out = torch.empty(7, dtype=torch.long, device=device)
    assert reduce_op.argmax(x, 1, out=out) is out  # resized, as torch does
    _same_indices(out, torch.argmax(x, 1))
    wide = torch.empty(4, 12, dtype=torch.long, device=device)[:, ::2]  # not contiguous: written through a copy
    reduce_op.argmin(x, 1, out=wide)
    _same_indices(wide, torch.argmin(x, 1))
    v, i = torch.empty(0, device=device), torch.empty(0, dtype=torch.long, device=device)
    r = reduce_op.max(x, 2, True, out=(v, i))
    assert type(r) is torch.return_types.max_out and r.values is v and r.indices is i
    ref = torch.max(x, 2, True)
    _same_values(v, ref.values)
    _same_indices(i, ref.indices)
    r = reduce_op.min(x, -1)
    assert type(r) is torch.return_types.min
    ref = torch.min(x, -1)
    _same_values(r.values, ref.values)
    _same_indices(r.indices, ref.indices)
    # dim=None flattens; keepdim keeps every dim, of size 1
    for keepdim in (False, True):
        _same_indices(reduce_op.argmax(x.transpose(0, 2), keepdim=keepdim),
                      torch.argmax(x.transpose(0, 2), keepdim=keepdim))
    s = torch.tensor(2.5, device=device)
    for dim in (0, -1):
        _check_all_forms(s, dim, True)
        _check_all_forms(s, dim, False)
    _same_indices(reduce_op.argmax(torch.empty(0, 3, device=device), 1), torch.argmax(torch.empty(0, 3), 1).to(device))
    e = reduce_op.max(torch.empty(0, 3, device=device), 1)
    assert e.values.shape == (0,) and e.indices.shape == (0,)
    # a numpy-style integer dim
    _same_indices(reduce_op.argmax(x, torch.tensor(1)), torch.argmax(x, 1))


@pytest.mark.parametrize("device", DEVICES)
def test_indexed_errors(device, gen):
    x = torch.randn(3, 4, generator=gen).to(device)
    e = torch.empty(3, 0, device=device)
    for name in ("argmax", "argmin"):
        op = getattr(torch.ops.gpureduce, name)
        with pytest.raises(IndexError, match=rf"{name}\(\): Expected reduction dim 1 to have non-zero size"):
            op(e, 1)
        with pytest.raises(IndexError, match=rf"{name}\(\): Expected reduction dim to be specified for input.numel"):
            op(torch.empty(0, device=device))
        with pytest.raises(RuntimeError, match=rf"{name}\(\): does not support bool input"):
            op(x > 0)
        with pytest.raises(RuntimeError, match=rf"{name}\(\): does not support complex input"):
            op(x.to(torch.complex64), 0)
        with pytest.raises(NotImplementedError, match=f"{name}_{device}"):
            op(x.to(torch.float8_e4m3fn), 0)
        with pytest.raises(NotImplementedError, match=f"{name}_{device}"):
            op(torch.ones(3, dtype=torch.uint16, device=device), 0)
        with pytest.raises(IndexError, match="Dimension out of range"):
            op(x, 2)
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype long int, but got int instead"):
            op.out(x, 1, out=torch.empty(3, dtype=torch.int32, device=device))
    for name in ("max", "min"):
        op = getattr(torch.ops.gpureduce, name)
        with pytest.raises(IndexError, match=rf"{name}\(\): Expected reduction dim 1 to have non-zero size"):
            op.dim(e, 1)
        with pytest.raises(RuntimeError, match=rf"{name}\(\): Expected reduction dim to be specified for input.numel"):
            op(e)
        with pytest.raises(RuntimeError, match=rf"{name}\(\): does not support complex input"):
            op.dim(x.to(torch.complex64), 0)
        with pytest.raises(NotImplementedError, match=f"{name}_all"):
            op(x.to(torch.complex64))
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
            getattr(reduce_op, name)(x, 1, out=(torch.empty(3, dtype=torch.float64, device=device),
                                                torch.empty(3, dtype=torch.long, device=device)))
        with pytest.raises(IndexError, match="Dimension out of range"):
            op.dim(x, -3)
    # the meta kernels' shapes and dtypes
    m = torch.empty(2, 3, 4, device="meta", dtype=torch.bfloat16)
    assert torch.ops.gpureduce.argmax(m, 1, True).shape == (2, 1, 4)
    assert torch.ops.gpureduce.argmax(m).shape == ()
    v, i = torch.ops.gpureduce.max.dim(m, -1)
    assert v.shape == (2, 3) and v.dtype == torch.bfloat16 and i.dtype == torch.int64
    assert torch.ops.gpureduce.min(m).shape == ()


# The benchmark's random sampler (shapes, views; the first of each case's
# dims, or None): results equal to torch's.
@pytest.mark.parametrize("device,seed,n,max_bytes", [("cpu", 7, 60, 1 << 16)] + (
    [("cuda", s, 200, 1 << 25) for s in (41, 42)] if HAS_CUDA else []))
def test_indexed_random_cases(device, seed, n, max_bytes):
    for label, x, kw in random_cases(device, seed, n, max_bytes):
        if x.dtype.is_complex or x.numel() == 0:
            continue
        dim = kw.get("dim")
        if isinstance(dim, (list, tuple)):
            dim = dim[0] if len(dim) else None
        with labelled(label):
            _check_all_forms(x, dim, kw.get("keepdim", False))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,variant", [("argmax", ""), ("argmin", ""), ("max", "reduction_with_dim"),
                                          ("max", "reduction_no_dim"), ("min", "reduction_with_dim"),
                                          ("min", "reduction_no_dim")])
def test_indexed_on_torchs_samples(name, variant, device):
    pytest.importorskip("expecttest")
    ours = getattr(reduce_op, name)
    theirs = getattr(torch, name)

    def check(o, t, s):
        if isinstance(t, tuple):
            _same_values(o.values, t.values)
            _same_indices(o.indices, t.indices)
        elif t.dtype == torch.int64 and name.startswith("arg"):
            _same_indices(o, t)
        else:
            _same_values(o, t)

    assert check_torch_samples(name, ours, theirs, device, check, variant=variant) > 0


# max.dim's gradient goes to the element its index names (ties: the first),
# max()'s is split evenly among ties (among NaNs where the result is NaN),
# both as torch's; gradcheck and gradgradcheck in float64; node names;
# out= refuses to differentiate; argmax of an input that needs a gradient.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(WITH_INDICES))
def test_indexed_autograd(name, device, gen):
    ours_fn, theirs_fn = WITH_INDICES[name]
    x = torch.randn(4, 6, dtype=torch.float64, generator=gen).to(device)
    x[1, 1] = x[1, 4] = 9.0 if name == "max" else -9.0
    x[3, 2] = float("nan")
    for dim, keepdim in ((1, False), (0, True), (-1, True)):
        a, b = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        ours, theirs = ours_fn(a, dim, keepdim), theirs_fn(b, dim, keepdim)
        grad = torch.randn(theirs.values.shape, dtype=torch.float64, generator=gen).to(device)
        (g_ours,) = torch.autograd.grad(ours.values, a, grad)
        (g_theirs,) = torch.autograd.grad(theirs.values, b, grad)
        assert torch.equal(g_ours, g_theirs)
        assert not ours.indices.requires_grad
        assert ours.values.grad_fn.name() == ("GpureduceMaxBackward1" if name == "max" else "GpureduceMinBackward1")
    for t in (x, x[:3], torch.full((2, 3), 4.0, dtype=torch.float64, device=device)):
        a, b = t.clone().requires_grad_(True), t.clone().requires_grad_(True)
        (g_ours,) = torch.autograd.grad(ours_fn(a), a)
        (g_theirs,) = torch.autograd.grad(theirs_fn(b), b)
        torch.testing.assert_close(g_ours, g_theirs, equal_nan=True, rtol=1e-15, atol=0)
    clean = torch.randn(3, 5, dtype=torch.float64, generator=gen).to(device).requires_grad_(True)
    torch.autograd.gradcheck(lambda t: ours_fn(t, 1).values, (clean,))
    torch.autograd.gradgradcheck(lambda t: ours_fn(t, 0, True).values, (clean,))
    torch.autograd.gradcheck(lambda t: ours_fn(t), (clean,))
    torch.autograd.gradgradcheck(lambda t: ours_fn(t), (clean,))
    y = torch.randn(3, 4, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        ours_fn(y, 1, out=(torch.empty(3, device=device), torch.empty(3, dtype=torch.long, device=device)))
    idx = reduce_op.argmax(y, 1)
    assert not idx.requires_grad and torch.equal(idx, torch.argmax(y, 1))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_indexed_opcheck(device, gen):
    a = torch.randn(3, 5, 4, generator=gen).to(device)
    b = torch.randn(3, 5, 4, generator=gen).to(device).requires_grad_(True)
    ops = torch.ops.gpureduce
    for arg in (ops.argmax, ops.argmin):
        opcheck(arg.default, (a,))
        opcheck(arg.default, (a, 1, True))
        opcheck(arg.default, (a.to(torch.int16), -1))
        opcheck(arg.out, (a, 2, False), {"out": torch.empty(3, 5, dtype=torch.long, device=device)})
    for name in ("max", "min"):
        op = getattr(ops, name)
        opcheck(op.default, (b,))
        opcheck(op.dim, (b, 1))
        opcheck(op.dim, (a.to(torch.uint8), 0, True))
        kw = ({"max": torch.empty(3, 4, device=device), "max_values": torch.empty(3, 4, dtype=torch.long,
                                                                                   device=device)}
              if name == "max" else
              {"min": torch.empty(3, 4, device=device), "min_indices": torch.empty(3, 4, dtype=torch.long,
                                                                                   device=device)})
        opcheck(getattr(op, f"dim_{name}"), (a, 1, False), kw)
        opcheck(op.unary_out, (a,), {"out": torch.empty((), device=device)})
        opcheck(op.unary_out, (a.to(torch.int16),), {"out": torch.empty((), dtype=torch.float64, device=device)})


# torch.compile with fullgraph, static and dynamic shapes, forward and
# backward, against eager.
@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_indexed_compile(device, dynamic):
    torch._dynamo.reset()

    def f(x):
        values, indices = torch.ops.gpureduce.max.dim(x * 2, 1, False)
        return values + torch.ops.gpureduce.argmin(x, 1).to(x.dtype) + torch.ops.gpureduce.min(x)

    compiled = torch.compile(f, fullgraph=True, dynamic=dynamic)
    for n in (5, 9, 17):
        x = torch.randn(3, n, device=device)
        torch.testing.assert_close(compiled(x), f(x))
        a, b = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        (g_eager,) = torch.autograd.grad(f(a).sum(), a)
        (g_compiled,) = torch.autograd.grad(compiled(b).sum(), b)
        torch.testing.assert_close(g_compiled, g_eager)


@pytest.mark.parametrize("device", DEVICES)
def test_indexed_dropin(device, gen):
    x = torch.randn(5, 7, generator=gen).to(device)
    y = torch.randn(5, 7, generator=gen).to(device)
    with torch.profiler.profile() as prof:
        with reduce_op.replace_torch_reductions():
            r = torch.max(x, 1)
            a = x.argmax(dim=0, keepdim=True)
            m = torch.min(x)
            both = torch.max(x, y)  # the elementwise maximum: torch's
            i = x.argmin()
    names = {e.name for e in prof.events()}
    assert {"gpureduce::max", "gpureduce::argmax", "gpureduce::min", "gpureduce::argmin"} <= names, names
    ref = torch.max(x, 1)
    _same_values(r.values, ref.values)
    _same_indices(r.indices, ref.indices)
    _same_indices(a, torch.argmax(x, dim=0, keepdim=True))
    _same_values(m, torch.min(x))
    _same_values(both, torch.maximum(x, y))
    _same_indices(i, torch.argmin(x))
    reduce_op.patch()
    try:
        r = x.max(1, True)
        assert isinstance(r, torch.return_types.max)
        _same_indices(r.indices, torch.argmax(x, 1, True))
        with pytest.raises(TypeError):
            torch.max(x, keepdim=True)  # torch's own error
    finally:
        reduce_op.unpatch()
