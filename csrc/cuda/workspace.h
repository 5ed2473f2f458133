// Workspace of split passes, from the caching allocator (so capture-safe),
// on the current device and stream, held by a Workspace handle
// (host_runtime.h).
#pragma once

#include <cstdint>
#include <utility>

#include "host_runtime.h"

namespace gpureduce {
namespace cuda {

// `n_partials` partials of type acc_t, held by `holder`.
template <typename acc_t>
acc_t* partials_workspace(Workspace& holder, int64_t n_partials) {
  holder = allocate_workspace(static_cast<size_t>(n_partials) * sizeof(acc_t));
  return static_cast<acc_t*>(holder.get());
}

// `n_counters` tickets, zeroed on the current stream, then `n_partials`
// partials (a columns pass finished by its last block).
template <typename acc_t>
std::pair<unsigned*, acc_t*> ticket_workspace(Workspace& holder, int64_t n_counters, int64_t n_partials) {
  const int64_t counter_bytes = (n_counters * int64_t(sizeof(unsigned)) + 15) / 16 * 16;
  holder = allocate_workspace(static_cast<size_t>(counter_bytes + n_partials * int64_t(sizeof(acc_t))));
  auto* bytes = static_cast<unsigned char*>(holder.get());
  GPUREDUCE_CUDA_CHECK(cudaMemsetAsync(bytes, 0, counter_bytes, current_stream()));
  return {reinterpret_cast<unsigned*>(bytes), reinterpret_cast<acc_t*>(bytes + counter_bytes)};
}

}  // namespace cuda
}  // namespace gpureduce
