#include "reduce_entry.h"

#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/imag.h>
#include <ATen/ops/real.h>

#include "reduce_shape.h"

namespace gpureduce {

at::Tensor reduce_dim_with(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                           std::optional<at::ScalarType> dtype, const OpSpec& op) {
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  const at::ScalarType out_dtype = result_dtype(input.scalar_type(), dtype);
  check_dtype_supported(out_dtype, op.kernel_name);
  at::Tensor out = at::empty(reduced_shape(input.sizes(), mask, keepdim), input.options().dtype(out_dtype));
  reduce_into(input, mask, keepdim, out, op);
  return out;
}

void reduce_out_with(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, const at::Tensor& out, const OpSpec& op) {
  TORCH_CHECK(out.device() == input.device(), "Expected out tensor to be on ", input.device(),
              " like the input, but got it on ", out.device());
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  out_compute_dtype(dtype, out);  // checks dtype against out's
  at::native::resize_output(out, reduced_shape(input.sizes(), mask, keepdim));
  reduce_into(input, mask, keepdim, out, op);
}

void logsumexp_out_with(const at::Tensor& input, at::IntArrayRef dim, bool keepdim, const at::Tensor& out,
                        const OpSpec& op, const char* device) {
  bool cast = false;
  const at::ScalarType compute = check_logsumexp_args(input, dim, keepdim, &out, device, &cast);
  if (!cast) return reduce_out_with(input, dim, keepdim, std::nullopt, out, op);
  TORCH_CHECK(out.device() == input.device(), "Expected out tensor to be on ", input.device(),
              " like the input, but got it on ", out.device());
  const at::Tensor result = reduce_dim_with(input, dim, keepdim, compute, op);
  at::native::resize_output(out, result.sizes());
  const_cast<at::Tensor&>(out).copy_(result);
}

at::Tensor variance_with(const at::Tensor& input, at::OptionalIntArrayRef dim,
                         const std::optional<c10::Scalar>& correction, bool keepdim, bool root, const at::Tensor* out,
                         const OpSpec& var_op, const OpSpec& std_op) {
  const at::ScalarType dtype = check_variance_args(input, out, std_op.kernel_name);
  if (out != nullptr) {
    TORCH_CHECK(out->device() == input.device(), "Expected out tensor to be on ", input.device(),
                " like the input, but got it on ", out->device());
  }
  const double c = correction.has_value() ? correction->toDouble() : 1.0;
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  const std::vector<int64_t> shape = reduced_shape(input.sizes(), mask, keepdim);
  const at::ScalarType real = c10::toRealValueType(dtype);
  at::Tensor result;
  if (input.is_complex()) {
    // E|z - mean|^2 = var(re z) + var(im z), each over the same count.
    at::Tensor re = at::empty(shape, input.options().dtype(real));
    at::Tensor im = at::empty(shape, input.options().dtype(real));
    reduce_into(at::real(input), mask, keepdim, re, var_op, c);
    reduce_into(at::imag(input), mask, keepdim, im, var_op, c);
    result = re.add_(im);
    if (root) result.sqrt_();
  } else if (out != nullptr && !at::isComplexType(dtype)) {
    at::native::resize_output(*out, shape);
    reduce_into(input, mask, keepdim, *out, root ? std_op : var_op, c);
    return *out;
  } else {
    result = at::empty(shape, input.options().dtype(real));
    reduce_into(input, mask, keepdim, result, root ? std_op : var_op, c);
  }
  if (out == nullptr) return result;
  at::native::resize_output(*out, shape);
  const_cast<at::Tensor&>(*out).copy_(result);
  return *out;
}

std::tuple<at::Tensor, at::Tensor> variance_mean_with(const at::Tensor& input, at::OptionalIntArrayRef dim,
                                                      const std::optional<c10::Scalar>& correction, bool keepdim,
                                                      bool root, const OpSpec& var_op, const OpSpec& std_op,
                                                      const OpSpec& mean_op) {
  at::Tensor spread = variance_with(input, dim, correction, keepdim, root, nullptr, var_op, std_op);
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  at::Tensor mean = at::empty(reduced_shape(input.sizes(), mask, keepdim), input.options());
  reduce_into(input, mask, keepdim, mean, mean_op);
  return {std::move(spread), std::move(mean)};
}

}  // namespace gpureduce
