// The sum-like ops as the planner sees them: one OpSpec per op and backend,
// built from the op's family. Sum, prod and nansum share torch's dtype rules
// (reduce_shape.h) and the kernels' dtype pairs (reduce_dtypes.h); an op's
// family adds its functor, its empty result and how k copies fold together.
#pragma once

#include <ATen/core/Tensor.h>

#include "reduce_ops.h"
#include "reduce_plan.h"

namespace gpureduce {

// fill_empty and fold_repeats are defined in reduce_family.cpp: the ATen ops
// they call have heavy headers, which every kernel file would otherwise parse.
struct SumFamily {
  template <typename acc_t>
  using Op = SumOp<acc_t>;
  static constexpr bool kInputIsPartial = true;
  static void fill_empty(const at::Tensor& t);
  // k copies of x sum to k * x: exact for integers, one rounding for floats
  // (k adds would round k times).
  static void fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest);
};

struct ProdFamily {
  template <typename acc_t>
  using Op = ProdOp<acc_t>;
  static constexpr bool kInputIsPartial = true;
  static void fill_empty(const at::Tensor& t);
  static void fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest);
};

// nansum: sum's empty result (0) and fold of k copies (k * x of a partial
// whose NaN inputs were already counted as zero; a NaN input is not its own
// partial, so the input itself is never folded).
struct NanSumFamily {
  template <typename acc_t>
  using Op = NanSumOp<acc_t>;
  static constexpr bool kInputIsPartial = false;
  static void fill_empty(const at::Tensor& t) { SumFamily::fill_empty(t); }
  static void fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest) {
    SumFamily::fold_repeats(partial, k, dest);
  }
};

template <class Family>
OpSpec op_spec(PassRunner run, const char* kernel_name) {
  return OpSpec{std::move(run), &Family::fold_repeats, &Family::fill_empty, kernel_name,
                Family::kInputIsPartial};
}

}  // namespace gpureduce
