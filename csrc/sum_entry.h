// Entry points that every backend's kernels share: argument checks, output
// allocation and the out= contract. A backend supplies only its PassRunner.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "reduce_plan.h"

namespace gpureduce {

at::Tensor sum_dim_with(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype, const PassRunner& run,
                        const char* kernel_name);

void sum_out_with(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype, const at::Tensor& out,
                  const PassRunner& run, const char* kernel_name);

}  // namespace gpureduce
