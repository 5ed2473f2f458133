"""The benchmark harness runs end to end (--quick, CPU) and writes results
that passed their correctness checks."""
import json
import os
import subprocess
import sys

import pytest

# Eight interpreters, each importing torch, at once: about 20 s of the 2-core machine.
pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Each benchmark's quick run: its script and arguments. They run as one
# batch, at once (`runs`): each is mostly its interpreter's start and
# torch's import, and one after another they took 18 of the suite's 110 s
# on the 2-core machine.
RUNS = {
    "bench": ["bench.py", "--quick"],
    "random_sum": ["random_bench.py", "--quick", "--op", "sum"],
    "random_mean": ["random_bench.py", "--quick", "--op", "mean"],
    "random_prod": ["random_bench.py", "--quick", "--op", "prod"],
    "overhead": ["overhead_bench.py", "--devices", "cpu", "--numel", "10", "--calls", "50", "--repeats", "2"],
    "cpu": ["cpu_bench.py", "--n", "6", "--seed", "3", "--max-elements", "20000", "--min-run-time", "0.006"],
    "conv1d": ["conv1d_bench.py", "--quick", "--replays", "2"],
    "fsum": ["fsum_bench.py", "--quick", "--replays", "2"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """name -> (its output folder, its exit status and output), all started together."""
    started = {}
    for name, (script, *args) in RUNS.items():
        out = tmp_path_factory.mktemp(name)
        started[name] = (out, subprocess.Popen([sys.executable, os.path.join(ROOT, "benchmarks", script), *args,
                                                "--out-dir", str(out)], stdout=subprocess.PIPE,
                                               stderr=subprocess.STDOUT, text=True))
    done = {}
    for name, (out, proc) in started.items():
        output, _ = proc.communicate(timeout=600)
        done[name] = (out, proc.returncode, output)
    return done


def finished(runs, name):
    out, code, output = runs[name]
    assert code == 0, output
    return out


def test_bench_quick(runs):
    tmp_path = finished(runs, "bench")
    files = os.listdir(tmp_path)
    js = [f for f in files if f.endswith(".json")]
    assert js and any(f.endswith(".csv") for f in files) and any(f.endswith(".md") for f in files)
    data = json.load(open(tmp_path / js[0]))
    assert data["meta"]["torch"] == __import__("torch").__version__
    assert data["cases"] and all(c["correct"] for c in data["cases"])
    for c in data["cases"]:
        for k in ("name", "dtype", "shape", "dims", "gpureduce_us", "torch_us", "gpureduce_gbps",
                  "torch_gbps", "speedup", "roof_fraction"):
            assert k in c
        assert c["gpureduce_us"] > 0 and c["speedup"] > 0


@pytest.mark.parametrize("op", ["sum", "mean", "prod"])
def test_random_bench_quick(op, runs):
    tmp_path = finished(runs, f"random_{op}")
    prefix = "random_cpu" if op == "sum" else f"random_{op}_cpu"
    data = json.load(open(tmp_path / f"{prefix}.json"))
    assert data["all"]["cases"] == 20 and data["all"]["all_correct"]
    assert os.path.exists(tmp_path / f"{prefix}.png") and os.path.exists(tmp_path / f"{prefix}_seed0.json")
    seed = json.load(open(tmp_path / f"{prefix}_seed0.json"))
    assert all(c["correct"] and c["speedup"] > 0 for c in seed["cases"])


def test_overhead_bench_quick(runs):
    # Every call form, the drop-in modes' and the family's included, timed on both sides.
    tmp_path = finished(runs, "overhead")
    [name] = [f for f in os.listdir(tmp_path) if f.startswith("overhead_") and f.endswith(".json")]
    data = json.load(open(tmp_path / name))
    forms = [row["form"] for row in data["rows"]]
    # sum's 13 forms and the family's 17 (a full and a dim form of eight ops, and logsumexp's)
    assert len(forms) == 30 and len(set(forms)) == 30
    assert sum(bool(row.get("family")) for row in data["rows"]) == 17
    assert {"geomean_ratio_family", "max_ratio_family"} <= set(data["summary"])
    assert sum(f.startswith("patch: ") for f in forms) == 3 and sum(f.startswith("replace_torch_sum: ") for f in forms) == 3
    for row in data["rows"]:
        assert row["gpureduce_us"] > 0 and row["torch_us"] > 0
        assert abs(row["ratio"] - row["gpureduce_us"] / row["torch_us"]) < 1e-9


def test_cpu_bench_quick(runs):
    # A few small cases, every one checked against torch.sum and timed on both sides.
    tmp_path = finished(runs, "cpu")
    [name] = [f for f in os.listdir(tmp_path) if f.startswith("cpu_") and f.endswith(".json")]
    data = json.load(open(tmp_path / name))
    assert data["summary"]["all_correct"] and data["summary"]["cases"] == len(data["cases"]) >= 3
    for c in data["cases"]:
        assert c["gpureduce_us"] > 0 and c["torch_us"] > 0 and abs(c["ratio"] - c["gpureduce_us"] / c["torch_us"]) < 1e-9
        # The median of its sweeps' ratios, one a sweep.
        sweeps = sorted(c["sweep_ratios"])
        assert len(sweeps) == data["meta"]["sweeps"] == 3 and c["ratio"] == sweeps[(len(sweeps) - 1) // 2]


def test_conv1d_bench_quick(runs):
    # Every path it times (here the CPU kernel and F.conv1d) checked
    # against F.conv1d in float64, and the table written.
    tmp_path = finished(runs, "conv1d")
    data = json.load(open(next(tmp_path / f for f in os.listdir(tmp_path) if f.endswith(".json"))))
    paths = {r["path"] for r in data["rows"]}
    assert {"gpureduce", "F.conv1d"} <= paths
    assert all(r["correct"] is not False for r in data["rows"]) and all(r["us"] > 0 for r in data["rows"])
    assert {r["group"] for r in data["rows"]} == {"depthwise", "one channel", "book", "backward"}
    assert any(f.endswith(".md") for f in os.listdir(tmp_path))


def test_fsum_bench_quick(runs):
    # Every case's fsum checked bit for bit against the CPU kernel and sum
    # against float64 before it is timed; a wrong one makes the run fail.
    tmp_path = finished(runs, "fsum")
    data = json.load(open(next(tmp_path / f for f in os.listdir(tmp_path) if f.endswith(".json"))))
    assert {r["dtype"] for r in data["rows"]} == {"float32", "float64", "bfloat16", "float16"}
    assert all(r["fsum_bit_exact"] and r["sum_ok"] for r in data["rows"])
    assert all(r["fsum_us"] > 0 and r["gpureduce.sum_us"] > 0 and r["torch.sum_us"] > 0 for r in data["rows"])
    assert any(f.endswith(".md") for f in os.listdir(tmp_path))


def test_conv1d_bench_check_float16_subnormals():
    # conv1d_bench's float64 check, relative to sum |x| |w|: a float16
    # output that rounds to a subnormal (3e-4 * 3e-4 = 9.0e-8, stored as
    # 1.19e-7, 32% off) is right to within half the subnormal step and must
    # pass; an answer twice as large, or a float32 one 1e-4 off, must not.
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import torch
    from conv1d_bench import check

    x = torch.tensor([3e-4, 1.0], dtype=torch.float16)
    w = torch.tensor([3e-4], dtype=torch.float16)
    got = (x.float() * w.float()).half()
    assert got[0].item() != (x[0].double() * w[0].double()).item()
    assert check(got, x, w, "same")
    assert not check(got * 2, x, w, "same")
    x32, w32 = torch.tensor([1.0, 2.0]), torch.tensor([1.0])
    assert check(x32.clone(), x32, w32, "same")
    assert not check(x32 + torch.tensor([0.0, 2e-4]), x32, w32, "same")
