"""Every op of the op table (axes.OPS) against its torch function: every
dtype, shape and layout of the shared axes, reduced over all dims and over
each single dim with and without keepdim, on CPU and CUDA."""
import pytest

import reduce_op  # noqa: F401  (loads the operator library)
from axes import DEVICES, LAYOUTS, OPS, SHAPES, assert_op_matches


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op_name", sorted(OPS))
def test_op_matches_torch(op_name, shape, layout, device, gen):
    op = OPS[op_name]
    for dtype in op.dtypes:
        x = op.data(shape, dtype, layout, device, gen)
        assert_op_matches(op, op.ours_all(x), op.ref_all(x), op.scale(x))
        for d in range(-x.dim(), max(x.dim(), 1)):
            for keepdim in (False, True):
                assert_op_matches(op, op.ours_dim(x, d, keepdim), op.ref_dim(x, d, keepdim),
                                  op.scale(x, d, keepdim))
