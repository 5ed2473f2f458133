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

from axes import DEVICES

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


def _check(x, w, b, padding, device="cpu"):
    """conv1d of x, w, b (CPU tensors) on `device` against the float64
    reference."""
    on = lambda t: None if t is None else t.to(device)  # noqa: E731
    got = reduce_op.conv1d(on(x), on(w), on(b), padding).cpu()
    ref = _reference(x, w, b, padding)
    assert got.dtype == x.dtype and got.shape == ref.shape, (got.shape, ref.shape)
    # Relative to the size of the terms: the sum of |x| |w| over each window.
    scale = _reference(x.abs(), w.abs(), None if b is None else b.abs(), padding) + 1e-30
    err = ((got.double() - ref).abs() / scale).max().item() if ref.numel() else 0.0
    assert err <= TOL[x.dtype], (err, x.shape, w.shape, padding)
    return got


def _randn(shape, dtype, gen):
    return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("padding", PADDINGS)
def test_conv1d_matches_reference(device, dtype, padding, gen):
    # Rows of several chunks (the CPU kernel's tasks are 4096 outputs of a
    # row) too.
    for L, K in ((1, 1), (2, 2), (5, 3), (7, 4), (8, 8), (9, 2), (37, 7), (300, 31), (1000, 5), (33, 33),
                 (4097, 6), (9000, 31)):
        if padding == "valid" and L < K:
            continue
        for x_shape, w_shape in (((L,), (K,)), ((3, L), (K,)), ((2, 3, L), (K,)), ((2, 5, L), (5, K))):
            x, w = _randn(x_shape, dtype, gen), _randn(w_shape, dtype, gen)
            bias_shape = (w_shape[0],) if len(w_shape) == 2 else (1,)
            _check(x, w, None, padding, device)
            _check(x, w, _randn(bias_shape, dtype, gen), padding, device)
    # Rows longer than a tile (2048 or 4096 outputs on the GPU), and tiles'
    # edges, on 16-byte boundaries (4104: the staged tile-ahead kernel) or not.
    for L in (2047, 2048, 2049, 4100, 4104):
        for K in (1, 4, 31):
            _check(_randn((2, 3, L), dtype, gen), _randn((3, K), dtype, gen), _randn((3,), dtype, gen), padding, device)


@pytest.mark.parametrize("device", DEVICES)
def test_conv1d_many_tiles(device, gen):
    # More tiles than the GPU holds blocks at once, so that a block goes on
    # to further tiles (copying the next ones in while it computes one),
    # with rows on and off 16-byte boundaries (4104 and 8192 on them, for
    # every dtype), and a halo wider than a block's threads (K = 300).
    for dtype in (torch.float32, torch.bfloat16):
        for L, K, padding in ((4100, 4, "causal"), (4099, 7, "same"), (4104, 5, "causal"), (8192, 31, "same"),
                              (4096, 300, "same"), (3001, 300, "valid")):
            _check(_randn((8, 64, L), dtype, gen), _randn((64, K), dtype, gen), _randn((64,), dtype, gen), padding,
                   device)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the CUDA stream kernel's runs of several chunks")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_conv1d_short_masks_cuda_runs(dtype, gen):
    # Masks of up to 8 taps over 2-byte rows on 16-byte boundaries go to the
    # stream kernel, a kernel for each left padding (0 to 7). With more
    # chunks (512 outputs of a row) than the GPU holds warps, a warp's run of
    # chunks starts inside a row and crosses into the next; 2056 is a whole
    # number of 16-byte vectors but not of chunks. ("valid" rows of 2057 - K
    # outputs, off 16-byte boundaries but for K = 1, go to the tile-ahead
    # kernel instead.)
    x = _randn((4, 512, 2056), dtype, gen)
    for K in range(1, 9):
        w, b = _randn((512, K), dtype, gen), _randn((512,), dtype, gen)
        for padding in PADDINGS if K in (2, 5, 8) else ["causal"]:
            _check(x, w, b, padding, "cuda")
    # Outputs past the input's end (as in the input's gradient of a "valid"
    # conv), for every left padding of K = 8: the right halo past the last
    # chunk is read from memory, zeros past the row.
    w = _randn((512, 8), dtype, gen)
    out_len = 2064
    for left in range(8):
        got = torch.ops.gpureduce._conv1d_padded(x.cuda(), w.cuda(), None, left, out_len).cpu()
        pad = (left, out_len + 7 - left - 2056)
        ref = F.conv1d(F.pad(x.double(), pad), w.double().unsqueeze(1), groups=512)
        scale = F.conv1d(F.pad(x.double().abs(), pad), w.double().abs().unsqueeze(1), groups=512) + 1e-30
        assert ((got.double() - ref).abs() / scale).max().item() <= TOL[dtype], left


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the CUDA tile-ahead kernel's staged tiles")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_conv1d_staged_tiles_cuda(dtype, gen):
    # "valid" output rows off 16-byte boundaries, from input rows on them
    # (8200 elements): the tile-ahead kernel stages a tile whose first output
    # is off one through shared memory and stores it from its first 16-byte
    # boundary, the elements before it and after the last one singly. For K
    # = 2, 8 and 16 (odd output lengths) the 15 rows start at every offset a
    # dtype allows (K = 31's 8170 outputs start 2-byte rows every 4 bytes);
    # K = 2 and 8 leave a last tile of 7 and 1 outputs (tiles of 2048, 4096
    # for 2-byte types), fewer than the elements before a boundary in some
    # rows. K = 5 keeps float32's and float64's rows on boundaries: tiles
    # stored directly, in the same run.
    x = _randn((3, 5, 8200), dtype, gen)
    for K in (2, 5, 8, 16, 31):
        w, b = _randn((5, K), dtype, gen), _randn((5,), dtype, gen)
        _check(x, w, b, "valid", "cuda")
        _check(x[0, 0], w[0], b[:1], "valid", "cuda")  # one row: its start on a boundary


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the CUDA cp.async tile kernel")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_conv1d_input_rows_off_16_bytes_cuda(dtype, gen):
    # Input rows whose length is not a multiple of 16 bytes (and a row that
    # starts off a boundary) go to the cp.async tile kernel: rows of one
    # tile and a bit (2049), of several with a last tile of 1 and of 2047
    # inputs, masks from 1 to 31 taps, every padding, with and without bias,
    # rows in runs of tiles across row ends (9 rows), against float64.
    for L in (2049, 3 * 2048 + 1, 4 * 2048 - 1, 5):
        for K in (1, 2, 8, 9, 31):
            for padding in PADDINGS:
                if padding == "valid" and L < K:
                    continue
                x, w, b = _randn((3, 3, L), dtype, gen), _randn((3, K), dtype, gen), _randn((3,), dtype, gen)
                _check(x, w, b if K % 2 else None, padding, "cuda")
    # Bitwise the tile-ahead kernel's sums, which the same rows get on
    # 16-byte boundaries: a row that starts one element past one (a view
    # into a longer row) against its aligned copy, and causal outputs,
    # which depend on the inputs up to their own only, of rows of 6143
    # inputs against those of the same rows 6144 long.
    x, w = _randn((4 * 2048 + 1,), dtype, gen).cuda(), _randn((31,), dtype, gen).cuda()
    shifted = reduce_op.conv1d(x[1:], w, None, "same")
    assert torch.equal(shifted, reduce_op.conv1d(x[1:].clone(), w, None, "same"))
    x, w = _randn((2, 3, 6144), dtype, gen).cuda(), _randn((3, 15), dtype, gen).cuda()
    long_rows = reduce_op.conv1d(x, w, None, "causal")
    short_rows = reduce_op.conv1d(x[..., :6143].contiguous(), w, None, "causal")
    assert torch.equal(short_rows, long_rows[..., :6143])


@pytest.mark.parametrize("K", [1, 2, 3, 4, 7, 8])
def test_conv1d_same_and_valid_are_f_conv1d(K, gen):
    # torch's own "same" (left (K - 1) // 2, the rest right, for even K
    # too) and "valid", depthwise.
    x, w, b = _randn((2, 4, 29), torch.float64, gen), _randn((4, K), torch.float64, gen), _randn((4,), torch.float64, gen)
    for padding in ("same", "valid"):
        want = F.conv1d(x, w.unsqueeze(1), b, padding=padding, groups=4)
        torch.testing.assert_close(reduce_op.conv1d(x, w, b, padding), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_conv1d_edges(device, gen):
    w, w3 = _randn((3,), torch.float32, gen).to(device), _randn((4, 3), torch.float32, gen).to(device)
    # Empty inputs: no elements, no rows, no channels.
    for padding in ("same", "causal"):
        empty = lambda *shape: torch.empty(shape, device=device)  # noqa: E731
        assert reduce_op.conv1d(empty(0), w, None, padding).shape == (0,)
        assert reduce_op.conv1d(empty(2, 0), w, None, padding).shape == (2, 0)
        assert reduce_op.conv1d(empty(0, 4, 9), w3, None, padding).shape == (0, 4, 9)
        assert reduce_op.conv1d(empty(2, 0, 9), w, None, padding).shape == (2, 0, 9)
    # Inputs shorter than the mask: "same" and "causal" keep L, zeros around.
    for L in (1, 2):
        _check(_randn((2, 4, L), torch.float32, gen), _randn((4, 5), torch.float32, gen), None, "same", device)
        _check(_randn((L,), torch.float32, gen), _randn((5,), torch.float32, gen), None, "causal", device)
    # K = 1: a scale and a shift.
    x = _randn((3, 50), torch.float64, gen).to(device)
    torch.testing.assert_close(reduce_op.conv1d(x, torch.tensor([2.5], dtype=torch.float64, device=device),
                                                torch.tensor([1.0], dtype=torch.float64, device=device)), 2.5 * x + 1.0)
    # Non-contiguous inputs and weights on the device: transposed, sliced,
    # stepped.
    base = _randn((9, 2, 40), torch.float32, gen)
    wc = _randn((3, 9), torch.float32, gen)
    b = _randn((9,), torch.float32, gen)
    for view in (lambda t: t.transpose(0, 1), lambda t: t[:, :, 3:35].transpose(0, 1),
                 lambda t: t[..., ::2].transpose(0, 1)):
        x, xd = view(base), view(base.to(device))
        assert not xd.is_contiguous()
        for padding in PADDINGS:
            got = reduce_op.conv1d(xd, wc.to(device).t(), b.to(device), padding).cpu()
            torch.testing.assert_close(got.double(), _reference(x, wc.t(), b, padding), rtol=1e-5, atol=1e-5)
    # The mask's longest.
    _check(_randn((2, 1500), torch.float32, gen), _randn((1024,), torch.float32, gen), None, "same", device)


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
    # Arguments of the wrong type: TypeError, as F.conv1d raises (the
    # operator would read None as an empty tensor).
    for args, message in (((None, w), "'input' must be Tensor"), (([1.0], w), "'input' must be Tensor"),
                          ((x, None), "'weight' must be Tensor"), ((x, w, 1.5), "'bias' must be Tensor or None"),
                          ((x, w, None, 1), "'padding' must be str")):
        with pytest.raises(TypeError, match=message):
            reduce_op.conv1d(*args)
    with pytest.raises(RuntimeError, match="left must be in"):
        torch.ops.gpureduce._conv1d_padded(x, w, None, 3, 20)
    with pytest.raises(RuntimeError, match="output length must be >= 0"):
        torch.ops.gpureduce._conv1d_padded(x, w, None, 1, -1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("per_channel", [False, True], ids=["one_mask", "per_channel"])
def test_conv1d_gradcheck(device, padding, per_channel, gen):
    x = _randn((2, 3, 11), torch.float64, gen).to(device).requires_grad_()
    w = _randn((3, 4) if per_channel else (4,), torch.float64, gen).to(device).requires_grad_()
    b = _randn((3,) if per_channel else (1,), torch.float64, gen).to(device).requires_grad_()
    f = lambda x, w, b: reduce_op.conv1d(x, w, b, padding)  # noqa: E731
    assert torch.autograd.gradcheck(f, (x, w, b))
    assert torch.autograd.gradgradcheck(f, (x, w, b))
    assert torch.autograd.gradcheck(lambda x, w: reduce_op.conv1d(x, w, None, padding), (x, w))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_conv1d_gradients_match_f_conv1d(device, dtype, gen):
    C, K = 6, 4
    x = _randn((3, C, 57), dtype, gen).to(device).requires_grad_()
    w = _randn((C, K), dtype, gen).to(device).requires_grad_()
    b = _randn((C,), dtype, gen).to(device).requires_grad_()
    g = _randn((3, C, 57), dtype, gen).to(device)
    ours = [t.cpu() for t in torch.autograd.grad(reduce_op.conv1d(x, w, b, "same"), (x, w, b), g)]
    xd, wd, bd = (t.detach().cpu().double().requires_grad_() for t in (x, w, b))
    theirs = torch.autograd.grad(F.conv1d(xd, wd.unsqueeze(1), bd, padding="same", groups=C), (xd, wd, bd),
                                 g.cpu().double())
    tol = 1e-4 if dtype == torch.float32 else 3e-2
    for o, t in zip(ours, theirs):
        assert o.dtype == dtype
        torch.testing.assert_close(o.double(), t, rtol=tol, atol=tol * t.abs().max().item())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("K", [8, 9, 19, 33, 1024])
def test_conv1d_long_mask_gradients(device, K, gen):
    # Masks from short to the longest (both sides of 8 and 32 taps, and a
    # ragged last group of either), through the whole backward, against
    # F.conv1d's in float64.
    for per_channel, x_shape in ((True, (2, 3, 1500)), (False, (3, 1100))):
        x = _randn(x_shape, torch.float64, gen).requires_grad_()
        w = _randn((3, K) if per_channel else (K,), torch.float64, gen).requires_grad_()
        g = _randn(x_shape, torch.float64, gen)
        on = lambda t: t.detach().to(device).requires_grad_()  # noqa: E731
        xd, wd = on(x), on(w)
        ours = [t.cpu() for t in torch.autograd.grad(reduce_op.conv1d(xd, wd, None, "causal"), (xd, wd), g.to(device))]
        if per_channel:
            y = F.conv1d(F.pad(x, (K - 1, 0)), w.unsqueeze(1), groups=3)
        else:
            y = F.conv1d(F.pad(x.unsqueeze(1), (K - 1, 0)), w.view(1, 1, K)).squeeze(1)
        theirs = torch.autograd.grad(y, (x, w), g)
        for o, t in zip(ours, theirs):
            torch.testing.assert_close(o, t, rtol=1e-10, atol=1e-10)


def _weight_grad_reference(g, x, K, left, per_channel):
    """grad_w[c][j] = sum g[r][i] x[r][i - left + j] in float64, a tap at a time."""
    L, out_len = x.shape[-1], g.shape[-1]
    xp = F.pad(x.double(), (left, max(0, out_len + K - 1 - left - L)))
    taps = [g.double() * xp[..., j:j + out_len] for j in range(K)]
    return torch.stack([t.sum((0, 2)) if per_channel else t.sum() for t in taps], -1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_conv1d_weight_grad_random(device, dtype, gen):
    # The mask's gradient op alone over random shapes: lengths around the
    # CPU kernel's chunks of 4096 outputs and a GPU tile of 2048, short and
    # long masks, every padding, one mask and a mask per channel; against
    # float64, relative to the sum of the products' sizes.
    for trial in range(40):
        K = int(torch.randint(1, 41, (), generator=gen)) if trial % 8 else int(torch.randint(41, 300, (), generator=gen))
        L = [int(torch.randint(0, 40, (), generator=gen)), 2047, 2049, 4095, 4103,
             int(torch.randint(1, 9000, (), generator=gen))][trial % 6]
        per_channel = trial % 2 == 0
        shape = ((int(torch.randint(1, 4, (), generator=gen)), int(torch.randint(1, 6, (), generator=gen)), L)
                 if per_channel else [(L,), (3, L), (2, 3, L)][trial % 3])
        padding = PADDINGS[trial % 3] if L >= K else "same"
        left, out_len = _left_and_length(padding, L, K)
        x = _randn(shape, dtype, gen)
        g = _randn(shape[:-1] + (out_len,), dtype, gen)
        w = torch.empty((shape[1], K) if per_channel else (K,), dtype=dtype)
        got = torch.ops.gpureduce._conv1d_weight_grad(g.to(device), x.to(device), w.to(device), left).cpu()
        assert got.shape == w.shape and got.dtype == dtype
        want = _weight_grad_reference(g, x, K, left, per_channel)
        scale = _weight_grad_reference(g.abs(), x.abs(), K, left, per_channel) + 1e-30
        err = ((got.double() - want).abs() / scale).max().item() if want.numel() else 0.0
        # A 16-bit result rounds once to its type (2^-8 for bfloat16).
        tol = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 1e-3, torch.bfloat16: 8e-3}[dtype]
        assert err <= tol, (err, shape, K, padding)
        if device != "cpu":  # the same bits on every run
            again = torch.ops.gpureduce._conv1d_weight_grad(g.to(device), x.to(device), w.to(device), left).cpu()
            assert torch.equal(got, again), (shape, K, padding)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the CUDA kernel's runs of several tiles")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_conv1d_weight_grad_cuda_runs(dtype, gen):
    # Shapes large enough that a block of the CUDA kernel takes several
    # tiles of 2048 outputs, loading each next one during the arithmetic:
    # one mask over rows of 900,001 outputs (runs that cross ragged row
    # ends, a channel of many runs), 2100 channels of two tiles a row (one
    # run a channel, written directly), and one long row with 40 taps (the
    # 32-tap groups). Against float64 on the GPU.
    cases = [((5, 900_001), 3, False, "same"), ((2, 2100, 3000), 5, True, "causal"),
             (((1 << 22) + 3,), 40, False, "valid")]
    for shape, K, per_channel, padding in cases:
        L = shape[-1]
        left, out_len = _left_and_length(padding, L, K)
        x = _randn(shape, dtype, gen).cuda()
        g = _randn(shape[:-1] + (out_len,), dtype, gen).cuda()
        w = torch.empty((shape[1], K) if per_channel else (K,), dtype=dtype, device="cuda")
        got = torch.ops.gpureduce._conv1d_weight_grad(g, x, w, left)
        want = _weight_grad_reference(g, x, K, left, per_channel)
        scale = _weight_grad_reference(g.abs(), x.abs(), K, left, per_channel) + 1e-30
        err = ((got.double() - want).abs() / scale).max().item()
        assert err <= {torch.float32: 1e-5, torch.bfloat16: 8e-3}[dtype], (err, shape, K, padding)
        assert torch.equal(got, torch.ops.gpureduce._conv1d_weight_grad(g, x, w, left)), (shape, K)


def test_conv1d_weight_grad_errors(gen):
    x, w = _randn((2, 3, 10), torch.float32, gen), _randn((3, 4), torch.float32, gen)
    g = _randn((2, 3, 10), torch.float32, gen)
    op = torch.ops.gpureduce._conv1d_weight_grad
    with pytest.raises(RuntimeError, match="leading dims"):
        op(g[:1], x, w, 1)
    with pytest.raises(RuntimeError, match="same dtype"):
        op(g.double(), x, w, 1)
    with pytest.raises(RuntimeError, match="dims but the input has"):
        op(g[0], x, w, 1)
    with pytest.raises(RuntimeError, match="left must be in"):
        op(g, x, w, 4)
    with pytest.raises(RuntimeError, match="3 masks but the input has 2 channels"):
        op(g[:, :2], x[:, :2], w, 1)


def test_conv1d_bitwise_over_threads(gen):
    # Many rows, and one row of many chunks: the same bits on 1 thread and on
    # several, of the output and of the mask's gradient.
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
        # The mask's gradient: runs of chunks set by the shapes, not the threads.
        g = _randn(x.shape, torch.float32, gen)
        left = w.shape[-1] - 1
        try:
            torch.set_num_threads(1)
            one = torch.ops.gpureduce._conv1d_weight_grad(g, x, w, left)
            torch.set_num_threads(max(2, threads))
            many = torch.ops.gpureduce._conv1d_weight_grad(g, x, w, left)
        finally:
            torch.set_num_threads(threads)
        assert torch.equal(one, many)


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_conv1d_opcheck(device, gen):
    x, w, b = (_randn(s, torch.float32, gen).to(device) for s in ((2, 3, 13), (3, 5), (3,)))
    for padding in PADDINGS:
        opcheck(torch.ops.gpureduce.conv1d.default, (x, w, b, padding))
    opcheck(torch.ops.gpureduce.conv1d.default, (x[0, 0], w[0], None, "same"))
    opcheck(torch.ops.gpureduce._conv1d_padded.default, (x, w, b, 4, 20))
    opcheck(torch.ops.gpureduce._conv1d_padded.default, (x.double(), w.double(), None, 0, 5))
    opcheck(torch.ops.gpureduce._conv1d_weight_grad.default, (_randn((2, 3, 11), torch.float32, gen).to(device), x, w, 2))
    opcheck(torch.ops.gpureduce._conv1d_weight_grad.default, (x[0], x[0], w[0], 0))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("padding", ["causal", "valid"])
@pytest.mark.parametrize("dynamic", [False, True])
def test_conv1d_compiles(device, dynamic, padding, gen):
    # "valid": an output length L - K + 1 of a dynamic L. Each case's f
    # is a new closure of one code object: without the reset, the cases
    # before add up to dynamo's recompile limit (8; torch 2.11 then fails
    # a fullgraph compile).
    torch._dynamo.reset()
    w = _randn((4, 3), torch.float32, gen).to(device).requires_grad_()

    def f(x):
        return reduce_op.conv1d(x, w, None, padding).relu() * 2

    compiled = torch.compile(f, fullgraph=True, dynamic=dynamic)
    for L in (17, 40):
        x = _randn((2, 4, L), torch.float32, gen).to(device).requires_grad_()
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


def test_depthwise_module_takes_nn_conv1d_parameters(gen):
    # A model's nn.Conv1d(C, C, K, groups=C) swapped for the module: its
    # state dict (weight [C, 1, K]) loads, alone or inside a model, and
    # from_conv1d converts a module whose padding has a name here.
    x = _randn((2, 6, 33), torch.float64, gen)
    for k, pad, name in ((5, 2, "same"), (4, "same", "same"), (3, 0, "valid"), (7, "valid", "valid")):
        conv = torch.nn.Conv1d(6, 6, k, groups=6, padding=pad, bias=k != 3, dtype=torch.float64)
        module = reduce_op.DepthwiseConv1d.from_conv1d(conv)
        assert module.padding == name and (module.bias is None) == (conv.bias is None)
        assert module.weight.dtype == torch.float64 and module.weight.data_ptr() != conv.weight.data_ptr()
        torch.testing.assert_close(module(x), conv(x))
    # The causal idiom (padding K - 1, then the first L outputs): load its
    # state dict into a causal module.
    conv = torch.nn.Conv1d(6, 6, 4, groups=6, padding=3, dtype=torch.float64)
    with pytest.raises(ValueError, match="causal"):
        reduce_op.DepthwiseConv1d.from_conv1d(conv)
    model = torch.nn.Sequential(reduce_op.DepthwiseConv1d(6, 4, "causal", dtype=torch.float64))
    state = torch.nn.Sequential(conv).state_dict()
    model.load_state_dict(state)
    assert state["0.weight"].shape == (6, 1, 4)  # the caller's dict is left as it was
    torch.testing.assert_close(model(x), conv(x)[..., :33])
    for bad in (torch.nn.Conv1d(6, 12, 3, groups=6), torch.nn.Conv1d(6, 6, 3, groups=6, stride=2),
                torch.nn.Conv1d(6, 6, 3, groups=6, padding=1, padding_mode="circular")):
        with pytest.raises(ValueError, match="from_conv1d"):
            reduce_op.DepthwiseConv1d.from_conv1d(bad)
    with pytest.raises(RuntimeError, match="size mismatch"):
        reduce_op.DepthwiseConv1d(6, 3).load_state_dict(torch.nn.Conv1d(6, 6, 5, groups=6).state_dict())


@pytest.mark.parametrize("device", [d for d in DEVICES if d == "cuda"] or
                         [pytest.param("cuda", marks=pytest.mark.cuda)])
def test_conv1d_cuda_streams_and_graphs(device, gen):
    # The current stream (a side stream's result waits on nothing else),
    # bitwise repeatable, and captured in a CUDA graph, replayed on fresh
    # inputs copied into the captured buffer.
    x = _randn((4, 32, 5000), torch.float32, gen).to(device)
    w = _randn((32, 7), torch.float32, gen).to(device)
    b = _randn((32,), torch.float32, gen).to(device)
    want = reduce_op.conv1d(x, w, b, "causal")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        on_side = reduce_op.conv1d(x, w, b, "causal")
    torch.cuda.current_stream().wait_stream(side)
    assert torch.equal(on_side, want)
    graph = torch.cuda.CUDAGraph()
    static_x = x.clone()
    with torch.cuda.graph(graph):
        static_y = reduce_op.conv1d(static_x, w, b, "causal")
    fresh = _randn((4, 32, 5000), torch.float32, gen).to(device)
    static_x.copy_(fresh)
    graph.replay()
    assert torch.equal(static_y, reduce_op.conv1d(fresh, w, b, "causal"))
    _check(fresh.cpu(), w.cpu(), b.cpu(), "causal", device)


def test_conv1d_kernel_argument(gen):
    # The book's kernels are CUDA's; in a CPU-only build none is listed.
    from reduce_op import _build_info

    names = reduce_op.conv1d_kernels()
    assert names == (["basic", "constant", "tiled_halo", "tiled_l2"] if _build_info.WITH_CUDA else [])
    x, w = _randn((2, 3, 30), torch.float32, gen), _randn((3, 4), torch.float32, gen)
    with pytest.raises(ValueError, match="kernel must be None or one of"):
        reduce_op.conv1d(x, w, kernel="tiled")
    with pytest.raises(RuntimeError, match="one of the book's CUDA kernels; the input is on cpu"):
        reduce_op.conv1d(x, w, kernel="basic")


CUDA_ONLY = [d for d in DEVICES if d == "cuda"] or [pytest.param("cuda", marks=pytest.mark.cuda)]


@pytest.mark.parametrize("device", CUDA_ONLY)
@pytest.mark.parametrize("kernel", ["basic", "constant", "tiled_halo", "tiled_l2"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_conv1d_book_kernels(device, kernel, dtype, gen):
    # Any length (ragged last blocks of 256), odd and even masks, every
    # padding, one mask and a mask per channel, with and without bias, up
    # to the constant memory's 1024 taps.
    for L, K in ((1, 1), (5, 3), (255, 4), (256, 7), (257, 8), (1000, 31), (3000, 1024), (40, 64)):
        for padding in PADDINGS:
            if padding == "valid" and L < K:
                continue
            for x_shape, w_shape in (((L,), (K,)), ((2, 3, L), (K,)), ((2, 3, L), (3, K))):
                if w_shape[0] * w_shape[-1] > 1024 and len(w_shape) == 2 and kernel != "basic":
                    continue
                x, w = _randn(x_shape, dtype, gen), _randn(w_shape, dtype, gen)
                b = _randn((w_shape[0],) if len(w_shape) == 2 else (1,), dtype, gen)
                for bias in (None, b):
                    got = reduce_op.conv1d(x.to(device), w.to(device), None if bias is None else bias.to(device),
                                           padding, kernel=kernel).cpu()
                    want = reduce_op.conv1d(x, w, bias, padding)  # the CPU kernel, checked against F.conv1d above
                    scale = _reference(x.abs(), w.abs(), None if bias is None else bias.abs(), padding) + 1e-30
                    err = ((got.double() - want.double()).abs() / scale).max().item() if got.numel() else 0.0
                    assert got.shape == want.shape and err <= 2 * TOL[dtype], (kernel, x_shape, w_shape, padding, err)
    if kernel != "basic":  # the mask in constant memory: 3 x 400 taps do not fit
        with pytest.raises(RuntimeError, match="at most 1024 taps"):
            reduce_op.conv1d(torch.zeros(2, 3, 10, device=device), torch.zeros(3, 400, device=device), kernel=kernel)


@pytest.mark.parametrize("device", CUDA_ONLY)
def test_conv1d_constant_kernel_two_streams(device, gen):
    # The book's constant-memory kernel with two masks in flight on two
    # streams at once: each result is its own mask's (the taps travel with
    # their launch, not through one shared __constant__ array).
    x = _randn((64, 4096), torch.float32, gen).to(device)
    masks = [_randn((7,), torch.float32, gen).to(device) for _ in range(2)]
    want = [reduce_op.conv1d(x, m, None, "same") for m in masks]
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
    results = [[], []]
    for _ in range(20):
        for k in (0, 1):
            with torch.cuda.stream(streams[k]):
                results[k].append(reduce_op.conv1d(x, masks[k], None, "same", kernel="constant"))
    torch.cuda.synchronize()
    for k in (0, 1):
        for got in results[k]:
            torch.testing.assert_close(got, want[k], rtol=1e-5, atol=1e-5)
