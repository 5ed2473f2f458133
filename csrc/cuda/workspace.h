// Workspace of split passes, from the caching allocator (so capture-safe),
// on the current device and stream, held by a c10::DataPtr.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdint>
#include <utility>

namespace gpureduce {
namespace cuda {

// `n_partials` partials of type acc_t, held by `holder`.
template <typename acc_t>
acc_t* partials_workspace(c10::DataPtr& holder, int64_t n_partials) {
  holder = c10::cuda::CUDACachingAllocator::get()->allocate(static_cast<size_t>(n_partials) * sizeof(acc_t));
  return static_cast<acc_t*>(holder.get());
}

// `n_counters` tickets, zeroed on the current stream, then `n_partials`
// partials (a columns pass finished by its last block).
template <typename acc_t>
std::pair<unsigned*, acc_t*> ticket_workspace(c10::DataPtr& holder, int64_t n_counters, int64_t n_partials) {
  const int64_t counter_bytes = (n_counters * int64_t(sizeof(unsigned)) + 15) / 16 * 16;
  holder = c10::cuda::CUDACachingAllocator::get()->allocate(
      static_cast<size_t>(counter_bytes + n_partials * int64_t(sizeof(acc_t))));
  auto* bytes = static_cast<unsigned char*>(holder.get());
  C10_CUDA_CHECK(cudaMemsetAsync(bytes, 0, counter_bytes, c10::cuda::getCurrentCUDAStream()));
  return {reinterpret_cast<unsigned*>(bytes), reinterpret_cast<acc_t*>(bytes + counter_bytes)};
}

}  // namespace cuda
}  // namespace gpureduce
