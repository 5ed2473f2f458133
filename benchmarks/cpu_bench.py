"""CPU benchmark: gpureduce.sum against torch.sum on the CPU, in one process,
with the same thread count for both (2 by default, as on the project's
machines), over the random-shape cases of random_cases.py (CPU sizes) and a
few fixed ones. Every case is checked against torch.sum before it is timed.

Times come from torch.utils.benchmark (blocked_autorange, the median), ours
and torch's measured in six alternating rounds on the same input (each of
at least ten calls), the median round of each. The whole set is timed in
three sweeps, the second in reverse order, and each case reports its
median sweep: on this shared 2-core machine one sweep put 0-4 cases of
160 over 1.05x that came out at 0.64-1.01x when timed again a minute
later (NOTES.md, session 65). The ratio reported is ours / torch's time:
under 1 is faster than torch.

    python benchmarks/cpu_bench.py                 # 150 random cases + the fixed ones
    python benchmarks/cpu_bench.py --n 40 --max-elements 1000000

Writes cpu_<host>.json (every case, the distribution of the ratio) and
cpu_<host>.png (the ratios, sorted) under --out-dir.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time

import torch
import torch.utils.benchmark as tbench

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import reduce_op  # noqa: E402
from bench import geomean, progress, slug  # noqa: E402
from random_cases import Case, build, sample_cases, sum_args  # noqa: E402
from random_bench import check, percentile  # noqa: E402

FIXED = [
    Case("fixed", "float32", (1000,)), Case("fixed", "float32", (10_000_000,)),
    Case("fixed", "bfloat16", (100_000,)), Case("fixed", "bfloat16", (10_000_000,)),
    Case("fixed", "int32", (10_000_000,)), Case("fixed", "uint8", (10_000_000,)),
    Case("fixed", "float32", (1_000_000, 16), dim=(1,)), Case("fixed", "float32", (4096, 4096), dim=(0,)),
    Case("fixed", "float32", (4096, 4096), dim=(1,)),
    Case("fixed", "float32", (4096, 4096), view=[("transpose", 0, 1)], dim=(1,)),
]


def time_us(fn, x, min_run_time: float) -> float:
    t = tbench.Timer(stmt="fn(x)", globals={"fn": fn, "x": x}, num_threads=torch.get_num_threads())
    return t.blocked_autorange(min_run_time=min_run_time).median * 1e6


def time_pair_us(ours, theirs, x, min_run_time: float, rounds: int = 6, calls_per_round: int = 10):
    """Both sides timed in alternating rounds, the median round of each: on
    this shared 2-core machine a timing now and then ran 1.5-2.5x slow for
    either side (2026-11-24), which one timing per side counted in full.
    Each round runs for min_run_time / rounds, and at least calls_per_round
    calls of the slower side: with 3 rounds of 17 ms, calls of 3-6 ms (the
    memory-bound cases of 10^7 elements and more) were timed 3-5 times a
    round, and their ratios moved by up to 15% between runs (2026-11-25).
    The side that goes first alternates from round to round: a float32 sum
    of 10^7 elements timed ours-first came out 1.03-1.11x of torch.sum three
    times and 0.98-1.05x torch-first (2026-11-26)."""
    start = time.perf_counter()
    ours(x), theirs(x)
    one_call = (time.perf_counter() - start) / 2
    per_round = max(min_run_time / rounds, calls_per_round * one_call)
    a, b = [], []
    for r in range(rounds):
        if r % 2 == 0:
            a.append(time_us(ours, x, per_round))
            b.append(time_us(theirs, x, per_round))
        else:
            b.append(time_us(theirs, x, per_round))
            a.append(time_us(ours, x, per_round))
    return statistics.median(a), statistics.median(b)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=150, help="random cases")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--max-elements", type=int, default=100_000_000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--min-run-time", type=float, default=0.05, help="seconds per case and side (split over the rounds)")
    p.add_argument("--sweeps", type=int, default=3, help="timings of the whole set; each case reports its median")
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    cases = FIXED + sample_cases(args.n, args.seed, 1 << 6, args.max_elements * 2)
    timings = {}  # case index -> [(ours_us, torch_us, numel), one a sweep]
    correct = {}
    order = [(sweep, i) for sweep in range(args.sweeps)
             for i in (range(len(cases)) if sweep % 2 == 0 else reversed(range(len(cases))))]
    t0 = time.time()
    for _, i in progress(order, len(order), f"cpu, {args.sweeps} sweeps"):
        case = cases[i]
        # The same input in every sweep: a generator of its own a case.
        x = build(case, "cpu", torch.Generator().manual_seed(args.seed * 100_003 + i))
        if x.numel() > args.max_elements:
            continue
        kw = sum_args(case)

        def ours(t, kw=kw):
            return reduce_op.sum(t, **kw)

        def theirs(t, kw=kw):
            return torch.sum(t, **kw)

        correct[i] = correct.get(i, True) and check(ours(x), theirs(x), x, kw)
        timings.setdefault(i, []).append((*time_pair_us(ours, theirs, x, args.min_run_time), x.numel()))
    rows = []
    for i in sorted(timings):
        sweeps = timings[i]
        ours_us, torch_us, numel = sorted(sweeps, key=lambda t: t[0] / t[1])[(len(sweeps) - 1) // 2]
        rows.append({"label": cases[i].label(), "numel": numel, "correct": correct[i], "gpureduce_us": ours_us,
                     "torch_us": torch_us, "ratio": ours_us / torch_us,
                     "sweep_ratios": [a / b for a, b, _ in sweeps]})
    ratios = [r["ratio"] for r in rows]
    summary = {"cases": len(rows), "all_correct": all(r["correct"] for r in rows), "max": max(ratios),
               "p99": percentile(ratios, 99), "p90": percentile(ratios, 90), "median": percentile(ratios, 50),
               "geomean": geomean(ratios), "over_1.05": sum(1 for v in ratios if v > 1.05)}
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "torch": torch.__version__,
            "threads": args.threads, "cpu": platform.processor() or platform.machine(), "host": platform.node(),
            "seed": args.seed, "max_elements": args.max_elements, "sweeps": args.sweeps, "seconds": time.time() - t0}
    os.makedirs(args.out_dir, exist_ok=True)
    base = os.path.join(args.out_dir, "cpu_" + slug(platform.machine()))
    with open(base + ".json", "w") as f:
        json.dump({"meta": meta, "summary": summary, "cases": rows}, f, indent=1)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 3.4))
        sr = sorted(ratios)
        ax.plot(range(len(sr)), sr, ".")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.axhline(1.05, color="red", lw=0.8, ls=":")
        ax.set_yscale("log")
        ax.set_xlabel("cases, sorted")
        ax.set_ylabel("gpureduce time / torch.sum time")
        ax.set_title(f"CPU, {args.threads} threads, torch {torch.__version__}, {meta['date']}", fontsize=9)
        fig.tight_layout()
        fig.savefig(base + ".png", dpi=110)
        plt.close(fig)
    except ImportError:
        pass
    print(f"{summary['cases']} cases, all correct {summary['all_correct']}; ours/torch time: geomean "
          f"{summary['geomean']:.2f}, median {summary['median']:.2f}, p90 {summary['p90']:.2f}, "
          f"max {summary['max']:.2f}; over 1.05: {summary['over_1.05']} (median of {args.sweeps} sweeps)")
    for r in sorted(rows, key=lambda r: -r["ratio"])[:12]:
        each = " ".join(f"{v:.2f}" for v in r["sweep_ratios"])
        print(f"  {r['ratio']:6.2f}  {r['gpureduce_us']:9.1f} vs {r['torch_us']:9.1f} us  {r['label']}  (sweeps {each})")
    return 0 if summary["all_correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
