#!/usr/bin/env bash
# Compiles every .cu file, and the C++ files of csrc/cuda/ (the CUDA keys'
# registrations, which only a CUDA build compiles), object-only with nvcc
# against the installed torch's headers, so that a CUDA compile error fails
# CI on a machine with no GPU and a CPU-only torch. The CPU wheel lacks one generated header
# (c10/cuda/impl/cuda_cmake_macros.h); C10_CUDA_NO_CMAKE_CONFIGURE_FILE skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
NVCC=${NVCC:-nvcc}
if ! command -v "$NVCC" >/dev/null 2>&1; then
  echo "compile_cuda_objects: nvcc not found; skipping the CUDA compile check" >&2
  exit 0
fi
. tools/python_env.sh
inc=$("$PY" -c "from torch.utils.cpp_extension import include_paths; print(' '.join('-I'+p for p in include_paths()))")
pyinc=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# No -O for nvcc, which sets only the host compiler's level: the check needs
# the compile, not fast host code, and host -O3 was a quarter of each file's
# time (sum_half.cu 50 -> 38 s on the 2-core machine); the device code is
# optimised as in the real build (cicc and ptxas at their default -O3).
# At most CUDA_COMPILE_JOBS compiles at once (default: twice the cores): each nvcc holds
# 0.5-1 GB, and all 41 files at once ran a 24 GB CI machine out of memory
# (the kernel killed a cudafe++). The compiles are CPU-bound, so a few more
# than the cores take no longer.
jobs_max=${CUDA_COMPILE_JOBS:-$(( 2 * $(nproc) ))}
status=0
running=0
for cu in $( (find csrc -name '*.cu'; find csrc/cuda -name '*.cpp') | sort); do
  if [ "$running" -ge "$jobs_max" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  obj="$out/$(echo "$cu" | tr '/' '_').o"
  "$NVCC" -c "$cu" -o "$obj" -std=c++20 -arch=sm_90 --expt-relaxed-constexpr \
    -DC10_CUDA_NO_CMAKE_CONFIGURE_FILE -D_GLIBCXX_USE_CXX11_ABI=1 $inc -I"$pyinc" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
[ $status -eq 0 ] && echo "compile_cuda_objects: all .cu files (and csrc/cuda/*.cpp) compiled for sm_90"
exit $status
