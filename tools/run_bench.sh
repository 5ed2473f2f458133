#!/usr/bin/env bash
# Sets up, builds, and runs the main job: the benchmark suite against
# torch.sum on the GPU, or a small CPU comparison (--quick) without one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh
if "${PYTHON:-python3}" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  exec "${PYTHON:-python3}" benchmarks/bench.py "$@"
else
  exec "${PYTHON:-python3}" benchmarks/bench.py --quick --out-dir "${TMPDIR:-/tmp}/gpureduce_bench_quick" "$@"
fi
