// The sum-like ops as the planner sees them: one OpSpec per op and backend,
// built from the op's family. Sum and prod share torch's dtype rules
// (reduce_shape.h) and the kernels' dtype pairs (reduce_dtypes.h); an op's
// family adds its functor, its empty result and how k copies fold together.
#pragma once

#include <ATen/ScalarOps.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/pow.h>

#include "reduce_ops.h"
#include "reduce_plan.h"

namespace gpureduce {

struct SumFamily {
  template <typename acc_t>
  using Op = SumOp<acc_t>;
  static void fill_empty(const at::Tensor& t) { t.zero_(); }
  // k copies of x sum to k * x: exact for integers, one rounding for floats
  // (k adds would round k times).
  static void fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest) {
    at::mul_out(const_cast<at::Tensor&>(dest), partial, c10::scalar_to_tensor(c10::Scalar(k)));
  }
};

struct ProdFamily {
  template <typename acc_t>
  using Op = ProdOp<acc_t>;
  static void fill_empty(const at::Tensor& t) { t.fill_(1); }
  static void fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest) {
    at::pow_out(const_cast<at::Tensor&>(dest), partial, c10::Scalar(k));
  }
};

template <class Family>
OpSpec op_spec(PassRunner run, const char* kernel_name) {
  return OpSpec{std::move(run), &Family::fold_repeats, &Family::fill_empty, kernel_name};
}

}  // namespace gpureduce
