"""How much of a 256 MiB full sum's time is a fixed cost per call, for our
two kernels and for bench.py's one-kernel read roof, on the same machine:
both timed on 256 MiB and 1 GiB of uint8 (and float32 views of the same
bytes), three times each, interleaved, with benchmarks/bench.py's timer
(CUDA-graph replays after 100 ms of warm-up). A line through the two sizes
gives each kernel's streaming rate and its fixed cost per call. Used on the
device; see benchmarks/NOTES.md."""
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import reduce_op  # noqa: E402
from bench import Timer, roof_reader  # noqa: E402

timer = Timer("cuda", replays=15, warmup=3, warmup_ms=100)
gen = torch.Generator(device="cuda").manual_seed(0)
roof = roof_reader()


kernels = {
    "roof (one kernel)": roof,
    "gpureduce uint8": lambda v: reduce_op.sum(v),
    "gpureduce float32 view": lambda v: reduce_op.sum(v.view(torch.float32)),
}
sizes = [1 << 28, 1 << 30]
times = {(k, n): [] for k in kernels for n in sizes}
inputs = {n: torch.randint(0, 256, (n,), device="cuda", dtype=torch.uint8, generator=gen) for n in sizes}
for n, x in inputs.items():
    assert torch.equal(reduce_op.sum(x), torch.sum(x))
for _ in range(3):
    for n in sizes:
        for k, fn in kernels.items():
            times[(k, n)].append(timer.graph_us(fn, [inputs[n]]))
print(f"{'kernel':26s} {'256 MiB us':>11s} {'GB/s':>6s} {'1 GiB us':>10s} {'GB/s':>6s} {'rate GB/s':>10s} {'fixed us':>9s}")
for k in kernels:
    a, b = (statistics.median(times[(k, n)]) for n in sizes)
    rate = (sizes[1] - sizes[0]) / (b - a) / 1e3
    fixed = a - sizes[0] / rate / 1e3
    print(f"{k:26s} {a:11.2f} {sizes[0] / a / 1e3:6.0f} {b:10.2f} {sizes[1] / b / 1e3:6.0f} {rate:10.0f} {fixed:9.2f}")
print("spread of the three timings (max/min - 1): " + ", ".join(
    f"{k} {n >> 20} MiB {max(v) / min(v) - 1:.3%}" for (k, n), v in times.items()))
