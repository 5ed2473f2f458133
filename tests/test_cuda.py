"""CUDA-only behaviour of gpureduce.sum: every engine path at the sizes that
switch between them, inputs over 2^31 elements, streams, CUDA graphs,
torch.compile's reduce-overhead mode, determinism, a second GPU, and
compute-sanitizer. Skipped without a GPU."""
import os
import re
import shutil
import subprocess
import sys

import pytest
import torch

import reduce_op
from axes import assert_matches_torch, cuda_kernel_launches, cuda_kernels_run, random_tensor

pytestmark = pytest.mark.cuda

# Shapes and dims that reach each engine path: full sums (split rows, with
# ragged heads and tails), short and long inner rows (lane groups of 1 to 32),
# rows with an outer reduced dim, columns with and without a split, middle
# dims, and multi-pass plans.
ENGINE_CASES = [
    ((1 << 20) + 7, None), ((1 << 22) + 3, None), (4097, None), (100003, None),
    ((4096, 16), 1), ((2048, 32), 1), ((1000, 64), 1), ((500, 128), 1), ((64, 8192), 1),
    ((300, 1001), 1), ((17, 300007), 1),
    ((64, 33, 4096), (0, 2)), ((8, 3, 1001), (0, 2)),
    # split rows counts that fill one wave rather than spill past it (at 3
    # blocks per SM on 132 SMs: 12 blocks for 32 outputs, 3 for 100, 79 for 5)
    ((128, 32, 2048), (0, 2)), ((16, 100, 4096), (0, 2)), ((5, 1 << 20), 1),
    ((100003, 16), 0), ((8192, 257), 0), ((4096, 2048), 0), ((64, 65536), 0), ((3, 100001), 0),
    ((16, 64, 40), 1), ((7, 9, 11, 13), (0, 2)), ((6, 5, 4, 3, 2), (0, 2, 4)),
    # pitch rows of a warp per output, of 250 and 1024 float32 vectors
    ((5000, 1000), 1), ((5000, 4096), 1),
]


# Every dtype the kernels read directly (and complex128, read as 16-byte vectors of one).
# A kernel's output type in its name: the type itself, or for a 16-bit
# float input gpureduce::cuda::NarrowOrFloat<...> (its own type and float32
# share the kernels).
KERNEL_OUT_TYPE = r"[\w:]+(?:<[\w:]+\s?>)?"
# The pitch rows and split rows kernels' last template argument, kStrided, false for dense rows.
DENSE = r"(?:,\s*(?:false|\(bool\)0))?"
EVERY_KERNEL_DTYPE = [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int8, torch.uint8,
                      torch.bool, torch.int16, torch.int32, torch.int64, torch.complex64, torch.complex128]


def _gen():
    return torch.Generator().manual_seed(7)


def _offset_cuda(shape, dtype, offset):
    """A random CUDA tensor of `shape` that starts `offset` elements into its
    storage (another alignment, so other heads and vector widths)."""
    n = 1
    for s in shape:
        n *= s
    return random_tensor((n + offset,), dtype, "cpu", _gen()).cuda()[offset:].view(shape)


@pytest.mark.parametrize("shape,dim", ENGINE_CASES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int8,
                                   torch.int32, torch.bool, torch.float64, torch.complex64, torch.uint8])
def test_engine_paths(shape, dim, dtype):
    x = random_tensor(shape if isinstance(shape, tuple) else (shape,), dtype, "cpu", _gen()).cuda()
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)


@pytest.mark.parametrize("offset", [1, 2, 3, 5])
def test_misaligned_and_sliced_full_sums(offset):
    base = torch.randn((1 << 20) + 64, generator=_gen()).cuda()
    x = base[offset:offset + (1 << 20) + 3]
    assert_matches_torch(reduce_op.sum(x), x, None, False)
    y = base[offset::3]
    assert_matches_torch(reduce_op.sum(y), y, None, False)
    z = base[: 4096 * 255].view(4096, 255)[:, offset:]
    assert_matches_torch(reduce_op.sum(z, 1), z, 1, False)
    assert_matches_torch(reduce_op.sum(z, 0), z, 0, False)


@pytest.mark.parametrize("dtype,value", [(torch.uint8, 255), (torch.int8, -128), (torch.int8, 127),
                                         (torch.bool, True)], ids=str)
@pytest.mark.parametrize("shape,dim", [(((1 << 24) + 13,), None), ((4096, 4096), 1), ((64, 1 << 18), 1)],
                         ids=str)
def test_byte_sums_at_extreme_values(dtype, value, shape, dim):
    # Byte inputs are summed with dp4a in int32 batches before widening to
    # int64; the largest magnitudes check that nothing overflows on the way.
    x = torch.full(shape, value, dtype=dtype, device="cuda")
    assert torch.equal(reduce_op.sum(x, dim), torch.sum(x, dim))


def _rows_kernel_steps(fn):
    """The kStep template arguments of the rows kernels that fn launches."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    steps = set()
    for e in prof.events():
        # <Op, in, out, V, kStep> for split rows, then blocks per SM for inner rows
        m = (re.search(rf"gpureduce_split_rows<.*,\s*(?:\(int\))?(\d+),\s*(?:\(int\))?(\d+){DENSE}>", e.name) or
             re.search(r"gpureduce_inner_rows<.*,\s*(?:\(int\))?(\d+),\s*(?:\(int\))?(\d+),\s*(?:\(int\))?\d+>",
                       e.name))
        if m:
            steps.add(int(m.group(2)))
    return steps


# Rows of element stride 2 are read with vector loads over twice their length
# when that stays inside the storage; otherwise with scalar loads.
STRIDE2_CASES = [
    # (base shape, view, dim, vector path expected)
    ((4096, 128), lambda b: b[:, ::2], 1, True),
    ((64, 16384), lambda b: b[:, ::2], 1, True),
    ((5, 8), lambda b: b[:, ::2], 1, True),
    ((7, 9, 32), lambda b: b[..., ::2], (1, 2), True),
    ((1 << 20,), lambda b: b[::2], None, True),
    ((1 << 20,), lambda b: b[8::2], None, True),
    ((1 << 20,), lambda b: b[:-1][::2], None, True),   # reads the storage's last element
    ((1 << 20) - 1, lambda b: b[::2], None, False),   # would read one past the storage
    ((4096, 127), lambda b: b[:, ::2], 1, False),      # rows not 16-byte aligned
    ((1 << 20,), lambda b: b[1::2], None, False),      # misaligned start
]


@pytest.mark.parametrize("case", range(len(STRIDE2_CASES)))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int16],
                         ids=str)
def test_stride2_rows(case, dtype):
    shape, view, dim, vector = STRIDE2_CASES[case]
    shape = shape if isinstance(shape, tuple) else (shape,)
    base = random_tensor(shape, dtype, "cpu", _gen()).cuda()
    x = view(base)
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
    steps = _rows_kernel_steps(lambda: reduce_op.sum(x, dim))
    assert (2 in steps) == vector, steps




# Rows of one dense row per output at a constant pitch (a contiguous 2-D
# tensor over dim 1) run the pitch rows kernel at any width, except rows no
# vector fits in passes of 1 MB or more, which take the stream-rows kernel
# ([100003, 3] float32, 1.2 MB; not [100003, 2]). Other rows
# passes (outer dims that do not merge, several rows per output: the sliced
# cases below) run the short rows kernel, a lane per vector, for outputs of
# at most 32 16-byte vectors where the pass has at least a block of 512
# threads for every SM, and the inner rows kernel otherwise (smaller passes
# are latency bound: a lane per vector, smaller blocks). The cases sit on
# both sides of each lane-group size, of the 32-chunk limit and (for the
# H200's and H100's 132 SMs) of the one-block-per-SM line; the third item is
# the kernel float32 takes ("pitch": either pitch rows kernel; [67073, 4] is
# the first of its width for the pitch vector rows, test_pitch_vector_rows).
SHORT_ROW_CASES = [
    ((1000, 4), 1, "pitch"), ((1001, 8), 1, "pitch"), ((999, 12), 1, "pitch"), ((4099, 16), 1, "pitch"),
    ((333, 24), 1, "pitch"), ((2048, 32), 1, "pitch"), ((517, 64), 1, "pitch"), ((100, 124), 1, "pitch"),
    ((100, 128), 1, "pitch"), ((100, 132), 1, "pitch"), ((3000, 3), 1, "pitch"), ((257, 31), 1, "pitch"),
    ((257, 33), 1, "pitch"), ((3, 16), 1, "pitch"), ((100003, 2), 1, "pitch"), ((100003, 3), 1, "stream"),
    ((400003, 3), 1, "stream"),
    ((67072, 4), 1, "pitch"), ((67073, 4), 1, "pitch"), ((40000, 8), 1, "pitch"), ((20000, 16), 1, "pitch"),
    ((9000, 64), 1, "pitch"), ((4300, 124), 1, "pitch"), ((2096, 128), 1, "pitch"), ((2097, 128), 1, "pitch"),
    ((9, 5, 16), 2, "inner"),       # two outer dims after slicing (below): latency bound
    ((9000, 5, 16), 2, "short"),    # the same, 36000 outputs
    ((7, 3, 16), (1, 2), "inner"),  # three rows of 8 per output (sliced below)
    ((30000, 3, 16), (1, 2), "short"),
]


@pytest.mark.parametrize("case", range(len(SHORT_ROW_CASES)))
@pytest.mark.parametrize("dtype", EVERY_KERNEL_DTYPE, ids=str)
def test_short_rows(case, dtype):
    shape, dim, kernel_f32 = SHORT_ROW_CASES[case]
    x = random_tensor(shape, dtype, "cpu", _gen()).cuda()
    if len(shape) == 3 and shape[1] == 5:
        x = x[:, :4, :]       # outer dims (n, 4) that do not merge
    elif len(shape) == 3:
        x = x[:, :, :8]       # rows of 8 with a row stride of 16
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
    if dtype == torch.float32 and torch.cuda.get_device_properties(0).multi_processor_count == 132:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dim))
        ran = [k for k in ("pitch", "short", "inner", "dense", "stream") if any(f"gpureduce_{k}_" in n for n in names)]
        assert ran == [kernel_f32], names


# Rows of one or two whole 16-byte vectors with outputs enough to fill the
# GPU take the pitch vector rows kernel, several rows a thread; fewer (a
# latency-bound pass: under 512 outputs per SM for rows of one vector, 256
# for two, on 132 SMs) keep the pitch rows kernel. A row's sum has the same
# bits in both: the first rows of a large pass equal a small pass over those
# rows alone. Rows at a pitch wider than themselves and a strided out= too;
# [3300001, 8] float32 takes two rounds of the grid.
VECTOR_ROW_CASES = [(67585, 1), (200003, 1), (33793, 2), (150001, 2)]


@pytest.mark.parametrize("case", range(len(VECTOR_ROW_CASES)))
@pytest.mark.parametrize("dtype", EVERY_KERNEL_DTYPE, ids=str)
def test_pitch_vector_rows(case, dtype):
    n, vectors = VECTOR_ROW_CASES[case]
    width = vectors * max(1, 16 // torch.empty((), dtype=dtype).element_size())
    x = random_tensor((n, width), dtype, "cpu", _gen()).cuda()
    ours = reduce_op.sum(x, 1)
    assert_matches_torch(ours, x, 1, False)
    head = x[:1000]
    assert torch.equal(ours[:1000], reduce_op.sum(head, 1))
    wide = random_tensor((n, 3 * width), dtype, "cpu", _gen()).cuda()[:, :width]
    wide_sum = reduce_op.sum(wide, 1)
    assert_matches_torch(wide_sum, wide, 1, False)
    out = torch.empty(2 * n, dtype=wide_sum.dtype, device="cuda")[::2]
    reduce_op.sum(wide, 1, out=out)
    assert torch.equal(out, wide_sum)
    # Not complex128 by name: its vector is one element, so a row of one is a
    # copy pass, and rows of two from 4 MB take the dense tiles.
    if torch.cuda.get_device_properties(0).multi_processor_count == 132 and dtype != torch.complex128:
        for t in (x, wide):
            names = cuda_kernels_run(lambda: reduce_op.sum(t, 1))
            assert any("gpureduce_pitch_vector_rows<" in k for k in names), names
        names = cuda_kernels_run(lambda: reduce_op.sum(head, 1))
        assert any("gpureduce_pitch_rows<" in k for k in names) and not any("vector_rows" in k for k in names), names


def test_pitch_vector_rows_rounds():
    x = random_tensor((3300001, 8), torch.float32, "cpu", _gen()).cuda()
    ours = reduce_op.sum(x, 1)
    assert_matches_torch(ours, x, 1, False)
    assert torch.equal(ours[-1000:], reduce_op.sum(x[-1000:], 1))


# Pitch rows with few outputs take a block per output (the split rows
# kernel), unless there are 16 outputs per SM (2112 on 132 SMs) and no row
# gives every thread of a block a whole unrolled loop (2048 float32 vectors),
# or 8 outputs per SM (1056) and no row gives every thread of a block of 256
# one (1024 vectors); rows that give a block of 512 one, up to 2.5 outputs
# per resident warp (10560 on 132 SMs).
@pytest.mark.parametrize("shape,kernel", [((1100, 3000), "pitch"), ((1000, 3000), "split"),
                                          ((2000, 3000), "pitch"), ((1000, 4099), "split"),
                                          ((1500, 4092), "pitch"), ((1500, 4100), "split"),
                                          ((2200, 4100), "pitch"),
                                          ((2200, 9000), "split"), ((9000, 3000), "pitch"),
                                          ((10500, 8192), "split"), ((10600, 8192), "pitch")], ids=str)
def test_pitch_or_split_rows(shape, kernel):
    x = random_tensor(shape, torch.float32, "cpu", _gen()).cuda()
    assert_matches_torch(reduce_op.sum(x, 1), x, 1, False)
    if torch.cuda.get_device_properties(0).multi_processor_count == 132:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, 1))
        ran = [k for k in ("pitch", "split") if any(f"gpureduce_{k}_rows" in n for n in names)]
        assert ran == [kernel], names


# Rows at one pitch whose outputs lie in another order than the rows (outer
# dims the planner cannot merge because the output's strides differ): the
# pitch rows kernel writes each output through its index over up to four
# such dims; five take the other rows kernels. Each output must equal the
# same row's sum written in memory order, bit for bit (the same kernel and
# lanes for the same row width and count), and torch.sum's. Ragged widths
# (503, 1001 elements, any start), whole vectors (256), rows of one or two
# vectors (4, 8 float32: not the pitch vector rows kernel, whose outputs are
# in memory order only), and a strided out=.
PERMUTED_ROWS_CASES = [
    ((13, 9, 219, 503), (3, 1, 2, 0), 0, 0), ((7, 400, 256), (1, 0, 2), 2, 0), ((5, 300, 1001), (1, 0, 2), 2, 1),
    ((4, 6, 20, 503), (0, 2, 1, 3), 3, 3), ((8, 5, 6, 7, 100), (3, 1, 0, 2, 4), 4, 0),
    ((3, 4, 5, 6, 7, 64), (4, 2, 0, 3, 1, 5), 5, 0), ((61, 3000, 4), (1, 0, 2), 2, 0), ((9, 5000, 8), (1, 0, 2), 2, 0),
]


@pytest.mark.parametrize("case", range(len(PERMUTED_ROWS_CASES)))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int32], ids=str)
def test_rows_with_permuted_outputs(case, dtype):
    base, perm, dim, offset = PERMUTED_ROWS_CASES[case]
    n = 1
    for s in base:
        n *= s
    memory_order = random_tensor((n + offset,), dtype, "cpu", _gen()).cuda()[offset:].view(base)
    x = memory_order.permute(*perm)
    ours = reduce_op.sum(x, dim)
    assert_matches_torch(ours, x, dim, False)
    # The same rows summed into outputs in memory order, then permuted as x's kept dims are.
    in_order = reduce_op.sum(memory_order, perm[dim])
    kept = [p - (p > perm[dim]) for p in perm if p != perm[dim]]
    assert torch.equal(ours, in_order.permute(*kept))
    out = torch.empty(ours.numel() * 2, dtype=ours.dtype, device="cuda")[::2].view(ours.shape)
    reduce_op.sum(x, dim, out=out)
    assert torch.equal(out, ours)
    if dtype == torch.float32 and torch.cuda.get_device_properties(0).multi_processor_count == 132:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dim))
        pitch = any("gpureduce_pitch_rows<" in k for k in names)
        assert pitch == (len(base) - 1 <= 4), names


# Rows that take a block each (the split rows kernel, split 1): blocks of
# 512 threads under 1.5 outputs per SM (198 on 132 SMs), of 256 from there.
# Checked for the answer on both sides of that line, with ragged rows (4099
# elements, and one element off) whose ends are read in either block size,
# and for the kernel taken (not the block size, which the profiler does not
# report here).
@pytest.mark.parametrize("rows,width", [(197, 4099), (198, 4099), (400, 12288), (1000, 2053)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int64],
                         ids=str)
@pytest.mark.parametrize("offset", [0, 1])
def test_block_per_output_rows(rows, width, dtype, offset):
    base = random_tensor((rows * width + offset,), dtype, "cpu", _gen()).cuda()
    x = base[offset:].view(rows, width)
    assert_matches_torch(reduce_op.sum(x, 1), x, 1, False)
    if dtype == torch.float32 and torch.cuda.get_device_properties(0).multi_processor_count == 132:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, 1))
        assert any("gpureduce_split_rows" in n for n in names), names


# Full sums and few long rows through the split rows pass (split kernel and
# finish kernel as programmatic dependents): eager, bitwise repeatable, in a
# replayed CUDA graph, on four streams at once, and with the first call of
# the process made inside a capture; each in a process of its own.
@pytest.mark.parametrize("args", [[], ["capture-first"]], ids=["eager-first", "capture-first"])
def test_split_rows_workload(args):
    script = os.path.join(os.path.dirname(__file__), "split_finish_workload.py")
    r = subprocess.run([sys.executable, script] + args, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert "workload ok" in r.stdout


# Columns too narrow for a vector go to the dense-tiles kernel (whole
# planes per tile, or row tiles of planes larger than a tile where there are
# at least 4 planes per SM: 600 of them, not 500, on the H200's 132 SMs);
# whole planes of 4 rows or more (7 or more of 1- and 2-byte elements) and
# rows no vector fits (from 1 MB) go to the stream rows instead
# (test_stream_rows). Passes under 256 KB, and planes of at
# most 64 rows (64, not 65) under 4 MB of 4- and 8-byte elements or 1 MB of
# 2-byte ones, are bound by latency and take the rows kernels or the columns
# kernel ([700, 65, 3] bfloat16, 273 KB, takes the tiles; [400, 65, 3] does
# not); so do 2-byte planes of 4 to 64 rows under 4 MB (99864 planes of 7
# by 3, not 99865; planes of 3 rows from 1 MB). Up to
# 256 columns in planes of 512 bytes or more (2-byte elements) or 32 KB or
# more (4 and 8 bytes) take the stream-columns kernel (test_stream_columns),
# so the row tiles (planes over 16 KB) are left to 1-byte elements, checked
# here with 67 columns (neither flag); other columns of 4- or 8-byte
# elements over 8 rows or more take the columns kernel (7 rows, not 8), or
# the stream rows where their rows are narrow (test_stream_rows). The flags
# say whether float32 and bfloat16 take the tiles.
DENSE_CASES = [
    ((300000, 5), 1, False, False), ((100000, 5), 1, False, False), ((4099, 9), 1, False, False),
    ((3000, 12), 1, False, False),
    ((777, 24), 1, False, False), ((333, 301), 1, False, False), ((2000, 1001), 1, False, False),
    ((500, 2000, 5), 1, False, False), ((600, 2000, 5), 1, False, False), ((300, 7, 3), 1, False, False),
    ((200, 5000, 3), 1, False, False), ((64, 100, 130), 1, False, False), ((40, 40), 1, False, False),
    ((5, 3000, 7), 1, False, False), ((100003, 3), 0, False, False), ((1, 5), 1, False, False),
    ((120000, 7, 3), 1, False, False), ((13000, 7, 3), 1, False, False), ((120000, 8, 3), 1, False, False),
    ((99865, 7, 3), 1, False, False), ((99864, 7, 3), 1, False, False), ((27000, 3, 13), 1, True, True),
    ((174763, 3), 1, False, False), ((174762, 3), 1, False, False), ((349526, 3), 1, False, False),
    ((349525, 3), 1, False, False), ((700, 65, 3), 1, False, False), ((700, 64, 3), 1, False, False),
    ((400, 65, 3), 1, False, False),
    ((600, 300, 67), 1, False, False), ((500, 300, 67), 1, False, False),
    # Planes of many rows, a tile each: 64 and 128 threads a column whose
    # partials one thread then combines (C = 4, and C = 2 with a group of
    # 128); a single such plane is under 256 KB and takes the columns kernel.
    ((32, 1270, 4), 1, False, False), ((32, 2970, 2), 1, False, False), ((1, 1270, 4), 1, False, False),
    ((300000, 5, 3), 1, False, True), ((300000, 2, 7), 1, True, True),
]


@pytest.mark.parametrize("case", range(len(DENSE_CASES)))
@pytest.mark.parametrize("dtype", EVERY_KERNEL_DTYPE, ids=str)
def test_dense_tiles(case, dtype):
    shape, dim, dense_f32, dense_bf16 = DENSE_CASES[case]
    x = random_tensor(shape, dtype, "cpu", _gen()).cuda()
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
    # The same shape one element into its storage: no tile starts on a 16-byte boundary.
    y = random_tensor((x.numel() + 1,), dtype, "cpu", _gen()).cuda()[1:].view(shape)
    assert_matches_torch(reduce_op.sum(y, dim), y, dim, False)
    expected = {torch.float32: dense_f32, torch.bfloat16: dense_bf16}
    if dtype in expected:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dim))
        assert any("gpureduce_dense_tiles" in n for n in names) == expected[dtype], names


# Dense rows (one output each) that no 16-byte vector fits and too short for
# a vector body per row (fewer than 16 vectors) go to the stream-rows kernel
# in passes of 1 MB or more (256 KB for byte elements): tiles of whole rows
# copied into shared memory, 8 KB or, for rows of 32 bytes or more in passes
# of 16 MB or more, 16 KB; a group of 1 to 32 lanes per row. So do whole
# dense planes of narrow columns ([B, R, C] over R) that the dense tiles
# would take, with 4 rows or more (7 or more of 1- and 2-byte elements).
# Checked at widths on both sides of those lines and of the ragged rows' 16
# vectors (float32 rows of 63 and 67 elements), with a last tile of a few
# rows, from a 16-byte boundary and one and three elements off, with
# keepdim, dtype=, out= whose outer dims do not merge, prod, and bitwise on
# a second call. The flags say whether float32 and bfloat16 take it (from a
# 16-byte boundary: off it, rows a vector fits take it too; the tiles keep
# bfloat16 planes of 4 to 6 rows and all planes of 2 or 3).
# Planes of 8 rows or more that the columns kernels would read take it where
# their rows are narrow: float32 rows of at most 16 bytes, or under 128 bytes
# in passes under 4 MB; 2-byte rows of one 16-byte vector under 4 MB; 2-byte planes of
# the stream columns an 8 KB tile holds, rows under 64 bytes. Wider float32
# rows from 4 MB, and wider 2-byte rows a vector fits, stay on the columns
# kernel.
STREAM_ROW_CASES = [
    ((300001, 5), True, True),     # float32 6 MB, bfloat16 3 MB
    ((87382, 3), True, False),     # float32 1048584 bytes; bfloat16 half that
    ((87381, 3), False, False),    # float32 1048572 bytes, under 1 MB
    ((175441, 3), True, True),     # a last tile of one row; off by 1 or 3 bfloat16, the tile before ends past it
    ((300001, 17), True, True),    # float32 20 MB: 16 KB tiles; bfloat16 10 MB: 8 KB
    ((70001, 63), True, True),     # 15 float32 vectors after the head
    ((40000, 67), False, True),    # float32: 16 vectors, ragged rows
    ((9001, 127), False, True),    # bfloat16 rows of 254 bytes
    ((100000, 8), False, False),   # a vector fits both
    ((262147, 1), False, False),   # sums over a dim of size 1 (a copy)
    ((120001, 7, 3), True, True), ((300001, 5, 3), True, False), ((40001, 12, 7), False, True),
    ((27001, 3, 13), False, False), ((33, 1270, 4), False, True), ((200001, 4, 9), True, False),
    ((200001, 17, 3), True, True),   # float32 rows of 12 bytes, 41 MB
    ((1800, 45, 10), True, True),    # float32 rows of 40 bytes, 3.2 MB; bfloat16 of the stream columns
    ((12000, 37, 14), False, False),  # float32 rows of 56 bytes from 4 MB, bfloat16 pairs: the columns kernel
    ((3001, 19, 8), True, True),     # bfloat16 rows of one 16-byte vector
    ((20000, 52, 5), False, True),   # bfloat16 planes of 520 bytes, which stream columns would take
    ((2000, 32, 45), False, False),  # bfloat16 rows of 90 bytes: stream columns
    ((4000, 16, 32), False, False),  # bfloat16 rows of 64 bytes, a vector fits: the columns kernel
    ((60000, 30, 8), False, False),  # bfloat16 rows of one vector from 4 MB: the columns kernel
]
STREAM_ROW_DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int16, torch.int32,
                     torch.int64, torch.uint8, torch.bool, torch.complex64]


@pytest.mark.parametrize("case", range(len(STREAM_ROW_CASES)))
@pytest.mark.parametrize("offset", [0, 1, 3])
@pytest.mark.parametrize("dtype", STREAM_ROW_DTYPES, ids=str)
def test_stream_rows(case, offset, dtype):
    shape, stream_f32, stream_bf16 = STREAM_ROW_CASES[case]
    x = _offset_cuda(shape, dtype, offset)
    got = reduce_op.sum(x, 1)
    assert_matches_torch(got, x, 1, False)
    assert torch.equal(got, reduce_op.sum(x, 1))
    assert_matches_torch(reduce_op.sum(x, 1, True), x, 1, True)
    if dtype in (torch.bfloat16, torch.float16, torch.float32):
        assert_matches_torch(reduce_op.sum(x, 1, dtype=torch.float64), x, 1, False, dtype=torch.float64)
    if offset == 1:
        # Outputs of [2, n / 2, ...] written through an out= whose outer dims do not merge.
        n = shape[0] // 2
        x2 = x[: 2 * n].view(2, n, *shape[1:])
        out = torch.empty(n, 2, *shape[2:], dtype=got.dtype, device="cuda").transpose(0, 1)
        reduce_op.sum(x2, 2, out=out)
        assert_matches_torch(out.contiguous(), x2, 2, False)
        # Where both calls take the same stream-rows kernel, dense outputs of
        # rows of up to 32 elements that take a lane each are summed in its
        # direct loop (StreamRowsArgs::direct_rounds), these outputs, two
        # dims apart, in its general rounds: the same adds in the same
        # order, so the same bits. (Other passes may take other kernels for
        # the two output layouts, which sum in other orders.)
        kernels_out = cuda_kernels_run(lambda: reduce_op.sum(x2, 2, out=out))
        kernels = cuda_kernels_run(lambda: reduce_op.sum(x2, 2))
        if kernels_out == kernels and any("gpureduce_stream_rows" in n for n in kernels):
            assert torch.equal(out.contiguous(), reduce_op.sum(x2, 2))
        else:
            assert not stream_f32 or dtype != torch.float32, (kernels_out, kernels)
    if dtype == torch.float32 and offset == 3:
        f = x.sign().add(2.0)
        p = torch.ops.gpureduce.prod.dim_int(f, 1, False)
        torch.testing.assert_close(p, torch.prod(f, 1), rtol=1e-4, atol=0)
    expected = {torch.float32: stream_f32, torch.bfloat16: stream_bf16}
    if dtype in expected and offset == 0:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, 1))
        assert any("gpureduce_stream_rows" in n for n in names) == expected[dtype], names


# Rows whose groups of lanes would read the same shared-memory banks (a
# pitch near a multiple of 128 bytes) are taken by a warp's groups M rows
# apart (StreamRowsArgs::spread_shift, chosen by the host's bank model):
# bytes and 16-bit rows of 127 to 255 elements, float32 rows of 65, int64
# rows of 27, float64 rows of 17, in 8 KB and 16 KB tiles (16 MB passes),
# slabs of them; every output checked against torch's, and bitwise on a
# second call. Each takes the stream-rows kernel.
STREAM_SPREAD_CASES = [
    ((20001, 255), torch.uint8, 1), ((140001, 127), torch.int8, 1), ((16001, 127), torch.bfloat16, 1),
    ((66001, 129), torch.float16, 1), ((70001, 65), torch.float32, 1), ((20001, 130), torch.bfloat16, 1),
    ((30001, 27), torch.int64, 1), ((40001, 17), torch.float64, 1), ((4, 12001, 127), torch.bfloat16, (0, 2)),
    ((3, 30001, 255), torch.uint8, (0, 2)),
]


@pytest.mark.parametrize("case", range(len(STREAM_SPREAD_CASES)))
@pytest.mark.parametrize("offset", [0, 1, 3])
def test_stream_rows_spread(case, offset):
    shape, dtype, dims = STREAM_SPREAD_CASES[case]
    x = _offset_cuda(shape, dtype, offset)
    got = reduce_op.sum(x, dims)
    assert_matches_torch(got, x, dims, False)
    assert torch.equal(got, reduce_op.sum(x, dims))
    assert_matches_torch(reduce_op.sum(x, dims, True), x, dims, True)
    assert torch.equal(reduce_op.amax(x, dims), torch.amax(x, dims))
    if offset == 0:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dims))
        assert any("gpureduce_stream_rows" in n for n in names), names


# Rows of a small element stride s, one per output at a pitch of about s
# times their length, whose s elements span at most 4 bytes (or 8 bytes, in
# rows of which an 8 KB tile holds three), from 1 MB of stream: read as
# planes of R rows of s columns by the stream-rows kernel, of which only the
# first column is summed (strided_rows_geometry), unless stride-2 vectors
# fit them. Pitches of R s - 1 to R s + 1, strides 2 to 6, two outer dims, a
# misaligned start, and a last row that ends at its storage's last element
# (nothing read past it); wider elements, strides and rows take the rows
# kernels, checked alike.
def _exact_end_rows(n, r, s, dtype):
    pitch = r * s
    buf = random_tensor(((n - 1) * pitch + (r - 1) * s + 1,), dtype, "cpu", _gen()).cuda()
    return buf.as_strided((n, r), (pitch, s))


def _strided_stream_expected(x):
    e, r, (pitch, s) = x.element_size(), x.shape[-1], x.stride()[-2:]
    n = x.numel() // r
    vector = 16 // e  # stride-2 vectors: 2- and 4-byte elements only
    to_end = x.untyped_storage().nbytes() - x.storage_offset() * e
    vectors_fit = (s == 2 and e in (2, 4) and (2 * r) % vector == 0 and pitch % vector == 0 and x.data_ptr() % 16 == 0
                   and to_end >= ((n - 1) * pitch + 2 * r) * e)
    spans = s * e <= 4 or (s * e <= 8 and 3 * pitch * e <= 8192 - 32)
    return spans and n * pitch * e >= (1 << 20) and pitch * e <= 16352 and not vectors_fit


STRIDED_ROW_CASES = [
    lambda dt: random_tensor((2697, 1526), dt, "cpu", _gen()).cuda()[:, ::2],
    lambda dt: random_tensor((2697, 1527), dt, "cpu", _gen()).cuda()[:, ::2],
    lambda dt: random_tensor((4000, 301), dt, "cpu", _gen()).cuda()[:, 1::2],
    lambda dt: random_tensor((6000, 301), dt, "cpu", _gen()).cuda()[:, ::3],
    lambda dt: random_tensor((3000, 403), dt, "cpu", _gen()).cuda()[:, 1::4],
    lambda dt: random_tensor((100000, 16), dt, "cpu", _gen()).cuda()[:, ::2],
    lambda dt: random_tensor((600, 1000, 2), dt, "cpu", _gen()).cuda()[..., 0],
    lambda dt: random_tensor((20, 300, 202), dt, "cpu", _gen()).cuda()[..., ::2],
    lambda dt: _exact_end_rows(5000, 200, 2, dt),
    lambda dt: _exact_end_rows(4001, 99, 3, dt),
    lambda dt: _exact_end_rows(30001, 37, 2, dt),
    lambda dt: random_tensor((40000, 101), dt, "cpu", _gen()).cuda()[:, 1::6],
    lambda dt: random_tensor((1025, 1023), dt, "cpu", _gen()).cuda()[:, ::2],
]


@pytest.mark.parametrize("case", range(len(STRIDED_ROW_CASES)))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int32,
                                   torch.int16, torch.int8, torch.bool], ids=str)
def test_strided_rows_stream(case, dtype):
    x = STRIDED_ROW_CASES[case](dtype)
    dim = x.dim() - 1
    got = reduce_op.sum(x, dim)
    assert_matches_torch(got, x, dim, False)
    assert torch.equal(got, reduce_op.sum(x, dim))
    if dtype.is_floating_point:
        assert torch.equal(reduce_op.amax(x, dim), torch.amax(x, dim))
        torch.testing.assert_close(reduce_op.logsumexp(x, dim), torch.logsumexp(x, dim),
                                   rtol=2e-2 if dtype.itemsize == 2 else 1e-5, atol=1e-5)
        torch.testing.assert_close(reduce_op.var(x, dim).double(), torch.var(x.double(), dim),
                                   rtol=2e-2 if dtype.itemsize == 2 else 1e-4, atol=1e-5)
    names = cuda_kernels_run(lambda: reduce_op.sum(x, dim))
    assert any("gpureduce_stream_rows" in n for n in names) == _strided_stream_expected(x), names


# Strided rows of 2- and 4-byte elements that the tiles leave (rows of
# strides over 4 bytes wider than a third of a tile, or at a pitch over
# (length + 1) * stride), or that the tiles would hold one to a tile (16-bit
# rows at stride 2 of 4 KB or more), and whose spans hold a vector body of
# 16 chunks or more: read through the dense memory each row spans, keeping every s-th
# element (the pitch rows kernel's kStrided, strided_span_rows_fit), in
# passes of 1 MB or more whose outputs give every SM 8 warps. Pitches that
# put rows at every alignment, starts 0 to 3 elements in, strides 2 to 6
# (up to 12 bytes apart, where a vector keeps one or two elements), spans
# of 15 and 16 chunks, and a last row that ends on its storage's last
# element (nothing read past it); byte elements, strides of 14 bytes or
# more, few outputs and small passes read an element per load, checked
# alike. The flag: the pitch rows
# kernel runs (on 132 SMs).
STRIDED_SPAN_CASES = [
    # dtype, rows, row length, stride, pitch past row length * stride, offset, pitch rows
    (torch.float32, 2400, 1025, 2, 1, 0, True),
    (torch.float32, 5000, 33, 2, 3, 1, False),  # span 65: 15 chunks
    (torch.float32, 5000, 34, 2, 3, 1, True),   # span 67: 16 chunks
    (torch.float32, 1000, 1025, 2, 1, 2, False),  # outputs under 8 warps an SM
    (torch.bfloat16, 2200, 700, 3, 1, 2, True),
    (torch.bfloat16, 1600, 101, 3, 4, 0, False),  # under 1 MB
    (torch.bfloat16, 2200, 2049, 2, 1, 0, True),  # rows of 8 KB at stride 2: spans ahead of the tiles
    (torch.float16, 2200, 1000, 2, 1, 1, False),  # rows of 4002 bytes at stride 2: the tiles
    (torch.float16, 2300, 513, 4, 3, 3, True),
    (torch.int16, 2200, 800, 3, 2, 1, True),
    (torch.int32, 2500, 640, 2, 1, 2, True),
    (torch.float32, 3000, 700, 3, 1, 1, True),   # 12 bytes apart: a vector keeps one or two
    (torch.float16, 2500, 900, 5, 2, 3, True),   # 10 bytes
    (torch.bfloat16, 2200, 700, 6, 0, 1, True),  # 12 bytes
    (torch.int16, 2000, 500, 7, 1, 0, False),    # 14 bytes: element loads
    (torch.float32, 2000, 700, 4, 1, 0, False),  # 16 bytes: element loads
    (torch.int8, 2500, 999, 5, 2, 1, False),
    (torch.uint8, 2200, 1200, 7, 0, 0, False),
    (torch.bool, 2200, 900, 8, 5, 3, False),
]


def _check_view_reduction(x, dim, kernel, expected):
    """Sum of the view x over dim against torch (and bitwise on a second
    call), amax and, for floats, logsumexp; on 132 SMs, whether sum runs
    the kernel named `kernel` (unless None). Returns the float tolerance for the
    caller's further ops."""
    got = reduce_op.sum(x, dim)
    assert_matches_torch(got, x, dim, False)
    assert torch.equal(got, reduce_op.sum(x, dim))
    assert torch.equal(reduce_op.amax(x, dim), torch.amax(x, dim))
    tol = dict(rtol=2e-2, atol=1e-2) if x.dtype.itemsize == 2 else dict(rtol=1e-5, atol=1e-5)
    if x.dtype.is_floating_point:
        torch.testing.assert_close(reduce_op.logsumexp(x, dim), torch.logsumexp(x, dim), **tol)
    if kernel is not None and torch.cuda.get_device_properties(0).multi_processor_count == 132:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dim))
        assert any(kernel in n for n in names) == expected, names
    return tol


def _strided_rows(dtype, n, r, s, extra, offset):
    """n rows of r elements at stride s, a pitch of r * s + extra apart,
    offset elements into a CUDA buffer whose last element is the last
    row's last: (the buffer, the view)."""
    pitch = r * s + extra
    buf = random_tensor((offset + (n - 1) * pitch + (r - 1) * s + 1,), dtype, "cpu", _gen()).cuda()
    return buf, buf.as_strided((n, r), (pitch, s), offset)


@pytest.mark.parametrize("case", STRIDED_SPAN_CASES, ids=str)
def test_strided_span_rows(case):
    dtype, n, r, s, extra, offset, pitch_rows = case
    _, x = _strided_rows(dtype, n, r, s, extra, offset)
    tol = _check_view_reduction(x, 1, "gpureduce_pitch_rows<", pitch_rows)
    if dtype.is_floating_point:
        torch.testing.assert_close(reduce_op.var(x, 1).double(), torch.var(x.double(), 1), **tol)
        torch.testing.assert_close(reduce_op.nansum(x, 1).double(), torch.nansum(x.double(), 1), **tol)


# Strided rows too few for the pitch rows kernel's warps but long enough to
# give every thread of a block a vector (a span of 512 chunks or more):
# read through the dense memory each row spans by the split rows kernel's
# kStrided, a block or several per output (the latter finished from
# partials), vectors keeping every s-th element and the row's own elements
# outside the body read one by one. Pitches that put rows at every
# alignment, starts 0 to 3 elements in, strides 2 to 6, spans of 511 and 512
# chunks (the first reads an element per load), and a single strided row
# (a full reduction) whose last element is its storage's last. The flag:
# the split rows kernel's kStrided runs (on 132 SMs).
STRIDED_SPLIT_CASES = [
    # dtype, rows, row length, stride, pitch past row length * stride, offset, kStrided
    (torch.float16, 100, 20001, 2, 1, 0, True),
    (torch.bfloat16, 37, 30000, 3, 2, 1, True),
    (torch.float32, 64, 8193, 2, 3, 2, True),
    (torch.int16, 50, 12345, 4, 1, 3, True),
    (torch.int32, 40, 10001, 2, 1, 1, True),
    (torch.float16, 1000, 2051, 2, 1, 0, False),  # span 4101: 511 chunks
    (torch.float16, 1000, 2053, 2, 1, 0, True),   # span 4105: 512 chunks, a block per output
    (torch.float32, 1, 300001, 2, 0, 1, True),    # one row: a full reduction
    (torch.bfloat16, 1, 1 << 20, 3, 0, 2, True),
    (torch.float32, 40, 30001, 3, 1, 2, True),     # 12 bytes apart
    (torch.float16, 30, 50001, 5, 3, 1, True),     # 10 bytes
    (torch.bfloat16, 1, 1 << 19, 6, 0, 3, True),   # 12 bytes, one row
]


@pytest.mark.parametrize("case", STRIDED_SPLIT_CASES, ids=str)
def test_strided_span_split_rows(case):
    dtype, n, r, s, extra, offset, strided_split = case
    buf, x = _strided_rows(dtype, n, r, s, extra, offset)
    tol = _check_view_reduction(x, 1, None, None)
    if dtype.is_floating_point:
        torch.testing.assert_close(reduce_op.var(x, 1).double(), torch.var(x.double(), 1), **tol)
        torch.testing.assert_close(reduce_op.mean(x, 1).double(), torch.mean(x.double(), 1), **tol)
        torch.testing.assert_close(reduce_op.nansum(x, 1).double(), torch.nansum(x.double(), 1), **tol)
    else:
        assert torch.equal(reduce_op.amin(x, 1), torch.amin(x, 1))
    if n == 1:
        flat = buf[offset::s]
        assert flat.numel() == r
        assert_matches_torch(reduce_op.sum(flat), flat, None, False)
    if torch.cuda.get_device_properties(0).multi_processor_count == 132:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, 1))
        flag = r"(?:true|\(bool\)1)"
        ran = any(re.search(rf"gpureduce_split_rows<.*,\s*{flag}>\(", k) for k in names)
        assert ran == strided_split, names


# Scattered planes: a middle dim reduced whose planes of R rows of C
# elements are each dense but do not follow each other in memory (a step
# of an outer dim, or a narrowing: runs of planes), read by the
# stream-columns kernel where it reads dense planes (columns no vector
# fits, at most 256 of them, planes of 32 KB, 512 bytes for 16-bit
# elements) and also: 2- and 4-byte elements, passes of 32 MB or more,
# planes of at least 8 vectors a thread of a period
# (HostPolicy::kStreamColumnsScatteredMinBytes). Checked from a 16-byte
# boundary and off it, with two planes split across blocks, and what stays
# on the columns kernel (8-byte elements, planes of fewer vectors, passes
# under 32 MB, more than 256 columns). The flag: the stream-columns kernel runs.
SCATTERED_PLANE_CASES = [
    # dtype, shape, outer view, offset, stream columns
    (torch.float16, (40, 64, 300, 45), "step", 0, True),
    (torch.bfloat16, (40, 33, 300, 45), "narrow", 3, True),
    (torch.float32, (31, 60, 700, 13), "step", 1, True),
    (torch.float32, (2, 2, 600000, 7), "step", 2, True),  # two planes, split along their rows
    (torch.int32, (33, 64, 911, 9), "step", 0, True),
    (torch.float64, (32, 31, 300, 15), "narrow", 1, False),  # 8-byte elements
    (torch.float16, (54, 108, 34, 171), "step", 0, False),  # 4.25 vectors a thread of a period
    (torch.float16, (16, 20, 34, 171), "step", 0, False),  # 1.9 MB
    (torch.float32, (8, 8, 40, 300), "step", 0, False),  # 300 columns
]


@pytest.mark.parametrize("case", SCATTERED_PLANE_CASES, ids=str)
def test_scattered_planes(case):
    dtype, shape, view, offset, stream_columns = case
    n = 1
    for s in shape:
        n *= s
    base = random_tensor((n + offset,), dtype, "cpu", _gen()).cuda()[offset:].view(shape)
    x = base[:, ::2] if view == "step" else base[:, 1:]
    tol = _check_view_reduction(x, 2, "gpureduce_stream_columns<", stream_columns)
    if dtype.is_floating_point:
        torch.testing.assert_close(reduce_op.mean(x, 2).double(), torch.mean(x.double(), 2), **tol)


# Segments: dense rows whose outer dims follow one another densely only in
# runs, a view keeping part of an outer dim ([A, N, w][:, :k], [A, N,
# w][::3]), read by the stream-rows kernel as one stream per run (runs of
# HostPolicy::kStreamSegmentMinBytes, passes of 1 MB; 256 KB for byte
# elements). Checked with runs from a 16-byte boundary and off it, a last
# run ending at its storage's last element, strided rows in runs, and what
# stays on the other kernels: planes of narrow columns in runs (the columns
# kernel) and runs too short (the rows kernels). The flags say whether
# float32 and bfloat16 take the stream-rows kernel (strided rows: both, at
# stride 2, rows of 1.6 KB: strided_rows_geometry).
STREAM_SEGMENT_CASES = [
    ((60, 3000, 7), (slice(None), slice(None, 2900)), 2, (True, True)),
    ((60, 3000, 7), (slice(None), slice(101, None)), 2, (True, True)),  # ends at the storage's end
    ((30, 20001, 5), (slice(None, None, 3),), 2, (True, True)),
    ((31, 20001, 5), (slice(1, None, 3),), 2, (True, True)),
    ((4, 9, 5000, 13), (slice(None), slice(1, 8)), 3, (True, True)),  # two outer dims a run
    ((16, 3000, 402), (slice(None), slice(3, 2900), slice(None, None, 2)), 2, (True, True)),  # strided rows
    ((16, 100, 64, 4), (slice(None), slice(None, 90)), 2, (False, False)),  # planes of columns
    ((4000, 60, 3), (slice(None), slice(None, 25)), 2, (False, False)),  # runs of 300 bytes
]


@pytest.mark.parametrize("case", range(len(STREAM_SEGMENT_CASES)))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int32,
                                   torch.int16, torch.int8, torch.bool, torch.complex64], ids=str)
def test_stream_rows_segments(case, dtype):
    shape, index, dim, stream = STREAM_SEGMENT_CASES[case]
    x = random_tensor(shape, dtype, "cpu", _gen()).cuda()[index]
    got = reduce_op.sum(x, dim)
    assert_matches_torch(got, x, dim, False)
    assert torch.equal(got, reduce_op.sum(x, dim))
    assert_matches_torch(reduce_op.sum(x, dim, keepdim=True), x, dim, True)
    if dtype.is_floating_point:
        assert torch.equal(reduce_op.amax(x, dim), torch.amax(x, dim))
        # 16-bit results near 0 (logsumexp and mean of a few values): a unit
        # in the last place of 1.
        tol = dict(rtol=2e-2, atol=1e-2) if dtype.itemsize == 2 else dict(rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(reduce_op.logsumexp(x, dim), torch.logsumexp(x, dim), **tol)
        torch.testing.assert_close(reduce_op.mean(x, dim).double(), torch.mean(x.double(), dim), **tol)
    if dtype in (torch.float32, torch.bfloat16):
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dim))
        assert any("gpureduce_stream_rows" in n for n in names) == stream[dtype == torch.bfloat16], names


# Rows passes of fewer than a block's loop of chunks per thread take a warp
# per output (inner rows) once their outputs give every SM 16 warps (2112 on
# 132 SMs), a block per output (split rows) below that, and outputs of
# several ragged rows keep the split rows kernel's vector bodies.
@pytest.mark.parametrize("make,dims,kernel", [
    (lambda: torch.randn(2697, 1526, device="cuda")[:, ::2], 1, "pitch_rows"),
    (lambda: torch.randn(2, 4000, 1500, device="cuda"), (0, 2), "inner_rows"),
    (lambda: torch.randn(2, 2000, 1500, device="cuda"), (0, 2), "split_rows"),
    (lambda: torch.randn(5, 2300, 999, device="cuda"), (0, 2), "split_rows"),
    (lambda: torch.randn(512, 8190, device="cuda").bfloat16()[:, ::2], 1, "split_rows"),
], ids=["strided", "two_rows", "two_rows_few", "ragged_rows", "strided_few"])
def test_rows_warp_or_block_per_output(make, dims, kernel):
    x = make()
    assert_matches_torch(reduce_op.sum(x, dims), x, dims, False)
    if torch.cuda.get_device_properties(0).multi_processor_count == 132:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dims))
        assert any(f"gpureduce_{kernel}<" in n for n in names), names


# Slabs: rows of the stream-rows kind that lie in several streams, one for
# each index of an outer reduced dim ([A, N, w] over (0, 2)). A block
# carries its outputs across the slabs; the host takes slabs only with at
# least 2 row tiles per SM, of at least 2 KB and 8 outputs each. Checked
# with slabs a stream apart and two streams apart (every other index of a
# larger tensor), a last tile of one row, from a 16-byte boundary and one and
# three elements off, keepdim, dtype=, and bitwise on a second call. The
# flags say whether float32 and bfloat16 take the stream-rows kernel: not
# slabs of too few rows, nor planes of narrow columns ([A, N, R, C] over
# (0, 2)), which stay on the columns kernel.
STREAM_SLAB_CASES = [
    ((3, 21061, 26), (0, 2), 1, True, False),      # a last tile of one row; bfloat16: 136 row tiles
    ((4, 45001, 26), (0, 2), 1, True, True),
    ((3, 200001, 6), (0, 2), 2, True, True),
    ((300, 2000, 5), (0, 2), 1, False, False),     # slabs of a few rows
    ((3, 40001, 5, 3), (0, 2), 1, False, False),   # planes
    ((4, 60001, 7, 3), (0, 2), 2, False, False),
    ((163, 525, 1833), (0, 2), 1, False, False),   # rows of 1833: too few to a tile for its threads
]
STREAM_SLAB_DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int16, torch.int32,
                      torch.int64, torch.uint8, torch.bool]


@pytest.mark.parametrize("case", range(len(STREAM_SLAB_CASES)))
@pytest.mark.parametrize("offset", [0, 1, 3])
@pytest.mark.parametrize("dtype", STREAM_SLAB_DTYPES, ids=str)
def test_stream_slabs(case, offset, dtype):
    shape, dims, every, slab_f32, slab_bf16 = STREAM_SLAB_CASES[case]
    x = _offset_cuda((shape[0] * every, *shape[1:]), dtype, offset)[::every]
    got = reduce_op.sum(x, dims)
    assert_matches_torch(got, x, dims, False)
    assert torch.equal(got, reduce_op.sum(x, dims))
    assert_matches_torch(reduce_op.sum(x, dims, True), x, dims, True)
    if dtype in (torch.bfloat16, torch.float32):
        assert_matches_torch(reduce_op.sum(x, dims, dtype=torch.float64), x, dims, False, dtype=torch.float64)
    expected = {torch.float32: slab_f32, torch.bfloat16: slab_bf16}
    if dtype in expected and offset == 0:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dims))
        assert any("gpureduce_stream_rows" in n for n in names) == expected[dtype], names


# Dense planes of at most 256 columns that no 16-byte vector fits, with
# planes of at least 32 KB (512 bytes for 2-byte elements) in passes of at
# least 1 MB, go to the stream-columns kernel: one plane split over blocks, a
# few planes (split, the partials combined several columns a block or a
# block a column) and many (a block each, or several to a block), periods
# P = C / gcd(C, VE) from 1 to 255, from a 16-byte boundary and three
# elements off. Columns a narrower vector fits (float32 pairs, unless too few
# for vectors to pay), more than 256 columns, planes that give each thread
# of a period fewer than 4 vectors (8 rows of 45 bfloat16), small planes and
# small passes go elsewhere, and so do 2-byte planes that an 8 KB tile holds
# with rows under 64 bytes (the stream rows' tiles). Planes of 512 KB or
# more with rows under 1 KB take it whatever vector fits them ([3, 4200, 32]
# float32, 525 KB planes, not [3, 4000, 32], 500 KB; rows of 256 float32, 1
# KB, not). The flags say whether float32 and bfloat16 take it.
STREAM_COLUMN_CASES = [
    ((1, 300000, 3), True, True), ((3, 100003, 7), True, True), ((40, 9000, 11), True, True),
    ((100, 1500, 13), True, True), ((64, 4000, 63), True, True), ((64, 4000, 65), True, True),
    ((16, 2000, 255), True, True), ((3, 3000, 257), False, False), ((1, 40000, 129), True, True),
    ((4000, 8, 45), False, False), ((2000, 32, 45), False, True),
    ((2000, 700, 6), False, True),    # float32 pairs; bfloat16 planes of 8.4 KB, several a block
    ((40, 30000, 2), False, True),    # float32 pairs; 40 bfloat16 pairs too few for 4-byte vectors
    ((2, 26215, 5), True, False),     # float32 1048600 bytes; bfloat16 half that
    ((2, 26214, 5), False, False),    # float32 1048560 bytes, under 1 MB
    ((400, 1639, 5), True, True),     # float32 planes of 32780 bytes
    ((400, 1638, 5), False, True),    # float32 planes of 32760 bytes
    ((20000, 52, 5), False, False),   # bfloat16 planes of 520 bytes, rows of 10: the stream rows' tiles
    ((20000, 51, 5), False, False),   # bfloat16 planes of 510 bytes (the tiles)
    ((3, 200000, 2), True, True),     # large planes: float32 pairs, bfloat16 4-byte rows
    ((2, 70000, 4), True, True),      # float32 rows of one 16-byte vector
    ((3, 4200, 32), True, False),     # float32 planes of 537600 bytes; bfloat16 half that
    ((3, 4000, 32), False, False),    # float32 planes of 512000 bytes
    ((4, 2048, 256), False, True),    # float32 rows of 1 KB; bfloat16 rows of 512 bytes, 1 MB planes
]
STREAM_COLUMN_DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int16, torch.int32,
                        torch.int64, torch.uint8]


@pytest.mark.parametrize("case", range(len(STREAM_COLUMN_CASES)))
@pytest.mark.parametrize("offset", [0, 3])
@pytest.mark.parametrize("dtype", STREAM_COLUMN_DTYPES, ids=str)
def test_stream_columns(case, offset, dtype):
    shape, stream_f32, stream_bf16 = STREAM_COLUMN_CASES[case]
    x = _offset_cuda(shape, dtype, offset)
    assert_matches_torch(reduce_op.sum(x, 1), x, 1, False)
    assert torch.equal(reduce_op.sum(x, 1), reduce_op.sum(x, 1))  # bitwise repeatable (split too)
    if dtype in (torch.bfloat16, torch.float16):
        assert_matches_torch(reduce_op.sum(x, 1, True, dtype=torch.float32), x, 1, True, dtype=torch.float32)
    expected = {torch.float32: stream_f32, torch.bfloat16: stream_bf16}
    if dtype in expected and offset == 0:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, 1))
        assert any("gpureduce_stream_columns" in n for n in names) == expected[dtype], names


# Many planes of 128 KB or more with rows under 1 KB take the
# stream-columns kernel whatever vector fits them, from 8 planes an SM
# (stream_columns_first): on 132 SMs [1056, 4100, 8] float32 (planes of
# 131200 bytes) does and [1055, 4100, 8] does not, nor [1056, 4100, 8]
# bfloat16 (65600 bytes). Also a plane short of 128 KB ([1056, 4095, 8]
# float32, 131040 bytes).
@pytest.mark.parametrize("shape", [(1056, 4100, 8), (1055, 4100, 8), (1056, 4095, 8)], ids=str)
@pytest.mark.parametrize("offset", [0, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32], ids=str)
def test_stream_columns_many_planes(shape, offset, dtype):
    x = _offset_cuda(shape, dtype, offset)
    assert_matches_torch(reduce_op.sum(x, 1), x, 1, False)
    assert torch.equal(reduce_op.sum(x, 1), reduce_op.sum(x, 1))
    assert torch.equal(reduce_op.amax(x, 1), torch.amax(x, 1))
    if offset == 0 and torch.cuda.get_device_properties(0).multi_processor_count == 132:
        expected = dtype != torch.bfloat16 and shape == (1056, 4100, 8)
        names = cuda_kernels_run(lambda: reduce_op.sum(x, 1))
        assert any("gpureduce_stream_columns" in n for n in names) == expected, names


# Stream-columns grids (stream_columns_planes_a_block, stream_columns_split)
# and the split 8-byte planes the columns kernel takes instead
# (HostPolicy::kSplitPlanes8*: at least 512 outputs, at most 4096 rows a
# plane, at most 32 MB); and how a split plane is finished: inside a cluster
# in passes of up to 16 MB split at most 8 ways a plane
# (HostPolicy::kStreamColumnsClusterMaxBytes), else by a second kernel.
# (shape, dtype, whether the stream-columns kernel runs, whether its split is
# finished in a cluster: None where not checked; the splits are those of
# 132 SMs.)
STREAM_COLUMN_GRID_CASES = [
    ((1413, 636, 9), torch.bfloat16, True, None),    # 1413 planes: 4 a block
    ((3000, 100, 33), torch.float16, True, None),    # blocks of 33-thread planes: several a block
    ((341, 477, 15), torch.float64, True, None),     # one plane a block
    ((1, 11076, 179), torch.float64, True, None),    # one plane split over the SMs
    ((18, 322, 207), torch.float64, False, None),    # split 8-byte planes, 3726 outputs: columns kernel
    ((3, 748, 171), torch.int64, False, None),       # 513 outputs
    ((3, 748, 169), torch.int64, True, None),        # 507 outputs
    ((6, 4200, 101), torch.float64, True, None),     # rows over 4096
    ((25, 2074, 143), torch.int64, True, None),      # 59 MB, over 32 MB
    ((10, 511, 153), torch.float32, True, True),     # split 5
    ((5, 837, 47), torch.int64, True, True),
    ((4, 7801, 9), torch.int64, True, True),         # split 8
    ((4, 5271, 31), torch.float16, True, True),
    ((9, 7753, 30), torch.bfloat16, True, True),
    ((36, 454, 225), torch.float32, True, True),     # 14.7 MB, 225 columns
    ((1, 25992, 50), torch.float16, True, False),    # split 40
    ((46, 106182, 12), torch.int16, True, False),    # 117 MB
]


@pytest.mark.parametrize("case", range(len(STREAM_COLUMN_GRID_CASES)))
def test_stream_columns_grids(case):
    shape, dtype, stream, cluster = STREAM_COLUMN_GRID_CASES[case]
    x = _offset_cuda(shape, dtype, 0)
    assert_matches_torch(reduce_op.sum(x, 1), x, 1, False)
    assert torch.equal(reduce_op.sum(x, 1), reduce_op.sum(x, 1))
    if dtype in (torch.bfloat16, torch.float16):
        assert_matches_torch(reduce_op.sum(x, 1, dtype=torch.float32), x, 1, False, dtype=torch.float32)
    names = cuda_kernels_run(lambda: reduce_op.sum(x, 1))
    assert any("gpureduce_stream_columns" in n for n in names) == stream, names
    if not stream:
        assert any("gpureduce_columns<" in n for n in names), names
    props = torch.cuda.get_device_properties(0)
    if cluster is not None and props.major >= 9 and props.multi_processor_count == 132:
        assert any("gpureduce_finish_partials" in n for n in names) != cluster, names


# Folded columns grids of narrow loads (launch_columns): the fewest row
# threads that still give every SM 1024 threads of the long-walk kernel (8
# loads in flight), where each then walks 16 rows or more and the grid takes
# no more waves than the plan's; vectors of bytes, short walks and grids that
# would gain a wave keep the plan (4 loads in flight). (shape, a ::2 view of
# dim 1, dim, dtype, (row threads, loads in flight) on 132 SMs.)
LONG_WALK_COLUMN_CASES = [
    ((149, 72, 34, 171), True, 2, torch.float16, (1, 8)),   # the plan: 2 row threads, 4 loads
    ((18452, 70, 27), False, 1, torch.float32, (1, 8)),     # the plan: 4 row threads
    ((7770, 434, 15), False, 1, torch.float32, (4, 8)),     # 15-thread blocks, 32 an SM: 4 row threads
    ((18508, 204, 14), False, 1, torch.bfloat16, (2, 8)),   # 28-thread blocks
    ((65, 107297), False, 0, torch.float32, (2, 4)),        # the long walk would take a second wave
    ((86908, 66, 4), False, 1, torch.bool, (4, 4)),         # vectors of bytes
    ((46, 434, 22, 49), True, 2, torch.uint8, (1, 4)),      # 22 rows: walks under 16
]


@pytest.mark.parametrize("case", range(len(LONG_WALK_COLUMN_CASES)))
def test_columns_long_walk_row_threads(case):
    shape, step, dim, dtype, (row_threads, unroll) = LONG_WALK_COLUMN_CASES[case]
    x = _offset_cuda(shape, dtype, 0)
    if step:
        x = x[:, ::2]
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
    assert torch.equal(reduce_op.sum(x, dim), reduce_op.sum(x, dim))
    if torch.cuda.get_device_properties(0).multi_processor_count == 132:
        launches = [(n, b) for n, _, b in cuda_kernel_launches(lambda: reduce_op.sum(x, dim)) if "gpureduce_columns<" in n]
        assert len(launches) == 1, launches
        name, block = launches[0]
        assert re.search(r"gpureduce_columns<gpureduce::SumOp<\w+>, (\d+),", name).group(1) == str(unroll), name
        assert block[1] == row_threads, launches

# Columns of 1- and 2-byte elements in few dense planes that no 16-byte
# vector fits but an 8- or 4-byte one does: rows of at least 8 such vectors
# take them in passes from 4 MB, however few the outputs (the columns
# kernel's V: elements a vector); under 4 MB, or with fewer vectors a row,
# they read an element a load (V = 1) as before.
WIDE_ROW_COLUMN_CASES = [
    ((5000, 1000), 0, torch.uint8, 8), ((4200, 1000), 0, torch.int8, 8), ((110000, 40), 0, torch.uint8, 4),
    ((2, 1100, 2008), 1, torch.bool, 8), ((2100, 1002), 0, torch.float16, 2), ((4, 1000, 1252), 1, torch.bfloat16, 4),
    ((3000, 1000), 0, torch.uint8, 1), ((400000, 12), 0, torch.uint8, 1),
]


@pytest.mark.parametrize("case", range(len(WIDE_ROW_COLUMN_CASES)))
def test_narrow_column_vectors_of_wide_rows(case):
    shape, dim, dtype, vec = WIDE_ROW_COLUMN_CASES[case]
    x = _offset_cuda(shape, dtype, 0)
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
    assert torch.equal(reduce_op.sum(x, dim), reduce_op.sum(x, dim))
    if dtype != torch.bool:
        assert torch.equal(reduce_op.amax(x, dim), torch.amax(x, dim))
    names = cuda_kernels_run(lambda: reduce_op.sum(x, dim))
    widths = {int(m.group(1)) for n in names for m in [re.search(r"gpureduce_columns<.*, (\d+)>\(", n)] if m}
    assert widths == {vec}, names


# Rows of one dense row per output whose width (or start) no vector fits,
# long enough for a vector body of at least 16 vectors: each row is read
# with vector loads from its own first 16-byte boundary, and the elements
# around the body one by one (pitch rows for many outputs, split rows for
# few, full sums). Checked at widths around the 16-vector limit and at offsets
# that give every row another head.
RAGGED_CASES = [((4096, 250), 1), ((333, 1001), 1), ((17, 300007), 1), ((3, 1 << 20), 1), ((406,), None),
                ((4702,), None), ((1 << 20) + 5, None), ((2000, 67), 1), ((2000, 66), 1), ((64, 50257), 1)]


@pytest.mark.parametrize("case", range(len(RAGGED_CASES)))
@pytest.mark.parametrize("offset", [0, 1, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.uint8, torch.int32,
                                   torch.float64, torch.bool, torch.complex64], ids=str)
def test_ragged_rows(case, offset, dtype):
    shape, dim = RAGGED_CASES[case]
    shape = shape if isinstance(shape, tuple) else (shape,)
    x = _offset_cuda(shape, dtype, offset)
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
    if dtype == torch.float32 and shape[-1] >= 67:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dim))
        assert any(re.search(rf"gpureduce_split_rows<.*, float, float, 4, 1{DENSE}>", k) or
                   re.search(rf"gpureduce_pitch_rows<.*, float, float, 4, (?:true|\(bool\)1), (?:\(int\))?\d+{DENSE}>", k)
                   for k in names), names


# Ragged rows in more waves of blocks than fold into one take half the lanes
# where kRowChunksPerLane rounds the group up (two rounds of chunks a lane),
# and then fold as any pass: [111848, 300] bfloat16 (16 -> 8 lanes),
# [50382, 333] float32 (32 -> 16, folded to 4). A lane's ends take only the
# rounds its group needs. Ragged rows of 8-byte elements ([45827, 247]
# int64) take the inner rows kernel instead.
@pytest.mark.parametrize("shape,dtype", [((111848, 300), torch.bfloat16), ((50382, 333), torch.float32),
                                         ((45827, 247), torch.int64), ((100764, 333), torch.float16)], ids=str)
@pytest.mark.parametrize("offset", [0, 1])
def test_ragged_rows_many_waves(shape, dtype, offset):
    x = _offset_cuda(shape, dtype, offset)
    ours = reduce_op.sum(x, 1)
    assert_matches_torch(ours, x, 1, False)
    assert torch.equal(ours, reduce_op.sum(x, 1))
    names = cuda_kernels_run(lambda: reduce_op.sum(x, 1))
    if dtype.itemsize == 8:
        assert any("gpureduce_inner_rows<" in k for k in names), names
        assert not any("gpureduce_pitch_rows<" in k for k in names), names
    else:
        assert any(re.search(rf"gpureduce_pitch_rows<.*, (?:true|\(bool\)1), (?:\(int\))?3{DENSE}>", k)
                   for k in names), names


# Outputs of several ragged rows, their rows a whole number of 16-byte
# vectors apart (so every row of an output has the same head): each row's
# vector body from its first 16-byte boundary, the elements around the
# bodies spread over the output's blocks, in split passes (few outputs).
# [7, 40, 26, 47] over (0, 2, 3): 40 outputs of 7 rows of 1222; [5, 3, 16,
# 67] over (0, 3) keeps an outer dim that does not merge; offsets give the
# outputs other heads. Element loads for the rest: many outputs ([4, 2000,
# 130] over (0, 2), inner rows) and rows whose stride is not a whole number
# of vectors ([3, 5, 1222] float32 over (0, 2): rows 6110 elements apart).
@pytest.mark.parametrize("shape,dims", [((7, 40, 26, 47), (0, 2, 3)), ((4, 2000, 130), (0, 2)),
                                        ((5, 3, 16, 67), (0, 3)), ((3, 5, 1222), (0, 2))], ids=str)
@pytest.mark.parametrize("offset", [0, 1, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.uint8, torch.int32],
                         ids=str)
def test_ragged_rows_several_per_output(shape, dims, offset, dtype):
    x = _offset_cuda(shape, dtype, offset)
    assert_matches_torch(reduce_op.sum(x, dims), x, dims, False)
    assert torch.equal(reduce_op.sum(x, dims), reduce_op.sum(x, dims))
    if dtype == torch.float32 and shape[1] in (40, 5):
        names = [k for k in cuda_kernels_run(lambda: reduce_op.sum(x, dims)) if "gpureduce_split_rows<" in k]
        vec = 4 if shape[1] == 40 else 1
        assert names and all(re.search(rf", float, float, {vec}, 1{DENSE}>\(", k) for k in names), names


# Outputs of several rows read an element per load (no vector fits the rows'
# width, start or stride) walk their chunks with the row and column stepped
# rather than divided per chunk (ChunkWalk in engine/rows.cuh), carrying a
# column past its row's end: rows shorter than a lane group (26 < 32: a
# step crosses a row), longer ones (143 * 30, 1222), few outputs (the split
# rows kernel, whose blocks' ranges start mid-row), and a permuted view whose
# rows are strided. The flag: float32 runs a rows kernel of element loads.
ELEMENT_ROW_CASES = [
    ((15, 6947, 1, 26), (0, 2, 3), True), ((7, 267, 30, 143), (0, 2, 3), True), ((3, 5, 1222), (0, 2), True),
    ((9, 7, 100003), (0, 2), True), ((2, 33, 26), (0, 2), True),
    ((40, 300, 50), (0, 1), False),  # permuted below to [50, 40, 300] over (1, 2)
]


@pytest.mark.parametrize("case", range(len(ELEMENT_ROW_CASES)))
@pytest.mark.parametrize("offset", [0, 1])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64, torch.int8, torch.int64], ids=str)
def test_rows_of_element_loads_several_per_output(case, offset, dtype):
    shape, dims, element_rows = ELEMENT_ROW_CASES[case]
    x = _offset_cuda(shape, dtype, offset)
    if case == len(ELEMENT_ROW_CASES) - 1:
        x, dims = x.permute(2, 0, 1), (1, 2)
    assert_matches_torch(reduce_op.sum(x, dims), x, dims, False)
    assert torch.equal(reduce_op.sum(x, dims), reduce_op.sum(x, dims))
    if dtype == torch.float32 and offset == 1 and element_rows:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dims))
        # The profiler shortens long names in the middle; their ends keep the
        # element type, V = 1 and kStep = 1 of a rows kernel.
        element_rows_kernel = rf", float, float, 1, 1(, \d)?{DENSE}>\(gpureduce::cuda::RowsArgs<"
        assert any(re.search(element_rows_kernel, k) for k in names), names


# Columns passes split along their rows: splits of 2 to 8 blocks are
# finished inside a thread-block cluster (sm_90), larger ones through a
# ticket; columns of a vector and narrower ones, one and several outer
# indices. The small shapes are also latency bound: rows whose lanes get
# fewer chunks than the unroll (the predicated tail), ragged rows of a few
# outputs (a block per output), and channels_last feature maps. Outer
# indices grouped in less than a wave take up to 64 row threads ([48, 238,
# 12]; [20, 4516, 12], over 1 MB, while each walks 16 rows or more).
# Passes under 256 KB are not split where a row thread walks at most 24
# rows, tiles narrowed (to one vector) to get there: [1, 1049, 14] and
# [1, 3642, 3] now read unsplit; [1, 20000, 8] float32 (640 KB) is a
# cluster of 8.
SPLIT_COLUMN_CASES = [((1, 1049, 14), 1), ((1, 3642, 3), 1), ((64, 16, 384), 1), ((3, 1024, 4, 4), (2, 3)),
                      ((263, 111), 0), ((10, 41, 4), 1), ((8787, 2), 0), ((2, 1390, 3), 1), ((4, 36776, 7), 1),
                      ((3, 100001), 0), ((48, 238, 12), 1), ((20, 4516, 12), 1), ((1, 20000, 8), 1)]
SMALL_ROW_CASES = [((12951, 372), 1), ((6, 122), 1), ((3, 1000), 1), ((124, 200), 1), ((277, 216), 1),
                   ((3, 1447), 1), ((40, 40), 1), ((264, 600), 1), ((265, 600), 1)]


@pytest.mark.parametrize("case", range(len(SPLIT_COLUMN_CASES) + len(SMALL_ROW_CASES)))
@pytest.mark.parametrize("dtype", EVERY_KERNEL_DTYPE, ids=str)
def test_split_columns_and_small_rows(case, dtype):
    shape, dim = (SPLIT_COLUMN_CASES + SMALL_ROW_CASES)[case]
    x = random_tensor(shape, dtype, "cpu", _gen()).cuda()
    if len(shape) == 4:
        x = x.contiguous(memory_format=torch.channels_last)
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
    assert torch.equal(reduce_op.sum(x, dim), reduce_op.sum(x, dim))
    if dtype == torch.float32 and case in (0, 2, 3, 12) and torch.cuda.get_device_capability()[0] >= 9:
        # split passes finished in a cluster, or small ones not split: no ticket to zero
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dim))
        assert any("gpureduce_columns" in n for n in names) and not any("Memset" in n for n in names), names


# Columns passes split along their rows take up to one wave of the kernel's
# blocks, not a few past it (blocks left for a second round, each reading
# its share of a column alone): these kernels hold two blocks a SM, so on
# 132 SMs at most 264 blocks, where rounding up had given 272 ([8192, 8192]
# uint8: 16 tiles), 288 (bfloat16: 32 tiles) and 265 (5 tiles of 160
# float16 vectors).
@pytest.mark.parametrize("shape,dim,dtype,cl", [((8192, 8192), 0, torch.uint8, False),
                                                ((4096, 8192), 0, torch.bfloat16, False),
                                                ((128, 1280, 28, 28), (0, 2, 3), torch.float16, True),
                                                ((4560, 1318), 0, torch.float64, False)], ids=str)
def test_columns_split_within_wave(shape, dim, dtype, cl):
    x = random_tensor(shape, dtype, "cpu", _gen()).cuda()
    if cl:
        x = x.contiguous(memory_format=torch.channels_last)
    ours = reduce_op.sum(x, dim)
    assert_matches_torch(ours, x, dim, False)
    assert torch.equal(ours, reduce_op.sum(x, dim))
    if torch.cuda.get_device_properties(0).multi_processor_count == 132:
        grids = [g for n, g, _ in cuda_kernel_launches(lambda: reduce_op.sum(x, dim)) if "gpureduce_columns" in n]
        assert len(grids) == 1 and grids[0][1] > 1 and grids[0][0] * grids[0][1] <= 264, grids


# Columns passes of 1 MB or more over a few rows: each row thread walks at
# least one unrolled loop of rows (4), so 7 rows take one row thread, 16
# take four; checked against torch and bitwise on a second call.
@pytest.mark.parametrize("shape,dim,cl", [((21, 7, 5120), 1, False), ((55, 2048, 4, 4), (2, 3), True),
                                          ((27, 128256), 0, False), ((4, 256000), 0, False),
                                          ((18, 7, 176, 267), 0, False), ((23, 16, 4096), 1, False)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int32], ids=str)
def test_columns_few_rows(shape, dim, cl, dtype):
    x = random_tensor(shape, dtype, "cpu", _gen()).cuda()
    if cl:
        x = x.contiguous(memory_format=torch.channels_last)
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
    assert torch.equal(reduce_op.sum(x, dim), reduce_op.sum(x, dim))


# Grids of a few waves folded into one (fold_into_one_wave): columns passes
# take fewer row threads per block, rows passes fewer lanes per output, each
# thread a longer walk. Rows fold only where their lanes' rounds of loads
# stay within those of all the waves they replace ([13898, 873][:, ::5]
# float32, rows of 175 elements read an element per load: 869 blocks, three
# waves of two rounds, fold fourfold into six rounds); columns
# of single elements by at most their waves; columns whose blocks take
# several outer indices ([5945, 698, 6]) not at all; split rows passes of a
# block per output take smaller blocks. Pitch rows fold to fewer than 16
# lanes only for walks of at most 4 rounds ([20000, 1100] float32: 1250
# blocks of 32 lanes; 8 lanes would walk 9 rounds, so 16 lanes, 625
# blocks, though not one wave). On the H200 (132 SMs)
# the launch is checked too: (kernel, grid, block), before the fold in the
# comment.
FOLD_CASES = [
    ((72, 128, 768), 1, None, torch.float32, ("columns", [432, 1, 1], [32, 8, 1])),       # [32, 16, 1]
    ((69, 205923), 0, "permute", torch.bfloat16, ("columns", [1609, 1, 1], [128, 1, 1])),  # [128, 4, 1]
    ((7916, 2367), 1, None, torch.float16, ("pitch_rows", [248, 1, 1], [512, 1, 1])),      # grid 495
    ((20000, 1100), 1, None, torch.float32, ("pitch_rows", [625, 1, 1], [512, 1, 1])),     # grid 1250
    ((4000, 5, 512), 2, "slice", torch.float32, ("inner_rows", [250, 1, 1], [512, 1, 1])),  # grid 1000
    ((13898, 873), 1, "step", torch.float32, ("inner_rows", [218, 1, 1], [512, 1, 1])),   # grid 869
    ((5945, 698, 6), 1, None, torch.float32, None),                                        # grouped columns
    ((873, 50257), 1, None, torch.float32, ("split_rows", [1, 873, 1], [128, 1, 1])),      # [256, 1, 1]
]


@pytest.mark.parametrize("case", range(len(FOLD_CASES)))
@pytest.mark.parametrize("dtype", [None, torch.float64, torch.int32, torch.uint8], ids=str)
def test_one_wave_fold(case, dtype):
    shape, dim, view, own_dtype, launch = FOLD_CASES[case]
    x = random_tensor(shape, dtype or own_dtype, "cpu", _gen()).cuda()
    if view == "permute":
        x = x.permute(0, 1)
    elif view == "slice":
        x = x[:, :4, :]  # outer dims (n, 4) that do not merge
    elif view == "step":
        x = x[:, ::5]  # 20 bytes apart: neither tiles nor strided spans
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
    assert torch.equal(reduce_op.sum(x, dim), reduce_op.sum(x, dim))
    if dtype is None and launch is not None and torch.cuda.get_device_properties(0).multi_processor_count == 132:
        kernel, grid, block = launch
        launches = cuda_kernel_launches(lambda: reduce_op.sum(x, dim))
        ours = [(g, b) for n, g, b in launches if f"gpureduce_{kernel}" in n]
        assert ours == [(grid, block)], ours


# Permuted inputs whose kept dims run transposed against memory: a columns
# pass of at most 8 rows, 64 columns or more and 1 MB or more of output
# writes a scratch buffer in its own order, then copies it into the output
# (one copy kernel after ours); 16 rows or two columns write the output
# directly. Also into an out= tensor, contiguous
# (staged) or transposed like the input (direct), with keepdim and dtype=.
TRANSPOSED_CASES = [
    ((109, 3, 808, 7), (2, 3, 0, 1), 3, True),     # [808, 7, 109] over 3 rows
    ((512, 2, 1024), (2, 0, 1), 2, True),          # two rows
    ((64, 2, 3, 4096), (3, 0, 1, 2), (2, 3), True),  # two reduced dims, merged: 6 rows
    ((3, 1030, 5, 297), (3, 1, 0, 2), 3, True),    # odd sizes, 5 rows, two outer dims
    ((64, 16, 4096), (2, 0, 1), 2, False),         # 16 rows: direct
    ((4000, 70, 2, 2), (2, 0, 3, 1), 0, False),    # two columns: direct
]


@pytest.mark.parametrize("case", range(len(TRANSPOSED_CASES)))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.uint8], ids=str)
def test_transposed_output(case, dtype):
    shape, perm, dim, staged = TRANSPOSED_CASES[case]
    x = random_tensor(shape, dtype, "cpu", _gen()).cuda().permute(*perm)
    for keepdim in (False, True):
        assert_matches_torch(reduce_op.sum(x, dim, keepdim), x, dim, keepdim)
        assert torch.equal(reduce_op.sum(x, dim, keepdim), reduce_op.sum(x, dim, keepdim))
    if dtype == torch.float32:
        assert_matches_torch(reduce_op.sum(x, dim, dtype=torch.float64), x, dim, False, torch.float64)
        ref = torch.sum(x, dim)
        out = torch.empty_like(ref)
        reduce_op.sum(x, dim, out=out)
        assert torch.equal(out, reduce_op.sum(x, dim))
        # An out= laid out like the input's kept dims is written directly.
        dims = [dim] if isinstance(dim, int) else list(dim)
        kept = sorted((d for d in range(x.dim()) if d not in dims), key=lambda d: -x.stride(d))
        out_t = torch.empty([x.size(d) for d in kept], device="cuda").permute(*[kept.index(d) for d in range(x.dim()) if d not in dims])
        reduce_op.sum(x, dim, out=out_t)
        assert torch.equal(out_t, reduce_op.sum(x, dim))
        names = [n for n, _, _ in cuda_kernel_launches(lambda: reduce_op.sum(x, dim))]
        ours = [n for n in names if "gpureduce_" in n]
        assert len(ours) == 1 and names[0] == ours[0], names
        assert len(names) == (2 if staged else 1), names
        assert [n for n, _, _ in cuda_kernel_launches(lambda: reduce_op.sum(x, dim, out=out_t))] == ours


# Columns stores: a thread's V outputs in 16-byte words where they are
# adjacent and aligned (store_outputs), one at a time otherwise: fresh
# outputs, out= one element off a 16-byte boundary, and out= with a gap
# between columns; passes of few rows and over dims of size 1 only.
@pytest.mark.parametrize("shape,dim", [((300, 2, 1000), 1), ((130, 384, 1, 1), (2, 3)), ((40, 3, 1001), 1),
                                       ((2, 70000), 0), ((33, 5, 96), 1)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.uint8, torch.float64, torch.complex64],
                         ids=str)
def test_columns_stores(shape, dim, dtype):
    x = random_tensor(shape, dtype, "cpu", _gen()).cuda()
    got = reduce_op.sum(x, dim)
    assert_matches_torch(got, x, dim, False)
    n = got.numel()
    for out in (torch.empty(n + 1, dtype=got.dtype, device="cuda")[1:].view(got.shape),
                torch.empty(n * 2, dtype=got.dtype, device="cuda")[::2].view(got.shape)):
        out.fill_(7)
        reduce_op.sum(x, dim, out=out)
        assert torch.equal(out, got)


# The columns kernel's tree over its row threads (combine_over_y, a fixed
# halving tree: shuffles inside a warp, shared memory across warps) in
# blocks of every width it takes: 1
# to 12 threads across (powers of two and not), up to 256 row threads,
# blocks of under a warp, and 16-byte vectors of int64 partials (int8).
# Small passes, most of them one block: feature maps summed over (0, 2, 3),
# a few columns of a middle dim, rows of few outputs, each checked against
# torch, bitwise on a second call, and run on the columns kernel with
# several row threads (the blocks as launched on the H200: NOTES.md,
# session 62).
COLUMNS_TREE_CASES = [
    ((1, 16, 16, 16), (0, 2, 3), "cl"), ((3, 3, 16, 16), (0, 2, 3), "cl"), ((2, 192, 8, 8), (2, 3), "cl"),
    ((1, 305, 8), 1, None), ((2, 1390, 6), 1, "narrow"), ((1, 4000, 2), 1, None),
    ((64, 24), 0, None), ((9, 40, 48), 1, None), ((2, 333, 12), 1, None), ((1, 64, 4), 1, None),
]


@pytest.mark.parametrize("case", COLUMNS_TREE_CASES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64, torch.int8, torch.int64,
                                   torch.complex64], ids=str)
def test_columns_tree(case, dtype):
    shape, dim, view = case
    x = random_tensor(shape, dtype, "cpu", _gen()).cuda()
    if view == "cl":
        x = x.contiguous(memory_format=torch.channels_last)
    elif view == "narrow":
        x = x[..., 1:4]
    got = reduce_op.sum(x, dim)
    assert_matches_torch(got, x, dim, False)
    assert torch.equal(reduce_op.sum(x, dim), got)
    launches = cuda_kernel_launches(lambda: reduce_op.sum(x, dim))
    trees = [block for name, _, block in launches if "gpureduce_columns" in name and block[1] > 1]
    assert trees, launches


# The columns kernel with kLongWalkUnroll (8) loads in flight: loads of up
# to 4 bytes a thread (single elements of 1- to 4-byte types, pairs of
# 16-bit ones, fours of bytes) whose row threads walk 4 rows or more in a
# grid that does not fold into one wave (engine/columns.cuh). Walks of about
# 4 to 500 rows a thread, split and unsplit, across one and two reduced
# dims, checked against torch and bitwise on a second call; the grids as
# the H200 lays them out (NOTES.md, session 63).
COLUMNS_LONG_WALK_CASES = [
    ((2, 1390, 6), 1, "narrow", torch.float32), ((1, 3642, 3), 1, None, torch.bfloat16),
    ((9, 365, 10), 1, None, torch.float32), ((1, 5905, 5), 1, None, torch.bool),
    ((98, 790, 2), 1, None, torch.int8), ((2, 1677, 13), 1, None, torch.int32),
    ((263, 222), 0, "step", torch.float32), ((3, 4233, 13), 1, None, torch.float16),
    ((833, 152), 0, None, torch.uint8), ((5, 410, 2), 1, None, torch.float32),
    ((20, 50, 7), 1, None, torch.float32), ((1, 31144, 6), 1, None, torch.bfloat16),
    ((5, 27, 1, 2, 17), (0, 1, 2), None, torch.float32), ((42, 5, 19, 6, 12), (0, 2, 3), None, torch.bool),
]


@pytest.mark.parametrize("case", COLUMNS_LONG_WALK_CASES, ids=str)
def test_columns_long_walk(case):
    shape, dim, view, dtype = case
    x = random_tensor(shape, dtype, "cpu", _gen()).cuda()
    if view == "narrow":
        x = x[..., 1:4]
    elif view == "step":
        x = x[:, ::2]
    got = reduce_op.sum(x, dim)
    assert_matches_torch(got, x, dim, False)
    assert torch.equal(reduce_op.sum(x, dim), got)
    names = cuda_kernels_run(lambda: reduce_op.sum(x, dim))
    assert any(re.search(r"gpureduce_columns<[^,]+, 8, ", n) for n in names), names


# Columns passes of 1 MB or more with many vectors of columns (256 or more
# per SM): a thread walks its rows with only the row threads the rows want,
# several outer indices to a block of 256 threads where the columns are few;
# and tiles trimmed to whole warps where the columns are fewer than the
# block's power-of-two width (171 and 300 columns, a .step view and a
# permutation). Checked against torch and bitwise on a second call.
@pytest.mark.parametrize("shape,dim,view", [((12000, 20, 12), 1, None), ((9000, 3, 15), 1, None),
                                            ((40000, 28, 2), 1, None), ((40, 72, 34, 171), 2, "step"),
                                            ((30, 300, 700), 1, "permute"), ((2000, 9, 40), 1, None)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8], ids=str)
def test_columns_many_vectors(shape, dim, view, dtype):
    x = random_tensor(shape, dtype, "cpu", _gen()).cuda()
    if view == "step":
        x = x[:, ::2]
    elif view == "permute":
        x = x.permute(2, 1, 0)  # [700, 300, 30]: 300 reduced rows of 30 strided columns
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
    assert torch.equal(reduce_op.sum(x, dim), reduce_op.sum(x, dim))


# The pitch rows kernel is built for 4 blocks per SM for 4-byte elements in
# rows a vector fits, 3 for the rest and for ragged rows. Rows of other
# layouts (two outer dims that do not merge, after slicing) run the inner
# rows kernel: 16-bit float rows of at most two unrolled loops per lane built
# for 3 blocks per SM, longer ones and other types for 2; rows read an
# element per load (a stride-5 view, wider than strided spans take) for 3
# where the elements are of 4 bytes or fewer, 2 for float64. (A stride-2
# view of 16-bit rows is read as planes through the stream-rows kernel:
# strided_rows_geometry.)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
def test_rows_blocks_per_sm(dtype):
    for width in (1000, 1001):
        x = random_tensor((5000, width), dtype, "cpu", _gen()).cuda()
        assert_matches_torch(reduce_op.sum(x, 1), x, 1, False)
        names = [k for k in cuda_kernels_run(lambda: reduce_op.sum(x, 1)) if "gpureduce_pitch_rows<" in k]
        ragged = width % (4 if dtype == torch.float32 else 8) != 0
        want = 4 if dtype == torch.float32 and not ragged else 3
        flag = r"(?:true|\(bool\)1)" if ragged else r"(?:false|\(bool\)0)"
        assert names and all(re.search(rf",\s*{flag},\s*(?:\(int\))?{want}{DENSE}>\(", k) for k in names), names
    for width, short in ((1000, True), (4096, False)):
        x = random_tensor((2500, 3, width), dtype, "cpu", _gen()).cuda()[:, :2, :]
        assert_matches_torch(reduce_op.sum(x, 2), x, 2, False)
        names = [k for k in cuda_kernels_run(lambda: reduce_op.sum(x, 2)) if "gpureduce_inner_rows<" in k]
        want = 3 if short and dtype != torch.float32 else 2
        assert names and all(f", {want}>(" in k for k in names), names
    for elem_dtype, want in ((dtype, 3), (torch.float64, 2)):
        x = random_tensor((3000, 581), elem_dtype, "cpu", _gen()).cuda()[:, ::7]
        assert_matches_torch(reduce_op.sum(x, 1), x, 1, False)
        names = [k for k in cuda_kernels_run(lambda: reduce_op.sum(x, 1)) if "gpureduce_inner_rows<" in k]
        assert names and all(re.search(rf",\s*1,\s*1,\s*(?:\(int\))?{want}>\(", k) for k in names), names


# Columns that no 16-byte vector fits but a narrower one does (8 or 4 bytes,
# two elements at least: [.., 14] float32 and float16 in pairs, [.., 12]
# float16 and uint8 in fours), from a 16-byte boundary and one and two
# elements into the storage (each shifts the widest vector that fits); row
# counts around the unroll and the row threads (a thread's last rows are
# loaded together). Narrower vectors are taken from 1 MB of input up, and
# for 1- and 2-byte elements in dense planes from 2^14 vectors across the
# outputs ([3000, 37, 14] float16: 21000; [1800, 45, 10]: 9000, not taken).
# float32 planes of narrow rows under 4 MB ([1800, 45, 10]) take the stream
# rows' tiles instead; from 4 MB ([3000, 37, 14], [12000, 37, 14]) the pairs.
NARROW_VECTOR_COLUMN_CASES = [((3000, 37, 14), 1), ((1800, 45, 10), 1), ((6000, 45, 12), 1), ((100, 37, 8), 1),
                              ((3, 286, 14), 1), ((64, 7, 6), 1), ((1000, 2), 0), ((9, 130, 20), (0, 1)),
                              ((40, 6, 601, 20), (0, 2)), ((5, 19, 3, 12), (0, 2)), ((12000, 37, 14), 1)]


@pytest.mark.parametrize("case", range(len(NARROW_VECTOR_COLUMN_CASES)))
@pytest.mark.parametrize("offset", [0, 1, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16, torch.bfloat16, torch.int16,
                                   torch.uint8, torch.bool], ids=str)
def test_columns_narrow_vectors(case, offset, dtype):
    shape, dim = NARROW_VECTOR_COLUMN_CASES[case]
    x = _offset_cuda(shape, dtype, offset)
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)
    assert torch.equal(reduce_op.sum(x, dim), reduce_op.sum(x, dim))
    # The kernel from a 16-byte boundary: the vector width, or 0 where no
    # narrower vector is taken ([1800, 45, 10] float16 and float32: the
    # stream rows' tiles).
    expected = {(0, torch.float32): 2, (0, torch.float16): 2, (1, torch.float32): 0, (1, torch.float16): 0,
                (2, torch.uint8): 4, (8, torch.float16): 4, (10, torch.float32): 2, (10, torch.float16): 2}
    if offset == 0 and (case, dtype) in expected:
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dim))
        t = {torch.float32: "float", torch.float16: "c10::Half", torch.uint8: "unsigned char"}[dtype]
        narrow = [k for k in names if re.search(rf"gpureduce_columns<.*, {re.escape(t)}, {KERNEL_OUT_TYPE}, [248]>", k)]
        want = expected[(case, dtype)]
        assert (narrow and all(k.endswith(f", {want}>") or f", {want}>(" in k for k in narrow)) if want else not narrow, names


# Columns of two reduced dims with a kept dim between them (a row's offset
# splits into the inner and the outer reduced dim), with row threads fewer
# and more than the inner dim's rows, and vectors of one to sixteen elements.
TWO_REDUCED_DIM_CASES = [(31, 61, 5, 17, 2), (3, 50, 7, 10), (40, 3, 33, 5), (257, 2, 3, 3), (5, 9, 1000, 3)]


@pytest.mark.parametrize("shape", TWO_REDUCED_DIM_CASES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.bfloat16, torch.int8],
                         ids=str)
def test_columns_two_reduced_dims(shape, dtype):
    x = random_tensor(shape, dtype, "cpu", _gen()).cuda()
    for xs in (x, x[..., :-1] if shape[-1] > 1 else x):
        assert_matches_torch(reduce_op.sum(xs, (0, 2)), xs, (0, 2), False)
        assert torch.equal(reduce_op.sum(xs, (0, 2)), reduce_op.sum(xs, (0, 2)))


# Ragged columns: columns passes of one or two rows whose column count or
# start no 16-byte vector fits, but whose rows all start at the same offset
# from a 16-byte boundary, read vectors from the first boundary and an edge
# vector at each end (launch_columns' col_shift), from 1 MB of input up.
# Padded slices ([R, P][:, :C] over dim 0, P a whole number of vectors, C
# odd) of two rows, also in blocks of several outer indices ([B, 2,
# P][..., :C] over dim 1) and at misaligned starts of whole-vector columns;
# and, through the other kernels, the same over more rows (where the
# vectors lost), and the passes of one-element rows below (nansum and prod
# over a size-1 dim, whose results are exact: NaN -> 0, and x itself).
# Byte inputs are not shifted.
RAGGED_COLUMN_SLICES = [((2, 140016), 139999, 0), ((2, 300016), 299993, 0), ((64, 2, 4112), 4093, 1),
                        ((2, 262144), 262144, 0), ((300, 1040), 1001, 0), ((5000, 528), 517, 0),
                        ((64, 7, 1040), 1003, 1)]


@pytest.mark.parametrize("case", range(len(RAGGED_COLUMN_SLICES)))
@pytest.mark.parametrize("offset", [0, 1, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32,
                                   torch.int64, torch.int16, torch.complex64, torch.uint8], ids=str)
def test_ragged_columns(case, offset, dtype):
    shape, cols, dim = RAGGED_COLUMN_SLICES[case]
    x = _offset_cuda(shape, dtype, offset)[..., :cols]
    ours = reduce_op.sum(x, dim)
    assert_matches_torch(ours, x, dim, False)
    assert torch.equal(ours, reduce_op.sum(x, dim))
    shifted = offset != 0 or cols % (16 // x.element_size()) != 0
    if dtype in (torch.float32, torch.float16) and shifted and shape[dim] <= 2 and \
            x.numel() * x.element_size() >= 1 << 20:
        t = {torch.float32: "float", torch.float16: "c10::Half"}[dtype]
        v = 16 // x.element_size()
        names = cuda_kernels_run(lambda: reduce_op.sum(x, dim))
        assert any(re.search(rf"gpureduce_columns<.*, {re.escape(t)}, {KERNEL_OUT_TYPE}, {v}>", k) for k in names), names


@pytest.mark.parametrize("n", [262147, 1000003, (1 << 20) + 8])
@pytest.mark.parametrize("offset", [0, 1, 5])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32],
                         ids=str)
def test_ragged_columns_one_element_rows(n, offset, dtype):
    x = _offset_cuda((n, 1), dtype, offset)
    if dtype.is_floating_point:
        x[::7] = float("nan")
        x[3::11] = float("inf")
    ours = reduce_op.nansum(x, 1)
    assert torch.equal(ours, torch.nan_to_num(x[:, 0], nan=0.0, posinf=float("inf"),
                                              neginf=float("-inf")).to(ours.dtype))
    ours = reduce_op.prod(x, 1, keepdim=True)
    assert torch.equal(ours.isnan(), x.isnan())
    same = ~x.isnan()
    assert torch.equal(ours[same], x[same].to(ours.dtype))
    if dtype == torch.float16 and offset != 0 and n * 2 >= 1 << 20:
        names = cuda_kernels_run(lambda: reduce_op.nansum(x, 1))
        assert any(re.search(rf"gpureduce_columns<.*, c10::Half, {KERNEL_OUT_TYPE}, 8>", k) for k in names), names


# Small expanded inputs (4 MB with their repeats: kRereadExpandedBytes) are
# read as they are, by the engine's kernels alone (one launch, or a split
# and its finish): a kept stride-0 dim, a reduced one beside a real
# reduction, and both; sizes on both sides of the line (above it, ATen
# broadcasts or folds the repeats).
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32], ids=str)
def test_small_expanded_inputs_engine_kernels_only(dtype):
    # (n, repeats): float32 views of 176 KB, 40 KB, 9.3 KB, 320 KB, 4 MB
    # (the line) and 5 MB (over it: a reduction of the distinct elements,
    # then a broadcast or a fold); the last form is twice each.
    line = 4 << 20
    for n, reps in ((11, 4096), (40, 256), (1194, 2), (16384, 5), (1 << 18, 4), (1 << 18, 5)):
        base = random_tensor((n,), dtype, "cpu", _gen()).cuda()
        for view, dim in [(base[None].expand(reps, -1), 1), (base[:, None].expand(-1, reps), 0),
                          (base[:, None].expand(-1, reps), None), (base[None, :, None].expand(2, -1, reps), (1, 2))]:
            assert_matches_torch(reduce_op.sum(view, dim), view, dim, False)
            if dtype == torch.float32:
                kernels = [k for k in cuda_kernels_run(lambda: reduce_op.sum(view, dim)) if k.startswith("void ")]
                ours_only = all("gpureduce" in k for k in kernels)
                assert ours_only == (view.numel() * 4 <= line), (n, reps, dim, kernels)


# Larger expanded inputs: stride-0 dims are read once (a kept one computed
# once and broadcast, a reduced one folded in by the op); results match torch.
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bfloat16, torch.uint8], ids=str)
def test_expanded_inputs(dtype):
    base = random_tensor((1 << 16,), dtype, "cpu", _gen()).cuda()
    for view, dim in [(base[:, None].expand(-1, 4096), 0), (base[:, None].expand(-1, 4096), 1),
                      (base[None].expand(64, -1), 0), (base[None].expand(64, -1), None),
                      (base.view(256, 256)[:, None].expand(-1, 3, -1), (0, 1))]:
        assert_matches_torch(reduce_op.sum(view, dim), view, dim, False)


@pytest.mark.slow
def test_more_than_2_pow_31_elements():
    n = (1 << 31) + 8192
    x = torch.randint(-3, 4, (n,), device="cuda", dtype=torch.int8)
    assert torch.equal(reduce_op.sum(x), torch.sum(x))
    m = (1 << 31) // 4012 + 1  # rows of 4012: more than 2^31 elements in all
    rows = x[: m * 4012].view(m, 4012)
    assert torch.equal(reduce_op.sum(rows, 1), torch.sum(rows, 1))
    assert torch.equal(reduce_op.sum(rows, 0), torch.sum(rows, 0))
    del x, rows
    h = torch.rand((1 << 31) + 33, device="cuda", dtype=torch.float16)
    ref = sum(c.double().sum() for c in h.split(1 << 28))
    ours = reduce_op.sum(h, dtype=torch.float32).double()
    assert abs(ours - ref) <= 1e-5 * ref


def test_non_default_stream():
    x = torch.randn(3000, 517, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        a = reduce_op.sum(x, 1)
        b = reduce_op.sum(x, 0)
        c = reduce_op.sum(x)
    s.synchronize()
    assert_matches_torch(a, x, 1, False)
    assert_matches_torch(b, x, 0, False)
    assert_matches_torch(c, x, None, False)


def test_cuda_graph_capture_and_replay():
    cases = [((1 << 22) + 5,), (4096, 16), (8192, 513)]
    dims = [None, 1, 0]
    statics = [torch.randn(s, device="cuda") for s in cases]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up outside the graph
        for x, d in zip(statics, dims):
            reduce_op.sum(x, d)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        outs = [reduce_op.sum(x, d) for x, d in zip(statics, dims)]
    for _ in range(3):
        for x in statics:
            x.copy_(torch.randn(x.shape, device="cuda"))
        g.replay()
        torch.cuda.synchronize()
        for o, x, d in zip(outs, statics, dims):
            assert_matches_torch(o, x, d, False)


def test_cuda_graph_chain_of_dependent_sums():
    # Captured after our own finish or split kernel, a split-rows sum is a
    # programmatic dependent (follows_early_trigger in
    # csrc/cuda/host_runtime.h): the second and third sums read the first's
    # output and must wait for it to complete.
    x = torch.randn(64, 300000, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            rows = reduce_op.sum(x, 1)
            reduce_op.sum(rows)
            reduce_op.sum(rows, 0, keepdim=True)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        rows = reduce_op.sum(x, 1)
        total = reduce_op.sum(rows)
        again = reduce_op.sum(rows, 0, keepdim=True)
    for _ in range(5):
        x.normal_()
        g.replay()
        torch.cuda.synchronize()
        assert_matches_torch(rows, x, 1, False)
        assert_matches_torch(total, rows, None, False)
        assert_matches_torch(again, rows, 0, True)


def check_captured_chain(chain, refresh):
    # Runs chain() eagerly on a side stream, captures it in a graph, then
    # replays it on fresh inputs (refresh()) and checks each stage (output,
    # input, dim) against torch.sum of the input it read.
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            chain()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        stages = chain()
    for _ in range(5):
        refresh()
        g.replay()
        torch.cuda.synchronize()
        for out, inp, dim in stages:
            kw = {"dtype": out.dtype} if inp.dtype != out.dtype else {}
            want = torch.sum(inp, dim, keepdim=out.dim() == inp.dim(), **kw) if dim is not None else torch.sum(inp, **kw)
            torch.testing.assert_close(out, want, rtol=1e-5 if out.dtype == torch.float32 else 1e-2, atol=1e-3)


def test_cuda_graph_chain_through_engine_kernels():
    # Each sum reads the one before it, through the engine's kinds of kernel
    # (short and inner rows, columns, strided and transposed planes, a full
    # sum), in grids of one wave, which let the next of our kernels in early:
    # captured, each is a programmatic dependent of the one before
    # (dependent_launch in csrc/cuda/host_runtime.h) and must wait for its
    # output. A torch kernel in the middle breaks the chain once.
    x = torch.randn(37, 1000, 24, device="cuda")

    def chain():
        y1 = reduce_op.sum(x, 2)                       # [37, 1000]: rows of 24
        y2 = reduce_op.sum(y1, 0)                      # [1000]: columns
        y3 = reduce_op.sum(y1.t(), 1, keepdim=True)    # [1000, 1]: a transposed read
        y4 = reduce_op.sum(y1[:, ::3], 1)              # [37]: strided rows
        y5 = reduce_op.sum(y2.view(8, 125), 1)         # [8]: inner rows
        y6 = reduce_op.sum(y3)                         # a full sum
        h = (y1 * 0.01).half()                         # a torch kernel between ours
        y7 = reduce_op.sum(h.view(37, 10, 100), 1, dtype=torch.float32)  # [37, 100]
        y8 = reduce_op.sum(y7, (0, 1))
        return [(y1, x, 2), (y2, y1, 0), (y3, y1.t(), 1), (y4, y1[:, ::3], 1), (y5, y2.view(8, 125), 1),
                (y6, y3, None), (y7, h.view(37, 10, 100), 1), (y8, y7, (0, 1))]

    check_captured_chain(chain, x.normal_)


def test_cuda_graph_chain_of_resident_waves():
    # As above, through grids of several resident blocks an SM (more blocks
    # than SMs, all on the GPU at once) in passes under kEarlyWaveMaxBytes
    # (csrc/cuda/policy.h), which let the next kernel in early too, except
    # columns grids of over half and up to kColumnsLateToPercent of their
    # wave, which do not (launch_engine_kernel's kColumnsGap). Each pass
    # halves the one before it over a middle dim of 2, then rows of 256 and
    # of 7; float16 columns of 8 rows (542 blocks of 1056 on the H200: in
    # that gap) feed rows of 7, and bfloat16 columns of 4 rows (1053 blocks:
    # let in early again) rows of 7.
    x = torch.randn(1024, 2, 512, device="cuda")
    h = torch.randn(19506, 8, 7, device="cuda", dtype=torch.float16)
    b = torch.randn(37883, 4, 7, device="cuda", dtype=torch.bfloat16)

    def chain():
        y1 = reduce_op.sum(x, 1)                       # [1024, 512]: columns, 4 MiB read
        y2 = reduce_op.sum(y1.view(512, 2, 512), 1)    # [512, 512]
        y3 = reduce_op.sum(y2.view(1024, 256), 1)      # [1024]: rows of 256
        y4 = reduce_op.sum(h, 1)                       # [19506, 7]: columns of 8 rows
        y5 = reduce_op.sum(y4, 1, dtype=torch.float32)  # [19506]: rows of 7
        pair = torch.stack([y5[:1024], y3])             # a torch kernel between ours
        y6 = reduce_op.sum(pair, 0)
        y7 = reduce_op.sum(b, 1)                       # [37883, 7]: columns of 4 rows
        y8 = reduce_op.sum(y7, 1, dtype=torch.float32)  # [37883]
        return [(y1, x, 1), (y2, y1.view(512, 2, 512), 1), (y3, y2.view(1024, 256), 1), (y4, h, 1),
                (y5, y4, 1), (y6, pair, 0), (y7, b, 1), (y8, y7, 1)]

    def refresh():
        x.normal_()
        h.normal_()
        b.normal_()

    check_captured_chain(chain, refresh)


def test_compile_reduce_overhead():
    torch._dynamo.reset()

    def f(x):
        return torch.ops.gpureduce.sum.dim_IntList(x, [1], False) * 2 + torch.ops.gpureduce.sum(x)

    compiled = torch.compile(f, mode="reduce-overhead", fullgraph=True)
    for _ in range(4):
        x = torch.randn(2048, 300, device="cuda")
        torch.testing.assert_close(compiled(x), torch.sum(x, 1) * 2 + torch.sum(x), rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("shape,dim", [((1 << 24) + 3, None), ((64, 33, 4096), (0, 2)),
                                       ((200000, 16), 0), ((4096, 4096), 1)], ids=str)
def test_deterministic_20_runs(shape, dim):
    x = torch.randn(shape, device="cuda")
    first = reduce_op.sum(x, dim)
    for _ in range(19):
        assert torch.equal(reduce_op.sum(x, dim), first)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_second_gpu():
    x = torch.randn(1000, 333, device="cuda:1")
    for d in (None, 0, 1):
        out = reduce_op.sum(x, d)
        assert out.device == x.device
        assert_matches_torch(out, x, d, False)


@pytest.mark.skipif(shutil.which("compute-sanitizer") is None, reason="compute-sanitizer not found")
@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
@pytest.mark.parametrize("workload", ["sanitizer_workload.py", "sanitizer_indexed_workload.py"])
def test_compute_sanitizer(tool, workload):
    script = os.path.join(os.path.dirname(__file__), workload)
    r = subprocess.run(["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", sys.executable, script],
                       capture_output=True, text=True, timeout=900)
    tail = (r.stdout + r.stderr)[-3000:]
    assert r.returncode == 0, tail
    summary = "ERROR SUMMARY: 0 errors" if tool == "memcheck" else "RACECHECK SUMMARY: 0 hazards"
    assert summary in r.stdout + r.stderr, tail
    assert "workload ok" in r.stdout, tail
