// The device-independent half of the reduction engine.
//
// A call is canonicalised into one or more passes. Each pass is one of two
// shapes that both the CPU and the CUDA kernels implement:
//
//   rows:    out[o]    = sum_{j < n_rows} sum_{i < row_len} in[in_off(o) + j*row_stride + i*elem_stride]
//   columns: out[o, c] = sum_{q < n_reduce_outer} sum_{r < n_reduce}
//                        in[in_off(o) + c*col_stride + r*reduce_stride + q*reduce_outer_stride]
//
// `o` runs over the kept dims that are left (the "outer" dims), mapped to
// input and output offsets by an OuterIndexer. The planner sorts dims into
// memory order and merges neighbours, so a permuted dense tensor is read as the
// dense memory it is, with no .contiguous() copy.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "fast_divmod.h"

namespace gpureduce {

// torch's limit on tensor rank.
constexpr int kMaxDims = 25;

struct OuterIndexer {
  int ndim = 0;
  // Innermost first. Divisors hold the sizes.
  FastDivmod sizes[kMaxDims];
  int64_t in_strides[kMaxDims];
  int64_t out_strides[kMaxDims];

  GPUREDUCE_HOST_DEVICE void offsets(int64_t linear, int64_t& in_off, int64_t& out_off) const {
    in_off = 0;
    out_off = 0;
    for (int d = 0; d < ndim; ++d) {
      const uint64_t q = sizes[d].div(static_cast<uint64_t>(linear));
      const int64_t idx = linear - static_cast<int64_t>(q * sizes[d].divisor);
      in_off += idx * in_strides[d];
      out_off += idx * out_strides[d];
      linear = static_cast<int64_t>(q);
    }
  }
};

struct ReducePass {
  enum class Kind { kRows, kColumns };
  Kind kind = Kind::kRows;
  OuterIndexer outer;
  int64_t n_out = 1;  // product of outer sizes
  // kRows
  int64_t row_len = 1, elem_stride = 1, n_rows = 1, row_stride = 0;
  // kColumns
  int64_t n_cols = 1, col_stride = 1, out_col_stride = 1, n_reduce = 1, reduce_stride = 0;
  int64_t n_reduce_outer = 1, reduce_outer_stride = 0;

  // Element offset of reduction row `r` (0 <= r < n_reduce * n_reduce_outer)
  // of a columns pass.
  int64_t column_row_offset(int64_t r) const {
    return (r % n_reduce) * reduce_stride + (r / n_reduce) * reduce_outer_stride;
  }
};

// Runs one pass: `in` and `out` carry the data pointers (with their storage
// offsets) and dtypes; all geometry is in `pass`.
using PassRunner = std::function<void(const ReducePass&, const at::Tensor& in, const at::Tensor& out)>;

// Sums `input` over the dims in `mask` into `out`, whose shape and dtype are
// already those of the result. Takes care of dtype staging, empty tensors,
// keepdim and multi-pass plans, and calls `run` for each pass. `kernel_name`
// ("sum_cpu", "sum_cuda") names the kernel in dtype errors.
void sum_into(const at::Tensor& input, const std::vector<bool>& mask, bool keepdim,
              const at::Tensor& out, const PassRunner& run, const char* kernel_name);

// Whether the kernels read `in` directly to produce `out` (else sum_into
// stages a cast copy first, exactly as torch.sum casts before it sums).
bool kernel_reads_directly(at::ScalarType in, at::ScalarType out);

}  // namespace gpureduce
