"""Run a model step under torch.profiler with torch.sum routed to gpureduce,
print the table in which gpureduce::sum (and, on CUDA, its kernels) appear by
name, and export a Chrome trace.

    python examples/profile_step.py --device cuda --trace /tmp/gpureduce_trace.json
"""
import argparse
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import reduce_op

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dropin_train import Block  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--trace", default="gpureduce_trace.json")
    a = p.parse_args(argv)
    model = Block().to(a.device)
    x = torch.randn(8, 128, 64, device=a.device)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if a.device == "cuda" else [])
    with reduce_op.replace_torch_sum():
        model(x).sum().backward()  # warm-up
        with profile(activities=activities) as prof:
            loss = model(x).sum()
            loss.backward()
            reduce_op.sum(x.flatten(), kernel="reduce7" if a.device == "cuda" else "cpu")
            if a.device == "cuda":
                torch.cuda.synchronize()
    sort = "cuda_time_total" if a.device == "cuda" else "cpu_time_total"
    print(prof.key_averages().table(sort_by=sort, row_limit=25))
    names = {e.key for e in prof.key_averages()}
    ours = sorted(n for n in names if "gpureduce" in n or n.startswith("reduce7"))
    print("gpureduce events:", ", ".join(ours))
    prof.export_chrome_trace(a.trace)
    print(f"Chrome trace written to {a.trace} (open it in chrome://tracing or ui.perfetto.dev)")
    return 0 if "gpureduce::sum" in names else 1


if __name__ == "__main__":
    sys.exit(main())
