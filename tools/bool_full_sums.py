"""Why bool full sums of 2^30 read slower than uint8 ones through the same
kernel: the same bytes timed as bool and as uint8, with 0/1 and 0..255
data, made in different ways (CUDA-graph medians, benchmarks/bench.py's
timer, torch.sum alongside). Used on the device; see benchmarks/NOTES.md."""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import reduce_op  # noqa: E402
from bench import Timer  # noqa: E402

n = 1 << 30
timer = Timer("cuda", replays=15, warmup=3)
gen = torch.Generator(device="cuda").manual_seed(0)


def run(label, x):
    print(f"[{time.time():.1f}]", end=" ")
    assert torch.equal(reduce_op.sum(x), torch.sum(x)), label
    ours = timer.graph_us(lambda v: reduce_op.sum(v), [x])
    ref = timer.graph_us(lambda v: torch.sum(v), [x])
    print(f"{label:44s} gpureduce {ours:7.1f} us {n / ours / 1e3:6.0f} GB/s   torch.sum {ref:8.1f} us", flush=True)


x = torch.rand(n, device="cuda", generator=gen) > 0.5
run("bool, rand > 0.5 (as bench.py makes it)", x)
run("  the same bytes viewed as uint8", x.view(torch.uint8))
y = x.clone()
run("  a clone of it", y)
del x, y
torch.cuda.empty_cache()
u = torch.randint(0, 2, (n,), device="cuda", dtype=torch.uint8, generator=gen)
run("uint8 0/1, randint", u)
run("  the same bytes viewed as bool", u.view(torch.bool))
del u
torch.cuda.empty_cache()
u = torch.randint(0, 256, (n,), device="cuda", dtype=torch.uint8, generator=gen)
run("uint8 0..255, randint", u)
u.bitwise_and_(1)
run("  the same tensor after & 1 (0/1 data)", u)
u.add_(2)
run("  then + 2 (2/3 data)", u)
del u
f = torch.rand(n // 4, device="cuda", generator=gen)
run("float32 2^28 (the same bytes)", f)
time.sleep(20)
run("  again after 20 s idle", f)
