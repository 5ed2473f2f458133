"""(session 77) amax, amin, nansum of float64 rows (pitch rows at 4 blocks), argmax/argmin/max of float64 short rows (5 blocks), for compute-sanitizer."""
import torch, reduce_op
torch.manual_seed(0)
for shape in [(64, 384), (300, 278), (5, 200), (1000, 256), (33, 512), (7, 100), (2000, 128), (3, 1030)]:
    x = torch.randn(shape, dtype=torch.float64, device="cuda")
    x[1, 3] = float("nan")
    for ours, ref in ((reduce_op.amax, torch.amax), (reduce_op.amin, torch.amin), (reduce_op.nansum, torch.nansum)):
        a, b = ours(x, 1), ref(x, 1)
        assert torch.allclose(a, b, equal_nan=True), (shape, ours)
    for ours, ref in ((reduce_op.argmax, torch.argmax), (reduce_op.argmin, torch.argmin)):
        assert torch.equal(ours(x, 1), ref(x, 1)), (shape, ours)
    v, i = reduce_op.max(x, 1); tv, ti = torch.max(x, 1)
    assert torch.equal(i, ti) and torch.allclose(v, tv, equal_nan=True)
torch.cuda.synchronize()
print("ok")
