#!/usr/bin/env bash
# Sets up, builds, and runs the main job: the benchmark suite against
# torch.sum on the GPU, or a small CPU comparison (--quick) without one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh
. tools/python_env.sh
if "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  exec "$PY" benchmarks/bench.py "$@"
else
  exec "$PY" benchmarks/bench.py --quick --out-dir "${TMPDIR:-/tmp}/gpureduce_bench_quick" "$@"
fi
