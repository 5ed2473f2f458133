"""gpureduce::prod beyond the op table (tests/test_ops.py runs its matrix
of dtypes, shapes, layouts and dims, empty and expanded inputs included):
dtype= arguments and errors, against torch.prod."""
import pytest
import torch

import reduce_op  # noqa: F401  (loads the operator library)

from axes import DEVICES, near_one


def _assert_close(ours, ref):
    assert ours.dtype == ref.dtype and ours.shape == ref.shape
    if ref.dtype.is_floating_point or ref.dtype.is_complex:
        tol = {torch.float16: 2e-2, torch.bfloat16: 5e-2}.get(ref.dtype, 1e-4)
        torch.testing.assert_close(ours.cpu(), ref.cpu(), rtol=tol, atol=tol, equal_nan=True)
    else:
        assert torch.equal(ours.cpu(), ref.cpu()), (ours, ref)


@pytest.mark.parametrize("device", DEVICES)
def test_prod_dtype_argument_and_errors(device, gen):
    x = near_one((33, 65), torch.float16, "contiguous", device, gen)
    _assert_close(torch.ops.gpureduce.prod(x, dtype=torch.float64), torch.prod(x, dtype=torch.float64))
    _assert_close(torch.ops.gpureduce.prod.dim_int(x, 1, dtype=torch.float32), torch.prod(x, 1, dtype=torch.float32))
    with pytest.raises(IndexError):
        torch.ops.gpureduce.prod.dim_int(x, 2)
