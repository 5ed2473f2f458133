#!/usr/bin/env bash
# Sets up, builds, and runs the test suite. CUDA tests run where a GPU is
# present and are left out elsewhere. Extra arguments go to pytest.
#
# With pytest-xdist installed (setup_env.sh asks for it), the tests are
# spread over one worker per core, up to 4 (GPUREDUCE_TEST_WORKERS sets the
# count; 1, or any -n of your own, turns this off). A worker's torch runs
# one thread unless OMP_NUM_THREADS says otherwise: two workers of two
# threads each on the 2-core machine took 104-166 s for the suite, two of
# one thread 88 s, one process of two threads 125 s (2026-11-29). The tests
# of the CPU engine's threaded paths set their thread counts themselves.
#
# The tests marked slow (tests/conftest.py: torch.compile, opcheck, torch's
# OpInfo samples, subprocesses, the largest sweeps) run only with --slow,
# as CI runs them (.ci/run); without it they are left out (deselected).
set -euo pipefail
cd "$(dirname "$0")/.."
# No import check after the build: pytest imports reduce_op at once, and
# that import cost 2 s of each run.
GPUREDUCE_SETUP_IMPORT_CHECK=0 bash tools/setup_env.sh
. tools/python_env.sh
args=()
workers=${GPUREDUCE_TEST_WORKERS:-$(( $(nproc) < 4 ? $(nproc) : 4 ))}
own_n=0
for a in "$@"; do
  case "$a" in -n|-n*|--numprocesses*) own_n=1 ;; esac
done
has_xdist=0
"$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('xdist') is None)" 2>/dev/null && has_xdist=1
# No plugin loads unasked: the suite uses none but pytest-xdist, and those a
# system's Python carries (hypothesis, pytest-benchmark on the 2-core
# machine) cost each process 2 s of start-up.
export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
# glibc gives a freed allocation above its mmap threshold (128 KB, rising to
# 32 MB as it goes) back to the system, so that a large tensor a test makes
# faults its pages in afresh: a float64 copy
# of 5 million elements took 43 ms that way, 9 ms from the heap. Freed memory
# stays in the heap for the next tensor instead (2-core machine, 2026-12-02).
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-4294967296}
export MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-4294967296}
[ "$has_xdist" = 1 ] && args=(-p xdist.plugin)
if [ "$own_n" = 0 ] && [ "$workers" -gt 1 ] && [ "$has_xdist" = 1 ]; then
  # worksteal: a worker that runs dry takes half of the other's queue, where
  # loadfile gave each a whole file (test_cpu_kernels.py holds a third of
  # the fast tier's time): 87 s -> 75 s (2-core machine, 2026-12-02).
  args+=(-n "$workers" --dist worksteal)
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
fi
exec "$PY" -m pytest -q -p no:cacheprovider tests "${args[@]}" "$@"
