"""gpureduce's operators on DTensors: tests/sharded_workload.py under
torchrun on 2 processes, over gloo on the CPU (every machine) and over NCCL
on 2 GPUs (where there are 2). The workload checks every op on Shard(0),
Shard(1), Shard(2), Replicate and Partial inputs against torch on the whole
tensor, with uneven shards, keepdim, dtype=, backward, the sharding cache,
both combine modes, conv1d and the drop-in mode on a sharded model."""
import os
import socket
import subprocess
import sys
import warnings

import pytest
import torch

# Two interpreters and a launcher, each importing torch: about 7 s of the
# 2-core machine.
pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_workload(device, nproc=2):
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", OMP_NUM_THREADS="1", PYTHONPATH=ROOT)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
           "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{_free_port()}",
           os.path.join(ROOT, "tests", "sharded_workload.py"), "--device", device]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600, env=env)
    failures = sorted({line for line in proc.stdout.splitlines() if line.startswith("FAIL ")})
    summary = [line for line in proc.stdout.splitlines() if line.startswith("sharded cases:")]
    return proc.returncode, failures, summary, proc.stdout


# What a rank that dies prints: faulthandler's header (the workload enables
# it, so a SIGABRT or SIGSEGV shows the Python line it stopped at),
# libstdc++'s and glibc's abort messages, and torchrun's report of a signal.
_CRASH_MARKS = ("Fatal Python error", "terminate called", "free():", "corrupted", "double free",
                "Segmentation fault", "(SIGABRT)", "(SIGSEGV)", "(SIGBUS)")


def _killed_by_signal(output):
    return any(mark in output for mark in ("(SIGABRT)", "(SIGSEGV)", "(SIGBUS)"))


def _excerpt(output, head_lines=60, tail_lines=25):
    """The output from the first failure or crash message on (where a
    truncated tail would hide which rank died first, and where), and its
    tail."""
    lines = output.splitlines()
    first = next((i for i, line in enumerate(lines)
                  if line.startswith("FAIL ") or any(m in line for m in _CRASH_MARKS)), len(lines))
    head = lines[max(0, first - 3):first + head_lines]
    tail = lines[max(first + head_lines, len(lines) - tail_lines):]
    return "\n".join(head + (["[...]"] if tail else []) + tail)


def _check(device):
    code, failures, summary, output = _run_workload(device)
    if not summary and _killed_by_signal(output):
        # A rank killed by a signal before the end, which the other rank
        # then sees as lost connections. Twice under load on the 2-core CI
        # machine, a gloo process aborted (SIGABRT) where no case had failed
        # and which 36 local runs, 30 of them loaded, never reproduced
        # (benchmarks/NOTES.md, "The gloo abort"). One more run tells a
        # crash of ours, which recurs, from that; the first run's messages
        # stay in the test's warnings.
        first = _excerpt(output)
        code, failures, summary, output = _run_workload(device)
        assert summary, (f"the workload died twice; first run:\n{first}\n\nsecond run:\n{_excerpt(output)}")
        warnings.warn(f"the sharded workload's first run died and its second passed; first run:\n{first}")
    assert summary, f"the workload did not finish:\n{_excerpt(output)}"
    assert not failures, "\n".join([summary[0], *failures[:40]])
    assert code == 0, f"{summary[0]}, but torchrun exited with {code}:\n{_excerpt(output)}"
    run = int(summary[0].split()[2])
    assert run > 500, summary[0]  # every part of the workload ran


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch built without torch.distributed")
def test_sharded_ops_gloo():
    _check("cpu")


@pytest.mark.cuda
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_sharded_ops_nccl():
    _check("cuda")


def test_refused_rules_leave_dtensor_importable():
    """Should a torch version refuse the rules (DTensor's registry is not a
    public API), importing torch.distributed.tensor still works, with a
    warning."""
    code = ("import sys, warnings, reduce_op\n"
            "sys.modules['reduce_op._sharding'] = None  # its import now fails\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    import torch.distributed.tensor\n"
            "print('WARNED', any('no sharding rules for DTensor' in str(w.message) for w in caught))\n")
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 0 and "WARNED True" in proc.stdout, proc.stdout[-3000:]
