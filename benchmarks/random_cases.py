"""Random reduction cases drawn the way models produce them, for the
random-shape benchmark (random_bench.py) and the random correctness test
(tests/test_random_shapes.py).

A case is a recipe, not a tensor: `build(case, device, gen)` makes a fresh
random input for it on any device, so one seed names the same cases on the
CPU and the GPU. The classes and their weights:

    feature maps   NCHW or channels_last [N, C, H, W] over (0, 2, 3), (2, 3) or 1
    sequences      [B, T, C] over T or over C
    logits         [tokens, vocab] over the vocabulary (or the tokens)
    rows           [N, w] over w, w from 1 to 300 or long
    middle         [a, b, c] over b, c small (1 to 16)
    expanded       a broadcast view (stride 0) over the broadcast dim or another
    strided        sliced, transposed and permuted views over random dims
    full           full sums of any length
    general        random rank 1 to 5, random sizes, random dims

with every dtype and, now and then, a `dtype=` argument. Sizes are drawn
log-uniformly between `min_bytes` and `max_bytes` of input.
"""
from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import torch

DTYPE_WEIGHTS = [
    ("float32", 10), ("bfloat16", 5), ("float16", 3), ("float64", 1), ("int32", 1), ("int64", 1),
    ("uint8", 1), ("bool", 1), ("int8", 0.5), ("int16", 0.5),
]
CLASS_WEIGHTS = [
    ("feature_map", 3), ("sequence", 3), ("logits", 1.5), ("rows", 3), ("middle", 2), ("expanded", 1.5),
    ("strided", 2), ("full", 1.5), ("general", 2),
]
# dtype= arguments that widen (read narrow, accumulate and write wide), as
# models use them; integers and masks also into float32 (a mean of uint8
# pixels, a float count of a mask), which none of the cases sampled before
# 2026-11-29 asked for (the CPU engine read those bytes at 3.6-4.7x
# torch.sum's time, unseen: NOTES.md, session 55). Each choice is one draw,
# as before, so the other cases of a seed are unchanged.
WIDEN = {"float16": ["float32", "float64"], "bfloat16": ["float32", "float64"], "float32": ["float64"],
         "int32": ["int64", "float32"], "int8": ["int64", "float32"], "int16": ["int64", "float32"],
         "uint8": ["int64", "float32"], "bool": ["int64", "float32"]}
VOCABS = [1000, 32000, 32064, 50257, 50304, 128256, 151936, 256000]


@dataclass
class Case:
    """A reduction: the base tensor's shape and dtype, the view taken of it,
    and the arguments of the sum."""
    cls: str
    dtype: str
    base: Tuple[int, ...]              # shape of the random tensor that is made
    view: List[Tuple] = field(default_factory=list)  # steps applied in order (see apply_view)
    dim: Optional[Tuple[int, ...]] = None            # None: a full sum
    keepdim: bool = False
    out_dtype: Optional[str] = None    # the dtype= argument

    def label(self) -> str:
        v = "".join(f".{s[0]}{list(s[1:]) if len(s) > 1 else ''}" for s in self.view)
        d = "all" if self.dim is None else list(self.dim)
        extra = f" dtype={self.out_dtype}" if self.out_dtype else ""
        return f"{self.cls} {self.dtype}{list(self.base)}{v} dim={d}{' keepdim' if self.keepdim else ''}{extra}"

    def to_json(self) -> Dict[str, object]:
        return asdict(self)


def _elt_size(dtype: str) -> int:
    return torch.empty((), dtype=getattr(torch, dtype)).element_size()


def _split_numel(rng: random.Random, numel: int, k: int) -> List[int]:
    """k sizes whose product is about numel, each at least 1."""
    logs = [rng.random() for _ in range(k)]
    total = sum(logs) or 1.0
    return [max(1, int(round(math.exp(math.log(max(numel, 1)) * l / total)))) for l in logs]


def _fit(rng: random.Random, options: Sequence[int], budget: int, per: int = 1) -> int:
    """One of options whose product with `per` fits `budget` elements (the
    smallest option where none does)."""
    fits = [o for o in options if o * per <= budget]
    return rng.choice(fits) if fits else min(options)


def _pick(rng: random.Random, weighted: Sequence[Tuple[str, float]]) -> str:
    return rng.choices([w[0] for w in weighted], weights=[w[1] for w in weighted])[0]


def sample_case(rng: random.Random, min_bytes: int, max_bytes: int) -> Case:
    cls = _pick(rng, CLASS_WEIGHTS)
    dtype = _pick(rng, DTYPE_WEIGHTS)
    nbytes = math.exp(rng.uniform(math.log(min_bytes), math.log(max_bytes)))
    numel = max(1, int(nbytes / _elt_size(dtype)))
    c = Case(cls, dtype, (numel,))
    if cls == "feature_map":
        C = _fit(rng, [3, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048], numel)
        hw = _fit(rng, [1, 2, 4, 7, 8, 14, 16, 28, 32, 56, 64, 112, 128, 224], numel // C, per=1)
        while hw > 1 and C * hw * hw > numel:
            hw //= 2
        N = max(1, numel // (C * hw * hw))
        c.base = (N, C, hw, hw)
        if rng.random() < 0.5:  # channels_last: memory [N, H, W, C]
            c.view.append(("channels_last",))
        c.dim = rng.choice([(0, 2, 3), (2, 3), (1,), (2, 3), (0, 2, 3)])
        c.keepdim = rng.random() < 0.4
    elif cls == "sequence":
        C = _fit(rng, [64, 128, 256, 384, 512, 768, 1024, 2048, 4096, 5120, 8192], numel)
        T = _fit(rng, [1, 7, 16, 77, 128, 197, 256, 512, 1024, 2048, 4096], numel, per=C)
        B = max(1, numel // (T * C))
        c.base = (B, T, C)
        c.dim = rng.choice([(1,), (2,), (-1,), (1,)])
        c.keepdim = rng.random() < 0.3
    elif cls == "logits":
        V = _fit(rng, VOCABS, numel)
        N = max(1, numel // V)
        c.base = (N, V)
        c.dim = (-1,) if rng.random() < 0.8 else (0,)
    elif cls == "rows":
        w = rng.randint(1, 300) if rng.random() < 0.75 else int(math.exp(rng.uniform(math.log(300), math.log(200000))))
        c.base = (max(1, numel // w), w)
        c.dim = (1,)
        c.keepdim = rng.random() < 0.3
    elif cls == "middle":
        inner = rng.randint(1, 16)
        mid = int(math.exp(rng.uniform(0, math.log(max(2, numel // inner)))))
        outer = max(1, numel // (mid * inner))
        c.base = (outer, mid, inner)
        c.dim = (1,)
    elif cls == "expanded":
        k = rng.choice([2, 4, 16, 64, 256, 1024, 4096])
        n = max(1, numel // k)
        if rng.random() < 0.5:  # x[:, None].expand(-1, k): [n, k], stride 0 along dim 1
            c.base = (n,)
            c.view.append(("unsqueeze_expand", 1, k))
        else:                   # x[None].expand(k, -1): [k, n], stride 0 along dim 0
            c.base = (n,)
            c.view.append(("unsqueeze_expand", 0, k))
        c.dim = rng.choice([(0,), (1,), None])
    elif cls == "strided":
        rank = rng.randint(2, 4)
        c.base = tuple(_split_numel(rng, numel, rank))
        kind = rng.choice(["transpose", "permute", "slice", "narrow"])
        if kind == "transpose":
            c.view.append(("transpose", 0, rank - 1))
        elif kind == "permute":
            perm = list(range(rank))
            rng.shuffle(perm)
            c.view.append(("permute", *perm))
        elif kind == "slice":
            d = rng.randrange(rank)
            c.view.append(("step", d, rng.choice([2, 3])))
        else:
            d = rng.randrange(rank)
            if c.base[d] > 1:
                c.view.append(("narrow", d, rng.randint(0, c.base[d] // 3), max(1, c.base[d] // 2)))
        dims = [d for d in range(rank) if rng.random() < 0.5] or [rng.randrange(rank)]
        c.dim = tuple(dims)
    elif cls == "full":
        c.base = (numel,)
        c.dim = None
        if rng.random() < 0.2:
            c.view.append(("narrow", 0, rng.randint(1, 7), max(1, numel - 8)))
    else:
        rank = rng.randint(1, 5)
        c.base = tuple(_split_numel(rng, numel, rank))
        dims = [d for d in range(rank) if rng.random() < 0.5]
        c.dim = tuple(dims) if dims else None
        c.keepdim = dims != [] and rng.random() < 0.3
    if c.dim is not None:
        rank = len(shape_of(c))
        c.dim = tuple(d for d in c.dim if -rank <= d < rank) or None
    if rng.random() < 0.12 and dtype in WIDEN:
        c.out_dtype = rng.choice(WIDEN[dtype])
    return c


def sample_cases(n: int, seed: int, min_bytes: int = 1 << 10, max_bytes: int = 1 << 30) -> List[Case]:
    rng = random.Random(seed)
    return [sample_case(rng, min_bytes, max_bytes) for _ in range(n)]


def apply_view(x: torch.Tensor, view: Sequence[Tuple]) -> torch.Tensor:
    for step in view:
        op = step[0]
        if op == "channels_last":
            x = x.contiguous(memory_format=torch.channels_last)
        elif op == "unsqueeze_expand":
            d, k = step[1], step[2]
            x = x.unsqueeze(d)
            sizes = list(x.shape)
            sizes[d] = k
            x = x.expand(*sizes)
        elif op == "transpose":
            x = x.transpose(step[1], step[2])
        elif op == "permute":
            x = x.permute(*step[1:])
        elif op == "step":
            idx = [slice(None)] * x.dim()
            idx[step[1]] = slice(None, None, step[2])
            x = x[tuple(idx)]
        elif op == "narrow":
            d, start, length = step[1], step[2], step[3]
            start = min(start, x.shape[d] - 1)
            x = x.narrow(d, start, max(1, min(length, x.shape[d] - start)))
        else:
            raise ValueError(op)
    return x


def shape_of(case: Case) -> Tuple[int, ...]:
    return tuple(apply_view(torch.empty(case.base, device="meta"), case.view).shape)


def random_data(shape: Sequence[int], dtype: torch.dtype, device: str, gen: torch.Generator) -> torch.Tensor:
    """Fresh random values, never zeros: zero-mean floats in [-1, 1), ints in
    [-100, 100) ([0, 256) for uint8), bools at one half."""
    if dtype == torch.bool:
        return torch.rand(shape, device=device, generator=gen) > 0.5
    if dtype.is_floating_point:
        wide = torch.float64 if dtype == torch.float64 else torch.float32
        return torch.rand(shape, device=device, generator=gen, dtype=wide).mul_(2).sub_(1).to(dtype)
    lo, hi = (0, 256) if dtype == torch.uint8 else (-100, 100)
    return torch.randint(lo, hi, tuple(shape), device=device, generator=gen, dtype=dtype)


def build(case: Case, device: str, gen: torch.Generator) -> torch.Tensor:
    return apply_view(random_data(case.base, getattr(torch, case.dtype), device, gen), case.view)


def sum_args(case: Case) -> Dict[str, object]:
    """Keyword arguments of torch.sum / reduce_op.sum for the case."""
    kw: Dict[str, object] = {}
    if case.dim is not None:
        kw["dim"] = list(case.dim)
        kw["keepdim"] = case.keepdim
    if case.out_dtype is not None:
        kw["dtype"] = getattr(torch, case.out_dtype)
    return kw


def input_bytes(x: torch.Tensor) -> int:
    """Bytes a reduction must read: the distinct elements of the view (a
    broadcast dim is read once)."""
    n = 1
    for s, st in zip(x.shape, x.stride()):
        if st != 0:
            n *= s
    return n * x.element_size() if x.numel() else 0
