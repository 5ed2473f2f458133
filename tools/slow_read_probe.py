"""Are the slow reads of 1 GiB inputs (benchmarks/NOTES.md) a state of the
GPU's memory, or of our kernels' access pattern? One 1 GiB block of memory,
made as bench.py makes a bool input, is read again and again by four
different kernels, side by side, while nvidia-smi reports temperatures and
clocks:
  ours/bool   gpureduce.sum of the bool tensor (the byte kernel)
  ours/f32    gpureduce.sum of the same bytes viewed as float32
  roof        bench.py's read-only stream kernel (grid-stride, 16-byte loads)
  torch/f32   torch.sum of the float32 view (ATen's reduction kernel)
If all four slow down together, it is the memory; if only ours, ours.
Between rounds it does what happens between benchmark cases: torch.sum of
a bool input (an 8 GiB int64 temporary) in a CUDA graph, fresh inputs, a
busy stretch. Used on the device; see benchmarks/NOTES.md."""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import reduce_op  # noqa: E402
from bench import Timer, gpu_state, roof_reader  # noqa: E402

n = 1 << 30
timer = Timer("cuda", replays=15, warmup=3)
gen = torch.Generator(device="cuda").manual_seed(0)
roof = roof_reader()
t_start = time.time()


def round_(label, x):
    f = x.view(torch.float32)
    assert torch.equal(reduce_op.sum(x), torch.sum(x)), label
    us = {
        "ours/bool": timer.graph_us(lambda v: reduce_op.sum(v), [x]),
        "ours/f32": timer.graph_us(lambda v: reduce_op.sum(v), [f]),
        "roof": timer.graph_us(roof, [x]),
        "torch/f32": timer.graph_us(lambda v: torch.sum(v), [f]),
    }
    gbps = "  ".join(f"{k} {n / v / 1e3:5.0f}" for k, v in us.items())
    state = gpu_state()  # T gpu, T memory, MHz sm, MHz mem, W, clock-event reasons
    print(f"[{time.time() - t_start:6.1f}s] {label:34s} {gbps} GB/s | {state}", flush=True)


x = torch.rand(n, device="cuda", generator=gen) > 0.5
round_("fresh bool (as bench.py)", x)
round_("again", x)
torch.cuda.synchronize()
timer.graph_us(lambda v: torch.sum(v), [x])  # torch.sum of bool: int64 temporary, in a graph
round_("after torch.sum(bool) in a graph", x)
round_("again", x)
y = torch.rand(n, device="cuda", generator=gen) > 0.5
round_("a second fresh bool tensor", y)
del y
busy = torch.rand(1 << 30, device="cuda", generator=gen)
t0 = time.time()
while time.time() - t0 < 20:  # 20 s of full-bandwidth reads
    for _ in range(50):
        reduce_op.sum(busy)
    torch.cuda.synchronize()
round_("after 20 s of 4 GiB sums", x)
round_("again", x)
del busy
time.sleep(15)
round_("after 15 s idle", x)
torch.cuda.empty_cache()
z = torch.randint(0, 2, (n,), device="cuda", dtype=torch.uint8, generator=gen).view(torch.bool)
round_("fresh randint 0/1 after empty_cache", z)
round_("again", z)
