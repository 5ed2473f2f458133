// Facts about the current device, each read once per device: its
// multiprocessor count, its compute capability. (From
// the CUDA runtime rather than ATen/cuda/CUDAContext.h, which pulls in the
// cuSPARSE and cuBLAS headers that a compile-only CUDA toolkit may lack.)
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <atomic>

#include "host_runtime.h"

namespace gpureduce {

// A value about the current device, computed once per device (for up to 64
// devices; beyond that, at every call). `compute` returns a positive int.
class PerDevice {
 public:
  template <typename F>
  int get(F&& compute) {
    const int device = cuda::current_device();
    int v = device < 64 ? cache_[device].load(std::memory_order_relaxed) : 0;
    if (v == 0) {
      v = compute(device);
      if (device < 64) cache_[device].store(v, std::memory_order_relaxed);
    }
    return v;
  }

 private:
  std::array<std::atomic<int>, 64> cache_{};
};

inline int device_attribute(int device, cudaDeviceAttr attr) {
  int v = 0;
  GPUREDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, device));
  return v;
}

inline int sm_count() {
  static PerDevice cache;
  return cache.get([](int d) { return device_attribute(d, cudaDevAttrMultiProcessorCount); });
}

inline int device_major() {
  static PerDevice cache;
  return cache.get([](int d) { return device_attribute(d, cudaDevAttrComputeCapabilityMajor); });
}

}  // namespace gpureduce
