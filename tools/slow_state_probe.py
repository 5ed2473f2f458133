"""Probe of the slow reads seen on 2^30-byte full sums (benchmarks/NOTES.md):
one uint8 tensor timed again and again (CUDA-graph medians and plain event
medians) around the things that happen between benchmark cases: torch.sum's
int64 temporary, emptying the allocator's cache, a second 1 GiB tensor."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import reduce_op  # noqa: E402
from bench import Timer  # noqa: E402

n = 1 << 30
timer = Timer("cuda", replays=15, warmup=3)
gen = torch.Generator(device="cuda").manual_seed(0)
x = torch.randint(0, 256, (n,), device="cuda", dtype=torch.uint8, generator=gen)
want = torch.sum(x)
torch.cuda.empty_cache()


def t(label):
    assert torch.equal(reduce_op.sum(x), want)
    g = timer.graph_us(lambda v: reduce_op.sum(v), [x])
    e = timer.events_us(lambda v: reduce_op.sum(v), [x])
    mib = torch.cuda.memory_reserved() / 2**20
    print(f"{label:46s} graph {g:6.1f} us ({n / g / 1e3:5.0f} GB/s)  events {e:6.1f} us  reserved {mib:7.0f} MiB",
          flush=True)


t("fresh tensor")
t("again")
t("again")
torch.sum(x)
torch.cuda.synchronize()
t("after one eager torch.sum (int64 temporary)")
t("again")
torch.cuda.empty_cache()
t("after empty_cache")
y = torch.empty(8 * n, device="cuda", dtype=torch.uint8)
del y
t("after an 8 GiB empty() and del")
torch.cuda.empty_cache()
t("after empty_cache")
z = torch.randint(0, 256, (n,), device="cuda", dtype=torch.uint8, generator=gen)
t("with a second 1 GiB tensor alive")
x = z
want = torch.sum(x)
torch.cuda.empty_cache()
t("the second tensor")
