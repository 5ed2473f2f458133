"""One side of a CPU A/B over strided passes (element stride 2 or 3): the build on PYTHONPATH against torch, 2 threads,
medians of AB_ROUNDS loops of >= AB_T s, a CRC of each result. JSON lines."""
import json, os, random, time, statistics, zlib, torch
import reduce_op
torch.set_num_threads(2)
assert os.environ["AB_PKG"] in reduce_op.__file__, reduce_op.__file__
ROUNDS = int(os.environ.get("AB_ROUNDS", "5")); T = float(os.environ.get("AB_T", "0.04"))
g = torch.Generator().manual_seed(76); rng = random.Random(int(os.environ.get("AB_SEED", "76")))
def mk(shape, dt):
    x = torch.randn(*shape, generator=g) * 50
    return x.to(dt)
cases = []
for i in range(int(os.environ.get("AB_N", "48"))):
    dt = rng.choice([torch.float32, torch.float64, torch.int64, torch.int32, torch.float32, torch.float64])
    op = rng.choice(["sum", "amax", "mean", "sum"] if dt.is_floating_point else ["sum", "amax"])
    k = rng.choice([2, 3])
    elems = int(2 ** rng.uniform(10, 21))
    kind = rng.choice(["cols", "cols", "cols3d"])
    if kind == "cols":
        n = int(2 ** rng.uniform(3, 11)); m = max(1, elems // n)
        x = mk((m, k * n), dt)[:, ::k]; dims = (0,)
    else:
        n = int(2 ** rng.uniform(3, 10)); b = rng.randint(2, 9); m = max(1, elems // (n * b))
        x = mk((b, m, k * n), dt)[..., ::k]; dims = (1,) if rng.random() < 0.5 else (0, 1)
    cases.append((f"{op} {str(dt)[6:]} {list(x.shape)} step {k} dims {dims}", op, x, dims))
if os.environ.get("AB_CASES") == "sweep":
    cases = []
    for dt in (torch.float32, torch.float64):
        for k in (2, 3):
            for mb in (0.5, 1, 2, 3, 4, 6, 8, 12, 16, 32):
                elems = int(mb * 2**20 / (k * dt.itemsize))
                n = rng.choice([37, 90, 263, 700, 2000]); m = max(2, elems // (k * n))
                if rng.random() < 0.7:
                    x = mk((m, k * n), dt)[:, ::k]; dims = (0,)
                else:
                    b = rng.randint(2, 9); x = mk((b, max(2, m // b), k * n), dt)[..., ::k]; dims = (0, 1) if rng.random() < 0.5 else (1,)
                op = rng.choice(["sum", "mean"])
                cases.append((f"{op} {str(dt)[6:]} {list(x.shape)} step {k} dims {dims}", op, x, dims))
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
    ok = torch.equal(res, ref) if not res.is_floating_point() else torch.allclose(res.double(), ref.double(), rtol=1e-4, atol=1e-2)
    to, tt = [], []
    for _ in range(ROUNDS):
        to.append(timed(ours)); tt.append(timed(theirs))
    print(json.dumps({"case": name, "bytes": x.numel() * x.element_size(), "ours_us": statistics.median(to) * 1e6, "torch_us": statistics.median(tt) * 1e6,
                      "crc": zlib.crc32(res.reshape(-1).contiguous().view(torch.uint8).numpy().tobytes()), "ok": ok}), flush=True)
