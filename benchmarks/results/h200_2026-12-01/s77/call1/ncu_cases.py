"""(session 77) One call of each op on [32768, 384] rows, for ncu (profiled between cudaProfilerStart/Stop)."""
import torch, reduce_op
cases = []
for dt in (torch.float64, torch.int64, torch.float32):
    x = (torch.randn(32768, 384, device="cuda", dtype=torch.float64) * 100).to(dt)
    cases += [("argmax", dt, lambda x=x: reduce_op.argmax(x, 1)), ("argmax_torch", dt, lambda x=x: torch.argmax(x, 1))]
    if dt == torch.float64:
        cases += [("amax", dt, lambda x=x: reduce_op.amax(x, 1)), ("amax_torch", dt, lambda x=x: torch.amax(x, 1)),
                  ("sum", dt, lambda x=x: reduce_op.sum(x, 1)), ("sum_torch", dt, lambda x=x: torch.sum(x, 1))]
for _, _, f in cases:
    for _ in range(3): f()
torch.cuda.synchronize()
torch.cuda.profiler.start()
for name, dt, f in cases:
    torch.cuda.nvtx.range_push(f"{name} {dt}")
    f()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
torch.cuda.profiler.stop()
print("\n".join(f"{i}: {n} {d}" for i, (n, d, _) in enumerate(cases)))
