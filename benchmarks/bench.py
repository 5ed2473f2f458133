"""Benchmark suite: gpureduce.sum and the classic kernels against torch.sum,
torch.compile(torch.sum) and CuPy, in one run, on the GPU.

For every case it first checks the result against torch.sum, then times:
GPU time per call from CUDA-graph replays of many calls (median of replays),
cross-checked with CUDA events around single eager calls; eager wall time per
call; GB/s of input bytes; the fraction of a read roof measured in the same
run; and the speedup over torch.sum (torch_us / gpureduce_us). Inputs are
fresh random data and are rotated among several buffers so that mid-size
cases do not run from L2. Each graph is replayed for at least 100 ms of GPU
time before it is timed (--warmup-ms): for 10-25 ms after a fresh 8 GiB
allocation, every kernel tried on the H200 read about 13% slower (cause not
established), and the first timing of a case, which is gpureduce's, used to
take that hit (benchmarks/NOTES.md).

    python benchmarks/bench.py            # the full suite on the GPU
    python benchmarks/bench.py --quick    # a few tiny cases on the CPU, in seconds

Outputs (benchmarks/results/ by default): <gpu>.json, <gpu>.csv, <gpu>.md and
PNG plots: GB/s against size per dtype, speedup per case, and the classic
progression.
"""
from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.utils.benchmark as tbench

import reduce_op

HERE = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------- cases -----
@dataclass
class Case:
    name: str
    dtype: torch.dtype
    shape: Tuple[int, ...]
    dims: Optional[Tuple[int, ...]]  # None: full sum
    layout: str = "contiguous"       # contiguous | transposed | sliced
    kernel: Optional[str] = None     # a classic kernel, else the engine
    group: str = "shapes"            # full | shapes | widths | classic


def full_sum_cases(quick: bool) -> List[Case]:
    dtypes = [torch.float32, torch.int32] if quick else [
        torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int32, torch.uint8, torch.bool]
    exps = [10, 14] if quick else list(range(10, 31, 2))
    return [Case(f"full 2^{e}", dt, (1 << e,), None, group="full") for dt in dtypes for e in exps]


def shape_cases(quick: bool) -> List[Case]:
    f32, bf16 = torch.float32, torch.bfloat16
    if quick:
        return [Case("rows [64,16] d1", f32, (64, 16), (1,)), Case("cols [64,64] d0", f32, (64, 64), (0,))]
    c = [
        Case("short rows [4194304,16] d1", f32, (4194304, 16), (1,)),
        Case("short rows [2097152,32] d1", f32, (2097152, 32), (1,)),
        Case("short rows [1048576,64] d1", f32, (1048576, 64), (1,)),
        Case("short rows [524288,128] d1", f32, (524288, 128), (1,)),
        Case("inner [8192,8192] d1", f32, (8192, 8192), (1,)),
        Case("inner [8192,8192] d1 bf16", bf16, (8192, 8192), (1,)),
        Case("inner [8192,8192] d1 int32", torch.int32, (8192, 8192), (1,)),
        Case("outer [8192,8192] d0", f32, (8192, 8192), (0,)),
        Case("outer [8192,8192] d0 uint8", torch.uint8, (8192, 8192), (0,)),
        Case("outer [64,1048576] d0", f32, (64, 1048576), (0,)),
        Case("outer [4194304,16] d0", f32, (4194304, 16), (0,)),
        Case("multi [4096,32,4096] d(0,2)", f32, (4096, 32, 4096), (0, 2)),
        Case("middle [256,1024,256] d1", f32, (256, 1024, 256), (1,)),
        Case("inner 3-D [512,512,64] d2", f32, (512, 512, 64), (2,)),
        Case("outer 3-D [64,512,512] d0", f32, (64, 512, 512), (0,)),
        Case("multi 5-D [16,16,16,16,64] d(1,3)", f32, (16, 16, 16, 16, 64), (1, 3)),
        Case("4-D [64,64,64,64] d(0,1,2)", f32, (64, 64, 64, 64), (0, 1, 2)),
        Case("transposed [8192,8192].t() d1", f32, (8192, 8192), (1,), layout="transposed"),
        Case("sliced [8192,16384][:, ::2] d1", f32, (8192, 8192), (1,), layout="sliced"),
        Case("small rows [32,1024] d1", f32, (32, 1024), (1,)),
        Case("small cols [1024,1024] d0", f32, (1024, 1024), (0,)),
        Case("small 2^20 bf16 d1 [1024,1024]", bf16, (1024, 1024), (1,)),
    ]
    return c


# Contiguous rows of any width, 64 MiB of input each (issue 12's target: at
# least 3000 GB/s): a sample of widths from 1 to a vocabulary, not a list to
# tune to. Reported apart from the shapes suite and its geometric mean.
ROW_WIDTHS = [1, 2, 3, 5, 8, 12, 17, 24, 33, 48, 64, 96, 127, 200, 255, 300, 1000, 4099, 50257]


def width_cases(quick: bool) -> List[Case]:
    if quick:
        return []
    out = []
    for dt in (torch.float32, torch.bfloat16):
        size = torch.tensor([], dtype=dt).element_size()
        for w in ROW_WIDTHS:
            out.append(Case(f"rows of {w}", dt, ((64 << 20) // (w * size), w), (1,), group="widths"))
    return out


def classic_cases(quick: bool) -> List[Case]:
    if quick:
        return [Case("classic cpu 2^10", torch.float32, (1 << 10,), None, kernel="cpu", group="classic")]
    out = []
    for e in (20, 24, 28):
        for k in reduce_op.kernels():
            if k == "cpu":
                continue
            out.append(Case(f"classic {k} 2^{e}", torch.float32, (1 << e,), None, kernel=k, group="classic"))
        for k in ("reduce6", "reduce7", "tensorcore"):
            out.append(Case(f"classic {k} 2^{e} bf16", torch.bfloat16, (1 << e,), None, kernel=k, group="classic"))
            out.append(Case(f"classic {k} 2^{e} int32", torch.int32, (1 << e,), None, kernel=k, group="classic"))
    return out


# ----------------------------------------------------------- helpers -------
def make_input(case: Case, device: str, gen: torch.Generator) -> torch.Tensor:
    shape = case.shape
    if case.layout == "transposed":
        shape = shape[::-1]
    elif case.layout == "sliced":
        shape = shape[:-1] + (shape[-1] * 2,)
    dt = case.dtype
    if dt == torch.bool:
        x = torch.rand(shape, device=device, generator=gen) > 0.5
    elif dt.is_floating_point:
        x = torch.rand(shape, device=device, generator=gen, dtype=torch.float32 if dt != torch.float64 else dt)
        # float32/64: a positive mean, so rounding error accumulates; 16-bit
        # floats: zero mean, so large sums stay inside float16's range.
        shift = 0.5 if dt in (torch.float32, torch.float64) else 1.0
        x = x.mul_(2).sub_(shift).to(dt)
    else:
        hi = 100 if dt != torch.uint8 else 256
        x = torch.randint(-100 if dt != torch.uint8 else 0, hi, shape, device=device, generator=gen, dtype=dt)
    if case.layout == "transposed":
        x = x.t()
    elif case.layout == "sliced":
        x = x[..., ::2]
    return x


def input_bytes(x: torch.Tensor) -> int:
    return x.numel() * x.element_size()


def call_ours(case: Case) -> Callable[[torch.Tensor], torch.Tensor]:
    if case.kernel is not None:
        return lambda x: reduce_op.sum(x, kernel=case.kernel)
    # reduce_op.sum, the call users make (torch.ops' overload packet adds
    # several µs a call, which the CPU's wall-clock timings would count).
    if case.dims is None:
        return lambda x: reduce_op.sum(x)
    dims = list(case.dims)
    return lambda x: reduce_op.sum(x, dims)


def call_torch(case: Case) -> Callable[[torch.Tensor], torch.Tensor]:
    if case.dims is None:
        return lambda x: torch.sum(x)
    dims = case.dims
    return lambda x: torch.sum(x, dims)


def check_result(ours: torch.Tensor, ref: torch.Tensor, x: torch.Tensor, case: Case) -> Tuple[bool, float]:
    """Correctness before timing: integers exact, floats within a bound that
    scales with sum(|x|) and the output dtype."""
    if ours.shape != ref.shape or (case.kernel is None and ours.dtype != ref.dtype):
        return False, float("inf")
    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        return bool(torch.equal(ours.to(ref.dtype), ref)), 0.0
    dims = list(case.dims) if case.dims is not None else list(range(x.dim()))
    mag = x.abs().to(torch.float64).sum(dims) if dims else x.abs().double()
    err = (ours.double() - ref.double()).abs()
    eps = torch.finfo(ref.dtype).eps
    ok = bool((err <= 4 * eps * mag + 64 * torch.finfo(torch.float32).eps * mag + 1e-30).all())
    rel = (err.max() / mag.max().clamp_min(1e-30)).item()
    return ok, rel


class Timer:
    """GPU time per call from CUDA-graph replays, events, and wall clock."""

    def __init__(self, device: str, replays: int, warmup: int, warmup_ms: float = 0.0):
        self.device, self.replays, self.warmup, self.warmup_ms = device, replays, warmup, warmup_ms

    def graph_us(self, fn: Callable, inputs: Sequence[torch.Tensor],
                 stream: Optional[torch.cuda.Stream] = None) -> float:
        """Median us a call of fn over CUDA-graph replays. `stream`: where to
        warm up and capture (a backward must be captured on the stream its
        forward ran on, where autograd runs it)."""
        if self.device != "cuda":
            return self.cpu_us(fn, inputs)
        for x in inputs:
            fn(x)
        torch.cuda.synchronize()
        # Calls per graph: enough to amortise the replay launch, and whole
        # rounds of the rotated inputs.
        est = self.events_us(fn, inputs, reps=5)
        per_graph = max(len(inputs), min(400, int(math.ceil(2000.0 / max(est, 1.0)))))
        per_graph = int(math.ceil(per_graph / len(inputs)) * len(inputs))
        g = torch.cuda.CUDAGraph()
        s = stream if stream is not None else torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for x in inputs:
                fn(x)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g, stream=stream):
            for i in range(per_graph):
                fn(inputs[i % len(inputs)])
        for _ in range(self.warmup):
            g.replay()
        spent_ms = 0.0
        while spent_ms < self.warmup_ms:  # warm-up by GPU time as well as by count
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            spent_ms += a.elapsed_time(b)
        times = []
        for _ in range(self.replays):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e3 / per_graph)
        del g
        return statistics.median(times)

    def events_us(self, fn: Callable, inputs: Sequence[torch.Tensor], reps: int = 20) -> float:
        if self.device != "cuda":
            return self.wall_us(fn, inputs)
        times = []
        for i in range(reps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            x = inputs[i % len(inputs)]
            a.record()
            fn(x)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e3)
        return statistics.median(times)

    def cpu_us(self, fn: Callable, inputs: Sequence[torch.Tensor]) -> float:
        """CPU time per call, as benchmarks/cpu_bench.py takes it: the median
        of blocks of many calls (torch.utils.benchmark) on one input. Medians
        of 20 single calls, which this used before, put ratios of 0.54-1.1 on
        the same two calls from one run to the next (2026-11-24)."""
        t = tbench.Timer(stmt="fn(x)", globals={"fn": fn, "x": inputs[0]}, num_threads=torch.get_num_threads())
        return t.blocked_autorange(min_run_time=0.05).median * 1e6

    def wall_us(self, fn: Callable, inputs: Sequence[torch.Tensor], reps: int = 20) -> float:
        sync = torch.cuda.synchronize if self.device == "cuda" else (lambda: None)
        for x in inputs[:2]:
            fn(x)
        sync()
        times = []
        for i in range(reps):
            t0 = time.perf_counter()
            fn(inputs[i % len(inputs)])
            sync()
            times.append((time.perf_counter() - t0) * 1e6)
        return statistics.median(times)


_ROOF_KERNEL = r"""
extern "C" __global__ void read_stream(const uint4* __restrict__ x, long long n_vec, unsigned* sink) {
  // Every 16-byte vector is loaded once (four in flight per thread) and folded
  // into an xor, which is stored only if it hits a value random data will not
  // produce, so the loads stay live and almost nothing is written.
  unsigned acc = 0;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (; i + 3 * stride < n_vec; i += 4 * stride) {
    uint4 a = x[i], b = x[i + stride], c = x[i + 2 * stride], d = x[i + 3 * stride];
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n_vec; i += stride) { uint4 a = x[i]; acc ^= a.x ^ a.y ^ a.z ^ a.w; }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}
"""


def roof_reader() -> Callable[[torch.Tensor], None]:
    """A function that reads a CUDA tensor's bytes (whole 16-byte vectors)
    with the read-only stream kernel, on the current stream. Needs CuPy."""
    import cupy

    kernel = cupy.RawKernel(_ROOF_KERNEL, "read_stream")
    sink = torch.zeros(1, device="cuda", dtype=torch.int32)
    grid, block = (torch.cuda.get_device_properties(0).multi_processor_count * 8,), (256,)

    def read(t: torch.Tensor) -> None:
        with cupy.cuda.Stream.from_external(torch.cuda.current_stream()):
            kernel(grid, block, (t.data_ptr(), cupy.int64(t.numel() * t.element_size() // 16), sink.data_ptr()))

    return read


def measure_roof(device: str, timer: Timer) -> Tuple[float, str]:
    """Read bandwidth of a trivial streaming kernel over 4 GiB, in GB/s: a
    plain CUDA kernel (through CuPy's NVRTC) that only loads."""
    if device != "cuda":
        return float("nan"), "none (CPU run)"
    n = 1 << 30
    x = torch.rand(n, device=device)
    try:
        us = timer.graph_us(roof_reader(), [x])
        return n * 4 / us / 1e3, "read-only CUDA stream kernel (16-byte loads, 4 in flight), 4 GiB"
    except Exception as e:  # noqa: BLE001 - fall back to an elementwise kernel
        y = torch.empty_like(x)
        us = timer.graph_us(lambda t: torch.neg(t, out=y), [x])
        return 2 * n * 4 / us / 1e3, f"torch.neg read+write (CuPy unavailable: {type(e).__name__})"


def gpu_state() -> str:
    """Temperatures, clocks and power as nvidia-smi reports them now (to
    read slow cases against: the machines are shared and vary)."""
    q = "temperature.gpu,temperature.memory,clocks.sm,clocks.mem,power.draw,clocks_event_reasons.active"
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001
        return f"unavailable: {type(e).__name__}"


def environment(device: str, roof_gbps: float, roof_how: str) -> Dict[str, object]:
    meta: Dict[str, object] = {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
        "roof_gbps": roof_gbps, "roof_method": roof_how, "device": device,
    }
    if device == "cuda":
        p = torch.cuda.get_device_properties(0)
        meta.update(gpu=p.name, sms=p.multi_processor_count, memory_gib=round(p.total_memory / 2**30, 1))
        try:
            meta["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                            capture_output=True, text=True, timeout=20).stdout.strip()
        except Exception:  # noqa: BLE001
            meta["driver"] = "unknown"
    else:
        meta.update(gpu="cpu", driver="n/a")
    return meta


def progress(iterable, total: int, desc: str):
    try:
        from tqdm import tqdm

        return tqdm(iterable, total=total, desc=desc, file=sys.stderr, mininterval=1.0)
    except ImportError:
        def gen():
            for i, item in enumerate(iterable):
                done = int(30 * (i + 1) / total)
                print(f"\r{desc} [{'#' * done}{'.' * (30 - done)}] {i + 1}/{total}", end="", file=sys.stderr)
                yield item
            print(file=sys.stderr)
        return gen()


def slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", s).strip("_").lower()


# ------------------------------------------------------------------- run ----
def run(args) -> int:
    device = "cuda" if torch.cuda.is_available() and not args.quick else "cpu"
    timer = Timer(device, replays=args.replays, warmup=3, warmup_ms=args.warmup_ms)
    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    l2 = 60 << 20 if device == "cuda" else 1 << 20
    if device == "cuda":
        try:
            l2 = torch.cuda.get_device_properties(0).L2_cache_size
        except AttributeError:
            pass

    roof_gbps, roof_how = (float("nan"), "not measured (--no-roof)") if args.no_roof else measure_roof(device, timer)
    meta = environment(device, roof_gbps, roof_how)
    meta["warmup_ms"] = args.warmup_ms
    cases = full_sum_cases(args.quick) + shape_cases(args.quick) + width_cases(args.quick) + classic_cases(args.quick)
    if args.only:
        cases = [c for c in cases if re.search(args.only, c.name + " " + str(c.dtype))]
    have_cupy = False
    if device == "cuda" and not args.no_cupy:
        try:
            import cupy  # noqa: F401

            have_cupy = True
        except Exception:  # noqa: BLE001
            pass

    rows: List[Dict[str, object]] = []
    failures = 0
    for case in progress(cases, len(cases), "bench"):
        x0 = make_input(case, device, gen)
        nbytes = input_bytes(x0)
        # Rotate among enough buffers to spill L2 (4x its size), 64 at most.
        n_buf = 1 if nbytes >= 4 * l2 else min(64, int(math.ceil(4 * l2 / nbytes)))
        inputs = [x0] + [make_input(case, device, gen) for _ in range(n_buf - 1)]
        ours_fn, torch_fn = call_ours(case), call_torch(case)
        ok, rel = check_result(ours_fn(x0), torch_fn(x0), x0, case)
        if not ok:
            failures += 1
        row: Dict[str, object] = {
            "name": case.name, "group": case.group, "dtype": str(case.dtype).replace("torch.", ""),
            "shape": list(case.shape), "dims": list(case.dims) if case.dims is not None else None,
            "layout": case.layout, "kernel": case.kernel or "gpureduce", "bytes": nbytes,
            "buffers": n_buf, "correct": ok, "max_rel_err": rel,
        }
        ours_us = timer.graph_us(ours_fn, inputs)
        torch_us = timer.graph_us(torch_fn, inputs)
        row.update(gpureduce_us=ours_us, torch_us=torch_us)
        if device == "cuda" and nbytes >= 1 << 28:
            row["gpu_state"] = gpu_state()  # T gpu, T memory, MHz sm, MHz mem, W, event reasons
        if not args.graph_only:
            row.update(
                gpureduce_events_us=timer.events_us(ours_fn, inputs), torch_events_us=timer.events_us(torch_fn, inputs),
                gpureduce_wall_us=timer.wall_us(ours_fn, inputs), torch_wall_us=timer.wall_us(torch_fn, inputs),
            )
        row["gpureduce_gbps"] = nbytes / ours_us / 1e3
        row["torch_gbps"] = nbytes / torch_us / 1e3
        row["speedup"] = torch_us / ours_us
        row["roof_fraction"] = row["gpureduce_gbps"] / roof_gbps if roof_gbps == roof_gbps else None
        if args.compile and case.kernel is None and case.group != "classic":
            try:
                compiled = torch.compile(torch_fn, dynamic=False)
                compiled(x0)
                row["torch_compile_us"] = timer.graph_us(compiled, inputs)
            except Exception as e:  # noqa: BLE001
                row["torch_compile_error"] = f"{type(e).__name__}: {e}"[:200]
        if have_cupy and case.kernel is None and case.layout == "contiguous" and case.dtype != torch.bfloat16:
            import cupy

            axis = tuple(case.dims) if case.dims is not None else None
            as_cupy = {t.data_ptr(): cupy.asarray(t) for t in inputs}
            try:
                with cupy.cuda.Stream.from_external(torch.cuda.current_stream()):
                    row["cupy_us"] = timer.events_us(lambda t: as_cupy[t.data_ptr()].sum(axis=axis), inputs)
            except Exception as e:  # noqa: BLE001 - a baseline, not the subject
                row["cupy_error"] = f"{type(e).__name__}: {e}"[:200]
        rows.append(row)
        del inputs, x0

    os.makedirs(args.out_dir, exist_ok=True)
    gpu = slug(str(meta["gpu"]))
    base = os.path.join(args.out_dir, gpu if not args.quick else f"{gpu}_quick")
    with open(base + ".json", "w") as f:
        json.dump({"meta": meta, "cases": rows}, f, indent=1)
    fields = sorted({k for r in rows for k in r})
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    md = markdown(meta, rows)
    with open(base + ".md", "w") as f:
        f.write(md)
    if not args.no_plots:
        plots(meta, rows, base)
    print(summary(meta, rows))
    print(f"results: {base}.json/.csv/.md" + ("" if args.no_plots else " and PNG plots"))
    if failures:
        print(f"{failures} case(s) FAILED the correctness check", file=sys.stderr)
        return 1
    return 0


def geomean(v: List[float]) -> float:
    v = [x for x in v if x and x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def markdown(meta, rows) -> str:
    lines = [f"# gpureduce vs torch.sum on {meta['gpu']}", "",
             f"{meta['date']}; torch {meta['torch']}, CUDA {meta['cuda']}, driver {meta.get('driver')}; "
             + (f"read roof {meta['roof_gbps']:.0f} GB/s ({meta['roof_method']}). GPU times are medians of "
              "CUDA-graph replays" if meta["device"] == "cuda" else
              "CPU run: times are medians of blocks of calls (torch.utils.benchmark); no read roof")
             + "; speedup = torch_us / gpureduce_us.", "",
             "| case | dtype | gpureduce µs | torch µs | gpureduce GB/s | torch GB/s | speedup | roof | ok |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        roof = f"{r['roof_fraction']:.2f}" if r.get("roof_fraction") is not None else "-"
        lines.append(f"| {r['name']} | {r['dtype']} | {r['gpureduce_us']:.2f} | {r['torch_us']:.2f} | "
                     f"{r['gpureduce_gbps']:.0f} | {r['torch_gbps']:.0f} | {r['speedup']:.2f}x | {roof} | "
                     f"{'yes' if r['correct'] else 'NO'} |")
    lines += ["", summary(meta, rows), ""]
    return "\n".join(lines)


def suite_rows(rows):
    """The engine's cases of the shapes and full-sum suite (not the widths sweep)."""
    return [r for r in rows if r["kernel"] == "gpureduce" and r["group"] != "widths"]


def summary(meta, rows) -> str:
    eng = suite_rows(rows)
    if not eng:
        return "no engine cases"
    worst = min(eng, key=lambda r: r["speedup"])
    text = (f"engine cases: {len(eng)}, geometric-mean speedup {geomean([r['speedup'] for r in eng]):.2f}x, "
            f"slowest {worst['speedup']:.2f}x ({worst['name']} {worst['dtype']}), "
            f"all correct: {all(r['correct'] for r in rows)}")
    widths = [r for r in rows if r["group"] == "widths"]
    if widths:
        low = min(widths, key=lambda r: r["gpureduce_gbps"])
        text += (f"\nrows of any width (64 MiB): {sum(r['gpureduce_gbps'] >= 3000 for r in widths)} of {len(widths)} "
                 f"at 3000 GB/s or more, lowest {low['gpureduce_gbps']:.0f} GB/s ({low['name']} {low['dtype']}), "
                 f"slowest against torch.sum {min(r['speedup'] for r in widths):.2f}x")
    return text


def plots(meta, rows, base) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plots", file=sys.stderr)
        return
    title = f"{meta['gpu']}, torch {meta['torch']}, {meta['date'][:10]}"
    def gbps_panels(group_rows, x_of, xlabel, line, line_label, panel_width, suptitle, path):
        """GB/s of gpureduce and torch.sum against x_of(row), a panel per dtype."""
        dts = sorted({r["dtype"] for r in group_rows})
        fig, axes = plt.subplots(1, len(dts), figsize=(panel_width * len(dts), 3.4), sharey=True, squeeze=False)
        for ax, dt in zip(axes[0], dts):
            rs = sorted([r for r in group_rows if r["dtype"] == dt], key=x_of)
            x = [x_of(r) for r in rs]
            ax.plot(x, [r["gpureduce_gbps"] for r in rs], "o-", label="gpureduce")
            ax.plot(x, [r["torch_gbps"] for r in rs], "s--", label="torch.sum")
            if line == line:
                ax.axhline(line, color="gray", lw=0.8, ls=":", label=line_label)
            ax.set_xscale("log", base=2)
            ax.set_title(dt)
            ax.set_xlabel(xlabel)
        axes[0][0].set_ylabel("GB/s (input bytes)")
        axes[0][0].legend(fontsize=7)
        fig.suptitle(f"{suptitle}: {title}", fontsize=9)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)

    full = [r for r in rows if r["group"] == "full"]
    if full:
        gbps_panels(full, lambda r: r["shape"][0], "elements", meta["roof_gbps"], "read roof", 3.2, "Full sums",
                    base + "_gbps.png")
    widths = [r for r in rows if r["group"] == "widths"]
    if widths:
        gbps_panels(widths, lambda r: r["shape"][1], "row width (elements), 64 MiB of rows", 3000, "3000 GB/s", 4.2,
                    "Contiguous rows over their width", base + "_widths.png")
    eng = suite_rows(rows)
    if eng:
        fig, ax = plt.subplots(figsize=(8, 0.2 * len(eng) + 1.5))
        labels = [f"{r['name']} {r['dtype']}" for r in eng]
        sp = [r["speedup"] for r in eng]
        ax.barh(range(len(eng)), sp, color=["tab:green" if s >= 1 else "tab:red" for s in sp])
        ax.axvline(1.0, color="black", lw=0.8)
        ax.set_yticks(range(len(eng)))
        ax.set_yticklabels(labels, fontsize=6)
        ax.invert_yaxis()
        ax.set_xlabel("speedup over torch.sum (torch_us / gpureduce_us)")
        ax.set_title(f"gpureduce.sum vs torch.sum: {title}", fontsize=9)
        fig.tight_layout()
        fig.savefig(base + "_speedup.png", dpi=110)
        plt.close(fig)
    cls = [r for r in rows if r["group"] == "classic"]
    if cls:
        names = [k for k in reduce_op.kernels() if k != "cpu"] + ["gpureduce", "torch.sum"]
        fig, ax = plt.subplots(figsize=(9, 3.6))
        sizes = sorted({r["shape"][0] for r in cls})
        width = 0.8 / len(sizes)
        for j, n in enumerate(sizes):
            vals = []
            for k in names:
                if k in ("gpureduce", "torch.sum"):
                    ref = [r for r in rows if r["group"] == "full" and r["dtype"] == "float32" and r["shape"][0] == n]
                    vals.append((ref[0]["gpureduce_gbps"] if k == "gpureduce" else ref[0]["torch_gbps"]) if ref else 0)
                else:
                    m = [r for r in cls if r["kernel"] == k and r["shape"][0] == n and r["dtype"] == "float32"]
                    vals.append(m[0]["gpureduce_gbps"] if m else 0)
            ax.bar([i + j * width for i in range(len(names))], vals, width, label=f"2^{int(math.log2(n))}")
        if meta["roof_gbps"] == meta["roof_gbps"]:
            ax.axhline(meta["roof_gbps"], color="gray", lw=0.8, ls=":", label="read roof")
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(names))])
        ax.set_xticklabels(names, rotation=30, fontsize=7)
        ax.set_ylabel("GB/s (float32)")
        ax.legend(fontsize=7)
        ax.set_title(f"Classic reduction progression: {title}", fontsize=9)
        fig.tight_layout()
        fig.savefig(base + "_classic.png", dpi=110)
        plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="a few tiny cases on the CPU, in seconds")
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--only", help="regex over case names and dtypes")
    p.add_argument("--replays", type=int, default=15)
    p.add_argument("--warmup-ms", type=float, default=100.0,
                   help="replay each graph for at least this much GPU time before timing it")
    p.add_argument("--compile", action="store_true", help="also time torch.compile(torch.sum) (slow to build)")
    p.add_argument("--no-cupy", action="store_true")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--graph-only", action="store_true", help="CUDA-graph times only (no event or wall times)")
    p.add_argument("--no-roof", action="store_true", help="skip the read-roof measurement")
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
