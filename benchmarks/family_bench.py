"""The reduction family's targets, each op against torch's in one run (GPU):

* a full reduction of 2^28 elements of every dtype the op takes;
* the last dim of [8192, 8192] float32 (a [tokens, features] row reduction);
* for argmax and max (along a dim), rows of 16 to 1024 float32.

Times are medians of CUDA-graph replays of the two ops, alternated, on
fresh random inputs (random_bench.time_pair); GB/s counts the input's bytes.
Each result is checked against torch's (or the float64 result) first.
Writes family_<gpu>.json, .csv, .md and a plot of GB/s per op and dtype.

    python benchmarks/family_bench.py                   # every op
    python benchmarks/family_bench.py --ops logsumexp   # some
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from typing import Dict, List

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reduce_op  # noqa: E402
from bench import Timer, environment, geomean, measure_roof, progress, slug  # noqa: E402
from random_bench import (NORM_ORDS, along_one_dim, check, every_dim_by_default, norm_of_order,  # noqa: E402
                          time_pair)

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int8", "uint8", "int16", "int32", "int64", "bool"]


# op -> (ours, torch's, dtypes, extra keyword arguments by input dtype)
def _mean_kw(dtype: str) -> Dict[str, object]:
    return {} if dtype in FLOATS or dtype.startswith("complex") else {"dtype": torch.float32}


OPS = {
    "sum": (reduce_op.sum, torch.sum, FLOATS + INTS + ["complex64"], lambda d: {}),
    "nansum": (reduce_op.nansum, torch.nansum, FLOATS + INTS, lambda d: {}),
    "mean": (reduce_op.mean, torch.mean, FLOATS + INTS + ["complex64"], _mean_kw),
    "prod": (reduce_op.prod, torch.prod, FLOATS + INTS + ["complex64"], lambda d: {}),
    "amax": (reduce_op.amax, torch.amax, FLOATS + INTS, lambda d: {}),
    "amin": (reduce_op.amin, torch.amin, FLOATS + INTS, lambda d: {}),
    "logsumexp": (every_dim_by_default(reduce_op.logsumexp), every_dim_by_default(torch.logsumexp), FLOATS + INTS,
                  lambda d: {}),
    "var": (reduce_op.var, torch.var, FLOATS + ["complex64"], lambda d: {}),
    "std": (reduce_op.std, torch.std, FLOATS + ["complex64"], lambda d: {}),
    **{op: (norm_of_order(reduce_op.vector_norm, ord), norm_of_order(torch.linalg.vector_norm, ord),
            FLOATS + (["complex64"] if op == "norm" else []), lambda d: {}) for op, ord in NORM_ORDS.items()},
    # along one dim (a full reduction: dim=None); max and min give their indices
    "argmax": (along_one_dim(reduce_op.argmax), along_one_dim(torch.argmax), FLOATS + INTS[:-1], lambda d: {}),
    "argmin": (along_one_dim(reduce_op.argmin), along_one_dim(torch.argmin), FLOATS + INTS[:-1], lambda d: {}),
    "max": (along_one_dim(reduce_op.max, True), along_one_dim(torch.max, True), FLOATS + INTS, lambda d: {}),
    "min": (along_one_dim(reduce_op.min, True), along_one_dim(torch.min, True), FLOATS + INTS, lambda d: {}),
}

# argmax's own target: rows of 16 to 1024 float32 ([tokens, vocab]-style and
# [N, classes] shapes), 16 MB of them and 2048 rows (latency-bound).
ARG_ROW_LENGTHS = [16, 32, 100, 128, 512, 1000, 1024]


def make_input(shape, dtype: str, op: str, gen: torch.Generator) -> torch.Tensor:
    """Random data of the op's usual range: normal floats, small integers,
    random bools; for prod, factors near 1 (and +-1 integers) so that the
    product stays finite."""
    t = getattr(torch, dtype)
    if dtype == "bool":
        return torch.rand(shape, device="cuda", generator=gen) < 0.5
    if not (t.is_floating_point or t.is_complex):
        lo = 0 if dtype == "uint8" else (-1 if op == "prod" else -100)
        hi = 2 if op == "prod" else 100
        x = torch.randint(lo, hi, shape, device="cuda", generator=gen, dtype=t)
        return x.masked_fill(x == 0, 1) if op == "prod" else x
    x = torch.randn(shape, device="cuda", generator=gen, dtype=torch.float32 if t != torch.float64 else t)
    if op == "prod":
        x = 1 + x * 1e-6
    return x.to(t)


def run(args) -> int:
    if not torch.cuda.is_available():
        print("family_bench.py measures GPU targets: no CUDA device", file=sys.stderr)
        return 1
    timer = Timer("cuda", replays=args.replays, warmup=3, warmup_ms=args.warmup_ms)
    roof, roof_how = measure_roof("cuda", timer)
    meta = environment("cuda", roof, roof_how)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed)
    plan = []
    for op in args.ops:
        _, _, dtypes, _ = OPS[op]
        plan += [(op, "full 2^28", (1 << 28,), None, d) for d in dtypes]
        plan.append((op, "[8192, 8192] last dim", (8192, 8192), 1, "float32"))
        if op in ("argmax", "max"):
            for c in ARG_ROW_LENGTHS:
                for n in ((1 << 22) // c, 2048):
                    plan.append((op, f"[{n}, {c}] last dim", (n, c), 1, "float32"))
    rows: List[Dict[str, object]] = []
    for op, case, shape, dim, dtype in progress(plan, len(plan), "family"):
        ours_fn, theirs_fn, _, kw_of = OPS[op]
        kw = dict(kw_of(dtype))
        if dim is not None:
            kw["dim"] = dim
        x = make_input(shape, dtype, op, gen)

        def ours(t, kw=kw, f=ours_fn):
            return f(t, **kw)

        def theirs(t, kw=kw, f=theirs_fn):
            return f(t, **kw)

        ok = check(ours(x), theirs(x), x, kw, op)
        ours_us, torch_us = time_pair(ours, theirs, [x], args.replays, args.warmup_ms)
        nbytes = x.numel() * x.element_size()
        rows.append({"op": op, "case": case, "dtype": dtype, "kwargs": {k: str(v) for k, v in kw.items()},
                     "bytes": nbytes, "correct": ok, "gpureduce_us": ours_us, "torch_us": torch_us,
                     "gpureduce_gbps": nbytes / ours_us / 1e3, "torch_gbps": nbytes / torch_us / 1e3,
                     "speedup": torch_us / ours_us})
        del x
    name = slug(meta["gpu"])
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, f"family_{name}.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out_dir, f"family_{name}.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[k for k in rows[0] if k != "kwargs"], extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    md = markdown(meta, rows)
    with open(os.path.join(args.out_dir, f"family_{name}.md"), "w") as f:
        f.write(md)
    print(md)
    plot(meta, rows, os.path.join(args.out_dir, f"family_{name}.png"))
    bad = [f"{r['op']} {r['case']} {r['dtype']}" for r in rows if not r["correct"]]
    if bad:
        print(f"{len(bad)} case(s) FAILED the correctness check: {bad}")
    return 1 if bad else 0


def markdown(meta, rows) -> str:
    lines = [f"# The reduction family against torch on {meta['gpu']}", "",
             f"{meta['date']}; torch {meta['torch']}, CUDA {meta['cuda']}, driver {meta.get('driver')}; read roof "
             f"{meta['roof_gbps']:.0f} GB/s ({meta['roof_method']}). Medians of CUDA-graph replays; "
             "speedup = torch_us / gpureduce_us.", "",
             "| op | case | dtype | gpureduce GB/s | torch GB/s | speedup | ok |", "|---|---|---|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['op']} | {r['case']} | {r['dtype']} | {r['gpureduce_gbps']:.0f} | {r['torch_gbps']:.0f} | "
                     f"{r['speedup']:.2f}x | {'yes' if r['correct'] else 'NO'} |")
    lines += ["", "| op | geomean speedup | slowest full 2^28 (GB/s) |", "|---|---:|---|"]
    for op in dict.fromkeys(r["op"] for r in rows):
        mine = [r for r in rows if r["op"] == op]
        full = min((r for r in mine if r["case"] == "full 2^28"), key=lambda r: r["gpureduce_gbps"])
        lines.append(f"| {op} | {geomean([r['speedup'] for r in mine]):.2f}x | "
                     f"{full['dtype']} {full['gpureduce_gbps']:.0f} |")
    return "\n".join(lines) + "\n"


def plot(meta, rows, path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot", file=sys.stderr)
        return
    full = [r for r in rows if r["case"] == "full 2^28"]
    ops = list(dict.fromkeys(r["op"] for r in full))
    fig, axes = plt.subplots(len(ops), 1, figsize=(10, 2.2 * len(ops)), squeeze=False)
    for ax, op in zip(axes[:, 0], ops):
        mine = [r for r in full if r["op"] == op]
        xs = range(len(mine))
        ax.bar([i - 0.2 for i in xs], [r["gpureduce_gbps"] for r in mine], 0.4, label="gpureduce")
        ax.bar([i + 0.2 for i in xs], [r["torch_gbps"] for r in mine], 0.4, label="torch")
        ax.axhline(meta["roof_gbps"], color="black", lw=0.8, ls=":", label="read roof")
        ax.set_xticks(list(xs), [r["dtype"] for r in mine], fontsize=7)
        ax.set_ylabel(f"{op}\nGB/s", fontsize=8)
        ax.legend(fontsize=6, loc="upper right")
    fig.suptitle(f"Full reductions of 2^28 elements, {meta['gpu']}, torch {meta['torch']}, {meta['date']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", nargs="+", choices=sorted(OPS), default=list(OPS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--replays", type=int, default=9)
    p.add_argument("--warmup-ms", type=float, default=20.0)
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
