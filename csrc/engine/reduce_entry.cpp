#include "reduce_entry.h"

#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/add.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>

#include <limits>

#include "reduce_shape.h"

namespace gpureduce {

at::Tensor reduce_dim_with(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                           std::optional<at::ScalarType> dtype, const OpSpec& op) {
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  const at::ScalarType out_dtype = result_dtype(input.scalar_type(), dtype);
  check_dtype_supported(out_dtype, op.kernel_name, input);
  at::Tensor out = at::empty(reduced_shape(input.sizes(), mask, keepdim), input.options().dtype(out_dtype));
  reduce_into(input, mask, keepdim, out, op);
  return out;
}

void reduce_out_with(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, const at::Tensor& out, const OpSpec& op) {
  check_out_device(input, out);
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  out_compute_dtype(dtype, out);  // checks dtype against out's
  resize_out(out, reduced_shape(input.sizes(), mask, keepdim));
  reduce_into(input, mask, keepdim, out, op);
}

void logsumexp_out_with(const at::Tensor& input, at::IntArrayRef dim, bool keepdim, const at::Tensor& out,
                        const OpSpec& op, const char* device) {
  bool cast = false;
  const at::ScalarType compute = check_logsumexp_args(input, dim, keepdim, &out, device, &cast);
  if (!cast) return reduce_out_with(input, dim, keepdim, std::nullopt, out, op);
  check_out_device(input, out);
  const at::Tensor result = reduce_dim_with(input, dim, keepdim, compute, op);
  resize_out(out, result.sizes());
  const_cast<at::Tensor&>(out).copy_(result);
}

namespace {

// A complex input's real view reduced by `op` with its pair dim kept: the
// real and imaginary parts' results side by side ([..., 2] in `dtype`),
// from one read of the input. The negative bit is resolved; the conjugate
// bit is left to the caller (a spread does not see it, a mean does).
at::Tensor reduce_complex_parts(const at::Tensor& input, const std::vector<bool>& mask, bool keepdim,
                                std::vector<int64_t> shape, at::ScalarType dtype, const OpSpec& op,
                                double correction = 0.0) {
  const at::Tensor z = input.is_conj() ? input.conj() : input;
  std::vector<bool> pair_mask(mask);
  pair_mask.push_back(false);
  shape.push_back(2);
  at::Tensor parts = at::empty(shape, input.options().dtype(dtype));
  reduce_into(at::view_as_real(z.resolve_neg()), pair_mask, keepdim, parts, op, correction);
  return parts;
}

}  // namespace

at::Tensor variance_with(const at::Tensor& input, at::OptionalIntArrayRef dim,
                         const std::optional<c10::Scalar>& correction, bool keepdim, bool root, const at::Tensor* out,
                         const OpSpec& var_op, const OpSpec& std_op) {
  if (out != nullptr) {  // torch's order: the input's dtype, the dims, then out's dtype
    check_variance_args(input, nullptr, std_op.kernel_name);
    reduced_dims_mask(input.dim(), dim);
  }
  const at::ScalarType dtype = check_variance_args(input, out, std_op.kernel_name);
  if (out != nullptr) check_out_device(input, *out);
  const double c = correction.has_value() ? correction->toDouble() : 1.0;
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  const std::vector<int64_t> shape = reduced_shape(input.sizes(), mask, keepdim);
  const at::ScalarType real = c10::toRealValueType(dtype);
  at::Tensor result;
  if (input.is_complex()) {
    // E|z - mean|^2 = var(re z) + var(im z), each over the same count: the
    // real view's pair dim kept (one read of the input, the two parts
    // side by side as columns), then the pair added. As two passes over
    // at::real and at::imag, each read every sector: a full var of 2^28
    // complex64 ran at 2279 GB/s against 4545 for float32 (H200, NOTES.md
    // session 83). Neither the conjugate nor the negative bit changes a
    // spread.
    const at::Tensor parts = reduce_complex_parts(input, mask, keepdim, shape, real, var_op, c);
    result = at::add(parts.select(-1, 0), parts.select(-1, 1));
    // Into a complex out=, torch roots the variance in out's dtype: the
    // root of NaN is NaN + NaN i there, and complex32 has no root on the CPU.
    if (root && out != nullptr && out->is_complex()) {
      resize_out(*out, shape);
      const_cast<at::Tensor&>(*out).copy_(result);
      const_cast<at::Tensor&>(*out).sqrt_();
      return *out;
    }
    if (root) result.sqrt_();
  } else if (out != nullptr && !at::isComplexType(dtype)) {
    resize_out(*out, shape);
    reduce_into(input, mask, keepdim, *out, root ? std_op : var_op, c);
    return *out;
  } else {
    result = at::empty(shape, input.options().dtype(real));
    reduce_into(input, mask, keepdim, result, root ? std_op : var_op, c);
  }
  if (out == nullptr) return result;
  resize_out(*out, shape);
  const_cast<at::Tensor&>(*out).copy_(result);
  return *out;
}

std::tuple<at::Tensor, at::Tensor> variance_mean_with(const at::Tensor& input, at::OptionalIntArrayRef dim,
                                                      const std::optional<c10::Scalar>& correction, bool keepdim,
                                                      bool root, const OpSpec& var_op, const OpSpec& std_op,
                                                      const OpSpec& mean_op) {
  check_variance_mean_dtype(input, root);
  at::Tensor spread = variance_with(input, dim, correction, keepdim, root, nullptr, var_op, std_op);
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  const std::vector<int64_t> shape = reduced_shape(input.sizes(), mask, keepdim);
  if (input.scalar_type() == at::kComplexHalf) {
    // torch's var_mean averages each part of a complex input on its own,
    // complex32's in float16 (the CPU kernels take no complex32): the
    // parts' means read as one complex32. A conjugate's mean is the
    // conjugate of its storage's.
    at::Tensor parts = reduce_complex_parts(input, mask, keepdim, shape, at::kHalf, mean_op);
    if (input.is_conj()) parts.select(-1, 1).neg_();
    return {std::move(spread), at::view_as_complex(parts)};
  }
  at::Tensor mean = at::empty(shape, input.options());
  reduce_into(input, mask, keepdim, mean, mean_op);
  return {std::move(spread), std::move(mean)};
}

at::Tensor vector_norm_with(const at::Tensor& input, const c10::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype, const at::Tensor* out, const NormSpecs& ops) {
  const at::ScalarType result_type = check_vector_norm_args(input, ord, dim, dtype, out);
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  const std::vector<int64_t> shape = reduced_shape(input.sizes(), mask, keepdim);
  at::Tensor result;
  if (out != nullptr) {
    check_out_device(input, *out);
    resize_out(*out, shape);
    result = *out;
  } else {
    result = at::empty(shape, input.options().dtype(result_type));
  }
  // No elements: every order left (the others raised above) has 0 as its
  // identity, filled in the result's dtype with no staged op, as torch
  // fills it (float8 included, which the staged ops refuse).
  if (input.numel() == 0) return result.zero_();
  const double p = ord.toDouble();
  // The input in dtype=, where an elementwise op of torch's reads it (torch
  // casts first); the kernels read a narrower input as it is (exact).
  const auto in_dtype = [&](const at::Tensor& t) { return dtype.has_value() ? t.to(*dtype) : t; };

  // Each output of one element: its magnitude (ord 0: whether it is
  // nonzero), as torch's kernel takes it, which neither squares nor roots
  // (|1e30| stays 1e30 in float32 at ord 2).
  bool one_each = true;
  for (int64_t d = 0; d < input.dim(); ++d) one_each = one_each && (!mask[d] || input.size(d) == 1);
  if (one_each) {
    // Written into the result by one elementwise kernel: a copy after it
    // took 2.5 us on the H200 where torch's 1.3 ([1, 1, 4096] over dim 1).
    const at::Tensor x = keepdim ? in_dtype(input) : in_dtype(input).reshape(shape);
    if (p != 0.0) {
      at::abs_out(result, x);
    } else {
      at::ne_out(result, x, 0);
    }
    return result;
  }

  // The staged elementwise ops (magnitudes, casts, powers) read the input's
  // distinct elements, its dims of stride 0 narrowed to one, and their
  // result is expanded again for the reduction, which reads each repeat
  // once (reduce_into): on the expansion they wrote every repeat out, and
  // sum's kernels then added k equal float32 terms where its fold rounds
  // once ([257] float32 expanded to [70001, 257], ord 3 over dim 0: 4.8
  // float32 epsilons from the float64 norm, torch's 0.1; H200).
  at::Tensor distinct = input;
  for (int64_t d = 0; d < input.dim(); ++d)
    if (input.stride(d) == 0 && input.size(d) > 1) distinct = distinct.narrow(d, 0, 1);
  const auto spread = [&](const at::Tensor& t) { return distinct.is_same(input) ? t : t.expand(input.sizes()); };
  at::Tensor x = distinct;
  if (input.is_complex()) {
    if (p == 2.0) {
      // |z|^2 = re^2 + im^2: the real view, its pair dim reduced too (one
      // read, the pairs contiguous). The conjugate and negative bits do
      // not change a magnitude.
      at::Tensor z = input.is_conj() ? input.conj() : input;
      std::vector<bool> pair_mask(mask);
      pair_mask.push_back(true);
      reduce_into(at::view_as_real(z.resolve_neg()), pair_mask, keepdim, keepdim ? result.unsqueeze(-1) : result,
                  ops.two);
      return result;
    }
    x = at::abs(in_dtype(distinct));  // the other orders take the magnitudes (a staged copy)
  }
  if (p == 1.0 || p == 2.0 || p == std::numeric_limits<double>::infinity()) {
    reduce_into(input.is_complex() ? spread(x) : input, mask, keepdim, result,
                p == 1.0 ? ops.one : p == 2.0 ? ops.two : ops.inf);
    return result;
  }
  // Staged orders: -inf the smallest magnitude (amin's kernels, in the
  // result's dtype), 0 the count of nonzeros and any other p the root of
  // the sum of |x|^p (sum's kernels, in the accumulator's dtype, then cast).
  if (x.scalar_type() != result_type) x = x.to(result_type);
  if (p == -std::numeric_limits<double>::infinity()) {
    reduce_into(spread(at::abs(x)), mask, keepdim, result, ops.amin);
    return result;
  }
  const at::ScalarType acc = acc_dtype(result_type);
  at::Tensor total = acc == result_type ? result : at::empty(shape, input.options().dtype(acc));
  if (p == 0.0) {
    reduce_into(spread(at::ne(x, 0)), mask, keepdim, total, ops.sum);
  } else {
    reduce_into(spread(at::pow(at::abs(x.to(acc)), p)), mask, keepdim, total, ops.sum);
    total.pow_(1.0 / p);
  }
  if (!total.is_same(result)) result.copy_(total);
  return result;
}

}  // namespace gpureduce
