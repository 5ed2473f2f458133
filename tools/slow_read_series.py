"""Follow-up of tools/slow_read_probe.py: is a slow read a property of the
kernel, or of the moments after some event, whatever kernel runs then? After
each event (idle, a fresh large allocation, torch.sum of a bool input, a new
input made as bench.py makes it) one kernel is called back to back 300 times
on the same 1 GiB of memory, each call timed with its own pair of CUDA
events, and the calls are reported in windows (GB/s per window, and the GPU
time at which each window starts). Used on the device; see
benchmarks/NOTES.md."""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import reduce_op  # noqa: E402
from bench import roof_reader  # noqa: E402

n = 1 << 30
gen = torch.Generator(device="cuda").manual_seed(0)
roof = roof_reader()
WINDOWS = [(0, 5), (5, 10), (10, 20), (20, 50), (50, 100), (100, 200), (200, 300)]


def series(label, fn, x, calls=300):
    nbytes = x.numel() * x.element_size()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(calls)]
    for a, b in ev:
        a.record()
        fn(x)
        b.record()
    torch.cuda.synchronize()
    us = [a.elapsed_time(b) * 1e3 for a, b in ev]
    start = [ev[0][0].elapsed_time(a) for a, _ in ev]  # ms since the first call began
    cells = []
    for lo, hi in WINDOWS:
        w = us[lo:hi]
        cells.append(f"{start[lo]:5.0f}ms {nbytes * len(w) / sum(w) / 1e3:5.0f}")
    print(f"{label:44s} " + " | ".join(cells), flush=True)


def ours(v):
    reduce_op.sum(v)


def torch_sum(v):
    torch.sum(v)


print("windows of calls: " + " | ".join(f"{lo}-{hi}" for lo, hi in WINDOWS) + " (start of window, GB/s)")
x = torch.rand(n, device="cuda", generator=gen) > 0.5
f = x.view(torch.float32)
torch.cuda.synchronize()
series("ours/bool, first calls of the process", ours, x)
time.sleep(3)
series("roof, after 3 s idle", roof, x)
time.sleep(3)
series("ours/bool, after 3 s idle", ours, x)
time.sleep(3)
series("ours/f32 view, after 3 s idle", ours, f)
time.sleep(3)
series("torch/f32 view, after 3 s idle", torch_sum, f)
for name, fn, v in [("roof", roof, x), ("ours/bool", ours, x), ("ours/f32 view", ours, f)]:
    torch.cuda.empty_cache()
    big = torch.empty(8 << 30, device="cuda", dtype=torch.uint8)  # a fresh cudaMalloc, untouched
    del big
    series(f"{name}, after a fresh 8 GiB allocation", fn, v)
for name, fn, v in [("roof", roof, x), ("ours/bool", ours, x), ("torch/f32 view", torch_sum, f)]:
    torch.sum(x)  # torch.sum of bool: an 8 GiB int64 temporary (from the cache after the first)
    series(f"{name}, after an eager torch.sum(bool)", fn, v)
for name, fn in [("roof", roof), ("ours/bool", ours), ("ours/f32 view", ours)]:
    y = torch.rand(n, device="cuda", generator=gen) > 0.5  # as bench.py makes a bool input
    series(f"{name}, on a new bool input", fn, y if name != "ours/f32 view" else y.view(torch.float32))
    del y
for name, fn, v in [("ours/bool", ours, x), ("roof", roof, x)]:
    time.sleep(3)
    t0 = time.time()
    while time.time() - t0 < 0.5:  # a busy half second of other reads first
        roof(f)
        torch.cuda.synchronize()
    series(f"{name}, after 3 s idle then 0.5 s of reads", fn, v)
