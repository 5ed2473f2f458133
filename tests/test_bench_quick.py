"""The benchmark harness runs end to end (--quick, CPU) and writes results
that passed their correctness checks."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_bench_quick(tmp_path):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench.py"), "--quick",
                        "--out-dir", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
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


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_random_bench_quick(op, tmp_path):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "random_bench.py"), "--quick", "--op", op,
                        "--out-dir", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    prefix = "random_cpu" if op == "sum" else f"random_{op}_cpu"
    data = json.load(open(tmp_path / f"{prefix}.json"))
    assert data["all"]["cases"] == 20 and data["all"]["all_correct"]
    assert os.path.exists(tmp_path / f"{prefix}.png") and os.path.exists(tmp_path / f"{prefix}_seed0.json")
    seed = json.load(open(tmp_path / f"{prefix}_seed0.json"))
    assert all(c["correct"] and c["speedup"] > 0 for c in seed["cases"])


def test_overhead_bench_quick(tmp_path):
    # Every call form, the drop-in modes' and the family's included, timed on both sides.
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "overhead_bench.py"), "--devices", "cpu",
                        "--numel", "10", "--calls", "50", "--repeats", "2", "--out-dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
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


def test_cpu_bench_quick(tmp_path):
    # A few small cases, every one checked against torch.sum and timed on both sides.
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "cpu_bench.py"), "--n", "6", "--seed", "3",
                        "--max-elements", "20000", "--min-run-time", "0.006", "--out-dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    [name] = [f for f in os.listdir(tmp_path) if f.startswith("cpu_") and f.endswith(".json")]
    data = json.load(open(tmp_path / name))
    assert data["summary"]["all_correct"] and data["summary"]["cases"] == len(data["cases"]) >= 3
    for c in data["cases"]:
        assert c["gpureduce_us"] > 0 and c["torch_us"] > 0 and abs(c["ratio"] - c["gpureduce_us"] / c["torch_us"]) < 1e-9
