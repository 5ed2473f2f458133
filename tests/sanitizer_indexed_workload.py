"""A small run of every kernel of the indexed pass (argmax, argmin, max.dim,
min.dim: groups of 1 to 32 lanes with short and long walks (and the
long walks of 4- and 8-byte rows' wide lanes), vector and
element loads, split blocks and their finish, columns of an element and of
a vector a thread (16-, 8- and 4-byte vectors; results stored aligned and
not), outputs numbered in tiles, and split rows and columns, finished in a
cluster or by a finish kernel;
dense planes of columns through shared-memory tiles (an output a thread,
a few threads an output, a plane a block in row tiles);
finishes of a lane, a group and a block an output; dims of one element a
slice), for compute-sanitizer
(memcheck, racecheck). Each result is checked against torch's, so the run
also fails on a wrong answer."""
import torch

import reduce_op

torch.manual_seed(0)
cases = [((1 << 18) + 3, None), (5000, None), ((256, 16), 1), ((64, 300), 1), ((8, 20000), 1), ((3, 1000), 1),
         ((4096, 1), 1), ((100, 5), 1), ((20000, 16), 0), ((512, 130), 0), ((4, 6, 40), 1), ((6, 5, 4, 3), 2),
         ((3, 30000, 4), 1), ((2, 50001), 0), ((5, 20000, 2), 1), ((64, 48, 32), 1), ((9, 300, 64), 0),
         ((7, 300, 10), 1), ((40, 128, 64), 1), ((15, 7, 256), 1), ((24, 80, 512), 1), ((5000, 3, 7), 1),
         ((300, 1024), 1), ((300, 1030), 1), ((60, 334, 7), 1), ((1, 3642, 3), 1), ((5593, 1, 3), 1),
         ((4, 23, 43), 2), ((48, 95), 1), ((12, 8192), 1), ((20, 128, 1024), 1), ((40, 6, 4094), 1),
         ((30, 5, 1028), 1), ((34000, 64), 1), ((9000, 384), 1),
         ((70000, 32), 1), ((9000, 512), 1)]
for dtype in (torch.float32, torch.float16, torch.float64, torch.int8, torch.int64, torch.bool):
    for shape, dim in cases:
        base = torch.randint(-5, 5, tuple(shape) if isinstance(shape, tuple) else (shape,)) if not dtype.is_floating_point \
            else torch.randn(shape)
        base = base > 0 if dtype == torch.bool else base.to(dtype)
        if dtype.is_floating_point:
            base.view(-1)[:: 997] = float("nan")
        x = base.cuda()
        for view in (x, x[..., 1:] if x.shape[-1] > 2 else x, x[..., ::2]):
            d = dim if dim is None or dim < view.dim() else view.dim() - 1
            cpu = view.cpu()
            if d is None:
                if dtype != torch.bool:
                    assert reduce_op.argmax(view).item() == torch.argmax(cpu).item(), (dtype, shape)
                    assert reduce_op.argmin(view).item() == torch.argmin(cpu).item(), (dtype, shape)
                continue
            for ours, theirs in ((reduce_op.max, torch.max), (reduce_op.min, torch.min)):
                got, ref = ours(view, d), theirs(cpu, d)
                assert torch.equal(got.indices.cpu(), ref.indices), (dtype, shape, view.stride())
                v, r = got.values.cpu(), ref.values
                assert torch.equal(v.isnan() if dtype.is_floating_point else v, r.isnan() if dtype.is_floating_point else r)
# The vector columns kernel's result stores: aligned (a fresh result) and
# one element into out= tensors (an element at a time).
for dtype in (torch.float32, torch.float16, torch.float64, torch.int8):
    vec = 16 // dtype.itemsize if dtype.itemsize > 1 else 8
    rows = (3 << 19) // (6 * vec * dtype.itemsize)
    x = (torch.randn(rows, 3, 2 * vec) * 50).to(dtype).cuda()
    ref = torch.max(x.cpu(), 1)
    for offset in (0, 1):
        vals = torch.empty(rows * 2 * vec + offset, dtype=dtype, device="cuda")[offset:].view(rows, 2 * vec)
        idx = torch.empty(rows * 2 * vec + offset, dtype=torch.long, device="cuda")[offset:].view(rows, 2 * vec)
        reduce_op.max(x, 1, out=(vals, idx))
        assert torch.equal(idx.cpu(), ref.indices) and torch.equal(vals.cpu(), ref.values), (dtype, offset)
# Channels_last maps over N and H, their outputs numbered in tiles of a few
# channels by a run along W.
for dtype in (torch.float32, torch.bfloat16, torch.uint8):
    for shape, d in (((2, 96, 28, 28), 0), ((3, 12, 9, 35), 0), ((2, 64, 6, 40), 2)):
        x = (torch.randn(shape) * 50).to(dtype).cuda().contiguous(memory_format=torch.channels_last)
        got, ref = reduce_op.min(x, d), torch.min(x.cpu(), d)
        assert torch.equal(got.indices.cpu(), ref.indices) and torch.equal(got.values.cpu(), ref.values), (dtype, shape)
        assert torch.equal(reduce_op.argmax(x, d).cpu(), torch.argmax(x.cpu(), d)), (dtype, shape)
# Rows of 3 and 2 elements whose results lie a plane apart (transposed):
# max.dim and min.dim take them in the result's order.
for shape, dtype in (((3000, 47, 3), torch.int32), ((2000, 64, 2), torch.int64)):
    x = (torch.randn(shape) * 50).to(dtype).cuda().transpose(0, 2)
    for ours, theirs in ((reduce_op.max, torch.max), (reduce_op.min, torch.min)):
        got, ref = ours(x, 0), theirs(x.cpu(), 0)
        assert torch.equal(got.indices.cpu(), ref.indices) and torch.equal(got.values.cpu(), ref.values), (dtype, shape)
torch.cuda.synchronize()
print("indexed workload ok: every result matched torch's")
# Dense planes of columns no vector fits, through the shared-memory tiles:
# many planes (an output a thread), few (threads an output), planes larger
# than a tile (row tiles); and one element into the storage.
for shape, dtype in (((20000, 3, 7), torch.float32), ((250, 30, 127), torch.int16),
                     ((600, 100, 127), torch.bfloat16), ((600, 19, 127), torch.float64), ((30000, 2, 12), torch.uint8)):
    base = (torch.randn(shape) * 4).round().to(dtype)
    if dtype.is_floating_point:
        base.view(-1)[:: 997] = float("nan")
    flat = torch.empty(base.numel() + 1, dtype=dtype)
    flat[1:] = base.flatten()
    for x in (base.cuda(), flat.cuda()[1:].view(shape)):
        for ours, theirs in ((reduce_op.max, torch.max), (reduce_op.min, torch.min)):
            got, ref = ours(x, 1), theirs(x.cpu(), 1)
            assert torch.equal(got.indices.cpu(), ref.indices), (dtype, shape)
            v, r = got.values.cpu(), ref.values
            assert torch.equal(v.isnan(), r.isnan()) if dtype.is_floating_point else torch.equal(v, r)
