"""gpureduce::conv1d on the CPU: every padding, mask form, dtype and shape
against F.conv1d in float64 (and F.conv1d's own "same" and "valid"), the
edges (L = 0, L < K, K = 1, empty batches, non-contiguous inputs), errors of
torch's kind for bad arguments, gradients (gradcheck, gradgradcheck, and
against F.conv1d's), bitwise repeatability over thread counts, opcheck,
torch.compile, and the DepthwiseConv1d module against nn.Conv1d."""
import pytest
import torch
import torch.nn.functional as F
from torch.library import opcheck

import reduce_op

PADDINGS = ["same", "causal", "valid"]
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
TOL = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def _left_and_length(padding, L, K):
    return {"same": ((K - 1) // 2, L), "causal": (K - 1, L), "valid": (0, L - K + 1)}[padding]


def _reference(x, w, b, padding):
    """The correlation in float64 through F.conv1d, with the padding done
    by hand (zeros left, and right up to the output's last window)."""
    L, K = x.shape[-1], w.shape[-1]
    left, out_len = _left_and_length(padding, L, K)
    xd = x.double()
    xp = F.pad(xd, (left, out_len + K - 1 - left - L))
    if w.dim() == 2:  # a mask per channel: [B, C, L]
        C = w.shape[0]
        return F.conv1d(xp, w.double().unsqueeze(1), None if b is None else b.double(), groups=C)
    rows = xp.reshape(-1, 1, xp.shape[-1])
    out = F.conv1d(rows, w.double().view(1, 1, K), None if b is None else b.double().reshape(1))
    return out.reshape(*x.shape[:-1], out_len)


def _check(x, w, b, padding):
    got = reduce_op.conv1d(x, w, b, padding)
    ref = _reference(x, w, b, padding)
    assert got.dtype == x.dtype and got.shape == ref.shape, (got.shape, ref.shape)
    # Relative to the size of the terms: the sum of |x| |w| over each window.
    scale = _reference(x.abs(), w.abs(), None if b is None else b.abs(), padding) + 1e-30
    err = ((got.double() - ref).abs() / scale).max().item() if ref.numel() else 0.0
    assert err <= TOL[x.dtype], (err, x.shape, w.shape, padding)
    return got


def _randn(shape, dtype, gen):
    return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("padding", PADDINGS)
def test_conv1d_matches_reference(dtype, padding, gen):
    # Rows of several chunks (the CPU kernel's tasks are 4096 outputs of a
    # row) too.
    for L, K in ((1, 1), (2, 2), (5, 3), (7, 4), (8, 8), (9, 2), (37, 7), (300, 31), (1000, 5), (33, 33),
                 (4097, 6), (9000, 31)):
        if padding == "valid" and L < K:
            continue
        for x_shape, w_shape in (((L,), (K,)), ((3, L), (K,)), ((2, 3, L), (K,)), ((2, 5, L), (5, K))):
            x, w = _randn(x_shape, dtype, gen), _randn(w_shape, dtype, gen)
            bias_shape = (w_shape[0],) if len(w_shape) == 2 else (1,)
            _check(x, w, None, padding)
            _check(x, w, _randn(bias_shape, dtype, gen), padding)


@pytest.mark.parametrize("K", [1, 2, 3, 4, 7, 8])
def test_conv1d_same_and_valid_are_f_conv1d(K, gen):
    # torch's own "same" (left (K - 1) // 2, the rest right, for even K
    # too) and "valid", depthwise.
    x, w, b = _randn((2, 4, 29), torch.float64, gen), _randn((4, K), torch.float64, gen), _randn((4,), torch.float64, gen)
    for padding in ("same", "valid"):
        want = F.conv1d(x, w.unsqueeze(1), b, padding=padding, groups=4)
        torch.testing.assert_close(reduce_op.conv1d(x, w, b, padding), want, rtol=1e-12, atol=1e-12)


def test_conv1d_edges(gen):
    w, w3 = _randn((3,), torch.float32, gen), _randn((4, 3), torch.float32, gen)
    # Empty inputs: no elements, no rows, no channels.
    for padding in ("same", "causal"):
        assert reduce_op.conv1d(torch.empty(0), w, None, padding).shape == (0,)
        assert reduce_op.conv1d(torch.empty(2, 0), w, None, padding).shape == (2, 0)
        assert reduce_op.conv1d(torch.empty(0, 4, 9), w3, None, padding).shape == (0, 4, 9)
        assert reduce_op.conv1d(torch.empty(2, 0, 9), w, None, padding).shape == (2, 0, 9)
    # Inputs shorter than the mask: "same" and "causal" keep L, zeros around.
    for L in (1, 2):
        _check(_randn((2, 4, L), torch.float32, gen), _randn((4, 5), torch.float32, gen), None, "same")
        _check(_randn((L,), torch.float32, gen), _randn((5,), torch.float32, gen), None, "causal")
    # K = 1: a scale and a shift.
    x = _randn((3, 50), torch.float64, gen)
    torch.testing.assert_close(reduce_op.conv1d(x, torch.tensor([2.5], dtype=torch.float64),
                                                torch.tensor([1.0], dtype=torch.float64)), 2.5 * x + 1.0)
    # Non-contiguous inputs and weights: transposed, sliced, stepped.
    base = _randn((9, 2, 40), torch.float32, gen)
    wc = _randn((3, 9), torch.float32, gen).t()  # [9, 3], not contiguous
    for view in (base.transpose(0, 1), base[:, :, 3:35].transpose(0, 1), base[..., ::2].transpose(0, 1)):
        assert not view.is_contiguous()
        for padding in PADDINGS:
            _check(view, wc, _randn((9,), torch.float32, gen), padding)
    # The mask's longest.
    _check(_randn((2, 1500), torch.float32, gen), _randn((1024,), torch.float32, gen), None, "same")


def test_conv1d_errors(gen):
    x, w = _randn((2, 4, 20), torch.float32, gen), _randn((4, 3), torch.float32, gen)
    cases = [
        ((x, w.unsqueeze(1)), "weight of shape \\[K\\]"),
        ((x, _randn((5, 3), torch.float32, gen)), "5 masks but the input has 4 channels"),
        ((x[0], w), "needs an input of shape \\[B, C, L\\]"),
        ((x, torch.empty(4, 0)), "at least one tap"),
        ((x, torch.empty(1025)), "at most 1024 taps"),
        ((x.unsqueeze(0), w), "\\[L\\], \\[B, L\\] or \\[B, C, L\\]"),
        ((x, w, None, "full"), "invalid padding string 'full'"),
        ((x, w.double()), "must have the same dtype"),
        ((x, w, torch.zeros(4, dtype=torch.float64)), "must have the same dtype"),
        ((x, w, torch.zeros(3)), "expected a bias of 4 elements"),
        ((x, w, torch.zeros(4, 1)), "bias of shape \\[C\\]"),
        ((x[0, 0], torch.ones(3), torch.zeros(2)), "bias of one element"),
        ((x.long(), w.long()), "not implemented for 'Long'"),
        ((x[..., :2], w, None, "valid"), "at least as long as the mask"),
        ((x, w.to("meta")), "same device"),
    ]
    for args, message in cases:
        with pytest.raises(RuntimeError, match=message):
            reduce_op.conv1d(*args)
    with pytest.raises(RuntimeError, match="left must be in"):
        torch.ops.gpureduce._conv1d_padded(x, w, None, 3, 20)
    with pytest.raises(RuntimeError, match="output length must be >= 0"):
        torch.ops.gpureduce._conv1d_padded(x, w, None, 1, -1)


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("per_channel", [False, True], ids=["one_mask", "per_channel"])
def test_conv1d_gradcheck(padding, per_channel, gen):
    x = _randn((2, 3, 11), torch.float64, gen).requires_grad_()
    w = _randn((3, 4) if per_channel else (4,), torch.float64, gen).requires_grad_()
    b = _randn((3,) if per_channel else (1,), torch.float64, gen).requires_grad_()
    f = lambda x, w, b: reduce_op.conv1d(x, w, b, padding)  # noqa: E731
    assert torch.autograd.gradcheck(f, (x, w, b))
    assert torch.autograd.gradgradcheck(f, (x, w, b))
    assert torch.autograd.gradcheck(lambda x, w: reduce_op.conv1d(x, w, None, padding), (x, w))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_conv1d_gradients_match_f_conv1d(dtype, gen):
    C, K = 6, 4
    x = _randn((3, C, 57), dtype, gen).requires_grad_()
    w = _randn((C, K), dtype, gen).requires_grad_()
    b = _randn((C,), dtype, gen).requires_grad_()
    g = _randn((3, C, 57), dtype, gen)
    ours = torch.autograd.grad(reduce_op.conv1d(x, w, b, "same"), (x, w, b), g)
    xd, wd, bd = (t.detach().double().requires_grad_() for t in (x, w, b))
    theirs = torch.autograd.grad(F.conv1d(xd, wd.unsqueeze(1), bd, padding="same", groups=C), (xd, wd, bd), g.double())
    tol = 1e-4 if dtype == torch.float32 else 3e-2
    for o, t in zip(ours, theirs):
        assert o.dtype == dtype
        torch.testing.assert_close(o.double(), t, rtol=tol, atol=tol * t.abs().max().item())


@pytest.mark.parametrize("K", [9, 19, 1024])
def test_conv1d_long_mask_gradients(K, gen):
    # The mask's gradient goes 8 taps at a time: several groups, a ragged
    # last one, and the longest mask; against F.conv1d's in float64.
    for per_channel, x_shape in ((True, (2, 3, 1500)), (False, (3, 1100))):
        x = _randn(x_shape, torch.float64, gen).requires_grad_()
        w = _randn((3, K) if per_channel else (K,), torch.float64, gen).requires_grad_()
        g = _randn(x_shape, torch.float64, gen)
        ours = torch.autograd.grad(reduce_op.conv1d(x, w, None, "causal"), (x, w), g)
        if per_channel:
            y = F.conv1d(F.pad(x, (K - 1, 0)), w.unsqueeze(1), groups=3)
        else:
            y = F.conv1d(F.pad(x.unsqueeze(1), (K - 1, 0)), w.view(1, 1, K)).squeeze(1)
        theirs = torch.autograd.grad(y, (x, w), g)
        for o, t in zip(ours, theirs):
            torch.testing.assert_close(o, t, rtol=1e-10, atol=1e-10)


def test_conv1d_bitwise_over_threads(gen):
    # Many rows, and one row of many chunks: the same bits on 1 thread and on several.
    for x, w, b in ((_randn((8, 16, 3000), torch.float32, gen), _randn((16, 7), torch.float32, gen),
                     _randn((16,), torch.float32, gen)),
                    (_randn((100003,), torch.float32, gen), _randn((13,), torch.float32, gen), None)):
        threads = torch.get_num_threads()
        try:
            torch.set_num_threads(1)
            one = reduce_op.conv1d(x, w, b, "causal")
            torch.set_num_threads(max(2, threads))
            many = reduce_op.conv1d(x, w, b, "causal")
        finally:
            torch.set_num_threads(threads)
        assert torch.equal(one, many)
        assert torch.equal(one, reduce_op.conv1d(x, w, b, "causal"))


@pytest.mark.slow
def test_conv1d_opcheck(gen):
    x, w, b = _randn((2, 3, 13), torch.float32, gen), _randn((3, 5), torch.float32, gen), _randn((3,), torch.float32, gen)
    for padding in PADDINGS:
        opcheck(torch.ops.gpureduce.conv1d.default, (x, w, b, padding))
    opcheck(torch.ops.gpureduce.conv1d.default, (x[0, 0], w[0], None, "same"))
    opcheck(torch.ops.gpureduce._conv1d_padded.default, (x, w, b, 4, 20))
    opcheck(torch.ops.gpureduce._conv1d_padded.default, (x.double(), w.double(), None, 0, 5))


@pytest.mark.slow
@pytest.mark.parametrize("padding", ["causal", "valid"])
@pytest.mark.parametrize("dynamic", [False, True])
def test_conv1d_compiles(dynamic, padding, gen):
    # "valid": an output length L - K + 1 of a dynamic L.
    w = _randn((4, 3), torch.float32, gen).requires_grad_()

    def f(x):
        return reduce_op.conv1d(x, w, None, padding).relu() * 2

    compiled = torch.compile(f, fullgraph=True, dynamic=dynamic)
    for L in (17, 40):
        x = _randn((2, 4, L), torch.float32, gen).requires_grad_()
        got, want = compiled(x), f(x)
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(torch.autograd.grad(got.sum(), (x, w)), torch.autograd.grad(want.sum(), (x, w)))


def test_depthwise_module_matches_nn_conv1d(gen):
    for padding, pad in (("same", "same"), ("valid", 0)):
        ours = reduce_op.DepthwiseConv1d(6, 5, padding=padding, dtype=torch.float64)
        theirs = torch.nn.Conv1d(6, 6, 5, groups=6, padding=pad, dtype=torch.float64)
        with torch.no_grad():
            theirs.weight.copy_(ours.weight.unsqueeze(1))
            theirs.bias.copy_(ours.bias)
        x = _randn((3, 6, 40), torch.float64, gen)
        torch.testing.assert_close(ours(x), theirs(x))
    m = reduce_op.DepthwiseConv1d(4, 9, padding="causal", bias=False)
    assert m.bias is None and m.weight.shape == (4, 9)
    assert m.weight.abs().max().item() <= 1 / 3 + 1e-6  # nn.Conv1d's bound, 1 / sqrt(K)
    assert "padding='causal'" in repr(m)
    with pytest.raises(ValueError, match="padding must be one of"):
        reduce_op.DepthwiseConv1d(4, 3, padding="full")
