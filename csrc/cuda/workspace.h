// Workspace of split passes, from the caching allocator (so capture-safe).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

#include <utility>

namespace gpureduce {
namespace cuda {

// `n_partials` partials of type acc_t, held by `holder`.
template <typename acc_t>
acc_t* partials_workspace(const at::Tensor& like, at::Tensor& holder, int64_t n_partials) {
  holder = at::empty({n_partials * int64_t(sizeof(acc_t))}, like.options().dtype(at::kByte));
  return reinterpret_cast<acc_t*>(holder.data_ptr());
}

// `n_counters` tickets, zeroed on the current stream, then `n_partials`
// partials (a columns pass finished by its last block).
template <typename acc_t>
std::pair<unsigned*, acc_t*> ticket_workspace(const at::Tensor& like, at::Tensor& holder, int64_t n_counters,
                                              int64_t n_partials) {
  const int64_t counter_bytes = (n_counters * int64_t(sizeof(unsigned)) + 15) / 16 * 16;
  holder = at::empty({counter_bytes + n_partials * int64_t(sizeof(acc_t))}, like.options().dtype(at::kByte));
  auto* bytes = static_cast<unsigned char*>(holder.data_ptr());
  C10_CUDA_CHECK(cudaMemsetAsync(bytes, 0, counter_bytes, c10::cuda::getCurrentCUDAStream()));
  return {reinterpret_cast<unsigned*>(bytes), reinterpret_cast<acc_t*>(bytes + counter_bytes)};
}

}  // namespace cuda
}  // namespace gpureduce
