#!/usr/bin/env bash
# Sets up, builds, and runs the test suite. CUDA tests run where a GPU is
# present and are skipped elsewhere. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh
. tools/python_env.sh
exec "$PY" -m pytest -q -p no:cacheprovider tests "$@"
