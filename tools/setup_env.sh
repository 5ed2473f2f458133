#!/usr/bin/env bash
# Prepares a machine to build and test gpureduce, then builds it in place.
# Works on a fresh CPU machine (installs torch 2.13.0's CPU build and the test
# tools from the package index) and on a GPU machine whose torch is already
# installed and which cannot download anything (then nothing is installed:
# only what is missing is asked for).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if ! "$PY" -c "import torch" 2>/dev/null; then
  echo "setup: installing torch==2.13.0"
  "$PY" -m pip install -q torch==2.13.0
fi
missing=()
for mod in pytest ninja numpy matplotlib tqdm; do
  "$PY" -c "import $mod" 2>/dev/null || missing+=("$mod")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  "$PY" -m pip install -q "${missing[@]}"
fi
echo "setup: building gpureduce against torch $("$PY" -c 'import torch; print(torch.__version__)')"
# TORCH_CUDA_ARCH_LIST, if set, is passed on; unset, the build targets the
# visible GPU, or sm_90 (the H200) where none is visible (setup.py).
MAX_JOBS=${MAX_JOBS:-$(nproc)} \
  "$PY" -m pip install -q --no-build-isolation -e . 2>&1 | grep -v "Running pip as the 'root' user" || true
"$PY" -c "import reduce_op; print('setup: reduce_op loaded from', reduce_op.library_path())"
