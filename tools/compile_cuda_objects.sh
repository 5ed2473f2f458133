#!/usr/bin/env bash
# Compiles every .cu file object-only with nvcc against the installed torch's
# headers, so that a CUDA compile error fails CI on a machine with no GPU and
# a CPU-only torch. The CPU wheel lacks one generated header
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
pids=()
for cu in $(find csrc -name '*.cu' | sort); do
  obj="$out/$(echo "$cu" | tr '/' '_').o"
  "$NVCC" -c "$cu" -o "$obj" -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr \
    -DC10_CUDA_NO_CMAKE_CONFIGURE_FILE -D_GLIBCXX_USE_CXX11_ABI=1 $inc -I"$pyinc" &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
[ $status -eq 0 ] && echo "compile_cuda_objects: all .cu files compiled for sm_90"
exit $status
