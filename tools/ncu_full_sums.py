"""Workload for Nsight Compute: one full sum each of 256 MiB as uint8 (2^28
elements) and as float32 (2^26 elements), the same bytes through the same
kernel, to see why the byte sum streams slower (benchmarks/NOTES.md).
  ncu --clock-control none -k regex:split_rows --section SpeedOfLight ... python3 tools/ncu_full_sums.py"""
import torch

import reduce_op

u8 = torch.randint(0, 256, (1 << 28,), device="cuda", dtype=torch.uint8)
f32 = torch.rand(1 << 26, device="cuda")
for x in (u8, f32):
    reduce_op.sum(x)
torch.cuda.synchronize()
print("ok")
