"""gpureduce.conv1d: a 1-D cross-correlation under a short mask (the
operator ``torch.ops.gpureduce.conv1d``, csrc/conv/conv1d.h), and a module
for the depthwise form that sequence models use in place of
``nn.Conv1d(C, C, K, groups=C)``."""
from __future__ import annotations

import math
from typing import List, Optional

import torch

PADDINGS = ("same", "causal", "valid")


def conv1d_kernels() -> List[str]:
    """The book's kernels (PMPP chapter 8) that :func:`conv1d` takes as
    ``kernel=``, in the book's order: ``basic``, ``constant``,
    ``tiled_halo``, ``tiled_l2`` (none in a build without the CUDA
    sources)."""
    from . import _build_info

    return list(torch.ops.gpureduce.conv1d_kernels()) if _build_info.WITH_CUDA else []


def conv1d(input: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None,
           padding: str = "same", kernel: Optional[str] = None) -> torch.Tensor:
    """``out[..., i] = bias + sum_j input[..., i - left + j] * weight[..., j]``,
    the cross-correlation ``F.conv1d`` computes, with zeros outside the input.

    input: ``[L]``, ``[B, L]`` or ``[B, C, L]``; weight: ``[K]`` (one mask for
    every row) or ``[C, K]`` (a mask per channel, depthwise: input ``[B, C,
    L]``); bias: one element for a ``[K]`` mask, ``[C]`` for a ``[C, K]``
    one. padding: ``"same"`` (left ``(K - 1) // 2``, output length ``L``, as
    ``F.conv1d``'s), ``"causal"`` (left ``K - 1``, length ``L``: each output
    sees only its own and earlier inputs) or ``"valid"`` (no padding, length
    ``L - K + 1``). float32, float64, float16 and bfloat16, all of one dtype
    (16-bit ones accumulate in float32); masks of 1 to 1024 taps. Results
    are bitwise reproducible, the gradients of input, weight and bias too,
    and double backward works.

    ``kernel=`` picks one of the book's four steps (:func:`conv1d_kernels`,
    CUDA tensors only, forward only: no gradient), each correct for any
    length; ``constant``, ``tiled_halo`` and ``tiled_l2`` keep the mask in
    constant memory, at most 1024 taps (C * K for a mask per channel).
    ``None``, the default, is the fastest path."""
    # torch's TypeError for arguments of the wrong type, where the operator
    # would take None for an empty tensor and say something else.
    for name, t, optional in (("input", input, False), ("weight", weight, False), ("bias", bias, True)):
        if not isinstance(t, torch.Tensor) and not (optional and t is None):
            raise TypeError(f"conv1d(): argument '{name}' must be Tensor{' or None' if optional else ''}, "
                            f"not {type(t).__name__}")
    if not isinstance(padding, str):
        raise TypeError(f"conv1d(): argument 'padding' must be str, not {type(padding).__name__}")
    if kernel is None:
        return torch.ops.gpureduce.conv1d(input, weight, bias, padding)
    if not isinstance(kernel, str) or kernel not in ("basic", "constant", "tiled_halo", "tiled_l2"):
        raise ValueError(f"conv1d: kernel must be None or one of 'basic', 'constant', 'tiled_halo', 'tiled_l2'; "
                         f"got {kernel!r}")
    if input.device.type != "cuda":
        raise RuntimeError(f"conv1d: kernel={kernel!r} is one of the book's CUDA kernels; the input is on "
                           f"{input.device}")
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (input, weight, bias)):
        raise RuntimeError(f"conv1d: kernel={kernel!r} computes the forward only; use kernel=None for gradients")
    return torch.ops.gpureduce.classic_conv1d(input, weight, bias, padding, kernel)


class DepthwiseConv1d(torch.nn.Module):
    """A depthwise 1-D convolution of ``channels`` channels with masks of
    ``kernel_size`` taps, one a channel, over inputs ``[B, C, L]``: in place
    of ``nn.Conv1d(C, C, K, groups=C, padding=...)``, with ``padding`` one of
    ``"same"``, ``"causal"`` and ``"valid"``. Parameters ``weight`` ``[C,
    K]`` and, with ``bias=True``, ``bias`` ``[C]``, initialised as
    ``nn.Conv1d``'s (uniform in +-1/sqrt(K)). It loads an ``nn.Conv1d``'s
    state dict (a weight of ``[C, 1, K]``) as well as its own, and
    :meth:`from_conv1d` converts such a module."""

    def __init__(self, channels: int, kernel_size: int, padding: str = "same", bias: bool = True,
                 device: Optional[torch.device] = None, dtype: Optional[torch.dtype] = None) -> None:
        super().__init__()
        if padding not in PADDINGS:
            raise ValueError(f"DepthwiseConv1d: padding must be one of {PADDINGS}, got {padding!r}")
        if channels < 1 or kernel_size < 1:
            raise ValueError(f"DepthwiseConv1d: channels and kernel_size must be >= 1, got {channels} and "
                             f"{kernel_size}")
        factory = {"device": device, "dtype": dtype}
        self.channels, self.kernel_size, self.padding = channels, kernel_size, padding
        self.weight = torch.nn.Parameter(torch.empty(channels, kernel_size, **factory))
        self.bias = torch.nn.Parameter(torch.empty(channels, **factory)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # nn.Conv1d's: kaiming_uniform_(a=sqrt(5)) over fan_in = K is uniform
        # in +-1/sqrt(K), and so is its bias.
        bound = 1.0 / math.sqrt(self.kernel_size)
        torch.nn.init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            torch.nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return conv1d(x, self.weight, self.bias, self.padding)

    @classmethod
    def from_conv1d(cls, conv: torch.nn.Conv1d) -> "DepthwiseConv1d":
        """The module that computes what ``conv`` does, with its parameters
        (copied), device and dtype: ``conv`` must be depthwise
        (``groups == in_channels == out_channels``), of stride and dilation
        1, zero padding, and a padding of ``"same"`` (or ``(K - 1) // 2``
        for an odd K) or ``"valid"`` (or 0). Causal convolutions written as
        ``nn.Conv1d(..., padding=K - 1)`` and a slice of the output have no
        such module; build ``DepthwiseConv1d(C, K, "causal")`` and load
        ``conv``'s state dict into it instead."""
        if not isinstance(conv, torch.nn.Conv1d):
            raise TypeError(f"DepthwiseConv1d.from_conv1d: expected an nn.Conv1d, got {type(conv).__name__}")
        c, k = conv.in_channels, conv.kernel_size[0]
        problems = []
        if not (conv.groups == c == conv.out_channels):
            problems.append(f"groups == in_channels == out_channels (got {conv.groups}, {c}, {conv.out_channels})")
        if conv.stride != (1,) or conv.dilation != (1,):
            problems.append(f"stride and dilation 1 (got {conv.stride[0]} and {conv.dilation[0]})")
        if conv.padding_mode != "zeros":
            problems.append(f"padding_mode 'zeros' (got {conv.padding_mode!r})")
        pad = conv.padding
        if pad == "valid" or pad == (0,):
            padding = "valid"
        elif pad == "same" or (pad == ((k - 1) // 2,) and k % 2 == 1):
            padding = "same"
        else:
            padding = None
            problems.append(f"a padding of 'same' or 'valid' (got {pad if isinstance(pad, str) else pad[0]} for "
                            f"{k} taps; for a causal convolution use DepthwiseConv1d({c}, {k}, 'causal') and "
                            "load the state dict)")
        if problems:
            raise ValueError("DepthwiseConv1d.from_conv1d: the convolution needs " + "; ".join(problems))
        module = cls(c, k, padding, bias=conv.bias is not None, device=conv.weight.device, dtype=conv.weight.dtype)
        module.load_state_dict(conv.state_dict())
        return module

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # nn.Conv1d's depthwise weight is [C, 1, K]: the same masks.
        key = prefix + "weight"
        w = state_dict.get(key)
        if isinstance(w, torch.Tensor) and w.dim() == 3 and w.shape[1] == 1 and w.shape[0] == self.channels:
            state_dict[key] = w.squeeze(1)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def extra_repr(self) -> str:
        return (f"{self.channels}, kernel_size={self.kernel_size}, padding={self.padding!r}, "
                f"bias={self.bias is not None}")
