"""The CPU kernels (csrc/cpu/reduce_cpu.h) at the sizes where their code
changes path: rows around the vector width (8 lanes of 4-byte accumulators,
4 of 8-byte ones), the block of four vectors, the 4096-element leaf (8192
for the narrow walks of 1- and 2-byte integers) and the 8-leaf task; columns narrower than a vector (a stream where the rows lie
end to end, else a scalar per column), tiles of vectors with a partly
filled last one, and the 4096-row task. Sum against a float64 reference,
prod against torch.prod, for accumulators of each width."""
import pytest
import torch

import reduce_op
from axes import (DEVICES, OP_RTOL, OPS, assert_matches_torch, assert_op_matches, float64_result, near_one,
                  random_tensor)

ROW_LENGTHS = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1023, 1024, 1025, 2049,
               4095, 4096, 4097, 8191, 8193, 32767, 32768, 32769, 100003]
COLUMN_WIDTHS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 32, 33, 63, 64, 65, 129]
# Rows around the leaves (16 rows, more for narrow tiles; 128 for a scalar
# per column) and the tasks (4096 rows: 256 leaves, the pairwise stack full).
COLUMN_ROWS = [1, 2, 15, 16, 17, 33, 65, 129, 4096, 4097]
# float32 and bfloat16 (8 lanes of float), float64 and int8 (4 lanes of 8
# bytes, int8 widened), complex64 and complex128 (sum: 4 and 2 lanes, their
# parts side by side in a vector of float or double; prod: the op's own
# reduce and combine).
DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int8, torch.int64, torch.bool,
          torch.complex64, torch.complex128]


def _check_sum(x, dim):
    assert_matches_torch(reduce_op.sum(x, dim), x, dim, False)


def _check_same_bits_on_one_and_two_threads(x, dim):
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = reduce_op.sum(x, dim)
        torch.set_num_threads(2)
        two = reduce_op.sum(x, dim)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(one, two), (tuple(x.shape), x.stride(), dim)


def _check_prod(x, dim):
    op = OPS["prod"]
    assert_op_matches(op, op.ours_dim(x, dim, False), op.ref_dim(x, dim, False), op.scale(x, dim, False),
                      float64_result(op.ref_dim, x, dim, False))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rows(dtype):
    g = torch.Generator().manual_seed(5)
    for n in ROW_LENGTHS:
        outputs = 3 if n < 5000 else 1
        x = random_tensor((outputs, n), dtype, "cpu", g)
        _check_sum(x, 1)
        _check_sum(x, [0, 1])  # several rows to one output
        # Elements at a stride of 2: gathered lanes, no overlapping last load.
        s = random_tensor((outputs, 2 * n), dtype, "cpu", g)[:, ::2]
        _check_sum(s, 1)
        if n <= 1025:
            p = near_one((outputs, n), dtype, "contiguous", "cpu", g)
            _check_prod(p, 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_columns(dtype):
    g = torch.Generator().manual_seed(6)
    for w in COLUMN_WIDTHS:
        for r in COLUMN_ROWS:
            if w * r > 200_000:
                continue
            x = random_tensor((2, r, w), dtype, "cpu", g)
            _check_sum(x, 1)  # dense: a stream below two vector widths (but one), else tiles
            # Rows not end to end (every other row): a scalar per column below the vector width.
            _check_sum(random_tensor((2, 2 * r, w), dtype, "cpu", g)[:, ::2], 1)
            # Columns at a stride of 2: gathered lanes.
            _check_sum(random_tensor((2, r, 2 * w), dtype, "cpu", g)[:, :, ::2], 1)
            # Two reduced dims around a kept one, the columns innermost.
            _check_sum(random_tensor((3, 2, r, w), dtype, "cpu", g), [0, 2])
            if r <= 129:
                _check_prod(near_one((2, r, w), dtype, "contiguous", "cpu", g), 1)


# A columns pass of one output whose columns take fewer than eight tile
# groups (32 tiles) of 2- to 8-byte inputs, of up to 4096 rows, is split
# along its rows into 2 or 4 tasks of at least 65536 elements, which then
# fold their partials: dense, strided and transposed columns around those
# sizes, against a float64 reference and bitwise on one and two threads.
# Tasks of several tiles take 256 rows or more ((256, 1024) not split,
# (511, 300) not, (512, 300) in 2); 2-byte ones 1024 or more: (3760, 393)
# in 2, (4096, 129) in 4, (2047, 230) not at all. Tasks are whole multiples
# of 16 rows, the last one shorter: (1600, 384) in four of 400, (1601,
# 384) in three of 416 and one of 353.
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32, torch.complex64,
                                   torch.float16, torch.bfloat16, torch.int16], ids=str)
def test_columns_of_one_output_split_along_rows(dtype):
    g = torch.Generator().manual_seed(8)
    for r, c in [(1810, 115), (4096, 129), (2000, 230), (1024, 64), (600, 200), (4096, 33), (3000, 255),
                 (1500, 600), (2194, 260), (3760, 393), (2047, 230), (2048, 230), (256, 1024), (511, 300),
                 (512, 300), (1600, 384), (3200, 448), (1040, 640), (1601, 384)]:
        for x, dim in [(random_tensor((r, c), dtype, "cpu", g), 0),
                       (random_tensor((r, 2 * c), dtype, "cpu", g)[:, ::2], 0),
                       (random_tensor((r, c), dtype, "cpu", g).t(), 1)]:
            _check_sum(x, dim)
            _check_same_bits_on_one_and_two_threads(x, dim)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.int16, torch.float32], ids=str)
def test_columns_of_rows_far_apart(dtype):
    # Dense columns whose rows lie 4 KB or more apart: full tiles of 2-byte
    # inputs prefetch their next tile but one, up to 512 rows a task (the
    # prefetches of the last tiles reach past the tensor); float32 does not.
    g = torch.Generator().manual_seed(9)
    for rows in (2, 17, 129, 512, 513):
        for width in (2048, 2112, 2049, 4096 + 64 * 3):
            x = random_tensor((rows, width), dtype, "cpu", g)
            _check_sum(x, 0)
            _check_sum(x[1:], 0)  # from one row in: another alignment
        _check_sum(random_tensor((3, rows, 2112), dtype, "cpu", g), 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_columns_of_tile_groups(dtype):
    # Dense columns whose rows lie up to 4 KB or 16 KB or more apart: four
    # full tiles a task, read leaf by leaf together, then the group's
    # partial tile alone (2-byte inputs keep one tile a task); rows 8 KB
    # apart one tile a task, 4- and 8-byte ones prefetching the row eight
    # rows down (past the tensor's end for its last rows). Widths with whole
    # groups, a partial last group, and a partial last tile; one and two
    # reduced dims; the same bits on one thread and on two. Where the
    # outputs are the accumulators (float32, float64, int64 and complex
    # sums), the tiles write them in place, partial tiles included.
    g = torch.Generator().manual_seed(11)
    size = torch.empty((), dtype=dtype).element_size()
    near, mid, far = 1024 // size, 8192 // size, 16384 // size
    for rows in (2, 17, 300):
        for width in (near, near + 69, mid, mid + 40, far, far + 64 * 3 + 5, 2 * far + 32):
            x = random_tensor((2, rows, width), dtype, "cpu", g)
            _check_sum(x, 1)
            _check_same_bits_on_one_and_two_threads(x, 1)
        _check_sum(random_tensor((3, 2, rows, far + 40), dtype, "cpu", g), [0, 2])
        _check_sum(random_tensor((3, 2, rows, mid), dtype, "cpu", g), [0, 2])
        _check_sum(random_tensor((rows, far), dtype, "cpu", g), 0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_strided_16_bit_floats(dtype):
    # Rows and columns of 16-bit floats at an element stride: eight inputs'
    # bits gathered into one vector, then widened together. Lengths around
    # the vector (8) and the leaf's chains (32), strides 2, 3 and 5, float32
    # and float64 results; against torch, and the same bits on one thread
    # and on two.
    g = torch.Generator().manual_seed(14)
    for n in (7, 8, 9, 31, 32, 33, 528, 1000):
        for s in (2, 3, 5):
            x = random_tensor((37, n * s), dtype, "cpu", g)[:, ::s]
            _check_sum(x, 1)
            _check_same_bits_on_one_and_two_threads(x, 1)
            torch.testing.assert_close(reduce_op.sum(x, 1, dtype=torch.float64), x.double().sum(1), rtol=1e-9, atol=1e-9)
    x = random_tensor((40, 300, 64), dtype, "cpu", g)[:, :, ::4]
    _check_sum(x, 1)
    _check_same_bits_on_one_and_two_threads(x, 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_columns_whose_outputs_run_along_an_outer_dim(dtype):
    # A permuted input whose kept dims are transposed against memory: the
    # columns (contiguous in the input) are strided in the output, an outer
    # dim is contiguous there. Tasks go column block by column block over
    # every outer index in output order; tile groups (rows 16 KB and more
    # apart), plain tiles, partial tiles, two outer dims; the same bits on
    # one thread and on two.
    g = torch.Generator().manual_seed(13)
    for base, perm, dim in (((28, 2, 596, 4), (2, 3, 0, 1), 3), ((28, 2, 2384), (2, 0, 1), 2),
                            ((8, 16, 3000), (2, 0, 1), 2), ((5, 3, 7, 130), (3, 0, 2, 1), 3),
                            ((3, 9, 4, 1000), (3, 1, 0, 2), 3)):
        x = random_tensor(base, dtype, "cpu", g).permute(*perm)
        _check_sum(x, dim)
        _check_same_bits_on_one_and_two_threads(x, dim)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_columns_of_tile_groups_in_row_tasks(dtype):
    # Columns of more rows than a task takes (4096): an even count of equal
    # row tasks, each reading four tiles a task where the rows lie close
    # (2-byte inputs too) or far apart, its tiles' partials then folded.
    # Rows just over one and two tasks, widths of whole groups, a partial
    # group and a partial tile; channels_last maps over (0, 2, 3) and (2,
    # 3); the same bits on one thread and on two.
    g = torch.Generator().manual_seed(12)
    size = torch.empty((), dtype=dtype).element_size()
    near, far = 1024 // size, 16384 // size
    for rows in (4097, 5000, 8193):
        for width in (near, near + 69, far + 64 * 3 + 5):
            if rows * width * size > (64 << 20):
                continue
            x = random_tensor((rows, width), dtype, "cpu", g)
            _check_sum(x, 0)
            _check_same_bits_on_one_and_two_threads(x, 0)
    x = random_tensor((9, 256, 28, 28), dtype, "cpu", g).contiguous(memory_format=torch.channels_last)
    _check_sum(x, [0, 2, 3])
    _check_same_bits_on_one_and_two_threads(x, [0, 2, 3])
    _check_sum(random_tensor((3, 128, 70, 70), dtype, "cpu", g).contiguous(memory_format=torch.channels_last), [2, 3])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_columns_of_one_tile_split_along_rows(dtype):
    # A columns pass of one tile (one output) is split along its rows into
    # 2 or 4 tasks from 2 * 64K elements (2 * 16K for strided columns): on
    # both sides of those lines, with a last task of a few rows, and the same
    # bits on one thread and on two (the split depends on the shape only).
    g = torch.Generator().manual_seed(10)
    for rows, width, step in ((2048, 64, 1), (2047, 64, 1), (4096, 64, 1), (4001, 33, 1), (1412, 131, 3),
                              (1000, 96, 3), (745, 132, 3), (4096, 128, 2), (3, 64, 1)):
        x = random_tensor((rows, width), dtype, "cpu", g)[:, ::step]
        _check_sum(x, 0)
        _check_same_bits_on_one_and_two_threads(x, 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_columns_of_neighbouring_outputs(dtype):
    # Narrow columns whose outputs lie a few elements apart (a strided view's
    # kept dims that do not merge, reduced over an outer dim): blocks of up
    # to 64 outputs of the innermost kept dim, read a leaf's rows at a time.
    # Outputs around the block, rows around the leaf (128) and the task
    # (4096), one and two outer dims; a step of 3 of 8 gives 3 columns 8
    # elements an output apart, of 2 of 6 three 6 apart, of 4 of 16 four 16
    # apart (64 bytes for 4-byte elements, past the blocks' 64 for wider),
    # of 2 of 4 two 4 apart. Where an output's columns fit a vector of
    # accumulators and outputs lie a vector apart (3 of 8 for float
    # accumulators, 2 of 4 for 8-byte ones), a row of an output is one vector
    # load, but for a run's last output.
    g = torch.Generator().manual_seed(8)
    for outputs in (2, 63, 64, 65, 129):
        for rows in (2, 129, 4097):
            for step, inner in ((3, 8), (2, 6), (4, 16), (2, 4)):
                if rows * outputs * inner > 600_000:
                    continue
                x = random_tensor((rows, outputs, inner), dtype, "cpu", g)[:, :, ::step]
                _check_sum(x, 0)
                assert_matches_torch(reduce_op.sum(x, 0, keepdim=True), x, 0, True)
                if rows <= 129:
                    _check_prod(near_one((rows, outputs, inner), dtype, "contiguous", "cpu", g)[:, :, ::step], 0)
            if rows * outputs * 8 * 3 <= 600_000:
                # Two kept outer dims: blocks end where the innermost one does.
                _check_sum(random_tensor((rows, 3, outputs, 8), dtype, "cpu", g)[..., ::3], 0)


@pytest.mark.parametrize("device", DEVICES)
def test_size_one_reduced_dims(device):
    # Each output is one element folded into the op's identity, as torch
    # does: a sum of -0.0 is +0.0, a product keeps it. (On every device: the
    # planner makes these passes.)
    x = torch.full((3, 1, 5), -0.0, device=device)
    assert torch.equal(torch.sum(x, 1).signbit(), reduce_op.sum(x, 1).signbit())
    assert not reduce_op.sum(x, 1).signbit().any()
    assert torch.ops.gpureduce.prod.dim_int(x, 1).signbit().all()
    g = torch.Generator().manual_seed(7)
    for dtype in DTYPES:
        # (and around the CPU's element-wise chunks of 4096)
        for shape, dim in [((1, 1000), 0), ((300, 1, 7), 1), ((1, 3), [0]), ((1,), 0), ((5, 1, 1), [1, 2]),
                           ((3, 1, 4097), 1), ((2, 8191, 1), 2)]:
            x = random_tensor(shape, dtype, "cpu", g).to(device)
            _check_sum(x, dim)
            _check_sum(x.transpose(0, -1), dim)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64], ids=str)
def test_folds_keep_torchs_sign_of_zero(device, dtype):
    # Reductions whose reduced dims are repeats (stride 0) or of size 1 only
    # are folds of the input (0 + k * x for sum), on the CPU from 16 KB up
    # (on the GPU, dims of size 1 only from 256 KB up: 70000 float64). torch's
    # sum of repeats of -0.0, or of one -0.0, is +0.0 (its adds start from
    # +0.0); a product keeps the sign the count gives it. Sizes around the
    # CPU's own fold loop (16K elements).
    for n in (5, 20000, 70000):
        base = torch.randn(n, dtype=dtype).to(device)
        base[::3] = -0.0
        # (input, dim, repeats): a fold of k repeats rounds once where torch
        # adds k times, so only the size-1 cases are bitwise torch's.
        cases = [(base[:, None].expand(-1, 7), 1, 7), (base[None].expand(4, -1), 0, 4), (base[:, None], 1, 1),
                 (base.view(-1, 5).t()[:, None, :], 1, 1), (base.view(-1, 5).t()[:, None, :], [1], 1)]
        for x, dim, reps in cases:
            d = dim if isinstance(dim, int) else dim[0]
            # (prod's fold is a pow: test_prod.py's tolerances)
            prod_tol = {torch.float16: 2e-2}.get(dtype, 1e-4)
            for ours, ref, tol in [(reduce_op.sum(x, dim), torch.sum(x, dim), None),
                                   (torch.ops.gpureduce.prod.dim_int(x, d), torch.prod(x, d), prod_tol)]:
                assert ours.dtype == ref.dtype and ours.shape == ref.shape and ours.stride() == ref.stride()
                if reps == 1:
                    assert torch.equal(ours, ref), (n, x.shape, dim)
                else:
                    torch.testing.assert_close(ours, ref, rtol=tol, atol=tol, equal_nan=True)
                zero = ref == 0
                assert zero.any()
                assert torch.equal(ours[zero].signbit(), ref[zero].signbit()), (n, x.shape, dim)


@pytest.mark.parametrize("dtype,value", [(torch.int8, -128), (torch.int8, 127), (torch.uint8, 255), (torch.bool, True),
                                         (torch.int16, -32768), (torch.int16, 32767)])
def test_narrow_int_rows_at_their_extremes(dtype, value):
    # 1- and 2-byte integers are summed in int32 lanes within a leaf of a
    # row, then widened: rows of the dtype's extreme value, around the
    # leaf's size and past it, must still sum exactly.
    for n in (7, 8, 1023, 1024, 1025, 4097, 8191, 8192, 8193, 70000):
        x = torch.full((3, n), value, dtype=dtype)
        assert torch.equal(reduce_op.sum(x, 1), torch.sum(x, 1)), (dtype, n)
        assert torch.equal(reduce_op.sum(x), torch.sum(x)), (dtype, n)
        assert torch.equal(reduce_op.sum(x[:, ::3], 1), torch.sum(x[:, ::3], 1)), (dtype, n)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_short_rows_under_a_general_indexer(dtype):
    # One leaf per output whose outputs do not lie at one stride (a .step
    # view, channels_last over C): rows shorter than a vector are folded one
    # element at a time, longer ones in lanes.
    g = torch.Generator().manual_seed(8)
    for n in (1, 2, 3, 4, 7, 8, 9, 17, 33):
        x = random_tensor((7, 6, n), dtype, "cpu", g)[::2]
        _check_sum(x, 2)
        _check_sum(x.transpose(0, 1), 2)
        _check_sum(random_tensor((2, n, 3, 5), dtype, "cpu", g).to(memory_format=torch.channels_last), 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rows_of_up_to_a_vector_one_to_an_output(dtype):
    # Rows of up to a vector (4 lanes of 8-byte accumulators, 8 of 4-byte
    # ones), one to an output, have a loop of their own: outputs at one
    # stride (dense rows, rows at a stride, elements at a stride) and under
    # a general indexer (a run along its first dim, then a carry), with the
    # pass's division (mean) and repeats (an expanded input). Counts of
    # outputs around the runs and the 32K-element grain of a thread.
    g = torch.Generator().manual_seed(13)
    for n in (1, 2, 3, 4, 5, 7, 8, 9):
        for m in (1, 5, 1001, 40000 // n + 3):
            x = random_tensor((m, n), dtype, "cpu", g)
            _check_sum(x, 1)
            _check_sum(random_tensor((m, n + 3), dtype, "cpu", g)[:, :n], 1)
            _check_sum(random_tensor((m, 2 * n), dtype, "cpu", g)[:, ::2], 1)
            _check_same_bits_on_one_and_two_threads(x, 1)
            if dtype.is_floating_point or dtype.is_complex:
                op = OPS["mean"]
                assert_op_matches(op, op.ours_dim(x, 1, False), op.ref_dim(x, 1, False), op.scale(x, 1, False))
            expanded = x[:, None, :].expand(m, 3, n)
            _check_sum(expanded, [1, 2])
        for a, b in ((3, 7), (7, 3), (37, 203), (203, 38)):
            x = random_tensor((b, a, n), dtype, "cpu", g).transpose(0, 1)
            _check_sum(x, 2)
            _check_sum(x[:, ::2], 2)
            _check_same_bits_on_one_and_two_threads(x, 2)
            rows = x.reshape(-1, n)
            assert torch.equal(reduce_op.sum(x, 2).reshape(-1), reduce_op.sum(rows, 1)), (a, b, n)
            if dtype not in (torch.bool,) and not dtype.is_complex:
                assert torch.equal(reduce_op.amax(x, 2), torch.amax(x, 2)), (a, b, n)


@pytest.mark.parametrize("dtype", [torch.float64, torch.int64, torch.float32], ids=str)
def test_rows_of_a_few_vectors_four_at_a_time(dtype):
    # Dense rows of 16 to 32 8-byte elements, one to an output, take their
    # totals four rows at a time (one shuffled fold); the last few rows of a
    # thread's share, and a single row, take theirs one at a time. Every
    # row's result has the bits it has alone. float32 rows (8 lanes) keep
    # the one-at-a-time totals.
    g = torch.Generator().manual_seed(17)
    for n in (16, 17, 20, 31, 32, 33):
        for m in (3, 4, 5, 9, 4099):
            x = random_tensor((m, n), dtype, "cpu", g)
            if dtype.is_floating_point:
                x[1, 2], x[2, ::3] = float("nan"), -0.0
            _check_sum(x, 1)
            assert torch.allclose(reduce_op.amax(x, 1), torch.amax(x, 1), rtol=0, atol=0, equal_nan=True), (m, n)
            if dtype.is_floating_point:
                op = OPS["mean"]
                assert_op_matches(op, op.ours_dim(x, 1, False), op.ref_dim(x, 1, False), op.scale(x, 1, False))
            bits = torch.int64 if dtype.itemsize == 8 else torch.int32
            for ours in (reduce_op.sum, reduce_op.amax):
                whole = ours(x, 1).view(bits)
                for i in (0, 1, 2, m - 1):
                    assert torch.equal(whole[i:i + 1], ours(x[i:i + 1], 1).view(bits)), (ours.__name__, m, n, i)
            _check_prod(near_one((m, n), dtype, "contiguous", "cpu", g), 1)


@pytest.mark.parametrize("dtype", DTYPES + [torch.int32], ids=str)
def test_rows_at_an_element_stride_of_two_and_three(dtype):
    # Rows whose elements lie 2 or 3 apart: leaves of 64 or more 4-byte
    # inputs in lanes of their own type (float32 sums, amax and amin of
    # float32 and int32) load each vector's dense span and pick its elements
    # (Lanes::fold_picked), no load reaching past the vector's last input;
    # other dtypes and shorter leaves load element by element. Widths around
    # the vectors, their chains and the 64-input bound, and rows whose last
    # element is the storage's last.
    g = torch.Generator().manual_seed(14)
    for step in (2, 3):
        for n in (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1000, 1025, 4099):
            for m in (1, 3, 22):
                x = random_tensor((m, step * n), dtype, "cpu", g)[:, ::step]
                flush = random_tensor((m * (step * n) - step + 1,), dtype, "cpu", g)
                ends = flush.as_strided((m, n), (step * n, step))  # its last element is the storage's last
                for t in (x, ends):
                    _check_sum(t, 1)
                    if dtype not in (torch.bool,) and not dtype.is_complex:
                        assert torch.equal(reduce_op.amax(t, 1), torch.amax(t, 1)), (step, n, m)
                        assert torch.equal(reduce_op.amin(t, 1), torch.amin(t, 1)), (step, n, m)
            _check_same_bits_on_one_and_two_threads(random_tensor((41, step * n), dtype, "cpu", g)[:, ::step], 1)


@pytest.mark.parametrize("dtype", DTYPES + [torch.int32], ids=str)
def test_columns_at_an_element_stride_of_two_and_three(dtype):
    # Columns whose elements lie 2 or 3 apart: in lanes of their own 4- or
    # 8-byte type (float32 and float64 sums, int64 sums, amax and amin of
    # float32, float64, int32 and int64) each vector loads its dense span and
    # picks its columns (Lanes::fold_picked), a tile's part vector by loads
    # ending at its last column, in its top lanes; other dtypes load element
    # by element. Widths around the vectors and tiles, rows around the
    # leaves, columns whose last element is the storage's last, and the
    # same bits as the same columns laid out densely (the same tiles,
    # grouped alike).
    g = torch.Generator().manual_seed(15)
    for step in (2, 3):
        for n in (1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 39, 63, 64, 65, 100):
            for m in (1, 2, 5, 37):
                x = random_tensor((m, step * n), dtype, "cpu", g)[:, ::step]
                flush = random_tensor((m * (step * n) - step + 1,), dtype, "cpu", g)
                ends = flush.as_strided((m, n), (step * n, step))  # its last element is the storage's last
                for t in (x, ends):
                    _check_sum(t, 0)
                    # (Where both are read in tiles: a dense pass of under two
                    # vectors of columns reads them as one stream instead.)
                    lanes = 32 // dtype.itemsize
                    if dtype in (torch.float32, torch.float64, torch.int64) and (n == lanes or n >= 2 * lanes):
                        assert torch.equal(reduce_op.sum(t, 0), reduce_op.sum(t.contiguous(), 0)), (step, n, m)
                    if dtype not in (torch.bool,) and not dtype.is_complex:
                        assert torch.equal(reduce_op.amax(t, 0), torch.amax(t, 0)), (step, n, m)
                        assert torch.equal(reduce_op.amin(t, 0), torch.amin(t, 0)), (step, n, m)
        x3 = random_tensor((3, 70, step * 45), dtype, "cpu", g)[..., ::step]
        for dims in ([1], [0, 1]):
            _check_sum(x3, dims)
        _check_same_bits_on_one_and_two_threads(random_tensor((3000, step * 37), dtype, "cpu", g)[:, ::step], 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rows_shorter_than_a_vector_many_to_an_output(dtype):
    # Several rows of fewer elements than a vector to each output: leaves
    # are runs of rows in scalar chains. Run lengths around the leaf (64
    # rows of 2, 40 of 3, 16 of 7) and the task split (64K elements).
    g = torch.Generator().manual_seed(9)
    for n in (1, 2, 3, 7):
        for r in (1, 3, 4, 5, 15, 16, 17, 39, 40, 41, 63, 64, 65, 1129, 40000):
            x = random_tensor((r, 5, n), dtype, "cpu", g)
            _check_sum(x, [0, 2])
            _check_sum(x.transpose(0, 2), [0, 2])  # the same rows, read through a transposed view
            _check_sum(x[:, ::2], [0, 2])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rows_of_a_vector_or_more_many_to_an_output(dtype):
    # Several rows of a vector to half a leaf to each output: leaves are runs
    # of rows folded into one set of chains (4096 // n rows of n a leaf; 8192
    # // n for the narrow integers). Runs around that count, a masked last
    # load (n not a multiple of the lanes), gathered lanes (a stride of 2),
    # and the same bits on one thread and two.
    g = torch.Generator().manual_seed(10)
    for n in (8, 9, 16, 17, 31, 33, 100, 2048):
        per_leaf = 4096 // n
        for r in (2, per_leaf - 1, per_leaf, per_leaf + 1, 9 * per_leaf + 3):
            x = random_tensor((r, 3, n), dtype, "cpu", g)
            _check_sum(x, [0, 2])
            _check_sum(x[..., : n - 1], [0, 2])  # rows apart by more than their length
            _check_sum(random_tensor((r, 3, 2 * n), dtype, "cpu", g)[..., ::2], [0, 2])
        _check_same_bits_on_one_and_two_threads(random_tensor((40 * per_leaf, 2, n), dtype, "cpu", g), [0, 2])
    # Other ops' chains: amax's eight, nansum's NaNs read as zeros.
    x = random_tensor((300, 4, 20), dtype, "cpu", g)
    if not dtype.is_complex:
        assert torch.equal(reduce_op.amax(x, [0, 2]), torch.amax(x, [0, 2]))
    if dtype.is_floating_point:
        x[::7, :, 3] = float("nan")
        torch.testing.assert_close(reduce_op.nansum(x, [0, 2]), x.double().nansum([0, 2]).to(dtype),
                                   rtol=OP_RTOL[dtype], atol=OP_RTOL[dtype] * x.double().abs().nansum().item())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_columns_of_many_small_outputs_in_one_stream(dtype):
    # Outputs of one tile each at one stride, each reading within its step
    # of up to 2 KB (a middle dim of a few rows over a kept inner dim of a
    # few columns): one stream prefetched across outputs. Dense, sliced
    # (gaps between outputs), steps around 2 KB, and the same bits on one
    # thread and two.
    g = torch.Generator().manual_seed(11)
    for o, r, c in [(20000, 4, 2), (3001, 3, 5), (700, 16, 16), (257, 32, 16), (129, 64, 9)]:
        x = random_tensor((o, r, c), dtype, "cpu", g)
        _check_sum(x, 1)
        _check_sum(random_tensor((o, r + 1, c), dtype, "cpu", g)[:, 1:], 1)
        _check_same_bits_on_one_and_two_threads(x, 1)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.bool], ids=str)
def test_narrow_integers_into_float32(dtype):
    # Bytes and 16-bit integers into float32 lanes (dtype=float32): each
    # vector of 8 extended to int32 and converted (reduce_cpu.h, Lanes::load),
    # in rows around the vector width and the leaves, in columns, and at a
    # stride; against the float64 sum and torch.mean.
    g = torch.Generator().manual_seed(12)
    for n in ROW_LENGTHS[:-1]:
        x = random_tensor((3, n), dtype, "cpu", g)
        assert_matches_torch(reduce_op.sum(x, 1, dtype=torch.float32), x, 1, False, torch.float32)
        assert_matches_torch(reduce_op.sum(x, None, dtype=torch.float32), x, None, False, torch.float32)
        s = random_tensor((3, 2 * n), dtype, "cpu", g)[:, 1::2]
        assert_matches_torch(reduce_op.sum(s, 1, dtype=torch.float32), s, 1, False, torch.float32)
        torch.testing.assert_close(reduce_op.mean(x, 1, dtype=torch.float32), torch.mean(x, 1, dtype=torch.float32))
    for w in (1, 7, 8, 9, 33, 65):
        for r in (1, 17, 129, 4097):
            x = random_tensor((2, r, w), dtype, "cpu", g)
            assert_matches_torch(reduce_op.sum(x, 1, dtype=torch.float32), x, 1, False, torch.float32)
            assert_matches_torch(reduce_op.sum(x, (0, 1), dtype=torch.float32), x, (0, 1), False, torch.float32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=str)
def test_rows_of_permuted_outputs(dtype):
    # Rows of one leaf each whose outputs lie in another order than the rows
    # (a permuted or transposed input summed over its contiguous dim): the
    # outputs' offsets are stepped, not divided, and taken in the input's
    # order where it is 1 MB or more and the threads' shares of its
    # outermost dim span 4 KB of outputs or more (the last two, rows longer
    # than a vector and up to one), else in the output's. Against torch, the same bits as the same rows
    # laid out in order, and the same on one thread and on two.
    g = torch.Generator().manual_seed(12)
    for shape, perm, d in [((9, 3, 5, 7, 40), (3, 2, 1, 0, 4), 4), ((25, 60, 2, 152), (3, 1, 2, 0), 0),
                           ((40, 30, 3, 100), (3, 1, 2, 0), 0), ((3, 1, 7, 33), (2, 0, 1, 3), 3),
                           ((9000, 3, 20), (1, 0, 2), 2), ((60000, 3, 4), (1, 0, 2), 2)]:
        x = random_tensor(shape, dtype, "cpu", g).permute(perm)
        _check_sum(x, d)
        _check_same_bits_on_one_and_two_threads(x, d)
        rows = x.movedim(d, -1).reshape(-1, x.shape[d])
        assert torch.equal(reduce_op.sum(x, d).reshape(-1), reduce_op.sum(rows, 1))
