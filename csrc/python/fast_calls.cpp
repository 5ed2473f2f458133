// reduce_op._fast: the operator's overloads bound for Python through pybind11,
// each calling a typed handle of the registered operator (looked up once).
// torch.ops' generic path boxes every argument and looks the overload up
// per call, which cost 1.4-2.7 us more than torch.sum on a 10-element CPU
// tensor (benchmarks/NOTES.md); through these it costs about what torch.sum
// does. The call still goes through the dispatcher, so autograd, the
// profiler, torch_dispatch modes and every registered key apply as before.
// reduce_op.sum takes this path only where torch.ops would add nothing: no
// torch.compile tracing and no __torch_function__ override or mode.
//
// A module of its own, apart from _C, so that _C (which LibTorch programs
// load) needs no Python.
#include <ATen/core/dispatch/Dispatcher.h>
// pybind11 with torch's casters for Tensor and dtype: torch/extension.h
// would add the whole C++ API and double this file's compile time (42 -> 20 s).
#include <torch/csrc/utils/pybind.h>

#include <optional>
#include <vector>

namespace {

using SumAll = at::Tensor(const at::Tensor&, std::optional<at::ScalarType>);
using SumDims = at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>);

c10::TypedOperatorHandle<SumAll>& sum_all_op() {
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("gpureduce::sum", "").typed<SumAll>();
  return op;
}

c10::TypedOperatorHandle<SumDims>& sum_dims_op() {
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("gpureduce::sum", "dim_IntList").typed<SumDims>();
  return op;
}

at::Tensor sum_all(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return sum_all_op().call(input, dtype);
}

at::Tensor sum_dims(const at::Tensor& input, std::optional<std::vector<int64_t>> dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  const at::OptionalIntArrayRef dims =
      dim.has_value() ? at::OptionalIntArrayRef(*dim) : at::OptionalIntArrayRef(std::nullopt);
  return sum_dims_op().call(input, dims, keepdim, dtype);
}

}  // namespace

PYBIND11_MODULE(_fast, m) {
  m.doc() = "Typed calls of gpureduce's operators (see fast_calls.cpp).";
  m.def("sum_all", &sum_all, pybind11::arg("input"), pybind11::arg("dtype") = pybind11::none());
  m.def("sum_dims", &sum_dims, pybind11::arg("input"), pybind11::arg("dim"), pybind11::arg("keepdim"),
        pybind11::arg("dtype") = pybind11::none());
}
