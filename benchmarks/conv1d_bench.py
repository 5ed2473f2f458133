"""gpureduce.conv1d against F.conv1d (cuDNN on the GPU, groups=C for a mask
per channel), CuPy's correlate1d where it applies (one mask, GPU), and the
copy roof (the fastest copy of the same bytes, read plus written: copy_ or
an elementwise kernel), in one run:

* depthwise [B, C, L] float32 and bfloat16, K in {3, 4, 7}, 256 MB of input;
* one channel [L] of 2^26 float32, K up to 31;
* the book's four kernels (kernel=, GPU only) beside the production path,
  F.conv1d and the roof, at L = 2^20, 2^24, 2^28 and K = 3, 7, 31;
* the backward of a depthwise case: the input's gradient (GB/s) and the
  mask's against torch's.

GB/s counts the input read once and the output written once. Times are
medians of CUDA-graph replays on fresh random inputs (bench.Timer; CuPy,
which graphs do not capture, by events around blocks of calls); every result
is checked against F.conv1d in float64 first. Writes conv1d_<gpu>.json,
.csv, .md and a plot of the book's progression.

    python benchmarks/conv1d_bench.py             # the GPU's full run
    python benchmarks/conv1d_bench.py --quick     # small sizes, CPU or GPU
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import statistics
import sys
from typing import Callable, Dict, List, Optional

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reduce_op  # noqa: E402
from bench import Timer, environment, progress, slug  # noqa: E402

LEFT = {"same": lambda K: (K - 1) // 2, "causal": lambda K: K - 1, "valid": lambda K: 0}


def torch_conv1d(x: torch.Tensor, w: torch.Tensor, padding: str) -> torch.Tensor:
    """The same correlation through F.conv1d: [L] and [B, C, L] inputs,
    masks [K] or [C, K] (groups=C), the padding done by F.conv1d."""
    K = w.shape[-1]
    left = LEFT[padding](K)
    right = 0 if padding != "same" else K - 1 - left
    pad = "same" if padding == "same" else (0 if padding == "valid" else None)
    if w.dim() == 2:
        if pad is None:  # causal: F.conv1d pads both sides alike, so pad the input first
            return F.conv1d(F.pad(x, (left, right)), w.unsqueeze(1), groups=w.shape[0])
        return F.conv1d(x, w.unsqueeze(1), padding=pad, groups=w.shape[0])
    rows = x.reshape(-1, 1, x.shape[-1])
    if pad is None:
        rows = F.pad(rows, (left, right))
        pad = 0
    return F.conv1d(rows, w.view(1, 1, K), padding=pad).reshape(*x.shape[:-1], -1)


def cupy_correlate(x: torch.Tensor, w: torch.Tensor, padding: str) -> Optional[Callable]:
    """CuPy's correlate1d of a one-mask "same" case (odd K: its origin 0 is
    the mask's centre), on torch's stream; None where CuPy is missing."""
    if x.device.type != "cuda" or w.dim() != 1 or padding != "same" or w.shape[-1] % 2 == 0:
        return None
    try:
        import cupy
        from cupyx.scipy import ndimage
    except ImportError:
        return None
    wc = cupy.asarray(w.float().cpu().numpy()).astype(cupy.float32 if x.dtype == torch.float32 else cupy.float64)

    def run(t: torch.Tensor):
        with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            return ndimage.correlate1d(cupy.asarray(t), wc, axis=-1, mode="constant", cval=0.0)
    return run


def events_us(fn: Callable, inputs, reps: int = 9, calls: int = 10) -> float:
    """Median per-call time of blocks of calls between CUDA events."""
    for x in inputs:
        fn(x)
    times = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for i in range(calls):
            fn(inputs[i % len(inputs)])
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e3 / calls)
    return statistics.median(times)


def copy_roof_us(timer: Timer, xs) -> float:
    """The time of the fastest copy of xs' bytes to a tensor of their size:
    the faster of copy_ and an elementwise kernel (mul by 1). copy_ of a
    contiguous tensor of one dtype is a device-to-device memcpy, which on
    the H200 ran at about 2700 GB/s at some sizes (2^27 and 2^28 float32,
    67105280 and 14920776 elements) where the elementwise kernel ran at
    4170-4250 (NOTES.md, session 95)."""
    dst = torch.empty_like(xs[0])
    return min(timer.graph_us(lambda t: dst.copy_(t), xs), timer.graph_us(lambda t: torch.mul(t, 1, out=dst), xs))


def check(got: torch.Tensor, x: torch.Tensor, w: torch.Tensor, padding: str) -> bool:
    """got against F.conv1d in float64, relative to sum |x| |w|, with an
    absolute floor of half float16's subnormal step: a float16 output near
    zero is a subnormal, whose rounding error (up to 2^-25) can be more than
    2e-2 of a tiny sum (session 101: K = 1 outputs of random inputs)."""
    want = torch_conv1d(x.double(), w.double(), padding)
    scale = torch_conv1d(x.double().abs(), w.double().abs(), padding)
    tol = 1e-5 if x.dtype in (torch.float32, torch.float64) else 2e-2
    floor = 2.0 ** -25 if got.dtype == torch.float16 else 0.0
    return got.shape == want.shape and bool(((got.double() - want).abs() <= tol * scale + floor + 1e-30).all())


def grad_weight_close(got: torch.Tensor, x: torch.Tensor, w: torch.Tensor, g: torch.Tensor) -> bool:
    """The mask's gradient against F.conv1d's in float64, relative to the
    sum of the products' sizes (the same gradient of |x| and |g|)."""
    def reference(xd, gd):
        wd = w.detach().double().requires_grad_()
        return torch.autograd.grad(torch_conv1d(xd, wd, "same"), wd, gd)[0]
    want = reference(x.detach().double(), g.double())
    scale = reference(x.detach().double().abs(), g.double().abs()) + 1e-30
    tol = 1e-5 if got.dtype == torch.float32 else 8e-3
    return bool(((got.double() - want).abs() / scale).max().item() <= tol)


def run(args) -> int:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    timer = Timer(device, replays=args.replays, warmup=3, warmup_ms=5.0)
    gen = torch.Generator(device=device)
    gen.manual_seed(args.seed)
    meta = environment(device, float("nan"), "copy roof measured per case (read + write)")
    rows: List[Dict[str, object]] = []
    scale = 1 << 6 if args.quick else 1

    def fresh(shape, dtype):
        n = max(1, int(4 * (64 << 20) / (math.prod(shape) * torch.tensor([], dtype=dtype).element_size())))
        return [torch.randn(shape, device=device, generator=gen, dtype=torch.float32).to(dtype)
                for _ in range(min(4, n) if device == "cuda" else 1)]

    def case(group: str, shape, w_shape, dtype, padding, kernels):
        xs = fresh(shape, dtype)
        w = torch.randn(w_shape, device=device, generator=gen, dtype=torch.float32).to(dtype)
        out_len = shape[-1] - (w_shape[-1] - 1 if padding == "valid" else 0)
        moved = (math.prod(shape) + math.prod(shape[:-1]) * out_len) * xs[0].element_size()
        roof_us = copy_roof_us(timer, xs)
        base = {"group": group, "shape": list(shape), "K": w_shape[-1], "mask": "per channel" if len(w_shape) == 2
                else "one", "dtype": str(dtype).replace("torch.", ""), "padding": padding, "bytes": moved,
                "roof_gbps": 2 * math.prod(shape) * xs[0].element_size() / roof_us / 1e3}
        paths = {"gpureduce": lambda t: reduce_op.conv1d(t, w, None, padding),
                 "F.conv1d": lambda t: torch_conv1d(t, w, padding)}
        for k in kernels:
            paths[k] = (lambda k: lambda t: reduce_op.conv1d(t, w, None, padding, kernel=k))(k)
        for name, fn in paths.items():
            ok = check(fn(xs[0]), xs[0], w, padding)
            # The book's constant-memory kernels copy the mask to the host
            # for their launch parameter, which a graph cannot capture:
            # those are timed by events, like CuPy.
            us = events_us(fn, xs) if name in ("constant", "tiled_halo", "tiled_l2") else timer.graph_us(fn, xs)
            rows.append({**base, "path": name, "us": us, "gbps": moved / us / 1e3, "correct": ok})
        cp = cupy_correlate(xs[0], w, padding)
        if cp is not None:
            us = events_us(cp, xs)
            rows.append({**base, "path": "cupy correlate1d", "us": us, "gbps": moved / us / 1e3, "correct": None})

    plan = []
    for dtype in (torch.float32, torch.bfloat16):
        L = (8192 if dtype == torch.float32 else 16384) // scale
        for K in (3, 4, 7):
            for padding in ("causal", "same"):
                plan.append(("depthwise", (8, 1024, L), (1024, K), dtype, padding, []))
    for K in (3, 7, 15, 31):
        plan.append(("one channel", ((1 << 26) // scale,), (K,), torch.float32, "same", []))
    book = reduce_op.conv1d_kernels() if device == "cuda" else []
    for logL in (20, 24, 28):
        for K in (3, 7, 31):
            plan.append(("book", ((1 << logL) // scale,), (K,), torch.float32, "same", book))
    for item in progress(plan, len(plan), "conv1d cases"):
        case(*item)

    # The backward: the input's gradient alone (a second correlation), and
    # the mask's, each against torch's, over depthwise float32 and bfloat16
    # cases and one long channel; the mask's gradient is checked against
    # torch's in float64 first. Each is timed by CUDA-graph replays of
    # autograd.grad (captured on the stream the forward ran on, where
    # autograd runs the backward): the GPU's time, as the forward's is. The
    # input's gradient is also timed by events around single autograd.grad
    # calls, which adds autograd's own cost per call.
    backward_plan = [((8, 1024, 8192 // scale), (1024, K), torch.float32) for K in (3, 4, 7)]
    backward_plan += [((8, 1024, 16384 // scale), (1024, 4), torch.bfloat16),
                      ((32, 1536, 2048 // scale), (1536, 4), torch.bfloat16),
                      (((1 << 26) // scale,), (31,), torch.float32)]
    for shape, w_shape, dtype in progress(backward_plan, len(backward_plan), "conv1d backward"):
        x = fresh(shape, dtype)[0].requires_grad_()
        w = torch.randn(w_shape, device=device, generator=gen).to(dtype).requires_grad_()
        grads = fresh(shape, dtype)
        moved = 2 * math.prod(shape) * x.element_size()
        roof_gbps = moved / copy_roof_us(timer, grads) / 1e3
        stream = torch.cuda.Stream() if device == "cuda" else None
        with torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext():
            ours_y, theirs_y = reduce_op.conv1d(x, w, None, "same"), torch_conv1d(x, w, "same")
        correct = grad_weight_close(torch.autograd.grad(ours_y, w, grads[0], retain_graph=True)[0], x, w, grads[0])
        for name, y in (("gpureduce", ours_y), ("F.conv1d", theirs_y)):
            us_in = timer.graph_us(lambda t: torch.autograd.grad(y, x, t, retain_graph=True), grads, stream=stream)
            us_w = timer.graph_us(lambda t: torch.autograd.grad(y, w, t, retain_graph=True), grads, stream=stream)
            us_call = timer.events_us(lambda t: torch.autograd.grad(y, x, t, retain_graph=True), grads[:1], reps=30)
            rows.append({"group": "backward", "shape": list(shape), "K": w_shape[-1],
                         "mask": "per channel" if len(w_shape) == 2 else "one", "dtype": str(dtype).split(".")[-1],
                         "padding": "same", "bytes": moved, "path": name, "us": us_in, "gbps": moved / us_in / 1e3,
                         "roof_gbps": roof_gbps, "grad_input_call_us": us_call, "grad_weight_us": us_w,
                         "correct": correct if name == "gpureduce" else None})
        del x, w, grads, ours_y, theirs_y

    os.makedirs(args.out_dir, exist_ok=True)
    name = slug(meta.get("gpu", "cpu"))
    with open(os.path.join(args.out_dir, f"conv1d_{name}.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out_dir, f"conv1d_{name}.csv"), "w", newline="") as f:
        keys = sorted({k for r in rows for k in r})
        writer = csv.DictWriter(f, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)
    md = markdown(meta, rows)
    with open(os.path.join(args.out_dir, f"conv1d_{name}.md"), "w") as f:
        f.write(md)
    plot(meta, rows, os.path.join(args.out_dir, f"conv1d_{name}.png"))
    print(md)
    return 0 if all(r["correct"] is not False for r in rows) else 1


def markdown(meta, rows) -> str:
    lines = [f"# conv1d on {meta.get('gpu', 'the CPU')}", "",
             f"{meta['date']}; torch {meta['torch']}, CUDA {meta['cuda']}; GB/s = (input + output bytes) / time; "
             "roof = the fastest copy of the input's bytes (copy_ or mul by 1), read + written.", "",
             "| group | shape | K | mask | dtype | padding | path | us | GB/s | of roof | correct |",
             "| --- | --- | ---: | --- | --- | --- | --- | ---: | ---: | ---: | --- |"]
    for r in rows:
        roof = r.get("roof_gbps")
        frac = f"{r['gbps'] / roof:.0%}" if roof else ""
        lines.append(f"| {r['group']} | {r['shape']} | {r['K']} | {r['mask']} | {r['dtype']} | {r['padding']} | "
                     f"{r['path']} | {r['us']:.1f} | {r['gbps']:.0f} | {frac} | {r['correct']} |")
    back = [r for r in rows if r["group"] == "backward"]
    if back:
        lines += ["", "Backward ('same'), by CUDA-graph replays of autograd.grad: the input's gradient in GB/s of "
                  "its input and output (and of the copy roof), the mask's in us, each beside torch's (F.conv1d's "
                  "backward); 'per call' times single autograd.grad calls for the input by events, autograd's own "
                  "cost included.", "",
                  "| shape | K | dtype | grad_input GB/s | of roof | torch | per call us | torch | grad_weight us | "
                  "torch | grad_weight speedup | correct |",
                  "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for ours, theirs in zip(back[0::2], back[1::2]):
            lines.append(f"| {ours['shape']} | {ours['K']} | {ours['dtype']} | {ours['gbps']:.0f} | "
                         f"{ours['gbps'] / ours['roof_gbps']:.0%} | {theirs['gbps']:.0f} | "
                         f"{ours['grad_input_call_us']:.1f} | {theirs['grad_input_call_us']:.1f} | "
                         f"{ours['grad_weight_us']:.1f} | {theirs['grad_weight_us']:.1f} | "
                         f"{theirs['grad_weight_us'] / ours['grad_weight_us']:.2f}x | {ours['correct']} |")
    return "\n".join(lines) + "\n"


def plot(meta, rows, path: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    book = [r for r in rows if r["group"] == "book"]
    if not book:
        return
    cases = sorted({(r["shape"][0], r["K"]) for r in book})
    paths = [p for p in ("basic", "constant", "tiled_halo", "tiled_l2", "gpureduce", "F.conv1d")
             if any(r["path"] == p for r in book)]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / max(1, len(paths))
    for k, p in enumerate(paths):
        ys = [next((r["gbps"] for r in book if r["path"] == p and (r["shape"][0], r["K"]) == c), 0) for c in cases]
        ax.bar([i + k * width for i in range(len(cases))], ys, width, label=p)
    roofs = [next(r["roof_gbps"] for r in book if (r["shape"][0], r["K"]) == c) for c in cases]
    ax.plot([i + 0.4 - width / 2 for i in range(len(cases))], roofs, "k:", marker="_", label="copy roof")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(cases))])
    ax.set_xticklabels([f"L=2^{int(math.log2(L))}\nK={K}" for L, K in cases], fontsize=8)
    ax.set_ylabel("GB/s (input + output)")
    ax.legend(fontsize=8, ncol=4)
    fig.suptitle(f"PMPP ch. 8's conv1d steps, one float32 mask, {meta.get('gpu', 'CPU')}, torch {meta['torch']}, "
                 f"{meta['date']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--quick", action="store_true", help="sizes 64 times smaller")
    p.add_argument("--replays", type=int, default=9)
    p.add_argument("--seed", type=int, default=0)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
