"""Full sums and few long rows through the split rows pass, checked against
torch.sum, eagerly, twenty times for bitwise repeatability, and replayed in a
CUDA graph. tests/test_cuda.py runs it once per GPUREDUCE_TUNE_SPLIT_FINISH
mode."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import reduce_op  # noqa: E402
from axes import assert_matches_torch, random_tensor  # noqa: E402

gen = torch.Generator().manual_seed(11)
cases = [(((1 << 20) + 7,), None), (((1 << 24) + 3,), None), ((17, 300007), 1), ((3, 1 << 20), 1),
         ((2, 5, 70000), (0, 2))]
for dtype in (torch.float32, torch.bfloat16, torch.float64, torch.uint8, torch.int32, torch.complex64):
    for shape, dim in cases:
        x = random_tensor(shape, dtype, "cpu", gen).cuda()
        first = reduce_op.sum(x, dim)
        assert_matches_torch(first, x, dim, False)
        for _ in range(19):
            assert torch.equal(reduce_op.sum(x, dim), first), (dtype, shape, dim)

statics = [torch.randn(s, device="cuda") for s, _ in cases]
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for x, (_, d) in zip(statics, cases):
        reduce_op.sum(x, d)
torch.cuda.current_stream().wait_stream(side)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    outs = [reduce_op.sum(x, d) for x, (_, d) in zip(statics, cases)]
for _ in range(3):
    for x in statics:
        x.copy_(torch.randn(x.shape, device="cuda"))
    g.replay()
    torch.cuda.synchronize()
    for o, x, (_, d) in zip(outs, statics, cases):
        assert_matches_torch(o, x, d, False)
torch.cuda.synchronize()
print("workload ok")
