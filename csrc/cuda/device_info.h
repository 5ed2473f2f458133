// Multiprocessor count of the current device, read once per device. (From
// the CUDA runtime rather than ATen/cuda/CUDAContext.h, which pulls in the
// cuSPARSE and cuBLAS headers that a compile-only CUDA toolkit may lack.)
#pragma once

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime.h>

#include <array>
#include <atomic>

namespace gpureduce {

inline int sm_count() {
  static std::array<std::atomic<int>, 64> cache{};
  const int device = c10::cuda::current_device();
  int n = device < 64 ? cache[device].load(std::memory_order_relaxed) : 0;
  if (n == 0) {
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
    if (device < 64) cache[device].store(n, std::memory_order_relaxed);
  }
  return n;
}

}  // namespace gpureduce
