"""Full sums and few long rows through the split rows pass, checked against
torch.sum, eagerly, twenty times for bitwise repeatability, replayed in a
CUDA graph (bitwise equal to the eager result), and on four streams at once.
With the argument `capture-first` the first call of the process is a captured one
(lazy set-up of the engine inside a capture)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import reduce_op  # noqa: E402
from axes import assert_matches_torch, random_tensor  # noqa: E402

gen = torch.Generator().manual_seed(11)
cases = [(((1 << 20) + 7,), None), (((1 << 24) + 3,), None), ((17, 300007), 1), ((3, 1 << 20), 1),
         ((2, 5, 70000), (0, 2))]


def captured_sums(xs):
    """Sums of xs (same order as cases) from one captured and replayed graph."""
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        outs = [reduce_op.sum(x, d) for x, (_, d) in zip(xs, cases)]
    g.replay()
    torch.cuda.synchronize()
    return g, outs


if "capture-first" in sys.argv:
    # Full sums in int32, the rest float32.
    xs = [torch.randint(-10**6, 10**6, s, device="cuda", dtype=torch.int32) if d is None
          else torch.randn(s, device="cuda") for s, d in cases]
    g, outs = captured_sums(xs)
    for o, x, (_, d) in zip(outs, xs, cases):
        assert_matches_torch(o, x, d, False)
        assert torch.equal(o, reduce_op.sum(x, d)), "graph and eager results differ"
for dtype in (torch.float32, torch.bfloat16, torch.float64, torch.uint8, torch.int32, torch.complex64):
    for shape, dim in cases:
        x = random_tensor(shape, dtype, "cpu", gen).cuda()
        first = reduce_op.sum(x, dim)
        assert_matches_torch(first, x, dim, False)
        for _ in range(19):
            assert torch.equal(reduce_op.sum(x, dim), first), (dtype, shape, dim)


def fresh(shape, dtype):
    """Random CUDA data: normal floats, or integers over the dtype's range
    (uint8 0..255, int32 +-10^6)."""
    if dtype.is_floating_point:
        return torch.randn(shape, device="cuda", dtype=dtype)
    lo, hi = (0, 256) if dtype == torch.uint8 else (-10**6, 10**6)
    return torch.randint(lo, hi, shape, device="cuda", dtype=dtype)


# Graph inputs: float32 and integer copies of every case.
graph_cases = [(s, d, dt) for s, d in cases for dt in (torch.float32, torch.uint8, torch.int32)]
statics = [fresh(s, dt) for s, _, dt in graph_cases]
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for x, (_, d, _) in zip(statics, graph_cases):
        reduce_op.sum(x, d)
torch.cuda.current_stream().wait_stream(side)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    outs = [reduce_op.sum(x, d) for x, (_, d, _) in zip(statics, graph_cases)]
for _ in range(3):
    for x, (s, _, dt) in zip(statics, graph_cases):
        x.copy_(fresh(s, dt))
    g.replay()
    torch.cuda.synchronize()
    for o, x, (_, d, _) in zip(outs, statics, graph_cases):
        assert_matches_torch(o, x, d, False)
        assert torch.equal(o, reduce_op.sum(x, d)), "graph and eager results differ"

# Four streams summing at once (and the graph replaying on a fifth), each
# call bitwise equal to the same sum made alone.
inputs = [fresh(s, dt) for s, _ in cases for dt in (torch.float32, torch.float32, torch.uint8, torch.int32)]
dims = [d for _, d in cases for _ in range(4)]
alone = [reduce_op.sum(x, d) for x, d in zip(inputs, dims)]
streams = [torch.cuda.Stream() for _ in range(4)]
results = [[None] * len(inputs) for _ in streams]
torch.cuda.synchronize()
replayer = torch.cuda.Stream()
for rep in range(5):
    with torch.cuda.stream(replayer):
        g.replay()
    for k, st in enumerate(streams):
        with torch.cuda.stream(st):
            for i in range(len(inputs)):
                j = (i + k + rep) % len(inputs)
                results[k][j] = reduce_op.sum(inputs[j], dims[j])
    torch.cuda.synchronize()
    for k in range(len(streams)):
        for j in range(len(inputs)):
            assert torch.equal(results[k][j], alone[j]), ("streams", k, j)
torch.cuda.synchronize()
print("workload ok")
