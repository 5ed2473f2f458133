// One pass of the engine's indexed reductions (indexed_plan.h), as its
// kernels see it: no ATen header, so that the CUDA instances compile fast.
//
// A pass reduces one dim of n_reduce elements at reduce_stride:
//
//   out[o] = R_{i < n_reduce} (in[in_off(o) + i * reduce_stride], i)
//
// for the outputs o of the kept dims, which the OuterIndexer maps to input
// and output offsets, innermost in memory first (kept dims sorted by input
// stride and merged where they can be), so that neighbouring outputs read
// neighbouring memory when the reduced dim is not the innermost.
#pragma once

#include <cstdint>

#include "reduce_plan.h"

namespace gpureduce {

struct IndexedPass {
  OuterIndexer outer;
  int64_t n_out = 1;
  int64_t n_reduce = 1;
  int64_t reduce_stride = 1;

  // Whether the reduced dim is innermost in memory (a row per output, read
  // along itself) rather than outer to a kept dim (columns: neighbouring
  // outputs read side by side, walking the reduced dim together).
  bool along_rows() const {
    if (outer.ndim == 0 || outer.in_strides[0] == 0) return true;  // (only repeated kept dims)
    const int64_t inner = outer.in_strides[0] < 0 ? -outer.in_strides[0] : outer.in_strides[0];
    return reduce_stride <= inner;
  }
};

// Which extreme an indexed op looks for.
enum class Extreme { kMax, kMin };

}  // namespace gpureduce
