// The CUDA engine's calls into torch's CUDA runtime (host_runtime.h).
#include "host_runtime.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

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

}  // namespace cuda
}  // namespace gpureduce
