// The CUDA engine's calls into torch's CUDA runtime (host_runtime.h).
#include "host_runtime.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAStream.h>

#include <map>
#include <mutex>
#include <unordered_set>
#include <tuple>

#include "device_info.h"
#include "policy.h"

namespace gpureduce {
namespace cuda {

cudaStream_t current_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

int current_device() { return c10::cuda::current_device(); }

void throw_cuda_error(cudaError_t err, const char* file, const char* function, int line) {
  c10::cuda::c10_cuda_check_implementation(static_cast<int32_t>(err), file, function, static_cast<uint32_t>(line),
                                           /*include_device_assertions=*/true);
  // Not reached for an error; a success is never passed.
  TORCH_INTERNAL_ASSERT(false, "gpureduce: throw_cuda_error called without an error");
}

void WorkspaceFree::operator()(void* p) const { c10::cuda::CUDACachingAllocator::raw_delete(p); }

Workspace allocate_workspace(size_t bytes) {
  return Workspace(c10::cuda::CUDACachingAllocator::raw_alloc(bytes));
}

namespace {
// Kernels of ours seen, while capturing, to let their dependents in early.
std::mutex early_trigger_mutex;
std::unordered_set<const void*> early_trigger_kernels;
}  // namespace

void mark_early_trigger(const void* kernel) {
  std::lock_guard<std::mutex> lock(early_trigger_mutex);
  early_trigger_kernels.insert(kernel);
}

namespace {
// Whether `stream` is capturing. Asking costs host time on every launch:
// on the H200's host cudaStreamGetCaptureInfo took 1.24 us a call more than
// a call that does nothing, cudaStreamIsCapturing 0.50 us (session 65). No
// capture can be begun on the legacy default stream, where most eager
// calls run, so it is not asked; other streams are asked whether they
// capture, and only a capturing one for the node before a launch.
bool capturing(cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy) return false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return status == cudaStreamCaptureStatusActive;
}

std::mutex occupancy_mutex;
// Blocks of a kernel that one SM holds, per (kernel, block size, device).
std::map<std::tuple<const void*, int, int>, int> resident_blocks;

int resident_blocks_per_sm(const void* kernel, int threads) {
  const auto key = std::make_tuple(kernel, threads, current_device());
  std::lock_guard<std::mutex> lock(occupancy_mutex);
  auto it = resident_blocks.find(key);
  if (it != resident_blocks.end()) return it->second;
  int n = 0;
  // Asked only while a graph is captured (the first time for a kernel and
  // block size), in relaxed mode, as torch's allocator makes its calls
  // then: a call that a global-mode capture refused would invalidate it.
  // The build that ran on the H200 had this guard; an error counts one block.
  c10::cuda::CUDAStreamCaptureModeGuard relaxed(cudaStreamCaptureModeRelaxed);
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    n = 1;
  }
  n = n > 0 ? n : 1;
  resident_blocks[key] = n;
  return n;
}

// dependent_launch once `stream` is known to capture: whether the node
// before the launch is one kernel of ours that lets its dependents in early.
bool dependent_while_capturing(cudaStream_t stream, const void* kernel, bool lets_next_in_early) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t* deps = nullptr;
  size_t n_deps = 0;
  if (cudaStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &deps, nullptr, &n_deps) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (status != cudaStreamCaptureStatusActive) return false;
  std::lock_guard<std::mutex> lock(early_trigger_mutex);
  if (lets_next_in_early) early_trigger_kernels.insert(kernel);
  if (n_deps != 1) return false;
  cudaGraphNodeType type;
  cudaKernelNodeParams params{};
  if (cudaGraphNodeGetType(deps[0], &type) != cudaSuccess || type != cudaGraphNodeTypeKernel ||
      cudaGraphKernelNodeGetParams(deps[0], &params) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return early_trigger_kernels.count(params.func) != 0;
}
}  // namespace

CaptureLaunch capture_launch(cudaStream_t stream, const void* kernel, int64_t blocks, int threads,
                             bool resident_wave_lets_in, bool columns_gap) {
  CaptureLaunch launch;
  if (!capturing(stream)) return launch;
  const int64_t sms = sm_count();
  if (blocks <= sms) {
    launch.lets_next_in_early = true;
  } else if (resident_wave_lets_in) {
    const int64_t wave = sms * resident_blocks_per_sm(kernel, threads);
    const bool in_gap = columns_gap && blocks * 100 > HostPolicy::kColumnsLateFromPercent * wave &&
                        blocks * 100 <= HostPolicy::kColumnsLateToPercent * wave;
    launch.lets_next_in_early = blocks <= wave && !in_gap;
  }
  launch.as_dependent = dependent_while_capturing(stream, kernel, launch.lets_next_in_early);
  return launch;
}

bool dependent_launch(cudaStream_t stream, const void* kernel, bool lets_next_in_early) {
  return capturing(stream) && dependent_while_capturing(stream, kernel, lets_next_in_early);
}

}  // namespace cuda
}  // namespace gpureduce
