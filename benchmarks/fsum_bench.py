"""gpureduce.fsum (the correctly rounded sum) against gpureduce.sum and
torch.sum, in one run: bandwidth (input bytes read per second) and the
ratios, over sizes, dtypes, value distributions and row shapes.

* full sums of 2^20, 2^24 and 2^28 elements of float32, float64, bfloat16
  and float16 (issue 17's targets: float32 at least 90% of gpureduce.sum's
  bandwidth at 2^28, float64 at least 75%);
* values: randn; randn scaled by 2^k, k uniform in [-40, 40) (exponents far
  apart: more elements fall below their tile's windows, the slow path);
* rows: [4096, 4096] over dim 1, [64, 2^20] over dim 1, and [2^20, 16] over
  dim 1 (a block a row: fsum's slow class).

Every fsum result is first checked bit for bit: on the GPU against the CPU
kernel (itself tested against an exact reference), on the CPU against
math.fsum (see independent_check); sum against float64.
Times are medians of CUDA-graph replays over fresh random inputs
(bench.Timer), enough copies to overflow L2. Writes fsum_<gpu>.json and .md.

    python benchmarks/fsum_bench.py              # the GPU's full run
    python benchmarks/fsum_bench.py --quick      # small sizes, CPU or GPU
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reduce_op  # noqa: E402
from bench import Timer, environment, progress, slug  # noqa: E402

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}


def values(shape, dtype, kind, gen, device):
    x = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
    if kind == "spread":
        k = torch.randint(-40, 40, shape, generator=gen, device=device)
        if dtype == torch.float16:
            k = k.clamp(-12, 0)  # float16 holds 2^-24 .. 2^15, and the sums must fit
        x = x * torch.exp2(k.float())
    return x.to(dtype)


def cases(quick):
    sizes = [1 << 16, 1 << 18] if quick else [1 << 20, 1 << 24, 1 << 28]
    for name in DTYPES:
        for n in sizes:
            for kind in ("randn", "spread"):
                yield name, (n,), None, kind
    rows = [((64, 1024), 1), ((4, 1 << 14), 1), ((1 << 12, 16), 1)] if quick else \
        [((4096, 4096), 1), ((64, 1 << 20), 1), ((1 << 20, 16), 1)]
    for name in ("float32", "float64"):
        for shape, dim in rows:
            yield name, shape, dim, "randn"


def independent_check(x, dim, got):
    """On the CPU, where the CUDA kernel is absent, a check that does not
    use fsum's own kernel for the dtype asked: float64 rows against
    math.fsum; a narrower dtype against the float64 fsum of the same rows
    (itself checked that way) rounded once more, which is the correctly
    rounded result except where the float64 sum sits exactly halfway
    between two values of the narrower dtype (those rows are skipped)."""
    rows = x.double().reshape(-1) if dim is None else x.double().movedim(dim, -1).reshape(-1, x.shape[dim])
    rows = rows.reshape(1, -1) if dim is None else rows
    wide = torch.tensor([math.fsum(r) for r in rows.tolist()], dtype=torch.float64)
    if x.dtype == torch.float64:
        return same_bits(got.reshape(-1), wide)
    narrow = wide.to(x.dtype)
    toward = torch.nextafter(narrow, torch.where(wide > narrow.double(), math.inf, -math.inf).to(x.dtype))
    halfway = (narrow.double() + toward.double()) / 2 == wide
    return same_bits(got.reshape(-1)[~halfway], narrow[~halfway])


def same_bits(a, b):
    a, b = a.cpu().double(), b.cpu().double()
    if not torch.equal(a.isnan(), b.isnan()):
        return False
    a, b = a.masked_fill(a.isnan(), 1.0), b.masked_fill(b.isnan(), 1.0)
    return torch.equal(a, b) and torch.equal(a.signbit(), b.signbit())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (CPU or GPU)")
    ap.add_argument("--replays", type=int, default=15)
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    timer = Timer(device, replays=args.replays, warmup=3, warmup_ms=50.0 if device == "cuda" else 0.0)
    gen = torch.Generator(device=device).manual_seed(17)
    l2 = 60 << 20 if device == "cuda" else 1 << 20
    rows, bad = [], 0
    todo = list(cases(args.quick))
    for name, shape, dim, kind in progress(todo, len(todo), "fsum"):
        dtype = DTYPES[name]
        nbytes = math.prod(shape) * dtype.itemsize
        copies = max(2, math.ceil(2 * l2 / nbytes))
        xs = [values(shape, dtype, kind, gen, device) for _ in range(copies)]
        got = reduce_op.fsum(xs[0], dim)
        ok = same_bits(got, reduce_op.fsum(xs[0].cpu(), dim)) if device == "cuda" else \
            independent_check(xs[0], dim, got)
        ref = torch.sum(xs[0].double(), dim if dim is not None else ())
        ok_sum = torch.allclose(reduce_op.sum(xs[0], dim).double(), ref, rtol=1e-2, atol=1e-2 * math.sqrt(shape[-1]))
        bad += (not ok) + (not ok_sum)
        t = {
            "fsum": timer.graph_us(lambda x: reduce_op.fsum(x, dim), xs),
            "gpureduce.sum": timer.graph_us(lambda x: reduce_op.sum(x, dim), xs),
            "torch.sum": timer.graph_us(lambda x: torch.sum(x, dim) if dim is not None else torch.sum(x), xs),
        }
        row = {"dtype": name, "shape": list(shape), "dim": dim, "values": kind, "fsum_bit_exact": ok,
               "sum_ok": ok_sum, **{f"{k}_us": round(v, 2) for k, v in t.items()},
               **{f"{k}_GBps": round(nbytes / v / 1e3, 1) for k, v in t.items()},
               "fsum/gpureduce.sum": round(t["gpureduce.sum"] / t["fsum"], 3),
               "fsum/torch.sum": round(t["torch.sum"] / t["fsum"], 3)}
        rows.append(row)
        print(f"\n{name} {list(shape)} dim={dim} {kind}: fsum {row['fsum_GBps']} GB/s, gpureduce.sum "
              f"{row['gpureduce.sum_GBps']}, torch.sum {row['torch.sum_GBps']}; fsum/sum "
              f"{row['fsum/gpureduce.sum']:.3f}; bit-exact {ok}", flush=True)
        del xs
    meta = environment(device, 0.0, "none")
    os.makedirs(args.out_dir, exist_ok=True)
    tag = slug(meta.get("gpu", "cpu"))
    with open(os.path.join(args.out_dir, f"fsum_{tag}.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    lines = [f"fsum against sum, {meta['date']}, {meta.get('gpu', 'CPU')}, torch {meta['torch']}, CUDA {meta['cuda']}. "
             "GB/s = input bytes / median time (CUDA-graph replays, fresh inputs).", "",
             "| dtype | shape | dim | values | fsum GB/s | gpureduce.sum GB/s | torch.sum GB/s | fsum/sum | bit-exact |",
             "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        lines.append(f"| {r['dtype']} | {r['shape']} | {r['dim']} | {r['values']} | {r['fsum_GBps']} | "
                     f"{r['gpureduce.sum_GBps']} | {r['torch.sum_GBps']} | {r['fsum/gpureduce.sum']:.3f} | "
                     f"{r['fsum_bit_exact']} |")
    with open(os.path.join(args.out_dir, f"fsum_{tag}.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    ratios = [r["fsum/gpureduce.sum"] for r in rows]
    print(f"fsum/gpureduce.sum: min {min(ratios):.3f}, median {statistics.median(ratios):.3f}; "
          f"{bad} wrong result(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
