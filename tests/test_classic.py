"""The classic kernels (reduce0 ... reduce7, tensorcore, cpu) against a
float64 reference at sizes around the block and warp widths. Integer variants
must be exact."""
import pytest
import torch

import reduce_op
from axes import HAS_CUDA

SIZES = [0, 1, 31, 32, 33, 255, 256, 257, 1000, (1 << 20) + 7, 1 << 24]
GPU_KERNELS = [k for k in reduce_op.kernels() if k != "cpu"]
WIDE = {"reduce6", "reduce7", "tensorcore"}


def test_kernel_list():
    from reduce_op import _build_info

    gpu = ["reduce0", "reduce1", "reduce2", "reduce3", "reduce4", "reduce5", "reduce6", "reduce7", "tensorcore"]
    assert reduce_op.kernels() == (gpu if _build_info.WITH_CUDA else []) + ["cpu"]


def _data(n, dtype, device):
    g = torch.Generator().manual_seed(n)
    if dtype == torch.int32:
        return torch.randint(-100, 100, (n,), generator=g, dtype=torch.int32).to(device)
    # float32 gets a positive mean (error accumulates); 16-bit floats a zero
    # mean, so that sums of 2^24 values stay inside float16's range.
    shift = 0.5 if dtype == torch.float32 else 1.0
    return torch.rand(n, generator=g).mul_(2).sub_(shift).to(dtype).to(device)


def _check(got, x, dtype):
    ref = x.cpu().double().sum()
    if dtype == torch.int32:
        assert got.dtype == torch.int64
        assert got.item() == x.cpu().long().sum().item()
        return
    assert got.dtype == dtype
    mag = x.cpu().double().abs().sum().item()
    # fp32 accumulators over a float64 reference; the 16-bit outputs round once.
    bound = 1e-5 * mag + 1e-6 + (abs(ref.item()) * torch.finfo(dtype).eps if dtype != torch.float32 else 0)
    assert abs(got.double().item() - ref.item()) <= bound, (got.item(), ref.item(), bound)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16, torch.bfloat16], ids=str)
def test_cpu_kernel(n, dtype):
    x = _data(n, dtype, "cpu")
    _check(reduce_op.sum(x, kernel="cpu"), x, dtype)


@pytest.mark.cuda
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("kernel", GPU_KERNELS)
def test_gpu_kernel(kernel, dtype, n):
    if dtype in (torch.float16, torch.bfloat16) and kernel not in WIDE:
        pytest.skip("16-bit floats are taken by reduce6, reduce7 and tensorcore")
    x = _data(n, dtype, "cuda")
    _check(reduce_op.sum(x, kernel=kernel), x, dtype)


@pytest.mark.cuda
@pytest.mark.parametrize("n", [129, 1 << 20, (1 << 22) + 77])
@pytest.mark.parametrize("kernel", GPU_KERNELS)
def test_gpu_kernel_int32_full_range(kernel, n):
    # Every bit of the int32 matters here, the sign byte included: the
    # tensorcore kernel sums the four byte planes separately.
    g = torch.Generator().manual_seed(n)
    x = torch.randint(-(1 << 31), (1 << 31) - 1, (n,), generator=g, dtype=torch.int32)
    got = reduce_op.sum(x.cuda(), kernel=kernel)
    assert got.dtype == torch.int64
    assert got.item() == x.long().sum().item()


@pytest.mark.cuda
@pytest.mark.parametrize("value", [(1 << 31) - 1, -(1 << 31), -1, 255, -256])
def test_gpu_kernel_int32_extremes(value):
    n = (1 << 22) + 5
    x = torch.full((n,), value, dtype=torch.int32, device="cuda")
    for kernel in GPU_KERNELS:
        assert reduce_op.sum(x, kernel=kernel).item() == value * n, kernel


@pytest.mark.cuda
def test_gpu_kernel_rejects_cpu_tensor_and_bad_names():
    with pytest.raises(RuntimeError, match="runs on CUDA tensors"):
        reduce_op.sum(torch.ones(4), kernel="reduce3")
    with pytest.raises(RuntimeError, match="unknown classic kernel"):
        reduce_op.sum(torch.ones(4, device="cuda"), kernel="reduce9")
    with pytest.raises(RuntimeError, match="takes float32 or int32"):
        reduce_op.sum(torch.ones(4, device="cuda", dtype=torch.float16), kernel="reduce2")


def test_kernel_argument_rules():
    with pytest.raises(ValueError):
        reduce_op.sum(torch.ones(4), 0, kernel="cpu")
    with pytest.raises(RuntimeError, match="unknown classic kernel"):
        reduce_op.sum(torch.ones(4), kernel="nope")
