"""float32 accuracy of gpureduce.sum against torch.sum (or, with --op
nansum, of gpureduce.nansum against torch.nansum, a tenth of the elements
NaN): the error of each against a float64 reference (the same data summed
in float64), on uniform [0, 1) and standard normal data of 2^24 and 2^28
elements, several seeds.
The issue's target: gpureduce's error no worse than torch.sum's. Both return
float32, so both errors include the final rounding (up to half an ulp of the
result); they are also shown in ulps of the result, and compared by their
mean over the seeds.

  python3 benchmarks/accuracy.py --out-dir benchmarks/results
  python3 benchmarks/accuracy.py --op nansum --out-dir benchmarks/results

Writes accuracy_float32.json/.md (sum) or accuracy_nansum_float32.json/.md.
"""
import argparse
import datetime as _dt
import json
import os
import statistics
import sys

import torch

import reduce_op

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--exps", default="24,28")
    p.add_argument("--op", choices=("sum", "nansum"), default="sum")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("accuracy.py needs a GPU", file=sys.stderr)
        return 2
    gen = torch.Generator(device="cuda")
    rows = []
    for e in [int(x) for x in args.exps.split(",")]:
        n = 1 << e
        for dist in ("uniform", "normal"):
            for seed in range(args.seeds):
                gen.manual_seed(seed)
                x = (torch.rand if dist == "uniform" else torch.randn)(n, device="cuda", generator=gen)
                if args.op == "nansum":
                    x[torch.rand(n, device="cuda", generator=gen) < 0.1] = float("nan")
                ref = x.double().nansum().item()
                ours = getattr(reduce_op, args.op)(x).item()
                theirs = getattr(torch, args.op)(x).item()
                ulp = torch.tensor(ref, dtype=torch.float32).abs()
                ulp = (torch.nextafter(ulp, torch.tensor(float("inf"))) - ulp).item()
                rows.append(dict(n=n, dist=dist, seed=seed, ref=ref, ulp=ulp, gpureduce_err=abs(ours - ref),
                                 torch_err=abs(theirs - ref), rel_scale=x.double().abs().nansum().item()))
                del x
    meta = {"date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda}
    meta["op"] = args.op
    lines = [f"# float32 {args.op} error against float64, {meta['gpu']}", "",
             f"{meta['date']}; torch {meta['torch']}, CUDA {meta['cuda']}. |{args.op} - float64 {args.op}| over "
             f"{args.seeds} seeds, in ulps of the float32 result (0.5 is a correctly rounded sum).", "",
             "| n | data | gpureduce mean ulp | torch mean ulp | gpureduce max ulp | torch max ulp | "
             "gpureduce mean abs | torch mean abs |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    verdicts = []
    for n in sorted({r["n"] for r in rows}):
        for dist in ("uniform", "normal"):
            rs = [r for r in rows if r["n"] == n and r["dist"] == dist]
            og = [r["gpureduce_err"] / r["ulp"] for r in rs]
            ot = [r["torch_err"] / r["ulp"] for r in rs]
            ag = statistics.mean(r["gpureduce_err"] for r in rs)
            at = statistics.mean(r["torch_err"] for r in rs)
            lines.append(f"| 2^{n.bit_length() - 1} | {dist} | {statistics.mean(og):.3f} | {statistics.mean(ot):.3f} | "
                         f"{max(og):.3f} | {max(ot):.3f} | {ag:.4g} | {at:.4g} |")
            verdicts.append(ag <= at)
    lines += ["", f"gpureduce's mean error no worse than torch.{args.op}'s in {sum(verdicts)} of {len(verdicts)} rows",
              ""]
    text = "\n".join(lines)
    print(text)
    os.makedirs(args.out_dir, exist_ok=True)
    base = "accuracy_float32" if args.op == "sum" else f"accuracy_{args.op}_float32"
    with open(os.path.join(args.out_dir, base + ".json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out_dir, base + ".md"), "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
