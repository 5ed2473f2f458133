"""A LibTorch C++ program, built with CMake and find_package(Torch) from the
installed torch, loads the gpureduce library and calls gpureduce::sum
through the dispatcher (autograd included)."""
import os
import shutil
import subprocess

import pytest
import torch

import reduce_op

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not found")
def test_libtorch_program():
    # A build folder that persists (build/ is the project's, ignored by git):
    # CMake rebuilds the program only when its source or torch's headers
    # change, so later runs of the test suite skip a 30 s compile. The
    # program loads the library under test at run time.
    build = os.path.join(os.path.dirname(HERE), "build", "libtorch_test")
    cfg = subprocess.run(
        ["cmake", "-S", os.path.join(HERE, "cpp"), "-B", build, "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}"],
        capture_output=True, text=True, timeout=600)
    assert cfg.returncode == 0, cfg.stdout[-3000:] + cfg.stderr[-3000:]
    mk = subprocess.run(["cmake", "--build", build, "-j", str(os.cpu_count() or 2)],
                        capture_output=True, text=True, timeout=900)
    assert mk.returncode == 0, mk.stdout[-3000:] + mk.stderr[-3000:]
    run = subprocess.run([os.path.join(build, "libtorch_sum"), reduce_op.library_path()],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "libtorch ok" in run.stdout
