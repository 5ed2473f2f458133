"""The engine's multiply-and-shift division (csrc/engine/fast_divmod.h),
which the conv1d tile kernels and the reduction planner use to map linear
indices to rows: a host program checks it against `/` for many divisors
and dividends, up to the 32-bit form's limit of 2^31 - 1."""
import os
import shutil
import subprocess
import sysconfig

import pytest
import torch.utils.cpp_extension as cpp_extension

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


@pytest.mark.skipif(shutil.which("g++") is None and shutil.which("c++") is None, reason="no C++ compiler")
def test_fast_divmod_against_division(tmp_path):
    cxx = shutil.which("g++") or shutil.which("c++")
    exe = str(tmp_path / "fast_divmod_check")
    includes = [f"-I{p}" for p in cpp_extension.include_paths()] + [f"-I{os.path.join(ROOT, 'csrc')}",
                                                                     f"-I{sysconfig.get_paths()['include']}"]
    build = subprocess.run([cxx, "-O2", "-std=c++17", *includes, os.path.join(HERE, "cpp", "fast_divmod_check.cpp"),
                            "-o", exe], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "fast_divmod ok" in run.stdout
