// The device-independent half of the reduction engine. It knows no op: an
// op reaches it as an OpSpec (its pass runner, its empty result and how to
// fold repeats).
//
// A call is canonicalised into one or more passes. Each pass is one of two
// shapes that both the CPU and the CUDA kernels implement (R is the op):
//
//   rows:    out[o]    = R_{j < n_rows} R_{i < row_len} in[in_off(o) + j*row_stride + i*elem_stride]
//   columns: out[o, c] = R_{q < n_reduce_outer} R_{r < n_reduce}
//                        in[in_off(o) + c*col_stride + r*reduce_stride + q*reduce_outer_stride]
//
// `o` runs over the kept dims that are left (the "outer" dims), mapped to
// input and output offsets by an OuterIndexer. The planner sorts dims into
// memory order and merges neighbours, so a permuted dense tensor is read as the
// dense memory it is, with no .contiguous() copy. Dims of stride 0 (expanded
// inputs) are not read more than once, except in small inputs (256 KB with
// their repeats), which are read as they are in one launch: a kept one is
// computed once and broadcast into the output, a reduced one is folded in
// afterwards by the op (OpSpec::fold_repeats: sum multiplies by its size)
// or by the pass itself (OpSpec::repeats_in_pass: amax ignores it).
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "fast_divmod.h"
#include "reduce_dtypes.h"
#include "projection.h"

// Declared only: the CUDA kernels' files include this header and compile
// faster without ATen's (cuda/instance.h).
namespace at {
class Tensor;
}  // namespace at

namespace gpureduce {

// torch's limit on tensor rank.
constexpr int kMaxDims = 25;

struct OuterIndexer {
  int ndim = 0;
  // Innermost first. Divisors hold the sizes.
  FastDivmod sizes[kMaxDims];
  int64_t in_strides[kMaxDims];
  int64_t out_strides[kMaxDims];

  C10_HOST_DEVICE void offsets(int64_t linear, int64_t& in_off, int64_t& out_off) const {
    in_off = 0;
    out_off = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
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

  // A plan of several passes hands accumulators from one to the next: a
  // pass that reads partials folds each element in with the op's combine
  // (the kernels of PartialsKernelsFor, reduce_family.h, where the op's
  // reduce would not), and one that writes partials stores accumulators
  // (an op's projection to its accumulator type is the identity).
  bool reads_partials = false;
  bool writes_partials = false;
  // What the pass does to its outputs before they are stored (mean: divide
  // by the count of input elements reduced into each output; var and std:
  // by that count less the correction, std then the square root). The
  // identity for every other op and for passes that write partials.
  Projection projection;

  // Element offset of reduction row `r` (0 <= r < n_reduce * n_reduce_outer)
  // of a columns pass.
  int64_t column_row_offset(int64_t r) const {
    return (r % n_reduce) * reduce_stride + (r / n_reduce) * reduce_outer_stride;
  }
};

// Runs one pass: `in` and `out` carry the data pointers (with their storage
// offsets) and dtypes; all geometry is in `pass`.
using PassRunner = std::function<void(const ReducePass&, const at::Tensor& in, const at::Tensor& out)>;

// How an op's result takes k copies of an input (a reduced dim of stride 0,
// reduce_into): through OpSpec::fold_repeats after the pass (sum: k * x),
// or in the pass itself, which reads the dim as one element: where the
// copies change nothing (amax, amin, vector_norm of order inf), or where
// they scale the op's sum before its projection (vector_norm of orders 1
// and 2: Projection::repeats).
enum class RepeatsInPass { kFolded, kIgnored, kScaled };

// What the planner needs of an op on one backend.
struct OpSpec {
  // Runs one pass of the op (a backend's kernels).
  PassRunner run;
  // Writes to `dest`, of partial's shape, each element of `partial` (the
  // kernel-typed result without the reduced dims of stride 0) folded with
  // itself k times and cast to dest's dtype. Null for an op whose passes
  // take the copies (repeats_in_pass) and for one whose results do not fold
  // (var: k copies change the spread's weight, not only its sum), whose
  // reduced dims of stride 0 are then read as they are.
  std::function<void(const at::Tensor& partial, int64_t k, const at::Tensor& dest)> fold_repeats;
  // Writes the result of reducing no elements (sum: 0, prod: 1).
  std::function<void(const at::Tensor& target)> fill_empty;
  // Names the kernel in dtype errors, as ATen does ("sum_cpu", "prod_cuda").
  const char* kernel_name;
  // Whether an input element is the partial of reducing it alone, so that
  // fold_repeats may take the input itself where nothing else is reduced
  // (sum, prod: yes; nansum: no, a NaN input is the partial 0).
  bool input_is_partial = true;
  // Whether the kernels write the result's own dtype and hand partials on
  // in it (amax, amin: the result is one of the inputs), rather than int64
  // for integer results and the accumulator's dtype between passes (sum's
  // rules). Not for uint16 to uint64, which are still reduced as int64.
  bool keeps_result_dtype = false;
  // Whether each output is the op's reduction divided by the count of
  // input elements reduced into it, less the call's correction (mean, over
  // sum's kernels, correction 0; var and std): the last pass divides
  // (ReducePass::projection), and reducing no elements gives NaN.
  bool averages = false;
  // Whether the outputs are square roots (std; ReducePass::projection).
  bool roots = false;
  // Whether one pass may hand its accumulators on to another through a
  // tensor (false for var and std, whose accumulators are structs with no
  // dtype): where the reduced dims need more than one pass, the input is
  // first copied with them innermost, where they merge into one.
  bool hands_partials_on = true;
  // Which widening pairs the op's kernels read at the input's own width
  // rather than from a copy cast to the result's dtype first.
  WideningReads widening;
  // Whether the pass takes the reduced dims of stride 0 itself, reading
  // each as one element (RepeatsInPass), rather than fold_repeats.
  RepeatsInPass repeats_in_pass = RepeatsInPass::kFolded;
};

// Reduces `input` over the dims in `mask` into `out`, whose shape and dtype
// are already those of the result. Takes care of dtype staging, empty
// tensors, keepdim, stride-0 dims and multi-pass plans, and calls op.run for
// each pass. `correction`: what an averaging op's count is lessened by
// (var's; 0 for mean).
void reduce_into(const at::Tensor& input, const std::vector<bool>& mask, bool keepdim,
                 const at::Tensor& out, const OpSpec& op, double correction = 0.0);

}  // namespace gpureduce
