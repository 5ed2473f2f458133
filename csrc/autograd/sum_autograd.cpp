// Autograd for gpureduce::sum. The backward broadcasts the gradient back to
// the input's shape (unsqueeze the reduced dims when keepdim=False, expand)
// and casts back from any dtype= argument. It is built from ATen ops, so it is
// itself differentiable and double backward works.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

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

class SumFunction : public torch::autograd::Function<SumFunction> {
 public:
  // `reduced` is the validated, ascending list of reduced dims: arguments are
  // checked before apply(), so no error is raised from inside the autograd
  // node's construction.
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input,
                            std::optional<std::vector<int64_t>> dim, std::vector<int64_t> reduced,
                            bool keepdim, std::optional<at::ScalarType> dtype) {
    ctx->saved_data["reduced"] = reduced;
    ctx->saved_data["keepdim"] = keepdim;
    ctx->saved_data["input_dtype"] = input.scalar_type();
    ctx->saved_data["input_sizes"] = c10::IValue(input.sym_sizes());
    at::AutoDispatchBelowADInplaceOrView guard;
    const at::OptionalIntArrayRef dim_ref =
        dim.has_value() ? at::OptionalIntArrayRef(*dim) : at::OptionalIntArrayRef(std::nullopt);
    return call_sum_dim(input, dim_ref, keepdim, dtype);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    at::Tensor g = grads[0];
    const auto reduced = ctx->saved_data["reduced"].toIntVector();
    if (!ctx->saved_data["keepdim"].toBool()) {
      for (int64_t d : reduced) g = g.unsqueeze(d);  // ascending order
    }
    const std::vector<c10::SymInt> sizes = ctx->saved_data["input_sizes"].toSymIntVector();
    g = g.expand_symint(sizes);
    const auto input_dtype = ctx->saved_data["input_dtype"].toScalarType();
    if (g.scalar_type() != input_dtype) g = g.to(input_dtype);
    return {g, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor sum_dim_autograd(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype) {
  TORCH_CHECK_NOT_IMPLEMENTED(!input.is_nested(), "gpureduce::sum does not take nested tensors");
  const std::vector<bool> mask = reduced_dims_mask(input.dim(), dim);
  const at::ScalarType out_dtype = result_dtype(input.scalar_type(), dtype);
  check_dtype_supported(out_dtype, input.is_cuda() ? "sum_cuda" : "sum_cpu");
  // As torch: a result that cannot carry a gradient, from an input that needs one.
  TORCH_CHECK(!(at::GradMode::is_enabled() && input.requires_grad()) || at::isFloatingType(out_dtype) ||
                  at::isComplexType(out_dtype),
              "Autograd not support dtype: ", c10::toString(out_dtype));
  if (!(at::GradMode::is_enabled() && input.requires_grad())) {
    // No graph to record: skip the autograd node and its saved state (about
    // 1 us a call on a 10-element CPU tensor).
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_sum_dim(input, dim, keepdim, dtype);
  }
  std::vector<int64_t> reduced;
  for (int64_t d = 0; d < input.dim(); ++d)
    if (mask[d]) reduced.push_back(d);
  std::optional<std::vector<int64_t>> dim_vec;
  if (dim.has_value()) dim_vec = dim->vec();
  return SumFunction::apply(input, dim_vec, reduced, keepdim, dtype);
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
