"""Per-call cost of gpureduce.sum against torch.sum on small tensors: full and
dim sums, keepdim, dtype=, requires_grad, and the drop-in mode (patch() and
replace_torch_sum()), on the CPU and, where there is one, the GPU; and of
the reduction family's ops (a full and a dim form each) against torch's. Each form
is timed as a loop of calls in one process, ours and torch's loops
alternating repeat by repeat, so that a slow spell of a shared machine
falls on both, and every form is timed in several rounds spread over the
run (minimum over rounds and repeats, in µs per call; on CUDA the loop is synchronised at its
end, so the figure is the host-side cost of enqueueing plus the GPU time
when that is longer). The ratio is ours / torch's: 1.0 is as cheap as torch.

    python benchmarks/overhead_bench.py                # cpu, and cuda if present
    python benchmarks/overhead_bench.py --devices cpu --numel 10 1000

Writes overhead_<device-name>.json under --out-dir.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from typing import Callable, Dict, List

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import reduce_op  # noqa: E402
from bench import geomean  # noqa: E402


def loop_us(fn: Callable[[], object], device: str, calls: int) -> float:
    """Per-call time of one loop of `calls` calls, in µs."""
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def paired_us(ours: Callable[[], object], theirs: Callable[[], object], device: str, calls: int, repeats: int,
              enter: Callable[[], object] = lambda: None, leave: Callable[[], object] = lambda: None):
    """Minimum per-call time of each side over `repeats` loops, the two sides'
    loops alternating (ours between enter() and leave()), so that a slow
    spell of a shared machine falls on both sides rather than on all of
    one side's loops."""
    best = [float("inf"), float("inf")]
    for _ in range(repeats):
        enter()
        try:
            best[0] = min(best[0], loop_us(ours, device, calls))
        finally:
            leave()
        best[1] = min(best[1], loop_us(theirs, device, calls))
    return best


def forms(x: torch.Tensor, xg: torch.Tensor):
    """(label, ours, torch's) for each call form."""
    f64 = torch.float64
    return [
        ("sum(x)", lambda: reduce_op.sum(x), lambda: torch.sum(x)),
        ("sum(x, 0)", lambda: reduce_op.sum(x, 0), lambda: torch.sum(x, 0)),
        ("sum(x, [0, 1])", lambda: reduce_op.sum(x, [0, 1]), lambda: torch.sum(x, [0, 1])),
        ("sum(x, 1, keepdim=True)", lambda: reduce_op.sum(x, 1, keepdim=True), lambda: torch.sum(x, 1, keepdim=True)),
        ("sum(x, dtype=float64)", lambda: reduce_op.sum(x, dtype=f64), lambda: torch.sum(x, dtype=f64)),
        ("sum(xg) requires_grad", lambda: reduce_op.sum(xg), lambda: torch.sum(xg)),
        ("sum(xg, 0) requires_grad", lambda: reduce_op.sum(xg, 0), lambda: torch.sum(xg, 0)),
    ]


def family_forms(x: torch.Tensor):
    """(label, ours, torch's) for the family's ops: every element, and along
    dim 1."""
    ops = [("nansum", reduce_op.nansum, torch.nansum), ("mean", reduce_op.mean, torch.mean),
           ("prod", reduce_op.prod, torch.prod), ("amax", reduce_op.amax, torch.amax),
           ("max", reduce_op.max, torch.max), ("argmax", reduce_op.argmax, torch.argmax),
           ("var", reduce_op.var, torch.var), ("vector_norm", reduce_op.vector_norm, torch.linalg.vector_norm)]
    out = []
    for name, ours, theirs in ops:
        out.append((f"{name}(x)", lambda o=ours: o(x), lambda t=theirs: t(x)))
        if name == "vector_norm":
            out.append((f"{name}(x, 2, 1)", lambda o=ours: o(x, 2, 1), lambda t=theirs: t(x, 2, 1)))
        else:
            out.append((f"{name}(x, 1)", lambda o=ours: o(x, 1), lambda t=theirs: t(x, 1)))
    out.append(("logsumexp(x, 1)", lambda: reduce_op.logsumexp(x, 1), lambda: torch.logsumexp(x, 1)))
    return out


def dropin_forms(x: torch.Tensor):
    return [("x.sum()", lambda: x.sum()), ("x.sum(0)", lambda: x.sum(0)),
            ("torch.sum(x, 1, keepdim=True)", lambda: torch.sum(x, 1, keepdim=True))]


def context_steps(make: Callable[[], object]):
    """enter() and leave() functions that open and close a fresh context
    manager from make() each time (a generator-based one is single-use)."""
    held = []

    def enter():
        held.append(make())
        held[-1].__enter__()

    def leave():
        held.pop().__exit__(None, None, None)

    return enter, leave


def measured_forms(device: str, numel: int):
    """(label, ours, torch's, enter, leave, family) for every form at this size."""
    cols = 10 if numel % 10 == 0 else 1
    x = torch.randn(numel // cols, cols, device=device)
    xg = x.clone().requires_grad_()
    nothing = lambda: None  # noqa: E731
    out = [(label, ours, theirs, nothing, nothing, False) for label, ours, theirs in forms(x, xg)]
    out += [(label, ours, theirs, nothing, nothing, True) for label, ours, theirs in family_forms(x)]
    for mode in ("patch", "replace_torch_sum"):
        for label, call in dropin_forms(x):
            # The same call inside the drop-in (ours) and outside it (torch's own).
            if mode == "patch":
                enter, leave = reduce_op.patch, reduce_op.unpatch
            else:
                enter, leave = context_steps(reduce_op.replace_torch_sum)
            out.append((f"{mode}: {label}", call, call, enter, leave, False))
    return out


def run_device(device: str, numels: List[int], calls: int, repeats: int, rounds: int) -> List[Dict[str, object]]:
    """Each form's minimum over `rounds` rounds of every form in turn, a
    round timing each form `repeats` times a side: a slow spell of a shared
    machine that covers one form's loops (a second or so) then falls on one
    round of it, not on all its loops."""
    cases = [(numel, form) for numel in numels for form in measured_forms(device, numel)]
    best = [[float("inf"), float("inf")] for _ in cases]
    for r in range(rounds):
        print(f"  {device}: round {r + 1} of {rounds}, {len(cases)} forms", file=sys.stderr, flush=True)
        for i, (numel, (label, ours, theirs, enter, leave, family)) in enumerate(cases):
            enter()
            try:
                ours()
            finally:
                leave()
            theirs()
            a, b = paired_us(ours, theirs, device, calls, repeats, enter, leave)
            best[i] = [min(best[i][0], a), min(best[i][1], b)]
    rows = []
    for (numel, (label, *_rest, family)), (a, b) in zip(cases, best):
        row = {"device": device, "numel": numel, "form": label, "gpureduce_us": a, "torch_us": b, "ratio": a / b}
        if family:
            row["family"] = True
        rows.append(row)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--devices", nargs="+", default=["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
    p.add_argument("--numel", nargs="+", type=int, default=[10, 1000])
    p.add_argument("--calls", type=int, default=5000)
    p.add_argument("--repeats", type=int, default=3, help="loops a side of each form in a round")
    p.add_argument("--rounds", type=int, default=3, help="rounds over every form; each form's minimum is kept")
    p.add_argument("--threads", type=int, default=1, help="CPU threads (torch.set_num_threads)")
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    os.makedirs(args.out_dir, exist_ok=True)
    for device in args.devices:
        rows = run_device(device, args.numel, args.calls, args.repeats, args.rounds)
        name = torch.cuda.get_device_name().replace(" ", "_").lower() if device == "cuda" else f"cpu_{platform.machine()}"
        meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "torch": torch.__version__,
                "device": device, "name": name, "threads": args.threads, "calls": args.calls,
                "repeats": args.repeats, "rounds": args.rounds, "python": platform.python_version()}
        sums = [r for r in rows if not r.get("family")]
        direct = [r["ratio"] for r in sums if ":" not in r["form"]]
        family = [r["ratio"] for r in rows if r.get("family")]
        summary = {"geomean_ratio": geomean([r["ratio"] for r in sums]), "max_ratio": max(r["ratio"] for r in sums),
                   "geomean_ratio_direct_calls": geomean(direct), "max_ratio_direct_calls": max(direct),
                   "geomean_ratio_family": geomean(family), "max_ratio_family": max(family)}
        path = os.path.join(args.out_dir, f"overhead_{name}.json")
        with open(path, "w") as f:
            json.dump({"meta": meta, "summary": summary, "rows": rows}, f, indent=1)
        print(f"{device} ({name}), torch {torch.__version__}, {args.threads} thread(s): ours/torch per call, "
              f"geomean {summary['geomean_ratio']:.2f}, max {summary['max_ratio']:.2f}; reduce_op.sum calls alone: "
              f"geomean {summary['geomean_ratio_direct_calls']:.2f}, max {summary['max_ratio_direct_calls']:.2f}; "
              f"the family's ops: geomean {summary['geomean_ratio_family']:.2f}, max {summary['max_ratio_family']:.2f}")
        for r in rows:
            print(f"  {r['numel']:>6}  {r['form']:44s} {r['gpureduce_us']:7.2f} vs {r['torch_us']:7.2f} us  {r['ratio']:.2f}x")
        print(f"  -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
