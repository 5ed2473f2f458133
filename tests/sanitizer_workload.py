"""A small run of every CUDA kernel, for compute-sanitizer (memcheck,
racecheck). Each result is checked, so the run also fails on a wrong answer."""
import torch

import reduce_op

torch.manual_seed(0)
cases = [((1 << 16) + 3, None), (5000, None), ((256, 16), 1), ((64, 300), 1), ((8, 9000), 1),
         ((8, 5, 3000), (0, 2)), ((20000, 16), 0), ((512, 130), 0), ((4, 6, 40), 1), ((6, 5, 4, 3), (0, 2)),
         ((1000, 24), 1), ((333, 7), 1), ((3, 1 << 18), 1),
         ((1, 1049, 14), 1), ((64, 16, 384), 1), ((10, 41, 4), 1), ((6, 122), 1), ((3, 1000), 1),
         ((124, 200), 1), ((2, 1390, 3), 1), ((31, 61, 5, 17, 2), (0, 2)), ((2, 10, 5, 7, 2), 4),
         ((48, 238, 12), 1), ((12000, 20, 12), 1), ((1, 1270, 4), 1), ((1, 2970, 2), 1),
         ((1, 378, 15), 1), ((1067, 11, 22), 1), ((11360, 7, 4), 1), ((13, 2, 22, 25, 5), (1, 4)),
         # columns walks of 4 to 500 rows a thread with eight loads in flight
         ((9, 365, 10), 1), ((98, 790, 2), 1), ((3, 4233, 13), 1), ((5, 27, 1, 2, 17), (0, 1, 2))]
for dtype in (torch.float32, torch.float16, torch.int8, torch.uint8, torch.complex64):
    for shape, dim in cases:
        x = (torch.randn(shape) * 10).to(dtype).cuda()
        ours = reduce_op.sum(x, dim)
        ref = torch.sum(x.cpu().to(torch.complex128 if dtype.is_complex else torch.float64),
                        dim if dim is not None else [])
        assert torch.allclose(ours.cpu().to(ref.dtype), ref, rtol=2e-2, atol=1.0), (dtype, shape, dim)
# Columns whose blocks take several outer indices, in a grid a few blocks
# past one wave: folded to fewer row threads a block.
x = torch.randn(802, 128, 128, device="cuda")
assert torch.allclose(reduce_op.sum(x, 1).double(), x.double().sum(1), rtol=1e-4, atol=1e-3)
# mean: the same kernels, each output divided by its count in the pass that
# stores it (in the finish of a split pass).
for dtype in (torch.float32, torch.float16, torch.complex64):
    for shape, dim in cases:
        x = torch.randn(shape).to(dtype).cuda()
        wide = torch.complex128 if dtype.is_complex else torch.float64
        ref = torch.mean(x.cpu().to(wide), dim if dim is not None else [])
        got = reduce_op.mean(x, dim).cpu().to(wide)
        assert torch.allclose(got, ref, rtol=2e-2, atol=1e-2), (dtype, shape, dim)
# Columns read in vectors narrower than 16 bytes (8 or 4; passes of 1 MB or
# more), from a 16-byte boundary and one and two elements off (each shifts
# the widest that fits), in dense planes and across two reduced dims.
for dtype in (torch.float32, torch.float16, torch.uint8):
    for shape, dim in (((3000, 37, 14), 1), ((6000, 45, 12), 1), ((40, 6, 601, 20), (0, 2))):
        n = 1
        for s in shape:
            n *= s
        for off in (0, 1, 2):
            x = (torch.randn(n + off) * 10).to(dtype).cuda()[off:].view(shape)
            ref = torch.sum(x.cpu().double(), dim)
            assert torch.allclose(reduce_op.sum(x, dim).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, shape, off)
# Pitch rows (one dense row per output): rows a vector fits, ragged rows
# from a 16-byte boundary and one and three elements off (each row's own
# head and tail, at most four ends per lane), latency-bound passes (a lane
# per vector, small blocks), rows no vector fits (an element per lane), and
# a block of 256 threads per output (300 rows of 5000).
for dtype in (torch.float32, torch.bfloat16, torch.uint8, torch.float64, torch.int64):
    for shape in ((4000, 1000), (3000, 372), (2000, 131), (50, 300), (7, 2000), (1500, 40), (20000, 5),
                  (300, 5000)):
        n = shape[0] * shape[1]
        for off in (0, 1, 3):
            x = (torch.randn(n + off) * 10).to(dtype).cuda()[off:].view(shape)
            ref = torch.sum(x.cpu().double(), 1)
            assert torch.allclose(reduce_op.sum(x, 1).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, shape, off)
# Strided rows read through the dense memory they span (the pitch rows
# kernel's kStrided): rows at every alignment (odd pitches), starts off a
# 16-byte boundary, and the last row ending on its storage's last element;
# and few outputs (element loads, or the split rows kernel's kStrided);
# strides up to 12 bytes (a vector keeping one or two elements).
for dtype, s in ((torch.float32, 2), (torch.bfloat16, 3), (torch.float16, 4), (torch.int16, 3), (torch.float32, 3),
                 (torch.float16, 5), (torch.bfloat16, 6)):
    # A pitch over (r + 1) * s: not planes for the stream-rows tiles.
    # The last three: few long rows and one strided row, the split rows
    # kernel's kStrided (split into partials, a block per output, a full
    # reduction).
    for n, r, extra, off in ((1200, 200, s + 1, 1), (2200, 600, s + 1, 0), (300, 600, 0, 3), (20, 12001, 1, 1),
                             (600, 2300, 1, 2), (1, 70001, 0, 3)):
        pitch = r * s + extra
        buf = (torch.randn(off + (n - 1) * pitch + (r - 1) * s + 1) * 10).to(dtype).cuda()
        x = buf.as_strided((n, r), (pitch, s), off)
        ref = torch.sum(x.cpu().double(), 1)
        assert torch.allclose(reduce_op.sum(x, 1).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, n, r, s)
        if dtype.is_floating_point:
            ref = torch.var(x.cpu().double(), 1)
            assert torch.allclose(reduce_op.var(x, 1).cpu().double(), ref, rtol=2e-2, atol=1e-2), (dtype, n, r, s)
# Scattered planes (the stream-columns kernel over dense planes that do not
# follow each other, in passes of 32 MB): a step and a narrowing of an
# outer dim, from a 16-byte boundary and off it, and two planes split along
# their rows.
for dtype, shape, view in ((torch.float16, (40, 64, 300, 45), "step"), (torch.bfloat16, (40, 33, 300, 45), "narrow"),
                           (torch.float32, (2, 2, 600000, 7), "step")):
    n = shape[0] * shape[1] * shape[2] * shape[3]
    for off in (0, 3):
        base = (torch.randn(n + off) * 10).to(dtype).cuda()[off:].view(shape)
        x = base[:, ::2] if view == "step" else base[:, 1:]
        ref = torch.sum(x.cpu().double(), 2)
        assert torch.allclose(reduce_op.sum(x, 2).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, shape, view, off)
# Pitch rows whose outputs are permuted (written through their index over
# two to four outer dims), ragged and from one element off.
for dtype in (torch.float32, torch.bfloat16, torch.float64):
    for base, perm, dim in (((13, 9, 21, 503), (3, 1, 2, 0), 0), ((7, 400, 256), (1, 0, 2), 2),
                            ((4, 6, 20, 131), (0, 2, 1, 3), 3), ((8, 5, 6, 7, 100), (3, 1, 0, 2, 4), 4),
                            ((61, 3000, 4), (1, 0, 2), 2)):
        n = 1
        for s in base:
            n *= s
        for off in (0, 1):
            x = (torch.randn(n + off) * 10).to(dtype).cuda()[off:].view(base).permute(*perm)
            ref = torch.sum(x.cpu().double(), dim)
            assert torch.allclose(reduce_op.sum(x, dim).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, base, off)
# Rows of one and two 16-byte vectors with outputs enough for the pitch
# vector rows kernel (several rows a thread, the grid's last round partial),
# contiguous and at a wider pitch.
for dtype in (torch.float32, torch.bfloat16, torch.uint8, torch.float64, torch.int16):
    v = 16 // torch.empty((), dtype=dtype).element_size()
    for n, width in ((67585, v), (90001, 2 * v)):
        for pitch in (width, 3 * width):
            x = (torch.randn(n, pitch) * 10).to(dtype).cuda()[:, :width]
            ref = torch.sum(x.cpu().double(), 1)
            assert torch.allclose(reduce_op.sum(x, 1).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, n, width)
# Large dense planes of narrow rows through the stream columns kernel,
# whatever vector their columns fit, from a 16-byte boundary and one
# element off.
for dtype in (torch.float32, torch.bfloat16, torch.float64):
    for shape in ((3, 200000, 2), (2, 70000, 4)):
        n = shape[0] * shape[1] * shape[2]
        for off in (0, 1):
            x = (torch.randn(n + off) * 10).to(dtype).cuda()[off:].view(shape)
            ref = torch.sum(x.cpu().double(), 1)
            assert torch.allclose(reduce_op.sum(x, 1).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, shape, off)
# Integer full sums split over blocks, with a ragged head and tail.
for dtype, n in ((torch.uint8, (1 << 24) + 7), (torch.int32, (1 << 22) + 5), (torch.int16, (1 << 20) + 3)):
    x = torch.randint(0 if dtype == torch.uint8 else -99, 100, (n + 1,)).to(dtype).cuda()[1:]
    assert reduce_op.sum(x).item() == x.cpu().long().sum().item(), dtype
# Dense tiles (passes of 1 to 4 MB or more, by element size): narrow
# columns of middle dims, whole planes (of 2 and 3 rows; with more, the
# stream rows take them) and row tiles, aligned and one element off; rows
# no vector fits (the stream rows); and prod on the engine.
for dtype in (torch.float32, torch.bfloat16, torch.uint8, torch.float64):
    for shape, dim in [((300000, 5), 1), ((300, 301), 1), ((200, 2000, 5), 1), ((120000, 7, 3), 1), ((150, 9000, 3), 1),
                       ((300000, 2, 7), 1), ((100000, 3, 5), 1)]:
        n = 1
        for s in shape:
            n *= s
        for x in ((torch.randn(shape) * 10).to(dtype).cuda(), (torch.randn(n + 1) * 10).to(dtype).cuda()[1:].view(shape)):
            ref = torch.sum(x.cpu().double(), dim)
            assert torch.allclose(reduce_op.sum(x, dim).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, shape)
            f = x.float().sign().add(2.0)
            p = torch.ops.gpureduce.prod.dim_int(f, dim, False)
            assert torch.allclose(p.cpu(), torch.prod(f.cpu(), dim), rtol=1e-3), (dtype, shape)
# Integer products of 1- and 2-byte inputs and bool (ProdOp::narrow_product:
# 32-bit words of four bytes or two int16, then widening multiplies): full
# products, rows and columns, odd factors, exact.
for dtype in (torch.int8, torch.uint8, torch.int16, torch.bool):
    for shape, dim in (((1 << 22) + 5,), None), ((3000, 1001), 1), ((7, 100003), 1), ((5000, 33), 0):
        lo, hi = (0, 2) if dtype == torch.bool else (-99, 100)
        x = (torch.randint(lo, hi, shape) | (0 if dtype == torch.bool else 1)).to(dtype)
        ref = torch.prod(x.long()) if dim is None else torch.prod(x.long(), dim)
        got = reduce_op.prod(x.cuda()) if dim is None else reduce_op.prod(x.cuda(), dim)
        assert torch.equal(got.cpu(), ref), (dtype, shape, dim)
# Stream rows (dense rows no vector fits, fewer than 16 vectors, passes of
# 1 MB or more; and whole planes of narrow columns): tiles of 8 KB and of 16
# KB (rows of 32 bytes or more in 16 MB or more), a lane to 16 lanes per
# row, a last tile of a few rows, from a 16-byte boundary and one and three
# elements off, and out= whose outer dims do not merge.
for dtype, shape in ((torch.float32, (300001, 5)), (torch.float32, (250001, 17)), (torch.bfloat16, (175441, 3)),
                     (torch.bfloat16, (9001, 127)),
                     (torch.uint8, (60001, 47)), (torch.float64, (40001, 9))):
    n = shape[0] * shape[1]
    for off in (0, 1, 3):
        x = (torch.randn(n + off) * 10).to(dtype).cuda()[off:].view(shape)
        ref = torch.sum(x.cpu().double(), 1)
        assert torch.allclose(reduce_op.sum(x, 1).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, shape, off)
    x3 = x[:-1].view(2, shape[0] // 2, shape[1])
    out = torch.empty(shape[0] // 2, 2, device="cuda", dtype=torch.int64 if dtype == torch.uint8 else dtype).t()
    reduce_op.sum(x3, 2, out=out)
    assert torch.allclose(out.cpu().double(), ref[:-1].view(2, -1), rtol=2e-2, atol=1.0), (dtype, shape)
# Planes of 8 rows or more that the columns kernels would read otherwise:
# float32 rows of 12 bytes from 4 MB and of 40 under 4 MB, float64 pairs,
# bfloat16 and uint8 rows of 16-byte vectors, float16 planes of the stream
# columns.
for dtype, shape in ((torch.float32, (120001, 5, 3)), (torch.bfloat16, (40001, 12, 7)), (torch.uint8, (7001, 33, 13)),
                     (torch.bfloat16, (33, 1270, 4)), (torch.float32, (30001, 17, 3)), (torch.float32, (1800, 45, 10)),
                     (torch.float64, (3001, 20, 2)), (torch.bfloat16, (3001, 19, 8)), (torch.uint8, (20001, 9, 32)),
                     (torch.float16, (20000, 52, 5))):
    n = shape[0] * shape[1] * shape[2]
    for off in (0, 1, 3):
        x = (torch.randn(n + off) * 10).to(dtype).cuda()[off:].view(shape)
        ref = torch.sum(x.cpu().double(), 1)
        assert torch.allclose(reduce_op.sum(x, 1).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, shape, off)
# Stream rows in slabs (an outer reduced dim over streams of rows; planes
# stay on the columns kernel):
# slabs a stream apart and two apart, a last tile of one row, from a 16-byte
# boundary and one and three elements off.
for dtype, shape, every in ((torch.float32, (3, 21061, 26), 1), (torch.bfloat16, (3, 200001, 6), 2),
                            (torch.uint8, (2, 90001, 26), 1), (torch.float32, (3, 40001, 5, 3), 1),
                            (torch.bfloat16, (4, 60001, 7, 3), 2)):
    n = shape[0] * every
    for s in shape[1:]:
        n *= s
    for off in (0, 1, 3):
        x = (torch.randn(n + off) * 10).to(dtype).cuda()[off:].view(shape[0] * every, *shape[1:])[::every]
        ref = torch.sum(x.cpu().double(), (0, 2))
        assert torch.allclose(reduce_op.sum(x, (0, 2)).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, shape, off)
# Stream columns (dense planes of at most 256 narrow columns, planes of 32 KB
# or more, 512 bytes for 2-byte elements, in passes of 1 MB or more): one
# plane split over blocks (a block a column combines the partials), a few
# planes split (several columns a finish block), planes of a block each and
# small 16-bit planes several to a block, periods of 1 to 255 threads, from
# a 16-byte boundary and one and three elements off (partial vectors at both
# ends).
for dtype in (torch.float32, torch.float16, torch.int16, torch.float64):
    for shape in ((1, 90000, 7), (3, 30000, 11), (40, 3000, 13), (8, 5000, 63), (30, 4000, 6), (2, 200000, 2),
                  (3000, 26, 13), (2000, 40, 7), (1, 9000, 71), (3, 3000, 255), (40, 300, 129), (300, 30, 201)):
        n = shape[0] * shape[1] * shape[2]
        for off in (0, 1, 3):
            x = (torch.randn(n + off) * 10).to(dtype).cuda()[off:].view(shape)
            ref = torch.sum(x.cpu().double(), 1)
            assert torch.allclose(reduce_op.sum(x, 1).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, shape, off)
# Ragged rows, several to an output (split rows and inner rows), from a
# 16-byte boundary and one element off.
for dtype in (torch.float32, torch.bfloat16):
    for shape, dims in (((7, 40, 26, 47), (0, 2, 3)), ((4, 2000, 130), (0, 2))):
        n = shape[0] * shape[1] * shape[2] * (shape[3] if len(shape) == 4 else 1)
        for off in (0, 1):
            x = (torch.randn(n + off) * 10).to(dtype).cuda()[off:].view(shape)
            ref = torch.sum(x.cpu().double(), dims)
            assert torch.allclose(reduce_op.sum(x, dims).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, shape)
# Columns tiles trimmed to whole warps (171 columns of a .step view).
for dtype in (torch.float32, torch.float16):
    x = (torch.randn(40, 72, 34, 171) * 10).to(dtype).cuda()[:, ::2]
    ref = torch.sum(x.cpu().double(), 2)
    assert torch.allclose(reduce_op.sum(x, 2).cpu().double(), ref, rtol=2e-2, atol=1.0), dtype
# Columns tiles of equal width in whole warps (534 vectors in two tiles of
# 288 threads, 262 in two of 160 with two row threads), grids of a few waves
# folded into one (columns, pitch rows, split rows of a block per output),
# and permuted inputs whose transposed output goes through a scratch buffer.
for dtype in (torch.float32, torch.float64, torch.int64):
    for shape, dim in (((60, 8, 1068), 1), ((300, 42, 524), 1), ((342, 20000), 0), ((7916, 2367), 1),
                       ((873, 50257), 1)):
        x = (torch.randn(shape) * 10).to(dtype).cuda()
        ref = torch.sum(x.cpu().double(), dim)
        assert torch.allclose(reduce_op.sum(x, dim).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, shape)
    x = (torch.randn(109, 3, 808, 7) * 10).to(dtype).cuda().permute(2, 3, 0, 1)
    ref = torch.sum(x.cpu().double(), 3)
    assert torch.allclose(reduce_op.sum(x, 3).cpu().double(), ref, rtol=2e-2, atol=1.0), dtype
# Ragged columns (vectors from the first 16-byte boundary, an edge vector at
# each end): padded slices of two rows, alone and several outer indices a
# block, one and three elements off; and nansum over the size-1 dim of
# [n, 1].
for dtype in (torch.float32, torch.float16, torch.float64):
    for shape, cols, dim in (((2, 300016), 299993, 0), ((64, 2, 4112), 4093, 1)):
        n = 1
        for s in shape:
            n *= s
        for off in (0, 1, 3):
            x = (torch.randn(n + off) * 10).to(dtype).cuda()[off:].view(shape)[..., :cols]
            ref = torch.sum(x.cpu().double(), dim)
            assert torch.allclose(reduce_op.sum(x, dim).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, shape, off)
    for off in (0, 1):
        x = torch.randn(1000003 + off).to(dtype).cuda()[off:].view(-1, 1)
        x[::7] = float("nan")
        assert torch.equal(reduce_op.nansum(x, 1), torch.nan_to_num(x[:, 0], nan=0.0)), (dtype, off)
x = x_odd = torch.randn((1 << 16) + 5).cuda()[1:]
assert torch.allclose(reduce_op.sum(x).cpu().double(), x.cpu().double().sum(), rtol=1e-4, atol=1e-3)
# Rows of stride 2 read with vector loads, up to the storage's last element.
for dtype in (torch.float32, torch.bfloat16):
    for base_shape, view, dim in [((512, 128), lambda b: b[:, ::2], 1), ((1 << 16,), lambda b: b[:-1][::2], None),
                                  ((8, 20000), lambda b: b[:, ::2], 1)]:
        b = torch.randn(base_shape).to(dtype).cuda()
        x = view(b)
        ref = torch.sum(x.cpu().double(), dim if dim is not None else [])
        assert torch.allclose(reduce_op.sum(x, dim).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, base_shape)
# Stream rows in segments (runs of planes that follow densely, at gaps along
# an outer kept dim, in passes of 1 MB): rows from a 16-byte boundary and
# off it, a last run ending at its storage's last element, runs shorter than
# a tile, and strided rows in runs.
for dtype in (torch.float32, torch.bfloat16, torch.uint8):
    def segment_base(shape):
        return (torch.randn(shape) * 10).to(dtype).cuda()
    views = [(segment_base((60, 3000, 7))[:, :2900], 2), (segment_base((60, 3000, 7))[:, 101:], 2),
             (segment_base((31, 20001, 5))[1::3], 2), (segment_base((3000, 100, 7))[:, 1:99], 2)]
    if dtype == torch.bfloat16:
        views.append((segment_base((16, 3000, 402))[:, 3:2900, ::2], 2))
    for x, d in views:
        ref = torch.sum(x.cpu().double(), d)
        assert torch.allclose(reduce_op.sum(x, d).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, x.shape)
# Rows of a small element stride as planes through the stream-rows kernel
# (1 MB and more of stream), one ending at its storage's last element.
for dtype in (torch.bfloat16, torch.int16, torch.int8):
    def strided_base(shape):
        return (torch.randn(shape) * 10).to(dtype).cuda()
    n, r = 2000, 300
    end = strided_base(((n - 1) * 2 * r + 2 * r - 1,)).as_strided((n, r), (2 * r, 2))
    views = [strided_base((2697, 1526))[:, ::2], strided_base((2697, 1527))[:, ::2],
             strided_base((4000, 301))[:, 1::2], strided_base((20, 300, 202))[..., ::2], end]
    if dtype == torch.int8:
        views.append(strided_base((6000, 301))[:, ::3])
    for x in views:
        d = x.dim() - 1
        ref = torch.sum(x.cpu().double(), d)
        assert torch.allclose(reduce_op.sum(x, d).cpu().double(), ref, rtol=2e-2, atol=1.0), (dtype, x.shape)
        if dtype.is_floating_point:
            assert torch.equal(reduce_op.amax(x, d).cpu(), torch.amax(x.cpu(), d))
            reduce_op.logsumexp(x, d)
            reduce_op.var(x, d)
for name in reduce_op.kernels():
    for dtype in (torch.float32, torch.int32, torch.bfloat16):
        if name == "cpu":
            continue
        if dtype == torch.bfloat16 and name not in ("reduce6", "reduce7", "tensorcore"):
            continue
        for n in (1000, 70001):
            x = torch.randint(-50, 50, (n,)).to(dtype).cuda()
            got = reduce_op.sum(x, kernel=name).cpu().double()
            ref = x.cpu().double().sum()
            out_eps = 2.0 ** -8 if dtype == torch.bfloat16 else 0.0  # the bf16 result rounds once
            assert abs(got - ref) <= 1e-3 + 1e-6 * x.cpu().double().abs().sum() + out_eps * abs(ref), name
# nansum (NaNs and infinities among the inputs) through the kernel shapes
# above, and a plan of two passes whose second reads the first's partials
# (FoldPartials).
for dtype in (torch.float32, torch.bfloat16):
    for shape, dim in (((1 << 16) + 3, None), ((64, 300), 1), ((20000, 16), 0), ((8, 5, 3000), (0, 2)),
                       ((333, 7), 1), ((3000, 37, 14), 1), ((4000, 1000), 1), ((6, 2, 70, 5, 300), (0, 2, 4))):
        x = torch.randn(shape).to(dtype).cuda()
        x[torch.rand(shape, device="cuda") < 0.1] = float("nan")
        ref = torch.nansum(x.cpu().double(), dim if dim is not None else [])
        got = reduce_op.nansum(x, dim).cpu().double()
        assert torch.allclose(got, ref, rtol=2e-2, atol=1.0), (dtype, shape, dim)
# amax and amin (NaN in some slices, integers at int64 and cast back)
# through the kernel shapes above, a multi-pass plan, and one-element rows.
for dtype in (torch.float32, torch.float16, torch.int8, torch.int64):
    for shape, dim in (((1 << 16) + 3, None), ((64, 300), 1), ((20000, 16), 0), ((8, 5, 3000), (0, 2)),
                       ((333, 7), 1), ((3000, 37, 14), 1), ((6, 2, 70, 5, 300), (0, 2, 4)), ((300001, 1), 1)):
        x = (torch.randn(shape) * 50).to(dtype).cuda()
        if dtype.is_floating_point:
            x[torch.rand(shape, device="cuda") < 0.001] = float("nan")
        for ours_fn, ref_fn in ((reduce_op.amax, torch.amax), (reduce_op.amin, torch.amin)):
            got = ours_fn(x, dim if dim is not None else ())
            ref = ref_fn(x.cpu(), dim if dim is not None else ())
            assert torch.equal(got.cpu().isnan(), ref.isnan()) if dtype.is_floating_point else True
            keep = ~ref.isnan() if dtype.is_floating_point else torch.ones_like(ref, dtype=torch.bool)
            assert torch.equal(got.cpu()[keep], ref[keep]), (dtype, shape, dim)
torch.cuda.synchronize()
# logsumexp: the engine's kernels with a state of two words (the running
# max and the sum scaled to it) in their shuffles, shared memory and split
# partials: the cases above, and pitch rows, stream columns, dense tiles,
# columns split over blocks and a full reduction split over blocks.
# Complex inputs: a state of a real max and a complex sum (16 bytes of
# complex64, 32 of complex128 with its alignment).
for dtype in (torch.float32, torch.bfloat16, torch.float64, torch.complex64, torch.complex128):
    for shape, dim in cases + [((4000, 1000), 1), ((3000, 372), 1), ((1, 90000, 7), 1), ((3, 3000, 255), 1),
                               ((300000, 5), 1), ((3, 200000, 2), 1), ((342, 20000), 0), (((1 << 22) + 5,), 0)]:
        x = (torch.randn(shape, dtype=dtype if dtype.is_complex else torch.float32) * 10).to(dtype).cuda()
        dims = list(range(x.dim())) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
        ref = torch.logsumexp(x.cpu().to(torch.complex128 if dtype.is_complex else torch.float64), dims)
        got = reduce_op.logsumexp(x, dims).cpu().to(ref.dtype)
        if dtype.is_complex:  # the imaginary parts modulo 2 pi (either side of log's branch cut)
            got, ref = torch.view_as_real(got.exp() / ref.exp()), torch.view_as_real(torch.ones_like(ref))
        assert torch.allclose(got, ref, rtol=1e-2, atol=1e-2), (dtype, shape, dim)
# var and std: a state of three words (mean, squared deviations, count)
# through the same kernels, std's root in the projection; three reduced
# dims that do not merge, packed first. complex64 as its real view, the
# pair dim kept.
for dtype in (torch.float32, torch.bfloat16, torch.float64, torch.complex64):
    for shape, dim in cases + [((4000, 1000), 1), ((3000, 372), 1), ((1, 90000, 7), 1), ((3, 3000, 255), 1),
                               ((300000, 5), 1), ((3, 200000, 2), 1), ((342, 20000), 0), (((1 << 22) + 5,), 0),
                               ((6, 5, 7, 9), (0, 2, 3))]:
        x = (torch.randn(shape, dtype=torch.complex64 if dtype.is_complex else torch.float32) * 3 + 1).to(dtype).cuda()
        for op in (torch.var, torch.std):
            ref = op(x.cpu().to(torch.complex128 if dtype.is_complex else torch.float64), dim)
            got = getattr(reduce_op, op.__name__)(x, dim).cpu().double()
            assert torch.allclose(got, ref, rtol=2e-2, atol=1e-6, equal_nan=True), (op.__name__, dtype, shape, dim)
# vector_norm of orders 2, 1 and inf: inputs folded in as |x| or x * x,
# float sums carried wide; the root in the last pass, which for three
# reduced dims that do not merge is sum's (or amax's) kernels folding the
# first pass's partials.
for dtype in (torch.float32, torch.bfloat16, torch.float64):
    for shape, dim in cases + [((4000, 1000), 1), ((300000, 5), 1), ((342, 20000), 0), (((1 << 22) + 5,), 0),
                               ((6, 5, 7, 9), (0, 2, 3))]:
        x = (torch.randn(shape) * 3).to(dtype).cuda()
        for ord in (2, 1, float("inf")):
            ref = torch.linalg.vector_norm(x.cpu().double(), ord, dim)
            got = reduce_op.vector_norm(x, ord, dim).cpu().double()
            assert torch.allclose(got, ref, rtol=2e-2, atol=1e-6), (ord, dtype, shape, dim)
# Integer and bool inputs of float results: read at their own width into
# float32 (sum's and mean's dtype=, logsumexp), from a float64 copy into
# float64.
for dtype in (torch.bool, torch.int8, torch.int16, torch.int32, torch.int64):
    for shape, dim in cases:
        x = (torch.randn(shape) * 10).to(dtype).cuda()
        wide = x.cpu().double()
        for result in (torch.float32, torch.float64):
            got = reduce_op.sum(x, dim, dtype=result).cpu().double()
            assert torch.allclose(got, wide.sum(dim if dim is not None else []), rtol=1e-5, atol=1e-3), (dtype, shape)
            got = reduce_op.mean(x, dim, dtype=result).cpu().double()
            assert torch.allclose(got, wide.mean(dim if dim is not None else []), rtol=1e-5, atol=1e-5), (dtype, shape)
        got = reduce_op.logsumexp(x, dim if dim is not None else list(range(x.dim()))).cpu().double()
        ref = torch.logsumexp(wide, dim if dim is not None else list(range(x.dim())))
        assert torch.allclose(got, ref, rtol=1e-5, atol=1e-5), (dtype, shape, dim)
# Stream-columns planes split along their rows, finished inside a cluster
# (under 16 MB, splits of up to 8: one block reads the others' shared
# memory) and by the finish kernel (a split of 40); and folded columns grids
# that keep 1 or 4 row threads with eight loads in flight.
for dtype, shape in ((torch.float32, (10, 511, 153)), (torch.int64, (4, 7801, 9)), (torch.bfloat16, (9, 7753, 30)),
                     (torch.float32, (36, 454, 225)), (torch.float16, (1, 25992, 50)), (torch.float32, (14211, 44, 11)),
                     (torch.float32, (7770, 434, 15))):
    x = (torch.randn(shape) * 10).to(dtype).cuda()
    got = reduce_op.sum(x, 1).cpu().double()
    assert torch.allclose(got, x.cpu().double().sum(1), rtol=2e-2, atol=1.0), (dtype, shape)
# conv1d's tiles (csrc/cuda/conv1d_cuda.cu), both kernels: rows shorter
# than a tile, one past it, on and off 16-byte boundaries, more tiles than
# blocks, a mask longer than a row and the longest mask, each padding, one
# mask and a mask per channel, with the input's gradient (a second
# correlation).
for dtype, x_shape, w_shape in ((torch.float32, (3, 5, 2049), (5, 4)), (torch.bfloat16, (2, 3, 7), (3, 9)),
                                (torch.float64, (4097,), (31,)), (torch.float16, (2, 3000), (1024,)),
                                (torch.float32, (2, 3, 4096), (3, 5)), (torch.bfloat16, (2, 8, 8200), (8, 4)),
                                (torch.float32, (400, 4100), (3,))):
    x = torch.randn(x_shape).to(dtype).cuda().requires_grad_()
    w = torch.randn(w_shape).to(dtype).cuda()
    for padding in ("same", "causal", "valid"):
        if padding == "valid" and x_shape[-1] < w_shape[-1]:
            continue
        y = reduce_op.conv1d(x, w, None, padding)
        (g,) = torch.autograd.grad(y.float().sum(), x)
        # The CPU kernel in float64 (tests/test_conv1d.py checks it against F.conv1d).
        ref = reduce_op.conv1d(x.detach().cpu().double(), w.cpu().double(), None, padding)
        scale = ref.abs().max().item() + 1.0
        assert (y.cpu().double() - ref).abs().max().item() <= 2e-2 * scale, (dtype, x_shape, w_shape, padding)
# The book's four kernels (classic_conv1d): ragged ends, the longest
# constant mask (C * K = 1024), a mask per channel, each padding.
for kernel in reduce_op.conv1d_kernels():
    for dtype, x_shape, w_shape in ((torch.float32, (2, 4, 1000), (4, 7)), (torch.float16, (3, 257), (5,)),
                                    (torch.float64, (2, 2, 300), (2, 512))):
        x = torch.randn(x_shape).to(dtype).cuda()
        w = torch.randn(w_shape).to(dtype).cuda()
        for padding in ("same", "causal", "valid"):
            if padding == "valid" and x_shape[-1] < w_shape[-1]:
                continue
            y = reduce_op.conv1d(x, w, None, padding, kernel=kernel)
            ref = reduce_op.conv1d(x.cpu().double(), w.cpu().double(), None, padding)
            scale = ref.abs().max().item() + 1.0
            assert (y.cpu().double() - ref).abs().max().item() <= 2e-2 * scale, (kernel, dtype, x_shape, padding)
print("workload ok")
# fsum (csrc/fsum/fsum_cuda.cu): rows in one block and in chunks merged
# after, ragged and unaligned rows, elements far below their tile's largest
# (straight to the shared digits), inf and nan; bit for bit the CPU's.
for dtype in (torch.float32, torch.float64, torch.bfloat16):
    for shape, dim in (((3, 70001), 1), (((1 << 20) + 5,), None), ((700, 33), 1), ((5, 9, 31), (0, 2))):
        n = 1
        for s in shape:
            n *= s
        for off in (0, 1):
            base = torch.randn(n + off, dtype=torch.float64) * torch.exp2(torch.randint(-80, 80, (n + off,)).double())
            base[::997] = float("inf") if off else 0.0
            x = base.to(dtype).cuda()[off:].view(shape)
            got, want = reduce_op.fsum(x, dim).cpu(), reduce_op.fsum(x.cpu(), dim)
            assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.nan_to_num(0.0), want.nan_to_num(0.0)), \
                (dtype, shape, dim, off)
