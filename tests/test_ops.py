"""Every op of the op table (axes.OPS) against its torch function: every
dtype, shape and layout of the shared axes, reduced over all dims and over
each single dim with and without keepdim, on CPU and CUDA. Where torch
raises (amax of an empty dim), ours must raise an error of the same type."""
import pytest

import reduce_op  # noqa: F401  (loads the operator library)
from axes import DEVICES, LAYOUTS, OPS, SHAPES, assert_op_matches


def _check(op, ours, ref, scale):
    """ours() against ref(): the same result, or an error of the same type."""
    try:
        expected = ref()
    except Exception as e:  # noqa: BLE001 - compared by type
        with pytest.raises(type(e)):
            ours()
        return
    assert_op_matches(op, ours(), expected, scale())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op_name", sorted(OPS))
def test_op_matches_torch(op_name, shape, layout, device, gen):
    op = OPS[op_name]
    for dtype in op.dtypes:
        x = op.data(shape, dtype, layout, device, gen)
        _check(op, lambda: op.ours_all(x), lambda: op.ref_all(x), lambda: op.scale(x))
        for d in range(-x.dim(), max(x.dim(), 1)):
            for keepdim in (False, True):
                _check(op, lambda: op.ours_dim(x, d, keepdim), lambda: op.ref_dim(x, d, keepdim),
                       lambda: op.scale(x, d, keepdim))
