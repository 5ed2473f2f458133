// The "cpu" entry of the classic progression: the plain serial loop, in a wide
// accumulator (double, or int64 for integers) so that it can serve as a
// reference.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/scalar_tensor.h>
#include <torch/library.h>

#include "../classic.h"

namespace gpureduce {
namespace {

at::Tensor classic_sum_cpu(const at::Tensor& input, c10::string_view kernel) {
  const std::string name(kernel);
  TORCH_CHECK(is_classic_kernel(name), "unknown classic kernel '", name, "'");
  TORCH_CHECK(name == "cpu", "classic kernel '", name, "' runs on CUDA tensors; got a CPU tensor");
  const at::ScalarType t = input.scalar_type();
  TORCH_CHECK(t == at::kFloat || t == at::kInt || t == at::kHalf || t == at::kBFloat16,
              "classic kernels take float32, int32, float16 or bfloat16, got ", t);
  const at::Tensor x = input.contiguous();
  if (t == at::kInt) {
    const int32_t* p = x.const_data_ptr<int32_t>();
    int64_t s = 0;
    for (int64_t i = 0; i < x.numel(); ++i) s += p[i];
    return at::scalar_tensor(s, x.options().dtype(at::kLong));
  }
  const at::Tensor xf = x.to(at::kDouble);
  const double* p = xf.const_data_ptr<double>();
  double s = 0;
  for (int64_t i = 0; i < xf.numel(); ++i) s += p[i];
  return at::scalar_tensor(s, x.options().dtype(at::kDouble)).to(t);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CPU, m) { m.impl("classic_sum", &classic_sum_cpu); }

}  // namespace gpureduce
