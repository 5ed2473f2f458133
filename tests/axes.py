"""Test axes shared by every test module (dtypes, shapes, layouts, devices),
and the comparison every test uses: against torch.sum for dtype, shape and
integer values, and against a float64 reference with a dtype-aware bound."""
from __future__ import annotations

import itertools
from typing import Iterator, List, Optional, Sequence, Tuple

import torch

HAS_CUDA = torch.cuda.is_available()
DEVICES = ["cpu"] + (["cuda"] if HAS_CUDA else [])

DTYPES = [
    torch.float32, torch.float64, torch.float16, torch.bfloat16,
    torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool,
    torch.complex64,
]

# 0-d, one element, odd sizes, empty, up to 4-D, and sizes around the warp and
# 16-byte vector widths.
SHAPES = [(), (1,), (7,), (0,), (33,), (257,), (3, 0, 2), (33, 65), (5, 1, 17), (2, 3, 4, 5), (4, 131)]

LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]

# Extra dtype= arguments: (input dtype, requested dtype).
DTYPE_ARGS = [
    (torch.float16, torch.float32), (torch.bfloat16, torch.float32), (torch.float32, torch.float64),
    (torch.int8, torch.int32), (torch.int32, torch.float32), (torch.int64, torch.bool),
    (torch.uint8, torch.int16), (torch.float32, torch.int32),
]


def random_tensor(shape: Sequence[int], dtype: torch.dtype, device: str, gen: torch.Generator) -> torch.Tensor:
    """Fresh random data, never zeros: normal floats, small signed ints."""
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if dtype.is_complex:
        return torch.randn(shape, dtype=dtype, generator=gen)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(dtype)
    lo = 0 if dtype == torch.uint8 else -100
    return torch.randint(lo, 100, shape, generator=gen).to(dtype)


def make_layout(shape: Sequence[int], dtype: torch.dtype, layout: str, device: str,
                gen: torch.Generator) -> torch.Tensor:
    """A tensor of `shape` whose memory layout is `layout`."""
    shape = tuple(shape)
    if layout == "contiguous" or len(shape) == 0:
        return random_tensor(shape, dtype, device, gen).to(device)
    if layout == "transposed":
        base = random_tensor(shape[::-1], dtype, device, gen).to(device)
        return base.permute(*reversed(range(len(shape))))
    if layout == "sliced":
        big = tuple(s * 2 + 1 for s in shape)
        base = random_tensor(big, dtype, device, gen).to(device)
        idx = tuple(slice(1, 1 + 2 * s, 2) for s in shape)
        return base[idx]
    if layout == "expanded":
        # Dim 0 is broadcast from size 1 (stride 0).
        small = (1,) + shape[1:]
        return random_tensor(small, dtype, device, gen).to(device).expand(*shape)
    raise ValueError(layout)


def dim_patterns(ndim: int) -> Iterator[Optional[object]]:
    """None, [], every single dim (also negative), and every subset of dims."""
    yield None
    yield []
    for d in range(ndim):
        yield d
        yield d - ndim
    for r in range(2, ndim + 1):
        for combo in itertools.combinations(range(ndim), r):
            yield list(combo)
    if ndim == 0:
        yield 0
        yield -1


def reduced_dims(ndim: int, dim) -> List[int]:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({d % ndim for d in dims}) if ndim else []


def bound_scale(dtype: torch.dtype) -> float:
    """Allowed |error| per unit of sum(|x|): a few roundings of the output dtype
    (float32 for the accumulators of 16-bit floats)."""
    if dtype in (torch.float16, torch.bfloat16):
        return 2 * torch.finfo(dtype).eps
    if dtype in (torch.float32, torch.complex64):
        return 64 * torch.finfo(torch.float32).eps
    if dtype in (torch.float64, torch.complex128):
        return 64 * torch.finfo(torch.float64).eps
    return 0.0


def assert_matches_torch(ours: torch.Tensor, x: torch.Tensor, dim, keepdim: bool,
                         dtype: Optional[torch.dtype] = None) -> None:
    """ours must equal torch.sum(x, dim, keepdim, dtype=dtype) in dtype, shape,
    device and (integers) value; floats must lie within a float64-derived bound."""
    if dim is None and not keepdim:
        ref = torch.sum(x, dtype=dtype)
    else:
        ref = torch.sum(x, dim if dim is not None else [], keepdim, dtype=dtype)
    assert ours.dtype == ref.dtype, (ours.dtype, ref.dtype)
    assert ours.shape == ref.shape, (ours.shape, ref.shape)
    assert ours.device == ref.device
    assert ours.is_contiguous()
    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        assert torch.equal(ours.cpu(), ref.cpu()), (ours, ref)
        return
    dims = reduced_dims(x.dim(), dim)
    staged = x.to(ref.dtype) if x.dtype != ref.dtype else x
    wide = torch.complex128 if ref.dtype.is_complex else torch.float64
    exact = staged.cpu().to(wide)
    ref64 = exact.sum(dims, keepdim=True) if dims else exact
    mag = exact.abs().sum(dims, keepdim=True) if dims else exact.abs()
    if not keepdim:
        ref64 = ref64.reshape(ref.shape)
        mag = mag.reshape(ref.shape)
    err = (ours.cpu().to(wide) - ref64).abs()
    allowed = bound_scale(ref.dtype) * mag.real + torch.finfo(torch.float32).tiny
    if ref.dtype in (torch.float16, torch.bfloat16):
        allowed = allowed + ref64.abs() * torch.finfo(ref.dtype).eps  # final rounding
    nan_ok = torch.isnan(ref64) & torch.isnan(ours.cpu().to(wide))
    bad = (err > allowed) & ~nan_ok
    assert not bad.any(), f"max error {err.max().item():.3e}, allowed {allowed.min().item():.3e}"
