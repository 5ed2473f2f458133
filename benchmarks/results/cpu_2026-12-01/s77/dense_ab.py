"""(session 77) One side of a CPU A/B over dense columns passes (2-D over dim 0, channels_last feature maps over
(0, 2, 3), [B, R, C] over (0, 1)), 2 threads, medians of AB_ROUNDS loops of >= AB_T s, a CRC. JSON lines."""
import json, os, random, time, statistics, zlib, torch
import reduce_op
torch.set_num_threads(2)
assert os.environ["AB_PKG"] in reduce_op.__file__, reduce_op.__file__
ROUNDS = int(os.environ.get("AB_ROUNDS", "3")); T = float(os.environ.get("AB_T", "0.04"))
g = torch.Generator().manual_seed(77); rng = random.Random(int(os.environ.get("AB_SEED", "77")))
cases = []
for i in range(int(os.environ.get("AB_N", "48"))):
    dt = rng.choice([torch.float32, torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.float16])
    nbytes = int(2 ** rng.uniform(17, 24))
    kind = rng.choice(["2d", "2d", "cl", "3d"])
    C = rng.choice([64, 96, 128, 192, 256, 320, 384, 448, 512, 640, 768, 1024, 1536, 2048, rng.randint(40, 3000)])
    rows = max(8, nbytes // (C * dt.itemsize))
    mk = lambda shape: (torch.randn(*shape, generator=g) * 10).to(dt)
    if kind == "2d":
        x = mk((rows, C)); dims = (0,)
    elif kind == "cl":
        hw = rng.choice([1, 2, 4, 7, 8, 14, 16]); n = max(1, rows // (hw * hw))
        x = mk((n, C, hw, hw)).contiguous(memory_format=torch.channels_last); dims = (0, 2, 3)
    else:
        b = rng.randint(2, 16); x = mk((b, max(1, rows // b), C)); dims = (0, 1)
    op = "sum" if dt != torch.int64 else rng.choice(["sum", "amax"])
    cases.append((f"{op} {str(dt)[6:]} {list(x.shape)} {kind} dims {dims}", op, x, dims))
def timed(f):
    f(); n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n): f()
        dt = time.perf_counter() - t0
        if dt >= T: return dt / n
        n *= 2
for name, op, x, dims in cases:
    ours = lambda: getattr(reduce_op, op)(x, dims); theirs = lambda: getattr(torch, op)(x, dims)
    res = ours(); ref = theirs()
    ok = torch.equal(res, ref) if not res.is_floating_point() else torch.allclose(res.double(), ref.double(), rtol=1e-2, atol=1e-1)
    to, tt = [], []
    for _ in range(ROUNDS):
        to.append(timed(ours)); tt.append(timed(theirs))
    print(json.dumps({"case": name, "bytes": x.numel() * x.element_size(), "ours_us": statistics.median(to) * 1e6, "torch_us": statistics.median(tt) * 1e6,
                      "crc": zlib.crc32(res.reshape(-1).contiguous().view(torch.uint8).numpy().tobytes()), "ok": ok}), flush=True)
