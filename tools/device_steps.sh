#!/usr/bin/env bash
# A device call made of named steps, each logged to $OUT/logs/<step>.log and
# packed into $OUT/device_out.tgz at the end. Steps:
#   build      TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 pip install --no-build-isolation -e .
#   tests      the GPU test suite with its slow tier (PYTEST_ARGS narrows it)
#   libtorch   tests/test_libtorch.py, verbose
#   accuracy   benchmarks/accuracy.py
#   bench      benchmarks/bench.py $BENCH_ARGS
#   random     benchmarks/random_bench.py $RANDOM_ARGS
#   ncu        Nsight Compute sections of one case (tools/ncu_case.py $NCU_CASE)
# Usage: OUT=... tools/device_steps.sh build tests bench
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/logs" "$OUT/results"
export PYTHONUNBUFFERED=1
log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$OUT/logs/steps.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  nvcc --version | tail -2
} > "$OUT/logs/env.txt" 2>&1
for step in "$@"; do
  t0=$(date +%s)
  case $step in
    build)
      # -v and NINJA_STATUS: each compile step with the seconds since the build began.
      NINJA_STATUS="[%f/%t %es] " TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 python3 -m pip install -v --no-build-isolation -e . > "$OUT/logs/build.log" 2>&1
      rc=$?
      # Each compile's own seconds (start and end), where pip left the build folder.
      ninja_log=$(ls -t /tmp/*.build-temp/.ninja_log build/*/.ninja_log 2>/dev/null | head -1)
      [ -n "$ninja_log" ] && cp "$ninja_log" "$OUT/logs/ninja_log.txt"
      if [ $rc -ne 0 ]; then grep -E "error|Error" "$OUT/logs/build.log" | head -40; log "build rc=$rc"; break; fi ;;
    tests)
      timeout ${TEST_TIMEOUT:-480} python3 -m pytest -q -rfEs -p no:cacheprovider --slow ${PYTEST_ARGS:-tests} > "$OUT/logs/tests.log" 2>&1
      rc=$?; tail -30 "$OUT/logs/tests.log" ;;
    libtorch)
      timeout 300 python3 -m pytest -q -rA -p no:cacheprovider tests/test_libtorch.py > "$OUT/logs/libtorch.log" 2>&1
      rc=$?; tail -60 "$OUT/logs/libtorch.log" ;;
    accuracy)
      timeout 200 python3 benchmarks/accuracy.py --out-dir "$OUT/results" > "$OUT/logs/accuracy.log" 2>&1
      rc=$?; cat "$OUT/logs/accuracy.log" | tail -20 ;;
    bench)
      timeout ${BENCH_TIMEOUT:-420} python3 benchmarks/bench.py --out-dir "$OUT/results" ${BENCH_ARGS:-} > "$OUT/logs/bench.log" 2> "$OUT/logs/bench.err"
      rc=$?; tail -8 "$OUT/logs/bench.log"; tail -3 "$OUT/logs/bench.err" ;;
    random)
      timeout ${RANDOM_TIMEOUT:-480} python3 benchmarks/random_bench.py --out-dir "$OUT/results" ${RANDOM_ARGS:-} > "$OUT/logs/random.log" 2> "$OUT/logs/random.err"
      rc=$?; tail -30 "$OUT/logs/random.log"; tail -3 "$OUT/logs/random.err" ;;
    ncu)
      timeout 240 ncu --clock-control none -k regex:gpureduce --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --section WarpStateStats --section Occupancy --section LaunchStats \
        python3 tools/ncu_case.py ${NCU_CASE:-2097152,32 1} > "$OUT/logs/ncu.log" 2>&1
      rc=$?; grep -E "gpureduce|Throughput|Duration|Registers|Waves" "$OUT/logs/ncu.log" | head -40 ;;
    *) echo "unknown step $step"; rc=2 ;;
  esac
  log "$step rc=$rc in $(( $(date +%s) - t0 )) s"
done
tar -czf "$OUT/device_out.tgz" -C "$OUT" logs results
rm -rf "$OUT/logs" "$OUT/results"
