"""Compare host-policy settings of the CUDA engine on the GPU, without a
rebuild per setting: each setting runs benchmarks/bench.py in its own process
with GPUREDUCE_TUNE_<NAME> variables (csrc/cuda/tuning.h), on the cases
matched by --only, and the table shows each case's speedup over torch.sum
under each setting, with the geometric mean. torch.sum is timed in the same
process as each setting, so the ratios are comparable across settings.

  python3 benchmarks/sweep.py --only 'short rows|cols' \\
      --setting base= --setting wide=COLUMN_MIN_BX=64 \\
      --setting wide_small=COLUMN_MIN_BX=64,MIN_COLUMN_LOOPS_SMALL=1
"""
import argparse
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_setting(text):
    name, _, assigns = text.partition("=")
    env = {}
    for item in filter(None, assigns.split(",")):
        key, _, value = item.partition("=")
        env["GPUREDUCE_TUNE_" + key.strip().upper()] = value.strip()
    return name, env


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", required=True, help="regex over case names and dtypes (bench.py --only)")
    p.add_argument("--setting", action="append", required=True, help="NAME=KEY=V,KEY=V (empty: defaults)")
    p.add_argument("--out-dir", default=os.path.join(HERE, "results", "sweep"))
    p.add_argument("--replays", type=int, default=15)
    p.add_argument("--warmup-ms", type=float, default=100.0, help="bench.py --warmup-ms")
    args = p.parse_args(argv)

    results = {}
    for text in args.setting:
        name, env = parse_setting(text)
        out = os.path.join(args.out_dir, name)
        cmd = [sys.executable, os.path.join(HERE, "bench.py"), "--only", args.only, "--out-dir", out,
               "--graph-only", "--no-roof", "--no-plots", "--no-cupy", "--replays", str(args.replays),
               "--warmup-ms", str(args.warmup_ms)]
        print(f"[sweep] {name}: {' '.join(f'{k}={v}' for k, v in env.items()) or 'defaults'}", flush=True)
        rc = subprocess.run(cmd, env={**os.environ, **env}).returncode
        files = [f for f in os.listdir(out) if f.endswith(".json")] if os.path.isdir(out) else []
        if not files:
            print(f"[sweep] {name}: no results (rc={rc})", flush=True)
            continue
        with open(os.path.join(out, files[0])) as f:
            results[name] = {(r["name"], r["dtype"]): r for r in json.load(f)["cases"]}
        if rc != 0:
            print(f"[sweep] {name}: bench.py exited {rc} (a correctness failure is reported above)", flush=True)

    if not results:
        return 1
    names = list(results)
    cases = list(next(iter(results.values())))
    width = max(len(f"{c[0]} {c[1]}") for c in cases)
    print("\nspeedup over torch.sum (torch_us / gpureduce_us), CUDA-graph medians")
    print(f"{'case':{width}s} " + " ".join(f"{n:>12s}" for n in names))
    for c in cases:
        cells = []
        for n in names:
            r = results[n].get(c)
            cells.append(f"{r['speedup']:11.3f}{'' if r['correct'] else '!'}" if r else f"{'-':>12s}")
        print(f"{c[0] + ' ' + c[1]:{width}s} " + " ".join(cells))
    print(f"{'geomean':{width}s} " + " ".join(
        f"{math.exp(sum(math.log(r['speedup']) for r in results[n].values()) / len(results[n])):12.3f}"
        for n in names))
    print("('!' marks a case that failed its correctness check)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
