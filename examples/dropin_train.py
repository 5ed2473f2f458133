"""Train a small transformer block a few steps with torch.sum, then again with
torch.sum routed to gpureduce (reduce_op.replace_torch_sum), from the same
seed, and show that the losses agree.

    python examples/dropin_train.py --device cpu
    python examples/dropin_train.py --device cuda
"""
import argparse
import contextlib
import sys

import torch
import torch.nn as nn

import reduce_op


class RMSNorm(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        # The normalisation is written with sums on purpose.
        ms = x.pow(2).sum(-1, keepdim=True) / x.shape[-1]
        return x * torch.rsqrt(ms + 1e-6) * self.weight


class Block(nn.Module):
    def __init__(self, d: int = 64, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / (d // self.heads) ** 0.5
        # softmax through an explicit sum
        w = torch.exp(scores - scores.amax(-1, keepdim=True))
        w = w / torch.sum(w, dim=-1, keepdim=True)
        x = x + self.proj(torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


def train(device: str, steps: int, routed: bool):
    torch.manual_seed(0)
    model = Block().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(8, 16, 64, generator=g).to(device), torch.randn(8, 16, 64, generator=g).to(device))
            for _ in range(steps)]
    losses = []
    ctx = reduce_op.replace_torch_sum() if routed else contextlib.nullcontext()
    with ctx:
        for x, y in data:
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).sum() / y.numel()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--rtol", type=float, default=1e-4)
    a = p.parse_args(argv)
    base = train(a.device, a.steps, routed=False)
    routed = train(a.device, a.steps, routed=True)
    print(f"device {a.device}")
    print("step  torch.sum     gpureduce.sum  rel.diff")
    worst = 0.0
    for i, (l0, l1) in enumerate(zip(base, routed)):
        rel = abs(l0 - l1) / max(abs(l0), 1e-12)
        worst = max(worst, rel)
        print(f"{i:4d}  {l0:.8f}  {l1:.8f}  {rel:.2e}")
    ok = worst <= a.rtol
    print(f"losses agree: {ok} (max relative difference {worst:.2e}, tolerance {a.rtol:.0e})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
