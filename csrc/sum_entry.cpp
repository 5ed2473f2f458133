#include "sum_entry.h"

#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>

#include "sum_shape.h"

namespace gpureduce {

at::Tensor sum_dim_with(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype, const PassRunner& run,
                        const char* kernel_name) {
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  const at::ScalarType out_dtype = sum_result_dtype(input.scalar_type(), dtype);
  check_sum_dtype(out_dtype, kernel_name);
  at::Tensor out = at::empty(sum_output_shape(input.sizes(), mask, keepdim),
                             input.options().dtype(out_dtype));
  sum_into(input, mask, keepdim, out, run, kernel_name);
  return out;
}

void sum_out_with(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype, const at::Tensor& out,
                  const PassRunner& run, const char* kernel_name) {
  TORCH_CHECK(out.device() == input.device(), "Expected out tensor to be on ", input.device(),
              " like the input, but got it on ", out.device());
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  sum_out_dtype(dtype, out);  // checks dtype against out's
  at::native::resize_output(out, sum_output_shape(input.sizes(), mask, keepdim));
  sum_into(input, mask, keepdim, out, run, kernel_name);
}

}  // namespace gpureduce
