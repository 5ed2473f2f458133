// Usage: libtorch_sum /path/to/reduce_op/_C*.so
// Loads the operator library (no Python involved), then checks
// gpureduce::sum against torch::sum on CPU, and on CUDA when present,
// including the gradient. Prints "libtorch ok" and exits 0 on success.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/torch.h>

#include <dlfcn.h>

#include <cstdio>
#include <iostream>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "FAILED: " << what << "\n";
    ++failures;
  }
}

void check_device(const torch::Device& device) {
  auto sum_dim = c10::Dispatcher::singleton()
                     .findSchemaOrThrow("gpureduce::sum", "dim_IntList")
                     .typed<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool,
                                       std::optional<at::ScalarType>)>();
  auto sum_all = c10::Dispatcher::singleton()
                     .findSchemaOrThrow("gpureduce::sum", "")
                     .typed<at::Tensor(const at::Tensor&, std::optional<at::ScalarType>)>();
  const std::string dev = device.str();

  torch::manual_seed(0);
  auto x = torch::randn({37, 129}, torch::dtype(torch::kFloat64).device(device)).requires_grad_();
  std::vector<int64_t> dims{1};
  auto y = sum_dim.call(x, dims, false, std::nullopt);
  expect(torch::allclose(y, x.sum(1)), dev + ": sum over dim 1 matches torch::sum");
  y.sum().backward();
  expect(torch::equal(x.grad(), torch::ones_like(x)), dev + ": gradient is ones");

  auto t = torch::randint(-50, 50, {1000, 3}, torch::dtype(torch::kInt32).device(device));
  auto s = sum_all.call(t, std::nullopt);
  expect(s.scalar_type() == torch::kLong, dev + ": int32 sums to int64");
  expect(torch::equal(s, t.sum()), dev + ": int32 full sum exact");

  auto k = torch::randn({4, 5, 6}, torch::device(device));
  std::vector<int64_t> dims02{0, 2};
  auto kd = sum_dim.call(k, dims02, true, std::nullopt);
  expect(kd.sizes() == torch::IntArrayRef({1, 5, 1}), dev + ": keepdim shape");
  expect(torch::allclose(kd, k.sum(at::IntArrayRef(dims02), true), 1e-5, 1e-5), dev + ": keepdim values");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: libtorch_sum /path/to/_C.so\n";
    return 2;
  }
  if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
    std::cerr << "dlopen failed: " << dlerror() << "\n";
    return 2;
  }
  try {
    check_device(torch::kCPU);
    if (torch::cuda::is_available()) check_device(torch::Device(torch::kCUDA, 0));
  } catch (const std::exception& e) {
    std::cerr << "exception: " << e.what() << "\n";
    return 1;
  }
  if (failures) return 1;
  std::cout << "libtorch ok" << (torch::cuda::is_available() ? " (cpu, cuda)" : " (cpu)") << "\n";
  return 0;
}
