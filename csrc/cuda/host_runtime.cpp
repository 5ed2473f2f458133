// The CUDA engine's calls into torch's CUDA runtime (host_runtime.h).
#include "host_runtime.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <mutex>
#include <vector>

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
std::mutex early_trigger_mutex;
std::vector<const void*> early_trigger_kernels;  // a few dozen template instances at most
}  // namespace

void mark_early_trigger(const void* kernel) {
  std::lock_guard<std::mutex> lock(early_trigger_mutex);
  if (std::find(early_trigger_kernels.begin(), early_trigger_kernels.end(), kernel) == early_trigger_kernels.end())
    early_trigger_kernels.push_back(kernel);
}

bool follows_early_trigger(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t* deps = nullptr;
  size_t n_deps = 0;
  if (cudaStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &deps, nullptr, &n_deps) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (status != cudaStreamCaptureStatusActive || n_deps != 1) return false;
  cudaGraphNodeType type;
  cudaKernelNodeParams params{};
  if (cudaGraphNodeGetType(deps[0], &type) != cudaSuccess || type != cudaGraphNodeTypeKernel ||
      cudaGraphKernelNodeGetParams(deps[0], &params) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  std::lock_guard<std::mutex> lock(early_trigger_mutex);
  return std::find(early_trigger_kernels.begin(), early_trigger_kernels.end(), params.func) !=
         early_trigger_kernels.end();
}

}  // namespace cuda
}  // namespace gpureduce
