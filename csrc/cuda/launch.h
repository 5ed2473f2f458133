// Kernel launch helpers of the CUDA engine: occupancy, and launches as
// programmatic dependents (PDL) of the work before them on the stream.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <utility>

#include "device_info.h"
#include "policy.h"

namespace gpureduce {
namespace cuda {

// How many blocks of `threads` threads of `kernel` (with `dynamic_smem`
// bytes of dynamic shared memory) one SM can hold.
template <typename Kernel>
int64_t max_resident_blocks(Kernel kernel, int threads, size_t dynamic_smem = 0) {
  int n = 0;
  GPUREDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, dynamic_smem));
  return n;
}

// Blocks of one kernel that the whole GPU holds at once, by block size:
// max_resident_blocks times the SMs, cached per device and warps per block
// (up to 512 threads). Each kernel keeps its own (a static beside its
// launch).
class ResidentWave {
 public:
  template <typename Kernel>
  int64_t blocks(Kernel kernel, int64_t threads) {
    return int64_t(sm_count()) * per_warps_[(threads + 31) / 32].get([&](int) {
      return static_cast<int>(std::max<int64_t>(1, max_resident_blocks(kernel, static_cast<int>(threads))));
    });
  }

 private:
  PerDevice per_warps_[512 / 32 + 1];
};

// Clusters of one kernel that the whole GPU holds at once, by cluster size
// (blocks of a cluster share a GPC, so fewer may be resident than
// ResidentWave's blocks), for blocks of `block` threads: cached per device
// and size. Each kernel keeps its own, and is launched with one block size.
class ResidentClusters {
 public:
  template <typename... Params>
  int64_t clusters(void (*kernel)(Params...), dim3 block, int size) {
    return per_size_[size].get([&](int) {
      cudaLaunchAttribute attribute{};
      attribute.id = cudaLaunchAttributeClusterDimension;
      attribute.val.clusterDim.x = static_cast<unsigned>(size);
      attribute.val.clusterDim.y = 1;
      attribute.val.clusterDim.z = 1;
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(static_cast<unsigned>(size));
      config.blockDim = block;
      config.attrs = &attribute;
      config.numAttrs = 1;
      int n = 0;
      GPUREDUCE_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, kernel, &config));
      return std::max(n, 1);
    });
  }

 private:
  PerDevice per_size_[9];  // up to kMaxClusterSplit blocks
};

// Launches `kernel` on `stream` with `n` launch attributes.
template <typename... Params, typename... Args>
void launch_with_attributes(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream,
                            cudaLaunchAttribute* attributes, unsigned n, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = n;
  GPUREDUCE_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
  GPUREDUCE_LAUNCH_CHECK();
}

inline cudaLaunchAttribute programmatic_serialization() {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  return attribute;
}

// Launches `kernel` on `stream`; with `pdl`, as a programmatic dependent of
// the work before it: it may be scheduled while that work still runs, and
// waits for it itself (wait_for_prior_grid in engine/common.cuh) before it
// touches memory.
template <typename... Params, typename... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, bool pdl,
                   Args&&... args) {
  if (!pdl) {
    kernel<<<grid, block, 0, stream>>>(std::forward<Args>(args)...);
    GPUREDUCE_LAUNCH_CHECK();
    return;
  }
  cudaLaunchAttribute attribute = programmatic_serialization();
  launch_with_attributes(kernel, grid, block, stream, &attribute, 1, std::forward<Args>(args)...);
}

// Launches an engine kernel (one that begins with start_as_dependent), its
// arguments `a` first, for a pass that reads `pass_bytes` of input: as a
// programmatic dependent where that pays (capture_launch), letting the next
// kernel in from its start where its blocks are all on the SMs at once. A
// grid of one block an SM at most always does: over 1399 passes captured
// back to back on the H200 this took 12% off passes under 100 KB and 5% off
// those to 1 MB against plain launches of all but the split kernel; after a
// torch kernel it was the same (NOTES.md, sessions 64 and 65). A grid of
// several resident blocks an SM does only under kEarlyWaveMaxBytes: there
// it took 8-9% off passes under 4 MiB and 4% off those to 8 MiB, but from
// 16 MiB it made passes slower, by 2% in the mean and up to 33% ([29, 256,
// 2048] float32 over dim 1, 464 blocks; session 66). A grid of several
// waves never does: its blocks' later waves lost SM slots to the next
// grid's (up to 36% slower, session 64). With kColumnsGap (the columns
// kernel), nor does a grid of over HostPolicy::kColumnsLateFromPercent and up
// to kColumnsLateToPercent of its resident wave (the figures are there).
template <bool kColumnsGap = false, typename... Params, typename A, typename... Rest>
void launch_engine_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, int64_t pass_bytes,
                          A& a, Rest&&... rest) {
  const CaptureLaunch launch =
      capture_launch(stream, reinterpret_cast<const void*>(kernel), int64_t(grid.x) * grid.y * grid.z,
                     int(block.x * block.y * block.z), pass_bytes < HostPolicy::kEarlyWaveMaxBytes, kColumnsGap);
  a.early_trigger = launch.lets_next_in_early;
  launch_kernel(kernel, grid, block, stream, launch.as_dependent, a, std::forward<Rest>(rest)...);
}

// launch_engine_kernel<kColumnsGap>: the columns kernel's launch.
constexpr bool kColumnsGap = true;

// Launches `kernel` on `stream` with its blocks grouped into thread-block
// clusters of `cluster` blocks (sm_90 and later); with `pdl`, also as a
// programmatic dependent (launch_kernel).
template <typename... Params, typename... Args>
void launch_kernel_clustered(void (*kernel)(Params...), dim3 grid, dim3 block, dim3 cluster, cudaStream_t stream,
                             bool pdl, Args&&... args) {
  cudaLaunchAttribute attributes[2] = {};
  attributes[0].id = cudaLaunchAttributeClusterDimension;
  attributes[0].val.clusterDim.x = cluster.x;
  attributes[0].val.clusterDim.y = cluster.y;
  attributes[0].val.clusterDim.z = cluster.z;
  attributes[1] = programmatic_serialization();
  launch_with_attributes(kernel, grid, block, stream, attributes, pdl ? 2 : 1, std::forward<Args>(args)...);
}

// Whether the code of `kernel` that this device runs was compiled for
// sm_90 or later (so that its cluster code is there: a build for older
// architectures alone leaves it out).
template <typename Kernel>
bool runs_sm90_code(Kernel kernel) {
  cudaFuncAttributes attributes{};
  GPUREDUCE_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  return attributes.binaryVersion >= 90 || attributes.ptxVersion >= 90;
}

// Whether `kernel` can be launched in clusters here: the device has them
// (sm_90 or later) and so does the code it runs. Cached per device in
// `cache`, a static beside the launch.
template <typename Kernel>
bool launches_in_clusters(PerDevice& cache, Kernel kernel) {
  return cache.get([&](int) { return device_major() >= 9 && runs_sm90_code(kernel) ? 2 : 1; }) == 2;
}

}  // namespace cuda
}  // namespace gpureduce
