// The families' host-side pieces (reduce_family.h).
#include "reduce_family.h"

#include <ATen/ScalarOps.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/pow.h>

namespace gpureduce {

void SumFamily::fill_empty(const at::Tensor& t) { t.zero_(); }

void SumFamily::fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest) {
  at::mul_out(const_cast<at::Tensor&>(dest), partial, c10::scalar_to_tensor(c10::Scalar(k)));
}

void ProdFamily::fill_empty(const at::Tensor& t) { t.fill_(1); }

void ProdFamily::fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest) {
  at::pow_out(const_cast<at::Tensor&>(dest), partial, c10::Scalar(k));
}

}  // namespace gpureduce
