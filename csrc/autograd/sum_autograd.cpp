// Autograd for gpureduce::sum. The backward broadcasts the gradient back to
// the input's shape (unsqueeze the reduced dims when keepdim=False, expand)
// and casts back from any dtype= argument. It is built from ATen ops, so it is
// itself differentiable and double backward works. Errors in the arguments
// are raised by the kernel below before any node is made.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/library.h>

#include <memory>
#include <type_traits>
#include <utility>

#include "../engine/reduce_shape.h"

namespace gpureduce {
namespace {

at::Tensor call_sum_dim(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("gpureduce::sum", "dim_IntList")
                       .typed<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool,
                                         std::optional<at::ScalarType>)>();
  return op.call(input, dim, keepdim, dtype);
}

// The backward node, written as ATen's generated nodes are (a Node with
// plain members) rather than as a torch::autograd::Function: the Function's
// context map of IValues and its bookkeeping cost about 2 us a call on a
// 10-element CPU tensor (benchmarks/NOTES.md, per-call cost).
struct GpureduceSumBackward : public torch::autograd::Node {
  std::vector<int64_t> reduced;  // ascending
  bool keepdim = false;
  at::ScalarType input_dtype = at::kFloat;
  std::vector<c10::SymInt> input_sizes;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    at::Tensor g = grads[0];
    if (!g.defined()) return {at::Tensor()};
    if (!keepdim) {
      for (int64_t d : reduced) g = g.unsqueeze(d);
    }
    g = g.expand_symint(input_sizes);
    if (g.scalar_type() != input_dtype) g = g.to(input_dtype);
    return {g};
  }
  std::string name() const override { return "GpureduceSumBackward"; }
};

// torch's autograd graph holds nodes by std::shared_ptr up to 2.12 and by
// c10::intrusive_ptr from 2.13 on; this builds one either way.
using NodePtr = std::remove_cv_t<std::remove_reference_t<decltype(std::declval<torch::autograd::Edge>().function)>>;

template <class T>
NodePtr make_node() {
  if constexpr (std::is_same_v<NodePtr, std::shared_ptr<torch::autograd::Node>>) {
    return std::shared_ptr<T>(new T());
  } else {
    return c10::make_intrusive<T>();
  }
}

at::Tensor sum_dim_autograd(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype) {
  TORCH_CHECK_NOT_IMPLEMENTED(!input.is_nested(), "gpureduce::sum does not take nested tensors");
  const bool record = at::GradMode::is_enabled() && input.requires_grad();
  if (!record) {
    // No graph to record: straight to the kernel below.
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_sum_dim(input, dim, keepdim, dtype);
  }
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  const at::ScalarType out_dtype = result_dtype(input.scalar_type(), dtype);
  check_dtype_supported(out_dtype, input.is_cuda() ? "sum_cuda" : "sum_cpu");
  // As torch: a result that cannot carry a gradient, from an input that needs one.
  TORCH_CHECK(at::isFloatingType(out_dtype) || at::isComplexType(out_dtype),
              "Autograd not support dtype: ", c10::toString(out_dtype));
  at::Tensor result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = call_sum_dim(input, dim, keepdim, dtype);
  }
  NodePtr node = make_node<GpureduceSumBackward>();
  auto* sum_node = static_cast<GpureduceSumBackward*>(node.get());
  for (int64_t d = 0; d < input.dim(); ++d)
    if (mask[d]) sum_node->reduced.push_back(d);
  sum_node->keepdim = keepdim;
  sum_node->input_dtype = input.scalar_type();
  sum_node->input_sizes = input.sym_sizes().vec();
  node->set_next_edges(torch::autograd::collect_next_edges(input));
  torch::autograd::set_history(result, node);
  return result;
}

at::Tensor sum_autograd(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return sum_dim_autograd(input, std::nullopt, false, dtype);
}

// out= overloads are not differentiable, in torch as here; say so as torch does.
void sum_out_autograd(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                      std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  TORCH_CHECK(!(at::GradMode::is_enabled() && (input.requires_grad() || out.requires_grad())),
              "sum(): functions with out=... arguments don't support automatic differentiation, "
              "but one of the arguments requires grad.");
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("gpureduce::sum", "IntList_out")
                       .typed<void(const at::Tensor&, at::OptionalIntArrayRef, bool,
                                   std::optional<at::ScalarType>, const at::Tensor&)>();
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    op.call(input, dim, keepdim, dtype, out);
  }
  torch::autograd::impl::bump_version(out);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, Autograd, m) {
  m.impl("sum", &sum_autograd);
  m.impl("sum.dim_IntList", &sum_dim_autograd);
  m.impl("sum.IntList_out", &sum_out_autograd);
}

}  // namespace gpureduce
