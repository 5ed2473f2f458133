#include "reduce_entry.h"

#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>

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

}  // namespace gpureduce
