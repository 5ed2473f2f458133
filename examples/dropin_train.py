"""Train a small transformer language model a few steps with torch's
reductions, then again with them routed to gpureduce
(reduce_op.replace_torch_reductions), from the same seed; show that the
losses agree, and profile one routed step to show which gpureduce ops ran.

The model's layer norm, softmax, cross-entropy and gradient clipping are
written with torch.mean, Tensor.var, torch.amax, torch.sum, torch.logsumexp
and torch.linalg.vector_norm (as many models write them), so that the mode
has reductions to route; torch's fused versions (nn.LayerNorm, F.softmax,
F.cross_entropy, and clip_grad_norm_'s per-tensor _foreach_norm) are single
ATen ops, which it leaves to torch.

    python examples/dropin_train.py --device cpu
    python examples/dropin_train.py --device cuda
    python examples/dropin_train.py --device cuda --autocast float16   # mixed precision

Under --autocast the forward runs in a torch.autocast region, where the
routed ops cast as torch's do (sum and logsumexp to float32 on CUDA, and
so on), so the two runs still compute the same thing.
"""
import argparse
import contextlib
import sys

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile

import reduce_op

VOCAB = 97


class LayerNorm(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return (x - mu) * torch.rsqrt(var + 1e-5) * self.weight + self.bias


def softmax(s: torch.Tensor, dim: int) -> torch.Tensor:
    w = torch.exp(s - s.amax(dim, keepdim=True))
    return w / torch.sum(w, dim=dim, keepdim=True)


def cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean over tokens of logsumexp(logits) - logits[target]."""
    lse = torch.logsumexp(logits, -1)
    picked = logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    return torch.mean(lse - picked)


def clip_grad_norm(params, max_norm: float) -> torch.Tensor:
    """Scale the gradients so that their global 2-norm is at most max_norm
    (the norm of the per-tensor norms, as clip_grad_norm_ takes it)."""
    grads = [p.grad for p in params if p.grad is not None]
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale)
    return total


class Block(nn.Module):
    def __init__(self, d: int = 64, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = LayerNorm(d), LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / (d // self.heads) ** 0.5
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        w = softmax(scores.masked_fill(~causal, float("-inf")), -1)
        x = x + self.proj(torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, d: int = 64, layers: int = 2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d)
        self.blocks = nn.Sequential(*[Block(d) for _ in range(layers)])
        self.norm = LayerNorm(d)
        self.head = nn.Linear(d, VOCAB)

    def forward(self, tokens):
        return self.head(self.norm(self.blocks(self.embed(tokens))))


def batches(device: str, steps: int):
    g = torch.Generator().manual_seed(1)
    seqs = [torch.randint(0, VOCAB, (8, 33), generator=g) for _ in range(steps)]
    return [(s[:, :-1].to(device), s[:, 1:].to(device)) for s in seqs]


def step(model, opt, tokens, target, amp=None) -> float:
    opt.zero_grad()
    region = torch.autocast(tokens.device.type, dtype=amp) if amp is not None else contextlib.nullcontext()
    with region:
        loss = cross_entropy(model(tokens), target)
    loss.backward()
    clip_grad_norm(model.parameters(), 1.0)
    opt.step()
    return loss.item()


def train(device: str, steps: int, routed: bool, amp=None):
    torch.manual_seed(0)
    model = TinyLM().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ctx = reduce_op.replace_torch_reductions() if routed else contextlib.nullcontext()
    with ctx:
        losses = [step(model, opt, x, y, amp) for x, y in batches(device, steps)]
    return losses, model, opt


def profile_routed_step(device: str, model, opt, amp=None):
    """The gpureduce ops one routed training step ran: {name: calls}."""
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    (x, y), = batches(device, 1)
    with reduce_op.replace_torch_reductions(), profile(activities=activities) as prof:
        step(model, opt, x, y, amp)
        if device == "cuda":
            torch.cuda.synchronize()
    return {e.key: e.count for e in prof.key_averages() if e.key.startswith("gpureduce::")}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--rtol", type=float, default=None,
                   help="largest relative difference of the losses (1e-4; 1e-2 under --autocast)")
    p.add_argument("--autocast", choices=["float16", "bfloat16"], help="run the forward in a torch.autocast region")
    a = p.parse_args(argv)
    amp = getattr(torch, a.autocast) if a.autocast else None
    if a.rtol is None:
        a.rtol = 1e-4 if amp is None else 1e-2
    base, _, _ = train(a.device, a.steps, routed=False, amp=amp)
    routed, model, opt = train(a.device, a.steps, routed=True, amp=amp)
    print(f"device {a.device}" + (f", autocast {a.autocast}" if amp is not None else ""))
    print("step  torch         gpureduce     rel.diff")
    worst = 0.0
    for i, (l0, l1) in enumerate(zip(base, routed)):
        rel = abs(l0 - l1) / max(abs(l0), 1e-12)
        worst = max(worst, rel)
        print(f"{i:4d}  {l0:.8f}  {l1:.8f}  {rel:.2e}")
    ok = worst <= a.rtol
    print(f"losses agree: {ok} (max relative difference {worst:.2e}, tolerance {a.rtol:.0e})")
    ran = profile_routed_step(a.device, model, opt, amp)
    print("gpureduce ops in one routed step (torch.profiler):")
    print("  op                            calls")
    for name, calls in sorted(ran.items()):
        print(f"  {name:<30}{calls:6d}")
    expected = {"gpureduce::sum", "gpureduce::mean", "gpureduce::amax", "gpureduce::logsumexp", "gpureduce::var",
                "gpureduce::linalg_vector_norm"}
    missing = expected - set(ran)
    if missing:
        print("not routed:", ", ".join(sorted(missing)))
    return 0 if ok and not missing else 1


if __name__ == "__main__":
    sys.exit(main())
