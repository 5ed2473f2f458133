"""gpureduce on sharded tensors (DTensor), side by side with torch.

Shards a tensor over every process's device, reduces it with gpureduce and
with torch, then runs a small model whose activations are sharded over the
batch, its reductions routed to gpureduce (reduce_op.replace_torch_reductions),
and compares its loss and gradients with the same model in torch.

    torchrun --nproc-per-node 2 examples/sharded.py               # a GPU a process (NCCL), else gloo
    torchrun --nproc-per-node 2 examples/sharded.py --device cpu  # gloo
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.tensor import Shard, distribute_module, distribute_tensor, init_device_mesh

import reduce_op


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", choices=("cpu", "cuda"),
                        default="cuda" if torch.cuda.device_count() >= int(os.environ.get("WORLD_SIZE", "1")) else "cpu")
    args = parser.parse_args()
    if args.device == "cuda":
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl" if args.device == "cuda" else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh(args.device, (world,))
    say = print if rank == 0 else (lambda *a, **k: None)
    say(f"{world} processes on {args.device}, torch {torch.__version__}")

    # 1. A tensor sharded over its rows (an uneven count: the last rank holds fewer).
    torch.manual_seed(0)
    x = torch.randn(1001, 256, device=args.device)
    dx = distribute_tensor(x, mesh, [Shard(0)])
    for label, ours, theirs in (
        ("sum", lambda t: reduce_op.sum(t), lambda t: torch.sum(t)),
        ("sum over dim 0 (the sharded one)", lambda t: reduce_op.sum(t, 0), lambda t: torch.sum(t, 0)),
        ("sum over dim 1", lambda t: reduce_op.sum(t, 1), lambda t: torch.sum(t, 1)),
        ("amax over dim 0", lambda t: reduce_op.amax(t, 0), lambda t: torch.amax(t, 0)),
        ("logsumexp over dim 0", lambda t: reduce_op.logsumexp(t, 0), lambda t: torch.logsumexp(t, 0)),
        ("var over dim 0", lambda t: reduce_op.var(t, 0), lambda t: torch.var(t, 0)),
        ("argmax over dim 1", lambda t: reduce_op.argmax(t, 1), lambda t: torch.argmax(t, 1)),
    ):
        got = ours(dx)
        placement = got.placements[0]
        whole = got.full_tensor()
        want = theirs(x)
        err = (whole.double() - want.double()).abs().max().item()
        say(f"  {label:34s} result {str(placement):28s} max |gpureduce - torch| = {err:.2e}")

    # 2. The same model twice: torch's reductions on the whole batch, then
    # gpureduce's on a batch sharded over the processes.
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(64, 128), nn.Linear(128, 10)

        def forward(self, inp):
            h = self.fc1(inp)
            h = (h - h.mean(-1, keepdim=True)) / (h.var(-1, keepdim=True) + 1e-5).sqrt()  # a layer norm
            logits = self.fc2(torch.relu(h))
            return (torch.logsumexp(logits, -1) - logits[:, 0]).mean()  # cross-entropy to class 0

    model = Model().to(args.device)
    batch = torch.randn(96, 64, device=args.device)
    want = model(batch)
    want.backward()
    want_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()

    sharded_model = distribute_module(model, mesh)  # parameters replicated on every process
    with reduce_op.replace_torch_reductions():
        loss = sharded_model(distribute_tensor(batch, mesh, [Shard(0)]))
        loss.full_tensor().backward()
    grad_err = max((p.grad.full_tensor() - g).abs().max().item() for p, g in zip(sharded_model.parameters(), want_grads))
    say(f"  model loss: torch {want.item():.6f}, gpureduce on a sharded batch {loss.full_tensor().item():.6f}; "
        f"max gradient difference {grad_err:.2e}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
