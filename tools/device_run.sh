#!/usr/bin/env bash
# One device call: build, GPU tests, benchmark. Logs and results go to $OUT
# (packed into one tarball, since a call returns at most 8 files).
# Usage: tools/device_run.sh [tests|bench|all] [extra pytest args]
set -u
what=${1:-all}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/logs"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/logs/env.txt" 2>&1
python3 -c "import torch; print(torch.__version__, torch.version.cuda)" >> "$OUT/logs/env.txt" 2>&1
start=$(date +%s)
TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 python3 -m pip install --no-build-isolation -e . > "$OUT/logs/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - start )) s" | tee -a "$OUT/logs/env.txt"
if [ $rc -ne 0 ]; then grep -E "error|Error" "$OUT/logs/build.log" | head -40; exit 1; fi
if [ "$what" = tests ] || [ "$what" = all ]; then
  shift || true
  timeout ${TEST_TIMEOUT:-330} python3 -m pytest -q -rfEs -p no:cacheprovider tests "$@" > "$OUT/logs/pytest_gpu.log" 2>&1
  echo "pytest rc=$?"; tail -25 "$OUT/logs/pytest_gpu.log"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  timeout ${BENCH_TIMEOUT:-420} python3 benchmarks/bench.py --out-dir "$OUT/results" ${BENCH_ARGS:-} > "$OUT/logs/bench.log" 2> "$OUT/logs/bench.err"
  echo "bench rc=$?"; tail -60 "$OUT/logs/bench.log"; tail -5 "$OUT/logs/bench.err"
  cp "$OUT"/results/*.md "$OUT/logs/" 2>/dev/null
fi
tar -czf "$OUT/device_out.tgz" -C "$OUT" logs $( [ -d "$OUT/results" ] && echo results )
rm -rf "$OUT/logs" "$OUT/results"
