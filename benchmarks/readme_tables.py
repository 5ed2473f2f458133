"""Prints the README's results section from a bench.py JSON file (and the
accuracy JSON beside it), so that the README's figures are copied from a
run, not typed.  python3 benchmarks/readme_tables.py benchmarks/results/nvidia_h200.json"""
import json
import math
import os
import sys

CLASSIC = ["reduce0", "reduce1", "reduce2", "reduce3", "reduce4", "reduce5", "reduce6", "reduce7", "tensorcore"]


def main(path):
    d = json.load(open(path))
    m, rows = d["meta"], d["cases"]
    eng = [r for r in rows if r["kernel"] == "gpureduce" and r["group"] != "widths"]
    geo = math.exp(sum(math.log(r["speedup"]) for r in eng) / len(eng))
    worst = min(eng, key=lambda r: r["speedup"])
    below = [r for r in eng if r["speedup"] < 0.97]
    slow_full = [r for r in eng if r["group"] == "full" and r["shape"][0] >= 1 << 28 and r["gpureduce_gbps"] < 4300]
    out = [f"Measured {m['date']} on an {m['gpu']} ({m['sms']} SMs), driver {m['driver']}, torch {m['torch']}, "
           f"CUDA {m['cuda']}, Python {m['python']}, by `benchmarks/bench.py`. Times are medians of CUDA-graph "
           f"replays after at least {m.get('warmup_ms', 0):.0f} ms of warm-up replays, inputs rotate among buffers "
           "to spill L2, and every case is checked against torch.sum before "
           f"it is timed. Read roof in the same run: {m['roof_gbps']:.0f} GB/s ({m['roof_method']}). Full results: "
           "`benchmarks/results/nvidia_h200.{json,csv,md}`; the log of what was tried: `benchmarks/NOTES.md`.", "",
           f"**Summary:** {len(eng)} engine cases, all correct: {all(r['correct'] for r in rows)}; geometric-mean "
           f"speedup over torch.sum **{geo:.2f}x**; slowest {worst['speedup']:.2f}x ({worst['name']} {worst['dtype']}).",
           "Cases below 0.97x: " + (", ".join(f"{r['name']} {r['dtype']} ({r['speedup']:.2f}x)" for r in below) or "none")
           + ".", "Full sums of 2^28 elements or more under 4300 GB/s: "
           + (", ".join(f"{r['name']} {r['dtype']} ({r['gpureduce_gbps']:.0f} GB/s)" for r in slow_full) or "none")
           + ".", "",
           "| case | dtype | gpureduce GB/s | torch.sum GB/s | speedup |", "| --- | --- | ---: | ---: | ---: |"]
    for r in eng:
        if r["group"] == "full" and r["shape"][0] not in (1 << 20, 1 << 28):
            continue
        out.append(f"| {r['name']} | {r['dtype']} | {r['gpureduce_gbps']:.0f} | {r['torch_gbps']:.0f} | {r['speedup']:.2f}x |")
    out += ["", "### The classic progression (GB/s of input, float32 unless noted)", "",
            "| kernel | 2^20 | 2^24 | 2^28 |", "| --- | ---: | ---: | ---: |"]

    def gbps(pred):
        vals = []
        for e in (20, 24, 28):
            hit = [r for r in rows if pred(r) and r["shape"] == [1 << e]]
            vals.append(f"{hit[0]['gpureduce_gbps']:.0f}" if hit else "-")
        return vals

    for dt in ("float32", "bfloat16", "int32"):
        for k in CLASSIC:
            v = gbps(lambda r, k=k, dt=dt: r["kernel"] == k and r["dtype"] == dt)
            if v != ["-"] * 3:
                out.append(f"| {k}{'' if dt == 'float32' else f' ({dt})'} | " + " | ".join(v) + " |")
    for dt in ("float32", "bfloat16", "int32"):
        v = gbps(lambda r, dt=dt: r["kernel"] == "gpureduce" and r["group"] == "full" and r["dtype"] == dt)
        out.append(f"| gpureduce.sum{'' if dt == 'float32' else f' ({dt})'} | " + " | ".join(v) + " |")
    t = []
    for e in (20, 24, 28):
        hit = [r for r in rows if r["kernel"] == "gpureduce" and r["group"] == "full" and r["dtype"] == "float32"
               and r["shape"] == [1 << e]]
        t.append(f"{hit[0]['torch_gbps']:.0f}" if hit else "-")
    out.append("| torch.sum | " + " | ".join(t) + " |")
    out.append(f"| read roof | {m['roof_gbps']:.0f} | | |")
    widths = [r for r in rows if r["group"] == "widths"]
    if widths:
        hit = sum(r["gpureduce_gbps"] >= 3000 for r in widths)
        out += ["", "### Contiguous rows of any width (64 MiB of input, summed over the width)", "",
                f"Same run. {hit} of {len(widths)} at 3000 GB/s or more. "
                "Plot: `benchmarks/results/nvidia_h200_widths.png`.", "",
                "| width | float32 GB/s | torch.sum | bfloat16 GB/s | torch.sum |", "| ---: | ---: | ---: | ---: | ---: |"]
        for w in sorted({r["shape"][1] for r in widths}):
            cells = []
            for dt in ("float32", "bfloat16"):
                hit_r = [r for r in widths if r["shape"][1] == w and r["dtype"] == dt]
                cells += [f"{hit_r[0]['gpureduce_gbps']:.0f}", f"{hit_r[0]['torch_gbps']:.0f}"] if hit_r else ["-", "-"]
            out.append(f"| {w} | " + " | ".join(cells) + " |")
    rnd = os.path.join(os.path.dirname(path), "random_" + os.path.basename(path))
    if os.path.exists(rnd):
        r = json.load(open(rnd))
        rm = r["meta"]
        out += ["", "### Random-shape cases (`benchmarks/random_bench.py`)", "",
                f"Measured {rm['date']} on the same machine and versions, in the same device call as the table "
                f"above: {rm['n']} cases from each of seeds {', '.join(str(s) for s in rm['seeds'])}, "
                f"{rm['min_bytes']} B to {rm['max_bytes'] >> 20} MiB of input, every case checked against "
                "torch.sum first; speedup = torch_us / gpureduce_us (medians of alternating CUDA-graph replays). "
                "Plot: `benchmarks/results/random_nvidia_h200.png`.", "",
                "| seeds | cases | all correct | min | 1st pct | 10th pct | median | geomean | below 0.97x |",
                "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for name, v in list(r["seeds"].items()) + [("all", r["all"])]:
            out.append(f"| {name} | {v['cases']} | {v['all_correct']} | {v['min']:.2f}x | {v['p1']:.2f}x | "
                       f"{v['p10']:.2f}x | {v['median']:.2f}x | {v['geomean']:.2f}x | {v['below_0.97']} |")
        out += ["", "The ten slowest cases:", "", "| speedup | gpureduce µs | torch µs | case |", "| ---: | ---: | ---: | --- |"]
        for w in r["all"]["worst"][:10]:
            out.append(f"| {w['speedup']:.2f}x | {w['gpureduce_us']:.2f} | {w['torch_us']:.2f} | {w['label']} |")
    acc = os.path.join(os.path.dirname(path), "accuracy_float32.md")
    if os.path.exists(acc):
        lines = open(acc).read().splitlines()
        out += ["", "### float32 accuracy against float64 (`benchmarks/accuracy.py`)", ""] + lines[2:]
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results/nvidia_h200.json")
