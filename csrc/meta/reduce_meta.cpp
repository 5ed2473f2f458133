// Meta kernels: output shape, dtype and strides only, with SymInt throughout
// (sym_sizes, empty_symint) so that torch.compile keeps dynamic shapes dynamic.
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "../engine/indexed_plan.h"
#include "../engine/reduce_shape.h"

namespace gpureduce {
namespace {

// The result of a sum-like op (sum, prod, nansum): torch's shape and dtype rules.
at::Tensor sum_like_meta(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, const char* name) {
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  const at::ScalarType out_dtype = result_dtype(input.scalar_type(), dtype);
  check_dtype_supported(out_dtype, name, input);
  return at::empty_symint(reduced_sym_shape(input.sym_sizes(), mask, keepdim),
                          input.options().dtype(out_dtype));
}

at::Tensor sum_dim_meta(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype) {
  if (!dim.has_value()) check_dims_listable(input.dim());  // dim=None lists every dim
  return sum_like_meta(input, dim, keepdim, dtype, "sum");
}

at::Tensor sum_meta(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return sum_like_meta(input, std::nullopt, false, dtype, "sum");
}

at::Tensor prod_meta(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return sum_like_meta(input, std::nullopt, false, dtype, "prod");
}

at::Tensor prod_dim_meta(const at::Tensor& input, int64_t dim, bool keepdim,
                         std::optional<at::ScalarType> dtype) {
  return sum_like_meta(input, at::IntArrayRef(dim), keepdim, dtype, "prod");
}

// The out= overload of a sum-like op: out resized to the result's shape.
void sum_like_out_meta(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                       at::ScalarType compute_dtype, const at::Tensor& out, const char* name) {
  // A meta input with a real out=, or the reverse, reaches this kernel: say
  // so as torch does, rather than leave out untouched.
  TORCH_CHECK(out.device() == input.device(), "Attempting to copy from device ", input.device(), " to device ",
              out.device(), ", but cross-device copies are not allowed!");
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  check_dtype_supported(compute_dtype, name, input);
  at::native::resize_output_symint(out, reduced_sym_shape(input.sym_sizes(), mask, keepdim));
}

void sum_out_meta(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  if (!dim.has_value()) check_dims_listable(input.dim());
  sum_like_out_meta(input, dim, keepdim, out_compute_dtype(dtype, out), out, "sum");
}

void prod_out_meta(const at::Tensor& input, int64_t dim, bool keepdim, std::optional<at::ScalarType> dtype,
                   const at::Tensor& out) {
  sum_like_out_meta(input, at::IntArrayRef(dim), keepdim, out_compute_dtype(dtype, out), out, "prod");
}

// nansum as torch's meta kernels compute it: sum's shape and dtype rules,
// no check of complex inputs (those raise on the real devices only).
at::Tensor nansum_meta(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype) {
  return sum_like_meta(input, dim, keepdim, dtype, "nansum");
}

// (torch's meta kernel does not compare dtype= with out's dtype either.)
void nansum_out_meta(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> /*dtype*/, const at::Tensor& out) {
  sum_like_out_meta(input, dim, keepdim, out.scalar_type(), out, "nansum");
}

// mean: torch's checks (check_mean_args), then sum's shape and dtype rules.
at::Tensor mean_dim_meta(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype) {
  check_mean_args(input, dtype, nullptr, "mean");
  if (!dim.has_value()) check_dims_listable(input.dim());
  return sum_like_meta(input, dim, keepdim, dtype, "mean");
}

at::Tensor mean_meta(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  check_mean_args(input, dtype, nullptr, "mean");
  return sum_like_meta(input, std::nullopt, false, dtype, "mean");
}

void mean_out_meta(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  check_mean_args(input, dtype, nullptr, "mean");  // torch's order: dtype, dims, out's dtype
  if (!dim.has_value()) check_dims_listable(input.dim());
  reduced_dims_mask(input.dim(), dim);
  check_mean_args(input, dtype, &out, "mean");
  sum_like_out_meta(input, dim, keepdim, out_compute_dtype(dtype, out), out, "mean");
}

// amax and amin: torch's checks (check_extremum_args, on symbolic sizes),
// the input's dtype.
template <bool kMax>
at::Tensor extremum_meta(const at::Tensor& input, at::IntArrayRef dim, bool keepdim) {
  check_extremum_args(input, dim, nullptr, kMax ? "amax" : "amin", kMax ? "max_values" : "min_values");
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  return at::empty_symint(reduced_sym_shape(input.sym_sizes(), mask, keepdim), input.options());
}

template <bool kMax>
void extremum_out_meta(const at::Tensor& input, at::IntArrayRef dim, bool keepdim, const at::Tensor& out) {
  check_extremum_args(input, dim, &out, kMax ? "amax" : "amin", kMax ? "max_values" : "min_values");
  sum_like_out_meta(input, dim, keepdim, input.scalar_type(), out, kMax ? "amax" : "amin");
}

// max and min of every element: torch's checks, the input's dtype, no dims.
template <bool kMax>
at::Tensor extremum_all_meta(const at::Tensor& input) {
  check_extremum_args(input, {}, nullptr, kMax ? "max" : "min", kMax ? "max_all" : "min_all");
  return at::empty({}, input.options());
}

// max(input, out=) and min's: torch's checks, out resized to a scalar.
template <bool kMax>
void extremum_all_out_meta(const at::Tensor& input, const at::Tensor& out) {
  check_extremum_all_out_args(input, out, kMax, kMax ? "max_all" : "min_all");
  at::native::resize_output(out, {});
}

// argmax and argmin: torch's checks (check_arg_extremum_args), int64.
template <Extreme E>
at::Tensor arg_extremum_meta(const at::Tensor& input, std::optional<int64_t> dim, bool keepdim) {
  const std::optional<int64_t> wrapped = check_arg_extremum_args(input, dim, nullptr, E, "meta");
  return at::empty_symint(indexed_result_shape(input, wrapped, keepdim), input.options().dtype(at::kLong));
}

template <Extreme E>
void arg_extremum_out_meta(const at::Tensor& input, std::optional<int64_t> dim, bool keepdim, const at::Tensor& out) {
  const std::optional<int64_t> wrapped = check_arg_extremum_args(input, dim, &out, E, "meta");
  at::native::resize_output_symint(out, indexed_result_shape(input, wrapped, keepdim));
}

// max.dim and min.dim: (values in the input's dtype, int64 indices).
template <Extreme E>
std::tuple<at::Tensor, at::Tensor> extremum_dim_meta(const at::Tensor& input, int64_t dim, bool keepdim) {
  const int64_t wrapped = check_extremum_dim_args(input, dim, nullptr, nullptr, E, "meta");
  const std::vector<c10::SymInt> shape = indexed_result_shape(input, wrapped, keepdim);
  return {at::empty_symint(shape, input.options()), at::empty_symint(shape, input.options().dtype(at::kLong))};
}

template <Extreme E>
void extremum_dim_out_meta(const at::Tensor& input, int64_t dim, bool keepdim, const at::Tensor& values,
                           const at::Tensor& indices) {
  const int64_t wrapped = check_extremum_dim_args(input, dim, &values, &indices, E, "meta");
  const std::vector<c10::SymInt> shape = indexed_result_shape(input, wrapped, keepdim);
  at::native::resize_output_symint(values, shape);
  at::native::resize_output_symint(indices, shape);
}

// logsumexp: torch's checks (check_logsumexp_args) and result dtype.
at::Tensor logsumexp_meta(const at::Tensor& input, at::IntArrayRef dim, bool keepdim) {
  const at::ScalarType dtype = check_logsumexp_args(input, dim, keepdim, nullptr, "meta");
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  return at::empty_symint(reduced_sym_shape(input.sym_sizes(), mask, keepdim), input.options().dtype(dtype));
}

void logsumexp_out_meta(const at::Tensor& input, at::IntArrayRef dim, bool keepdim, const at::Tensor& out) {
  const at::ScalarType dtype = check_logsumexp_args(input, dim, keepdim, &out, "meta");
  sum_like_out_meta(input, dim, keepdim, dtype, out, "logsumexp");
}

// var and std: torch's checks (check_variance_args) and result dtype.
at::Tensor variance_meta(const at::Tensor& input, at::OptionalIntArrayRef dim,
                         const std::optional<c10::Scalar>& /*correction*/, bool keepdim) {
  const at::ScalarType dtype = check_variance_args(input, nullptr, "std");
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  return at::empty_symint(reduced_sym_shape(input.sym_sizes(), mask, keepdim), input.options().dtype(dtype));
}

void variance_out_meta(const at::Tensor& input, at::OptionalIntArrayRef dim,
                       const std::optional<c10::Scalar>& /*correction*/, bool keepdim, const at::Tensor& out) {
  check_variance_args(input, nullptr, "std");  // torch's order: the input's dtype, the dims, out's dtype
  reduced_dims_mask(input.dim(), dim);
  const at::ScalarType dtype = check_variance_args(input, &out, "std");
  sum_like_out_meta(input, dim, keepdim, dtype, out, "std");
}

// var_mean and std_mean (`kRoot`): the spread's real dtype, the mean the input's.
template <bool kRoot>
std::tuple<at::Tensor, at::Tensor> variance_mean_meta(const at::Tensor& input, at::OptionalIntArrayRef dim,
                                                      const std::optional<c10::Scalar>& /*correction*/, bool keepdim) {
  check_variance_mean_dtype(input, kRoot);
  const at::ScalarType dtype = check_variance_args(input, nullptr, "std");
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  at::Tensor spread =
      at::empty_symint(reduced_sym_shape(input.sym_sizes(), mask, keepdim), input.options().dtype(dtype));
  at::Tensor mean = at::empty_symint(spread.sym_sizes(), input.options());
  return {std::move(spread), std::move(mean)};
}

// linalg_vector_norm: torch's checks (check_vector_norm_args, on symbolic
// sizes) and result dtype.
at::Tensor vector_norm_meta(const at::Tensor& input, const c10::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype) {
  const at::ScalarType result = check_vector_norm_args(input, ord, dim, dtype, nullptr);
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  return at::empty_symint(reduced_sym_shape(input.sym_sizes(), mask, keepdim), input.options().dtype(result));
}

void vector_norm_out_meta(const at::Tensor& input, const c10::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                          std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  const at::ScalarType result = check_vector_norm_args(input, ord, dim, dtype, &out);
  sum_like_out_meta(input, dim, keepdim, result, out, "norm");
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
  m.impl("prod", &prod_meta);
  m.impl("prod.dim_int", &prod_dim_meta);
  m.impl("prod.int_out", &prod_out_meta);
  m.impl("nansum", &nansum_meta);
  m.impl("nansum.out", &nansum_out_meta);
  m.impl("mean", &mean_meta);
  m.impl("mean.dim", &mean_dim_meta);
  m.impl("mean.out", &mean_out_meta);
  m.impl("amax", &extremum_meta<true>);
  m.impl("amax.out", &extremum_out_meta<true>);
  m.impl("amin", &extremum_meta<false>);
  m.impl("amin.out", &extremum_out_meta<false>);
  m.impl("max", &extremum_all_meta<true>);
  m.impl("min", &extremum_all_meta<false>);
  m.impl("max.unary_out", &extremum_all_out_meta<true>);
  m.impl("min.unary_out", &extremum_all_out_meta<false>);
  m.impl("argmax", &arg_extremum_meta<Extreme::kMax>);
  m.impl("argmax.out", &arg_extremum_out_meta<Extreme::kMax>);
  m.impl("argmin", &arg_extremum_meta<Extreme::kMin>);
  m.impl("argmin.out", &arg_extremum_out_meta<Extreme::kMin>);
  m.impl("max.dim", &extremum_dim_meta<Extreme::kMax>);
  m.impl("max.dim_max", &extremum_dim_out_meta<Extreme::kMax>);
  m.impl("min.dim", &extremum_dim_meta<Extreme::kMin>);
  m.impl("min.dim_min", &extremum_dim_out_meta<Extreme::kMin>);
  m.impl("logsumexp", &logsumexp_meta);
  m.impl("logsumexp.out", &logsumexp_out_meta);
  m.impl("var.correction", &variance_meta);
  m.impl("var.correction_out", &variance_out_meta);
  m.impl("std.correction", &variance_meta);
  m.impl("std.correction_out", &variance_out_meta);
  m.impl("var_mean.correction", &variance_mean_meta<false>);
  m.impl("std_mean.correction", &variance_mean_meta<true>);
  m.impl("linalg_vector_norm", &vector_norm_meta);
  m.impl("linalg_vector_norm.out", &vector_norm_out_meta);
}

}  // namespace gpureduce
