// The CUDA engine's calls into torch's CUDA runtime (host_runtime.h).
#include "host_runtime.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include <mutex>
#include <unordered_set>

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

bool dependent_launch(cudaStream_t stream, const void* kernel, bool lets_next_in_early) {
  // Asking a stream costs host time on every launch: on the H200's host
  // cudaStreamGetCaptureInfo took 1.24 us a call more than a call that does
  // nothing, cudaStreamIsCapturing 0.50 us (session 65). No capture can be
  // begun on the legacy default stream, where most eager calls run, so it is
  // not asked; other streams are asked whether they capture, and only a
  // capturing one for the node before the launch.
  if (stream == nullptr || stream == cudaStreamLegacy) return false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (status != cudaStreamCaptureStatusActive) return false;
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

}  // namespace cuda
}  // namespace gpureduce
