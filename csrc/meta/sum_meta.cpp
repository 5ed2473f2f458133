// Meta kernels: output shape, dtype and strides only, with SymInt throughout
// (sym_sizes, empty_symint) so that torch.compile keeps dynamic shapes dynamic.
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "../sum_shape.h"

namespace gpureduce {
namespace {

at::Tensor sum_dim_meta(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype) {
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  const at::ScalarType out_dtype = sum_result_dtype(input.scalar_type(), dtype);
  check_sum_dtype(out_dtype, "sum");
  return at::empty_symint(sum_output_sym_shape(input.sym_sizes(), mask, keepdim),
                          input.options().dtype(out_dtype));
}

at::Tensor sum_meta(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return sum_dim_meta(input, std::nullopt, false, dtype);
}

void sum_out_meta(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  check_sum_dtype(sum_out_dtype(dtype, out), "sum");
  at::native::resize_output_symint(out, sum_output_sym_shape(input.sym_sizes(), mask, keepdim));
}

at::Tensor classic_sum_meta(const at::Tensor& input, c10::string_view /*kernel*/) {
  const at::ScalarType t = input.scalar_type();
  return at::empty({}, input.options().dtype(t == at::kInt ? at::kLong : t));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, Meta, m) {
  m.impl("classic_sum", &classic_sum_meta);
  m.impl("sum", &sum_meta);
  m.impl("sum.dim_IntList", &sum_dim_meta);
  m.impl("sum.IntList_out", &sum_out_meta);
}

}  // namespace gpureduce
