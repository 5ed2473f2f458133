"""Random-shape benchmark: a gpureduce op (sum by default, or --op nansum,
mean, prod, amax, amin, logsumexp, var, std, norm, norm1, norminf: vector_norm
of order 2, 1 and inf; argmax, argmin, max, min: along a case's first dim)
against torch's over cases drawn the way models produce them
(benchmarks/random_cases.py), so that no one can tune to its list. Every
case is checked against torch's op before it is timed.

Timing: each side runs as a CUDA graph of several calls over rotating input
buffers (4x the L2 where the input is small); both graphs are warmed up, then
replayed in alternation and the medians taken, so that drift on a shared
machine hits both alike. The speedup is torch_us / gpureduce_us.

    python benchmarks/random_bench.py --n 500 --seeds 0 1 2     # on the GPU
    python benchmarks/random_bench.py --op nansum --seeds 0 1   # nansum (complex cases left out)
    python benchmarks/random_bench.py --op amax                  # amax (complex cases and dtype= left out)
    python benchmarks/random_bench.py --op mean                  # mean (integer inputs with dtype=float32)
    python benchmarks/random_bench.py --op prod                  # prod (float inputs as factors near 1)
    python benchmarks/random_bench.py --op logsumexp             # logsumexp (dtype= left out)
    python benchmarks/random_bench.py --op var                   # var (integer cases and dtype= left out)
    python benchmarks/random_bench.py --op norm                  # vector_norm, ord 2 (as var's)
    python benchmarks/random_bench.py --op argmax                # argmax along a case's first dim
    python benchmarks/random_bench.py --quick                   # a few small cases, CPU

Writes, per seed, random_<gpu>_seed<S>.json with every case, and for the run
random_<gpu>.json (the summary of each seed and of all together) and
random_<gpu>.png (histogram and CDF of the speedups); for an op other than
sum the names begin random_<op>_.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import statistics
import sys
import time
import warnings
from typing import Callable, Dict, List, Sequence

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import reduce_op  # noqa: E402
from bench import environment, geomean, measure_roof, progress, slug, Timer  # noqa: E402
from random_cases import Case, apply_view, input_bytes, random_data, sample_cases, sum_args  # noqa: E402


# Each op as gpureduce and torch spell it, the input dtypes torch's takes,
# and how a case's arguments become the op's: amax and amin take no dtype=
# (their cases with one run without it); mean takes integer inputs with a
# floating dtype= only (they get float32, as a model's mean of int8 data
# would ask for) and no integer dtype= (dropped).
def _as_is(kw, dtype):
    return kw


def _no_dtype(kw, dtype):
    kw.pop("dtype", None)
    return kw


def _first_dim(kw, dtype):
    """prod reduces one dim (torch.prod takes no list): a case's first, or
    every dim where it names none."""
    dims = kw.pop("dim", None)
    keepdim = kw.pop("keepdim", False)
    if dims:
        kw["dim"], kw["keepdim"] = dims[0], keepdim
    return kw


def _mean_args(kw, dtype):
    if not (dtype.startswith("float") or dtype.startswith("bfloat") or dtype.startswith("complex")):
        kw["dtype"] = torch.float32
    elif kw.get("dtype") is not None and not (kw["dtype"].is_floating_point or kw["dtype"].is_complex):
        del kw["dtype"]
    return kw


def every_dim_by_default(fn):
    """logsumexp takes no dim=None: a full reduction names every dim."""
    def call(x, dim=None, keepdim=False):
        return fn(x, list(range(x.dim())) if dim is None else dim, keepdim)
    return call


def norm_of_order(fn, ord):
    """vector_norm of one order, called as the other ops are."""
    def call(x, dim=None, keepdim=False):
        return fn(x, ord, dim, keepdim)
    return call


NORM_ORDS = {"norm": 2, "norm1": 1, "norminf": math.inf}


def along_one_dim(fn, indices_of=False):
    """argmax, argmin, max and min reduce one dim: a case's first dim (None,
    a full reduction, where it has none). max and min along a dim give the
    indices (their values are the inputs the indices name)."""
    def call(x, dim=None, keepdim=False):
        if isinstance(dim, (list, tuple)):
            dim = dim[0] if len(dim) else None
        if dim is None:
            return fn(x) if indices_of else fn(x, None, keepdim)
        r = fn(x, dim, keepdim)
        return r.indices if indices_of else r
    return call


_REAL = lambda dtype: not dtype.startswith("complex")  # noqa: E731

# prod's float inputs are factors exp(u * 2^-10), u the case's data in [-1,
# 1), computed in float64 and rounded once to the dtype: products of up to
# 2^28 of them stay well inside float32's range in any order (the log of
# the product is about N(0, 2^-10 sqrt(n / 3))), where the data's own
# magnitudes under 1 would make nearly every result 0. Not 1 + u * 2^-10
# rounded to float32: such factors carry 13 bits of deviation from 1, and
# a tree of their products rounds toward 1 at every level (a pairwise tree
# of 2^20 on the CPU: 9.5e-4 from the float64 product, against 2.4e-5 for
# the factors here). Integers have their zeros made 1: once a float
# product (dtype=) overflows to inf, a zero makes it NaN in one order and
# 0 in another; integer products wrap alike in any order.
PROD_FACTOR_SPREAD = 2.0 ** -10


def build_input(op: str, case: Case, device: str, gen: torch.Generator) -> torch.Tensor:
    """The case's input (random_cases.build), its data made prod's factors
    before the case's view is taken."""
    data = random_data(case.base, getattr(torch, case.dtype), device, gen)
    if op == "prod" and data.is_floating_point():
        data = torch.exp(data.to(torch.float64) * PROD_FACTOR_SPREAD).to(data.dtype)
    elif op == "prod" and data.dtype != torch.bool:
        data = data.masked_fill_(data == 0, 1)
    return apply_view(data, case.view)


OPS = {
    "sum": (reduce_op.sum, torch.sum, lambda dtype: True, _as_is),
    "nansum": (reduce_op.nansum, torch.nansum, lambda dtype: not dtype.startswith("complex"), _as_is),
    "mean": (reduce_op.mean, torch.mean, lambda dtype: True, _mean_args),
    "prod": (reduce_op.prod, torch.prod, lambda dtype: True, _first_dim),
    "amax": (reduce_op.amax, torch.amax, lambda dtype: not dtype.startswith("complex"), _no_dtype),
    "amin": (reduce_op.amin, torch.amin, lambda dtype: not dtype.startswith("complex"), _no_dtype),
    "logsumexp": (every_dim_by_default(reduce_op.logsumexp), every_dim_by_default(torch.logsumexp),
                  lambda dtype: True, _no_dtype),
    # var and std take floating and complex inputs only, and no dtype=.
    "var": (reduce_op.var, torch.var, lambda dtype: not dtype.startswith(("int", "uint", "bool")), _no_dtype),
    "std": (reduce_op.std, torch.std, lambda dtype: not dtype.startswith(("int", "uint", "bool")), _no_dtype),
    # vector_norm takes floating and complex inputs, and a dtype= no narrower
    # than the input's (left out here).
    **{op: (norm_of_order(reduce_op.vector_norm, ord), norm_of_order(torch.linalg.vector_norm, ord),
            lambda dtype: not dtype.startswith(("int", "uint", "bool")), _no_dtype)
       for op, ord in NORM_ORDS.items()},
    # argmax and argmin take no bool; max and min (the values of a full
    # reduction, the indices along a dim) do.
    "argmax": (along_one_dim(reduce_op.argmax), along_one_dim(torch.argmax),
               lambda dtype: _REAL(dtype) and dtype != "bool", _no_dtype),
    "argmin": (along_one_dim(reduce_op.argmin), along_one_dim(torch.argmin),
               lambda dtype: _REAL(dtype) and dtype != "bool", _no_dtype),
    "max": (along_one_dim(reduce_op.max, True), along_one_dim(torch.max, True), _REAL, _no_dtype),
    "min": (along_one_dim(reduce_op.min, True), along_one_dim(torch.min, True), _REAL, _no_dtype),
}


def check(ours: torch.Tensor, ref: torch.Tensor, x: torch.Tensor, kw: Dict[str, object], op: str = "sum") -> bool:
    """Integers exactly; floats within a bound that scales with sum(|x|)
    (mean(|x|) for mean, |logsumexp| + 1 for logsumexp), of torch's result
    or of the float64 result."""
    if ours.shape != ref.shape or ours.dtype != ref.dtype:
        return False
    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        return bool(torch.equal(ours, ref))
    if op in ("max", "min"):  # one of the inputs: exact, NaN where torch's is
        return bool(((ours == ref) | (torch.isnan(ours) & torch.isnan(ref))).all())
    dims = kw.get("dim")
    dims = list(range(x.dim())) if dims is None else dims
    keepdim = bool(kw.get("keepdim", False))
    eps = torch.finfo(ref.dtype).eps
    exact = None
    if op == "logsumexp" and ref.is_complex():
        # |result| + 1, against torch's or the complex128 result, the
        # imaginary parts compared modulo 2 pi (a sum either side of log's
        # branch cut has a logarithm of imaginary part pi or -pi).
        exact = torch.logsumexp(x.to(torch.complex128), dims, keepdim)
        tol = (4 * eps + 64 * torch.finfo(torch.float32).eps) * (exact.abs().nan_to_num(0.0, 0.0, 0.0) + 1)

        def distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            d = a.to(torch.complex128) - b.to(torch.complex128)
            return torch.complex(d.real, torch.remainder(d.imag + math.pi, 2 * math.pi) - math.pi).abs()

        nan = torch.isnan(ours.real) | torch.isnan(ours.imag)
        ok = (distance(ours, ref) <= tol) | (distance(ours, exact) <= tol) | (nan & (torch.isnan(ref.real) | torch.isnan(ref.imag)))
        ok |= (ours.to(torch.complex128) == ref.to(torch.complex128))
        return bool(ok.all())
    if op == "logsumexp":  # |result| + 1: max + log(sum), each part rounded
        exact = torch.logsumexp(x.to(torch.float64), dims, keepdim)
        mag = exact.abs().nan_to_num(0.0, 0.0, 0.0) + 1
    elif op in ("var", "std"):
        # As variances (std squared), against the float64 variance, within
        # roundings of the size of their terms: sum(|x|^2) / (N - 1).
        wide = x.to(torch.complex128 if x.is_complex() else torch.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no degrees of freedom: NaN on both sides
            exact = torch.var(wide, dims, keepdim=keepdim)
        squares = wide.abs().square()
        total = squares.sum(dims, keepdim=keepdim) if x.dim() else squares
        mag = total / max(x.numel() // max(total.numel(), 1) - 1, 1)
        if op == "std":
            ours, ref = ours.double().square(), ref.double().square()
    elif op == "prod":
        # Relative to the float64 product: the result's rounding and the
        # accumulator's as a random walk over the n factors (sqrt(n) of
        # them), or no more than twice torch's own distance. Products of
        # factors near 1 drift further than the walk in any order: their
        # roundings lean toward 1 (torch's float32 prod of 2^28 factors
        # exp(u * 2^-10): 0.10 from the float64 product, H200).
        wide = x.to(torch.complex128 if x.is_complex() else torch.float64)
        exact = torch.prod(wide, kw["dim"], keepdim) if "dim" in kw else torch.prod(wide)
        n = max(x.numel() // max(exact.numel(), 1), 1)
        wide_acc = ref.dtype in (torch.float64, torch.complex128)
        acc_eps = torch.finfo(torch.float64 if wide_acc else torch.float32).eps
        wide_t = torch.complex128 if ref.is_complex() else torch.float64
        ours, ref = ours.to(wide_t), ref.to(wide_t)
        err, their_err = (ours - exact).abs(), (ref - exact).abs()
        tol = (4 * eps + 4 * math.sqrt(n) * acc_eps) * exact.abs()
        same = (ours == ref) | (torch.isnan(ours) & torch.isnan(ref))
        return bool(((err <= tol) | (err <= 2 * their_err) | same).all())
    elif op in NORM_ORDS:  # roundings of the norm itself, or as close to the float64 norm
        wide = x.to(torch.complex128 if x.is_complex() else torch.float64)
        exact = torch.linalg.vector_norm(wide, NORM_ORDS[op], dims, keepdim)
        mag = exact.abs()
    else:
        fold = torch.mean if op == "mean" else torch.sum
        wide = x.to(torch.complex128 if x.is_complex() else torch.float64)  # (bool inputs of mean too)
        a = wide.abs()
        mag = fold(a, dims, keepdim=keepdim) if x.dim() else a
        # Or as close to the float64 result: torch's CPU sums of expanded
        # inputs ([4096, 5] of stride (0, 1): 0.116 from it, where these
        # bounds allow 0.0995) and its CPU float16 nansum round far more.
        exact_op = torch.nansum if op == "nansum" else fold
        exact = exact_op(wide, dims, keepdim=keepdim) if x.dim() else wide
    # Complex results compared as complex (both parts), the rest in float64.
    wide_t = torch.complex128 if ref.is_complex() else torch.float64
    ours, ref = ours.to(wide_t), ref.to(wide_t)
    err = (ours - ref).abs()
    same = (ours == ref) | (torch.isnan(ours) & torch.isnan(ref))
    tol = 4 * eps * mag + 64 * torch.finfo(torch.float32).eps * mag + 1e-30
    ok = (err <= tol) | same
    if exact is not None:
        # Or as close to the float64 result: torch's 16-bit logsumexp on
        # CUDA sums exp(x - max) into the 16-bit result, which overflows
        # (inf) past about 65504 / e^0.5 terms of normal samples.
        ok |= ((ours - exact).abs() <= tol) | (ours == exact)
        ok |= torch.isnan(ours) & torch.isnan(exact)
    return bool(ok.all())


def time_pair(fa: Callable, fb: Callable, inputs: Sequence[torch.Tensor], replays: int,
              warmup_ms: float) -> List[float]:
    """Per-call GPU time of fa and fb, in µs: graphs of several calls each,
    warmed up, then replayed in alternation; medians."""
    for x in inputs:
        fa(x), fb(x)
    torch.cuda.synchronize()
    a0, a1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a0.record()
    for x in inputs:
        fa(x)
    a1.record()
    a1.synchronize()
    est = max(a0.elapsed_time(a1) * 1e3 / len(inputs), 1.0)
    per_graph = max(len(inputs), min(200, int(math.ceil(500.0 / est))))
    per_graph = int(math.ceil(per_graph / len(inputs)) * len(inputs))
    graphs = []
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    for f in (fa, fb):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            for i in range(per_graph):
                f(inputs[i % len(inputs)])
        graphs.append(g)
    torch.cuda.current_stream().wait_stream(s)

    def replay_ms(g) -> float:
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        return e0.elapsed_time(e1)

    spent = 0.0
    while spent < warmup_ms:
        spent += replay_ms(graphs[0]) + replay_ms(graphs[1])
    times: List[List[float]] = [[], []]
    for _ in range(replays):
        for k in (0, 1):
            times[k].append(replay_ms(graphs[k]) * 1e3 / per_graph)
    del graphs
    return [statistics.median(t) for t in times]


def percentile(v: List[float], q: float) -> float:
    s = sorted(v)
    if not s:
        return float("nan")
    k = (len(s) - 1) * q / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def summarize(rows: List[Dict[str, object]]) -> Dict[str, object]:
    sp = [r["speedup"] for r in rows]
    worst = sorted(rows, key=lambda r: r["speedup"])[:20]
    return {
        "cases": len(rows), "all_correct": all(r["correct"] for r in rows),
        "min": min(sp) if sp else None, "p1": percentile(sp, 1), "p10": percentile(sp, 10),
        "median": percentile(sp, 50), "geomean": geomean(sp),
        "below_0.97": sum(1 for s in sp if s < 0.97),
        "worst": [{"label": r["label"], "speedup": r["speedup"], "bytes": r["bytes"],
                   "gpureduce_us": r["gpureduce_us"], "torch_us": r["torch_us"]} for r in worst],
    }


def summary_text(name: str, s: Dict[str, object]) -> str:
    return (f"{name}: {s['cases']} cases, all correct {s['all_correct']}; speedup min {s['min']:.3f}x, "
            f"p1 {s['p1']:.3f}x, p10 {s['p10']:.3f}x, median {s['median']:.3f}x, geomean {s['geomean']:.3f}x; "
            f"below 0.97x: {s['below_0.97']}")


def run_seed(seed: int, args, device: str, l2: int, timer: Timer) -> List[Dict[str, object]]:
    our_op, their_op, takes, op_args = OPS[args.op]
    cases = [c for c in sample_cases(args.n, seed, args.min_bytes, args.max_bytes) if takes(c.dtype)]
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    rows = []
    for case in progress(cases, len(cases), f"seed {seed}"):
        kw = op_args(sum_args(case), case.dtype)
        # The label names the dtype= the op ran with (op_args may change the case's).
        dtype_arg = kw.get("dtype")
        label = dataclasses.replace(case, out_dtype=str(dtype_arg).replace("torch.", "") if dtype_arg else None).label()
        x0 = build_input(args.op, case, device, gen)
        nbytes = input_bytes(x0)
        n_buf = 1 if nbytes >= 4 * l2 else min(32, int(math.ceil(4 * l2 / max(nbytes, 1))))
        inputs = [x0] + [build_input(args.op, case, device, gen) for _ in range(n_buf - 1)]

        def ours(x, kw=kw):
            return our_op(x, **kw)

        def theirs(x, kw=kw):
            return their_op(x, **kw)

        ok = check(ours(x0), theirs(x0), x0, kw, args.op)
        if device == "cuda":
            ours_us, torch_us = time_pair(ours, theirs, inputs, args.replays, args.warmup_ms)
        else:
            ours_us, torch_us = timer.wall_us(ours, inputs), timer.wall_us(theirs, inputs)
        rows.append({
            "label": label, "case": case.to_json(), "dtype_arg": str(dtype_arg) if dtype_arg else None, "shape": list(x0.shape), "stride": list(x0.stride()),
            "bytes": nbytes, "buffers": n_buf, "correct": ok, "gpureduce_us": ours_us, "torch_us": torch_us,
            "gpureduce_gbps": nbytes / ours_us / 1e3, "torch_gbps": nbytes / torch_us / 1e3,
            "speedup": torch_us / ours_us,
        })
        del inputs, x0
    return rows


def plot(per_seed: Dict[int, List[Dict[str, object]]], meta: Dict[str, object], path: str, op: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot", file=sys.stderr)
        return
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 3.8))
    allsp = [r["speedup"] for rows in per_seed.values() for r in rows]
    lo, hi = min(allsp + [0.9]), max(allsp + [1.1])
    bins = [math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * i / 40) for i in range(41)]
    for seed, rows in per_seed.items():
        sp = sorted(r["speedup"] for r in rows)
        ax0.hist(sp, bins=bins, histtype="step", label=f"seed {seed}")
        ax1.plot(sp, [(i + 1) / len(sp) for i in range(len(sp))], label=f"seed {seed}")
    for ax in (ax0, ax1):
        ax.set_xscale("log")
        ax.axvline(1.0, color="black", lw=0.8)
        ax.axvline(0.97, color="red", lw=0.8, ls=":")
        ax.set_xlabel(f"speedup over torch.{op} (torch_us / gpureduce_us)")
        ax.legend(fontsize=7)
    ax0.set_ylabel("cases")
    ax1.set_ylabel("fraction of cases at or below")
    ax1.grid(alpha=0.3)
    fig.suptitle(f"Random-shape cases: gpureduce.{op} vs torch.{op}, {meta['gpu']}, torch {meta['torch']}, "
                 f"{meta['date']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    import json

    # var's and std's warning on cases of one element a slice (NaN on both sides, checked).
    warnings.filterwarnings("ignore", message=".*degrees of freedom is <= 0")

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", choices=sorted(OPS), default="sum")
    p.add_argument("--n", type=int, default=500, help="cases per seed (fewer where the op takes not every dtype)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--min-bytes", type=int, default=1 << 10)
    p.add_argument("--max-bytes", type=int, default=1 << 30)
    p.add_argument("--replays", type=int, default=9)
    p.add_argument("--warmup-ms", type=float, default=10.0)
    p.add_argument("--quick", action="store_true", help="20 small cases of one seed on the CPU")
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    args = p.parse_args(argv)
    device = "cuda" if torch.cuda.is_available() and not args.quick else "cpu"
    if args.quick:
        args.n, args.seeds, args.max_bytes = 20, args.seeds[:1], 1 << 16
    l2 = torch.cuda.get_device_properties(0).L2_cache_size if device == "cuda" else 1 << 20
    timer = Timer(device, replays=args.replays, warmup=1)
    meta = environment(device, *((float("nan"), "not measured") if device != "cuda" else measure_roof(device, timer)))
    meta.update(op=args.op, n=args.n, seeds=args.seeds, min_bytes=args.min_bytes, max_bytes=args.max_bytes,
                replays=args.replays, warmup_ms=args.warmup_ms)
    os.makedirs(args.out_dir, exist_ok=True)
    prefix = "random_" if args.op == "sum" else f"random_{args.op}_"
    base = os.path.join(args.out_dir, prefix + slug(str(meta["gpu"])))
    per_seed: Dict[int, List[Dict[str, object]]] = {}
    t0 = time.time()
    for seed in args.seeds:
        rows = run_seed(seed, args, device, l2, timer)
        per_seed[seed] = rows
        with open(f"{base}_seed{seed}.json", "w") as f:
            json.dump({"meta": meta, "seed": seed, "summary": summarize(rows), "cases": rows}, f, indent=1)
        print(summary_text(f"seed {seed}", summarize(rows)), flush=True)
    all_rows = [r for rows in per_seed.values() for r in rows]
    total = summarize(all_rows)
    with open(base + ".json", "w") as f:
        json.dump({"meta": meta, "seconds": time.time() - t0,
                   "seeds": {str(s): summarize(r) for s, r in per_seed.items()}, "all": total}, f, indent=1)
    plot(per_seed, meta, base + ".png", args.op)
    print(summary_text("all seeds", total))
    print("20 slowest:")
    for w in total["worst"]:
        print(f"  {w['speedup']:.3f}x  {w['gpureduce_us']:.2f} vs {w['torch_us']:.2f} us  {w['bytes']} B  {w['label']}")
    if not total["all_correct"]:
        bad = [r["label"] for r in all_rows if not r["correct"]]
        print(f"{len(bad)} case(s) FAILED the correctness check: {bad[:10]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
