"""gpureduce::prod, the engine's second op, against torch.prod: every dtype,
layout and single dim (prod.dim_int) or none, on CPU and CUDA, including
empty inputs (the op's identity, 1) and expanded dims (k copies fold as x^k)."""
import pytest
import torch

import reduce_op  # noqa: F401  (loads the operator library)

from axes import DEVICES, LAYOUTS, SHAPES, make_layout

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int32, torch.int64,
          torch.uint8, torch.bool, torch.complex64]


def _near_one(shape, dtype, layout, device, gen):
    """Factors near 1 (floats in [0.5, 1.5), ints in [-2, 2]), so that
    products neither overflow nor vanish before integers wrap."""
    x = make_layout(shape, torch.float64, layout, device, gen)
    if dtype.is_floating_point or dtype.is_complex:
        return (x.remainder(1.0) + 0.5).to(dtype)
    if dtype == torch.bool:
        return x > -1.5
    return x.mul(2).round().clamp(-2, 2).to(dtype)


def _assert_close(ours, ref):
    assert ours.dtype == ref.dtype and ours.shape == ref.shape
    if ref.dtype.is_floating_point or ref.dtype.is_complex:
        tol = {torch.float16: 2e-2, torch.bfloat16: 5e-2}.get(ref.dtype, 1e-4)
        torch.testing.assert_close(ours.cpu(), ref.cpu(), rtol=tol, atol=tol, equal_nan=True)
    else:
        assert torch.equal(ours.cpu(), ref.cpu()), (ours, ref)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_prod_matches_torch(dtype, shape, layout, device, gen):
    x = _near_one(shape, dtype, layout, device, gen)
    _assert_close(torch.ops.gpureduce.prod(x), torch.prod(x))
    for d in range(-x.dim(), max(x.dim(), 1)):
        for keepdim in (False, True):
            _assert_close(torch.ops.gpureduce.prod.dim_int(x, d, keepdim), torch.prod(x, d, keepdim))


@pytest.mark.parametrize("device", DEVICES)
def test_prod_dtype_argument_and_errors(device, gen):
    x = _near_one((33, 65), torch.float16, "contiguous", device, gen)
    _assert_close(torch.ops.gpureduce.prod(x, dtype=torch.float64), torch.prod(x, dtype=torch.float64))
    _assert_close(torch.ops.gpureduce.prod.dim_int(x, 1, dtype=torch.float32), torch.prod(x, 1, dtype=torch.float32))
    with pytest.raises(IndexError):
        torch.ops.gpureduce.prod.dim_int(x, 2)
