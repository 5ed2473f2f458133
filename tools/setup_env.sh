#!/usr/bin/env bash
# Prepares a machine to build and test gpureduce, then builds it in place.
# Works on a fresh CPU machine (installs torch 2.13.0's CPU build and the test
# tools from the package index into the project's .venv) and on a GPU machine
# whose torch is already installed and which cannot download anything (then
# nothing is installed: only what is missing is asked for). See
# tools/python_env.sh for which Python it uses.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/python_env.sh
echo "setup: using $("$PY" -c 'import sys; print(sys.prefix)')"

# find_spec rather than an import: importing torch costs 3 s of every run.
if ! "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)" 2>/dev/null; then
  echo "setup: installing torch==2.13.0"
  "$PY" -m pip install -q torch==2.13.0
fi
missing=$("$PY" - <<'CHECK'
import importlib.util
print(" ".join(m for m in ("pytest", "ninja", "numpy", "matplotlib", "tqdm") if importlib.util.find_spec(m) is None))
CHECK
)
if [ -n "$missing" ]; then
  echo "setup: installing $missing"
  "$PY" -m pip install -q $missing
fi
# expecttest lets the tests import torch's own sample inputs (OpInfo); those
# tests skip without it, so a machine that cannot download goes on.
if ! "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('expecttest') is None)" 2>/dev/null; then
  echo "setup: installing expecttest"
  "$PY" -m pip install -q expecttest || echo "setup: expecttest not installed; the torch sample-input tests will skip"
fi
# build (PyPA's) lets tests/test_wheel.py build the sdist and a wheel from
# it, as `python -m build --no-isolation` does; without it that test skips.
# (A namespace package has no origin: the checkout's build/ folder is one.)
if ! "$PY" -c "import importlib.util, sys; s = importlib.util.find_spec('build'); sys.exit(s is None or s.origin is None)" 2>/dev/null; then
  echo "setup: installing build"
  "$PY" -m pip install -q build || echo "setup: build not installed; the sdist test will skip"
fi
# pytest-xdist lets tools/run_tests.sh spread the suite over the cores; without
# it the suite runs in one process.
if ! "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('xdist') is None)" 2>/dev/null; then
  echo "setup: installing pytest-xdist"
  "$PY" -m pip install -q pytest-xdist || echo "setup: pytest-xdist not installed; the tests will run in one process"
fi
echo "setup: building gpureduce"
# TORCH_CUDA_ARCH_LIST, if set, is passed on; unset, the build targets the
# visible GPU, or sm_90 (the H200) where none is visible (setup.py).
# Built in place, with its objects kept in build/: ninja recompiles only what
# changed, so a rebuild with nothing changed takes seconds. A .pth file makes
# the checkout importable from anywhere in this environment.
mkdir -p build
if ! MAX_JOBS=${MAX_JOBS:-$(nproc)} "$PY" setup.py build_ext --inplace > build/setup.log 2>&1; then
  tail -40 build/setup.log
  echo "setup: the build failed (full log: build/setup.log)" >&2
  exit 1
fi
"$PY" - <<'PTH'
import os, sysconfig
path = os.path.join(sysconfig.get_paths()["purelib"], "gpureduce_checkout.pth")
root = os.getcwd()
if not os.path.exists(path) or open(path).read().strip() != root:
    with open(path, "w") as f:
        f.write(root + "\n")
PTH
# The built library loads (GPUREDUCE_SETUP_IMPORT_CHECK=0 leaves that to
# the caller, as tools/run_tests.sh does: its pytest imports it at once).
if [ "${GPUREDUCE_SETUP_IMPORT_CHECK:-1}" != 0 ]; then
  "$PY" -c "import reduce_op; print('setup: reduce_op loaded from', reduce_op.library_path())"
fi
