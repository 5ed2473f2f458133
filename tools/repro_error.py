import torch
import reduce_op

for dev in ("cpu", "cuda"):
    x = torch.randn(2, 3, device=dev)
    for args in ((5,), ([0, 0],)):
        try:
            reduce_op.sum(x, *args)
        except Exception as e:  # noqa: BLE001
            print(dev, args, "raised", type(e).__name__, e, flush=True)
print("repro done")
