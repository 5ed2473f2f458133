"""One gpureduce.sum call of a given float32 shape and dim, warmed up, for
Nsight Compute (tools/device_steps.sh, step ncu):
  python3 tools/ncu_case.py 2097152,32 1"""
import sys

import torch

import reduce_op

shape = tuple(int(v) for v in sys.argv[1].split(","))
dim = None if sys.argv[2] == "none" else tuple(int(v) for v in sys.argv[2].split(","))
x = torch.randn(shape, device="cuda")
for _ in range(3):
    reduce_op.sum(x, dim)
torch.cuda.synchronize()
assert torch.allclose(reduce_op.sum(x, dim), torch.sum(x, dim), rtol=1e-4, atol=1e-3)
torch.cuda.synchronize()
