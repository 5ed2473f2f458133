// Autograd for gpureduce::sum, nansum, mean, prod, amax, amin, max, min
// (of every element and along a dim), argmax, argmin, logsumexp, var, std,
// var_mean, std_mean and linalg_vector_norm. The backward broadcasts
// the gradient back to the input's shape (unsqueeze the reduced dims when
// keepdim=False, expand) and casts back from any dtype= argument; nansum's
// then zeroes it where the input is NaN, as torch's does, mean's divides it
// by the count of elements reduced into each output, prod's
// multiplies it by the product of the other elements of each slice, and
// amax's and amin's splits it evenly among the elements equal to the result. It is
// built from ATen ops, so it is itself differentiable and double backward
// works. Errors in the arguments are raised by the kernel below before any
// node is made.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/cumprod.h>
#include <ATen/ops/div.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/flip.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/logical_not.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/add.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/logical_or.h>
#include <ATen/ops/scatter.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/sgn.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/real.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/ops/full_like.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>
#include <string>
#include <type_traits>
#include <utility>

#include "../engine/reduce_shape.h"
#include "forward_ad.h"
#include "node.h"

namespace gpureduce {
namespace {

using DimOp = c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool,
                                                    std::optional<at::ScalarType>)>;

DimOp find_dim_op(const char* name, const char* overload) {
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow(name, overload)
      .typed<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>)>();
}

at::Tensor call_sum_dim(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype) {
  static const DimOp op = find_dim_op("gpureduce::sum", "dim_IntList");
  return op.call(input, dim, keepdim, dtype);
}

at::Tensor call_nansum(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype) {
  static const DimOp op = find_dim_op("gpureduce::nansum", "");
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

  // The result's gradient at the input's shape, in the result's dtype.
  at::Tensor broadcast(at::Tensor g) const {
    if (!keepdim) {
      for (int64_t d : reduced) g = g.unsqueeze(d);
    }
    return g.expand_symint(input_sizes);
  }
  // A reduced tensor with the reduced dims back, of size 1.
  at::Tensor kept(at::Tensor t) const {
    if (!keepdim) {
      for (int64_t d : reduced) t = t.unsqueeze(d);
    }
    return t;
  }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    if (!grads[0].defined()) return {at::Tensor()};
    at::Tensor g = broadcast(grads[0]);
    if (g.scalar_type() != input_dtype) g = g.to(input_dtype);
    return {g};
  }
  std::string name() const override { return "GpureduceSumBackward"; }
};

// nansum: sum's gradient where the input is not NaN, zero where it is. The
// input is saved (a SavedVariable, so that an in-place change to it before
// backward raises, as in torch).
struct GpureduceNansumBackward : public GpureduceSumBackward {
  torch::autograd::SavedVariable self_;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    torch::autograd::variable_list g = GpureduceSumBackward::apply(std::move(grads));
    if (!g[0].defined()) return g;
    const at::Tensor self = self_.unpack();
    return {g[0].mul(self.isnan().logical_not())};
  }
  void release_variables() override { self_.reset_data(); }
  std::string name() const override { return "GpureduceNansumBackward"; }
};

// mean: sum's gradient divided by the count of elements reduced into each
// output (the gradient divided before it is broadcast: the same values as
// torch's broadcast-then-divide, at the result's size). A count of 0 gives
// NaN or inf, as torch's does.
struct GpureduceMeanBackward : public GpureduceSumBackward {
  c10::SymInt count = 1;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    if (!grads[0].defined()) return {at::Tensor()};
    return GpureduceSumBackward::apply({grads[0].div(c10::Scalar(count))});
  }
  std::string name() const override { return "GpureduceMeanBackward"; }
};

// prod: each element's gradient is the product of the others in its slice
// along the reduced dim (all elements, flattened, for a full product),
// written as the product of those before it times the product of those
// after it (two exclusive running products), never as result / x, so that
// one zero or several give the right gradient with no division and no
// host-side check for zeros. Computed in the gradient's dtype, then cast to
// the input's (dtype= casts the input before the product).
struct GpureduceProdBackward : public GpureduceSumBackward {
  torch::autograd::SavedVariable self_;
  bool full = false;  // prod over all elements; else over reduced[0]

  // The product of the elements before each one along `d`, times that of
  // those after it.
  static at::Tensor others_product(const at::Tensor& x, int64_t d) {
    const int64_t n = x.size(d);
    if (n <= 1) return at::ones_like(x);
    // Made from x, not from its options: for a DTensor x, a plain tensor
    // could not join it in the cat.
    const at::Tensor one = at::ones_like(x.narrow(d, 0, 1));
    const at::Tensor before = at::cat({one, x.narrow(d, 0, n - 1)}, d).cumprod(d);
    const at::Tensor after = at::cat({one, x.narrow(d, 1, n - 1).flip(d)}, d).cumprod(d).flip(d);
    return before.mul(after);
  }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    if (!grads[0].defined()) return {at::Tensor()};
    const at::Tensor g = broadcast(grads[0]);
    const at::Tensor self = self_.unpack();
    const at::Tensor x = self.scalar_type() == g.scalar_type() ? self : self.to(g.scalar_type());
    at::Tensor others;
    if (x.dim() == 0) {
      others = at::ones_like(x);
    } else if (full) {
      others = others_product(x.reshape({-1}), 0).reshape(x.sizes());
    } else {
      others = others_product(x, reduced[0]);
    }
    at::Tensor grad_in = g.mul(others.conj());
    if (grad_in.scalar_type() != input_dtype) grad_in = grad_in.to(input_dtype);
    return {grad_in};
  }
  void release_variables() override { self_.reset_data(); }
  std::string name() const override { return "GpureduceProdBackward"; }
};

// The tangent formulas below (set_tangent, forward_ad.h) are torch's
// (derivatives.yaml).

// The dims that `dim` reduces, ascending, and `t` (reduced over them) with
// them back as size 1 where keepdim dropped them.
std::vector<int64_t> reduced_list(int64_t ndim, at::OptionalIntArrayRef dim) {
  const std::vector<bool> mask = reduced_dims_mask(ndim, dim);
  std::vector<int64_t> reduced;
  for (int64_t d = 0; d < ndim; ++d)
    if (mask[d]) reduced.push_back(d);
  return reduced;
}

at::Tensor with_reduced_dims(at::Tensor t, const std::vector<int64_t>& reduced, bool keepdim) {
  if (!keepdim)
    for (int64_t d : reduced) t = t.unsqueeze(d);
  return t;
}

at::Tensor real_part(const at::Tensor& z) { return z.is_complex() ? at::real(z) : z; }

// The tangent of a maximum or minimum: the input's tangent averaged over
// the elements equal to the result (torch's amaxamin_jvp and
// evenly_read_jvp; a NaN result matches none, and gives NaN).
at::Tensor extremum_tangent(const at::Tensor& p, const at::Tensor& t, const at::Tensor& result,
                            const std::vector<int64_t>& reduced, bool keepdim) {
  const at::Tensor hit = p.eq(with_reduced_dims(result, reduced, keepdim));
  return t.masked_fill(hit.logical_not(), 0).sum(reduced, keepdim).div(hit.sum(reduced, keepdim));
}

// A sum-like op's result through `call` (the kernel below autograd), and,
// where the input needs a gradient, a Node of type N recording it; `name` is
// the op's kernel prefix ("sum": "sum_cpu", "sum_cuda"), `fill` fills the
// node's own members.
template <class N, class Call, class Fill>
at::Tensor record_sum_like(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                           std::optional<at::ScalarType> dtype, const std::string& name, Call call, Fill fill) {
  TORCH_CHECK_NOT_IMPLEMENTED(!input.is_nested(), "gpureduce::", name, " does not take nested tensors");
  const bool record = at::GradMode::is_enabled() && input.requires_grad();
  if (!record) {
    // No graph to record: straight to the kernel below.
    at::AutoDispatchBelowADInplaceOrView guard;
    return call(input, dim, keepdim, dtype);
  }
  const std::vector<int64_t> reduced = reduced_list(input.dim(), dim);  // the dims' errors first
  const at::ScalarType out_dtype = result_dtype(input.scalar_type(), dtype);
  check_dtype_supported(out_dtype, (name + (input.is_cuda() ? "_cuda" : "_cpu")).c_str());
  // As torch: a result that cannot carry a gradient, from an input that needs one.
  TORCH_CHECK(at::isFloatingType(out_dtype) || at::isComplexType(out_dtype),
              "Autograd not support dtype: ", c10::toString(out_dtype));
  at::Tensor result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = call(input, dim, keepdim, dtype);
  }
  NodePtr node = make_node<N>();
  auto* n = static_cast<N*>(node.get());
  n->reduced = reduced;
  n->keepdim = keepdim;
  n->input_dtype = input.scalar_type();
  n->input_sizes = input.sym_sizes().vec();
  fill(*n);
  node->set_next_edges(torch::autograd::collect_next_edges(input));
  torch::autograd::set_history(result, node);
  return result;
}

// amax and amin: the gradient split evenly among the elements equal to the
// result in each slice, as torch's is (the gradient over their count, times
// the mask; a NaN result matches no element, so its slice's gradient is NaN,
// as in torch). Built of ATen ops, so it is itself differentiable.
struct GpureduceExtremumBackward : public GpureduceSumBackward {
  torch::autograd::SavedVariable self_, result_;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    if (!grads[0].defined()) return {at::Tensor()};
    const at::Tensor self = self_.unpack();
    const at::Tensor hit = broadcast(result_.unpack()).eq(self);
    const at::Tensor count = hit.sum(reduced, /*keepdim=*/true);
    return {broadcast(grads[0]).div(count).mul(hit)};
  }
  void release_variables() override {
    self_.reset_data();
    result_.reset_data();
  }
};
struct GpureduceAmaxBackward : public GpureduceExtremumBackward {
  std::string name() const override { return "GpureduceAmaxBackward"; }
};
struct GpureduceAminBackward : public GpureduceExtremumBackward {
  std::string name() const override { return "GpureduceAminBackward"; }
};

at::Tensor call_logsumexp(const at::Tensor& input, at::IntArrayRef dim, bool keepdim) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("gpureduce::logsumexp", "")
                             .typed<at::Tensor(const at::Tensor&, at::IntArrayRef, bool)>();
  return op.call(input, dim, keepdim);
}

// logsumexp: the gradient times exp(x - result) in each slice (the
// softmax of the slice), as torch's is. Built of ATen ops, so it is itself
// differentiable. The result is saved detached (as amax's is); where the
// backward itself records a graph (double backward), it is computed again
// from the input through the op's autograd, so that the second derivative
// sees the result's dependence on x.
struct GpureduceLogsumexpBackward : public GpureduceSumBackward {
  torch::autograd::SavedVariable self_, result_;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    if (!grads[0].defined()) return {at::Tensor()};
    const at::Tensor self = self_.unpack();
    const bool records = at::GradMode::is_enabled() && self.requires_grad();
    const at::Tensor result = records ? call_logsumexp(self, reduced, /*keepdim=*/true) : broadcast(result_.unpack());
    // (conjugated for complex inputs, as torch's logsumexp_backward)
    return {broadcast(grads[0]).mul(self.sub(result).exp().conj())};
  }
  void release_variables() override {
    self_.reset_data();
    result_.reset_data();
  }
  std::string name() const override { return "GpureduceLogsumexpBackward"; }
};

at::Tensor sum_dim_autograd(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype) {
  at::Tensor result = record_sum_like<GpureduceSumBackward>(input, dim, keepdim, dtype, "sum", &call_sum_dim,
                                                            [](GpureduceSumBackward&) {});
  set_tangent(input, result, [&](const at::Tensor&, const at::Tensor& t) { return call_sum_dim(t, dim, keepdim, dtype); });
  return result;
}

at::Tensor nansum_autograd(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                           std::optional<at::ScalarType> dtype) {
  // nansum's own checks first (complex inputs), as the kernel would raise them.
  if (at::GradMode::is_enabled() && input.requires_grad())
    check_nansum_args(input, dim, dtype, nullptr, input.is_cuda() ? "nansum_cuda" : "nansum_cpu");
  at::Tensor result = record_sum_like<GpureduceNansumBackward>(
      input, dim, keepdim, dtype, "nansum", &call_nansum,
      [&](GpureduceNansumBackward& n) { n.self_ = torch::autograd::SavedVariable(input, /*is_output=*/false); });
  set_tangent(input, result, [&](const at::Tensor& p, const at::Tensor& t) {
    return call_sum_dim(t.masked_fill(p.isnan(), 0), dim, keepdim, dtype);
  });
  return result;
}

at::Tensor call_mean_dim(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype) {
  static const DimOp op = find_dim_op("gpureduce::mean", "dim");
  return op.call(input, dim, keepdim, dtype);
}

at::Tensor mean_dim_autograd(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                             std::optional<at::ScalarType> dtype) {
  // mean's own checks first (integer dtypes), as the kernel would raise them.
  if (at::GradMode::is_enabled() && input.requires_grad())
    check_mean_args(input, dtype, nullptr, input.is_cuda() ? "mean_cuda" : "sum_cpu");
  at::Tensor result = record_sum_like<GpureduceMeanBackward>(input, dim, keepdim, dtype, "mean", &call_mean_dim,
                                                             [&](GpureduceMeanBackward& n) {
                                                               c10::SymInt count = 1;
                                                               for (int64_t d : n.reduced) count *= input.sym_size(d);
                                                               n.count = std::move(count);
                                                             });
  set_tangent(input, result, [&](const at::Tensor&, const at::Tensor& t) { return call_mean_dim(t, dim, keepdim, dtype); });
  return result;
}

// mean() and sum() go below autograd as their dim overloads with dims []
// (every dim, as None), not None: torch's structured kernels take None as a
// list of every dim, which a tensor of more than 64 dims cannot name
// (check_dims_listable), where its mean() and sum() take any tensor.
at::Tensor mean_autograd(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return mean_dim_autograd(input, at::IntArrayRef{}, false, dtype);
}

// prod and prod.dim_int: the kernel below autograd, by overload.
at::Tensor call_prod(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype) {
  if (!dim.has_value()) {
    static const auto all = c10::Dispatcher::singleton()
                                .findSchemaOrThrow("gpureduce::prod", "")
                                .typed<at::Tensor(const at::Tensor&, std::optional<at::ScalarType>)>();
    return all.call(input, dtype);
  }
  static const auto one_dim = c10::Dispatcher::singleton()
                                  .findSchemaOrThrow("gpureduce::prod", "dim_int")
                                  .typed<at::Tensor(const at::Tensor&, int64_t, bool, std::optional<at::ScalarType>)>();
  return one_dim.call(input, (*dim)[0], keepdim, dtype);
}

at::Tensor prod_record(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype) {
  at::Tensor result = record_sum_like<GpureduceProdBackward>(input, dim, keepdim, dtype, "prod", &call_prod,
                                                             [&](GpureduceProdBackward& n) {
                                                               n.self_ = torch::autograd::SavedVariable(input, false);
                                                               n.full = !dim.has_value();
                                                             });
  // Each element's tangent times the product of the others in its slice
  // (the backward's running products: right with zeros in the input).
  set_tangent(input, result, [&](const at::Tensor& p, const at::Tensor& t) {
    const at::Tensor x = p.to(result.scalar_type()), dx = t.to(result.scalar_type());
    if (x.dim() == 0) return dx;
    if (!dim.has_value()) return GpureduceProdBackward::others_product(x.reshape({-1}), 0).mul(dx.reshape({-1})).sum();
    const int64_t d = c10::maybe_wrap_dim((*dim)[0], x.dim());
    return GpureduceProdBackward::others_product(x, d).mul(dx).sum(d, keepdim);
  });
  return result;
}

at::Tensor prod_autograd(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return prod_record(input, std::nullopt, false, dtype);
}

at::Tensor prod_dim_autograd(const at::Tensor& input, int64_t dim, bool keepdim,
                             std::optional<at::ScalarType> dtype) {
  return prod_record(input, at::IntArrayRef(&dim, 1), keepdim, dtype);
}

// Where the input needs a gradient, a node of type N that saves the input
// and the result (amax, amin, logsumexp, linalg_vector_norm), recorded as
// `result`'s; the node, for members of its own, or null where none was made.
template <class N>
N* record_with_saved_result(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                            const at::Tensor& result) {
  if (!(at::GradMode::is_enabled() && input.requires_grad())) return nullptr;
  NodePtr node = make_node<N>();
  auto* n = static_cast<N*>(node.get());
  n->reduced = reduced_list(input.dim(), dim);
  n->keepdim = keepdim;
  n->input_dtype = input.scalar_type();
  n->input_sizes = input.sym_sizes().vec();
  n->self_ = torch::autograd::SavedVariable(input, /*is_output=*/false);
  node->set_next_edges(torch::autograd::collect_next_edges(input));
  torch::autograd::set_history(const_cast<at::Tensor&>(result), node);
  // Saved detached, as an input: no reference back to this node (a saved
  // output needs the node to unpack, whose pointer type changed in torch
  // 2.13), and still the result's version counter, so an in-place change to
  // the result before backward raises.
  n->result_ = torch::autograd::SavedVariable(result.detach(), /*is_output=*/false);
  return n;
}

template <bool kMax>
at::Tensor extremum_autograd(const at::Tensor& input, at::IntArrayRef dim, bool keepdim) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow(kMax ? "gpureduce::amax" : "gpureduce::amin", "")
                             .typed<at::Tensor(const at::Tensor&, at::IntArrayRef, bool)>();
  const char* name = kMax ? "amax" : "amin";
  TORCH_CHECK_NOT_IMPLEMENTED(!input.is_nested(), "gpureduce::", name, " does not take nested tensors");
  at::Tensor result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = op.call(input, dim, keepdim);
  }
  using Node = std::conditional_t<kMax, GpureduceAmaxBackward, GpureduceAminBackward>;
  record_with_saved_result<Node>(input, dim, keepdim, result);
  set_tangent(input, result, [&](const at::Tensor& p, const at::Tensor& t) {
    return extremum_tangent(p, t, result, reduced_list(p.dim(), dim), keepdim);
  });
  return result;
}

at::Tensor logsumexp_autograd(const at::Tensor& input, at::IntArrayRef dim, bool keepdim) {
  TORCH_CHECK_NOT_IMPLEMENTED(!input.is_nested(), "gpureduce::logsumexp does not take nested tensors");
  at::Tensor result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = call_logsumexp(input, dim, keepdim);
  }
  record_with_saved_result<GpureduceLogsumexpBackward>(input, dim, keepdim, result);
  // The tangent weighted by each slice's softmax, exp(x - logsumexp).
  set_tangent(input, result, [&](const at::Tensor& p, const at::Tensor& t) {
    const std::vector<int64_t> reduced = reduced_list(p.dim(), dim);
    return p.sub(with_reduced_dims(result, reduced, keepdim)).exp().mul(t).sum(reduced, keepdim);
  });
  return result;
}

using SpreadOp = c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef,
                                                       const std::optional<c10::Scalar>&, bool)>;
using SpreadMeanOp = c10::TypedOperatorHandle<std::tuple<at::Tensor, at::Tensor>(
    const at::Tensor&, at::OptionalIntArrayRef, const std::optional<c10::Scalar>&, bool)>;

at::Tensor call_spread(bool root, const at::Tensor& input, at::OptionalIntArrayRef dim,
                       const std::optional<c10::Scalar>& correction, bool keepdim) {
  static const auto find = [](const char* name) {
    return c10::Dispatcher::singleton()
        .findSchemaOrThrow(name, "correction")
        .typed<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, const std::optional<c10::Scalar>&, bool)>();
  };
  static const SpreadOp var = find("gpureduce::var"), std = find("gpureduce::std");
  return (root ? std : var).call(input, dim, correction, keepdim);
}

// g times var's derivative, element by element: 2 (x - mean) / (N -
// correction), or, as torch's var_backward, where the reduction is of every
// element (dim=None, or a 0-d input) and N - correction <= 0, inf (NaN
// where x is the mean). The backward passes the result's gradient, the
// tangent formula the conjugated tangent.
at::Tensor variance_grad(const at::Tensor& g, const at::Tensor& self, const at::Tensor& mean, double dof,
                         bool every_element) {
  if (every_element && dof <= 0) {
    const at::Tensor real = self.is_complex() ? at::real(self) : self;
    return g.mul(at::full_like(real, std::numeric_limits<double>::infinity())
                     .masked_fill(self.eq(mean), std::numeric_limits<double>::quiet_NaN()));
  }
  // (in torch's order, which decides the NaNs where N - correction is 0)
  return g.mul(c10::Scalar(2.0 / dof)).mul(self.sub(mean));
}

// var, std, var_mean and std_mean, as torch's formulas: var's gradient is
// 2 (x - mean) / (N - correction) times the result's, each slice's mean
// through gpureduce::mean (differentiable in turn); std's is var's of the
// gradient over 2 std (0 where std is 0); a mean output's is mean's. The
// std result is saved detached; where the backward records a graph
// (double backward) it is computed again through the op's autograd, as
// logsumexp's is.
struct GpureduceVarianceBackward : public GpureduceSumBackward {
  torch::autograd::SavedVariable self_, result_;
  bool root = false;
  bool with_mean = false;
  bool every_element = false;  // dim=None or a 0-d input (variance_grad)
  std::optional<c10::Scalar> correction;
  c10::SymInt count = 1;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    const at::Tensor self = self_.unpack();
    at::Tensor grad_in;
    if (grads[0].defined()) {
      at::Tensor g = kept(grads[0]);
      if (root) {
        const bool records = at::GradMode::is_enabled() && self.requires_grad();
        const at::Tensor result =
            records ? call_spread(true, self, reduced, correction, /*keepdim=*/true) : kept(result_.unpack());
        g = g.div(result.mul(2)).masked_fill(result.eq(0), 0);
      }
      const double c = correction.has_value() ? correction->toDouble() : 1.0;
      const at::Tensor mean = call_mean_dim(self, reduced, /*keepdim=*/true, std::nullopt);
      grad_in = variance_grad(g, self, mean, static_cast<double>(count.guard_int(__FILE__, __LINE__)) - c, every_element);
    }
    if (with_mean && grads.size() > 1 && grads[1].defined()) {
      const at::Tensor g = broadcast(grads[1]).div(c10::Scalar(count));
      grad_in = grad_in.defined() ? grad_in.add(g) : g;
    }
    return {grad_in};
  }
  void release_variables() override {
    self_.reset_data();
    result_.reset_data();
  }
  std::string name() const override {
    return with_mean ? (root ? "GpureduceStdMeanBackward" : "GpureduceVarMeanBackward")
                     : (root ? "GpureduceStdBackward" : "GpureduceVarBackward");
  }
};

// Where the input needs a gradient, a GpureduceVarianceBackward for the
// outputs (the spread, and the mean where there is one).
void record_spread(const at::Tensor& input, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& correction,
                   bool keepdim, bool root, const at::Tensor& spread, const at::Tensor* mean) {
  if (!(at::GradMode::is_enabled() && input.requires_grad())) return;
  NodePtr node = make_node<GpureduceVarianceBackward>();
  auto* n = static_cast<GpureduceVarianceBackward*>(node.get());
  n->reduced = reduced_list(input.dim(), dim);
  c10::SymInt count = 1;
  for (int64_t d : n->reduced) count *= input.sym_size(d);
  n->count = std::move(count);
  n->keepdim = keepdim;
  n->input_dtype = input.scalar_type();
  n->input_sizes = input.sym_sizes().vec();
  n->root = root;
  n->with_mean = mean != nullptr;
  n->every_element = !dim.has_value() || input.dim() == 0;
  n->correction = correction;
  n->self_ = torch::autograd::SavedVariable(input, /*is_output=*/false);
  if (root) n->result_ = torch::autograd::SavedVariable(spread.detach(), /*is_output=*/false);
  node->set_next_edges(torch::autograd::collect_next_edges(input));
  torch::autograd::set_history(const_cast<at::Tensor&>(spread), node);
  if (mean != nullptr) torch::autograd::set_history(const_cast<at::Tensor&>(*mean), node);
}

// The tangent of var (or of std, `spread` its result): the sum over each
// slice of Re(conj(dx) times var's derivative), 2 (x - mean) / (N -
// correction) but where variance_grad says otherwise; std's that over 2
// std, 0 where std is 0 (torch's var_jvp and std's formula).
at::Tensor spread_tangent(const at::Tensor& p, const at::Tensor& t, at::OptionalIntArrayRef dim,
                          const std::optional<c10::Scalar>& correction, bool keepdim, bool root,
                          const at::Tensor& spread) {
  const std::vector<int64_t> reduced = reduced_list(p.dim(), dim);
  double count = 1;
  for (int64_t d : reduced) count *= static_cast<double>(p.size(d));
  const double c = correction.has_value() ? correction->toDouble() : 1.0;
  const at::Tensor mean = call_mean_dim(p, reduced, /*keepdim=*/true, std::nullopt);
  const bool every_element = !dim.has_value() || p.dim() == 0;
  at::Tensor dv = real_part(variance_grad(t.conj(), p, mean, count - c, every_element)).sum(reduced, keepdim);
  if (root) dv = dv.div(spread.mul(2)).masked_fill(spread.eq(0), 0);
  return dv;
}

template <bool kRoot>
at::Tensor spread_autograd(const at::Tensor& input, at::OptionalIntArrayRef dim,
                           const std::optional<c10::Scalar>& correction, bool keepdim) {
  TORCH_CHECK_NOT_IMPLEMENTED(!input.is_nested(), "gpureduce::", kRoot ? "std" : "var", " does not take nested tensors");
  at::Tensor result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = call_spread(kRoot, input, dim, correction, keepdim);
  }
  record_spread(input, dim, correction, keepdim, kRoot, result, nullptr);
  set_tangent(input, result, [&](const at::Tensor& p, const at::Tensor& t) {
    return spread_tangent(p, t, dim, correction, keepdim, kRoot, result);
  });
  return result;
}

template <bool kRoot>
std::tuple<at::Tensor, at::Tensor> spread_mean_autograd(const at::Tensor& input, at::OptionalIntArrayRef dim,
                                                        const std::optional<c10::Scalar>& correction, bool keepdim) {
  static const auto find = [](const char* name) {
    return c10::Dispatcher::singleton()
        .findSchemaOrThrow(name, "correction")
        .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, at::OptionalIntArrayRef,
                                                  const std::optional<c10::Scalar>&, bool)>();
  };
  static const SpreadMeanOp var_mean = find("gpureduce::var_mean"), std_mean = find("gpureduce::std_mean");
  TORCH_CHECK_NOT_IMPLEMENTED(!input.is_nested(), "gpureduce::", kRoot ? "std_mean" : "var_mean",
                              " does not take nested tensors");
  std::tuple<at::Tensor, at::Tensor> result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = (kRoot ? std_mean : var_mean).call(input, dim, correction, keepdim);
  }
  record_spread(input, dim, correction, keepdim, kRoot, std::get<0>(result), &std::get<1>(result));
  set_tangent(input, std::get<0>(result), [&](const at::Tensor& p, const at::Tensor& t) {
    return spread_tangent(p, t, dim, correction, keepdim, kRoot, std::get<0>(result));
  });
  set_tangent(input, std::get<1>(result),
              [&](const at::Tensor&, const at::Tensor& t) { return call_mean_dim(t, dim, keepdim, std::nullopt); });
  return result;
}

// Forward AD through an out= overload raises, as torch's does (`name`: the
// op's, "sum" for sum_out).
void check_no_tangent_for_out(const char* name, const at::Tensor& input, const at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(!(has_tangent(input) || has_tangent(out)), "Trying to use forward AD with ", name,
                              "_out that does not support it because it is an out= function");
}

// An out= overload below autograd (`call`), refused where a gradient or a
// tangent would be needed: out= overloads are not differentiable, in torch
// as here; say so as torch does.
template <class Call>
void out_without_grad(const char* name, const at::Tensor& input, const at::Tensor& out, Call call) {
  TORCH_CHECK(!(at::GradMode::is_enabled() && (input.requires_grad() || out.requires_grad())), name,
              "(): functions with out=... arguments don't support automatic differentiation, "
              "but one of the arguments requires grad.");
  check_no_tangent_for_out(name, input, out);
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    call();
  }
  torch::autograd::impl::bump_version(out);
}

template <bool kMax>
void extremum_out_autograd(const at::Tensor& input, at::IntArrayRef dim, bool keepdim, const at::Tensor& out) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow(kMax ? "gpureduce::amax" : "gpureduce::amin", "out")
                             .typed<void(const at::Tensor&, at::IntArrayRef, bool, const at::Tensor&)>();
  out_without_grad(kMax ? "amax" : "amin", input, out, [&] { op.call(input, dim, keepdim, out); });
}

at::Tensor sum_autograd(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return sum_dim_autograd(input, at::IntArrayRef{}, false, dtype);  // [], as mean_autograd
}

// The out= overloads of sum and nansum, found once.
using OutOp = c10::TypedOperatorHandle<void(const at::Tensor&, at::OptionalIntArrayRef, bool,
                                              std::optional<at::ScalarType>, const at::Tensor&)>;

OutOp find_out_op(const char* name, const char* overload) {
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow(name, overload)
      .typed<void(const at::Tensor&, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>,
                  const at::Tensor&)>();
}

void sum_out_autograd(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                      std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  static const OutOp op = find_out_op("gpureduce::sum", "IntList_out");
  out_without_grad("sum", input, out, [&] { op.call(input, dim, keepdim, dtype, out); });
}

void prod_out_autograd(const at::Tensor& input, int64_t dim, bool keepdim, std::optional<at::ScalarType> dtype,
                       const at::Tensor& out) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("gpureduce::prod", "int_out")
                             .typed<void(const at::Tensor&, int64_t, bool, std::optional<at::ScalarType>,
                                         const at::Tensor&)>();
  out_without_grad("prod", input, out, [&] { op.call(input, dim, keepdim, dtype, out); });
}

template <bool kMax>
void extremum_all_out_autograd(const at::Tensor& input, const at::Tensor& out) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow(kMax ? "gpureduce::max" : "gpureduce::min", "unary_out")
                             .typed<void(const at::Tensor&, const at::Tensor&)>();
  out_without_grad(kMax ? "max" : "min", input, out, [&] { op.call(input, out); });
}

void nansum_out_autograd(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  static const OutOp op = find_out_op("gpureduce::nansum", "out");
  out_without_grad("nansum", input, out, [&] { op.call(input, dim, keepdim, dtype, out); });
}

void mean_out_autograd(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  static const OutOp op = find_out_op("gpureduce::mean", "out");
  out_without_grad("mean", input, out, [&] { op.call(input, dim, keepdim, dtype, out); });
}

void logsumexp_out_autograd(const at::Tensor& input, at::IntArrayRef dim, bool keepdim, const at::Tensor& out) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("gpureduce::logsumexp", "out")
                             .typed<void(const at::Tensor&, at::IntArrayRef, bool, const at::Tensor&)>();
  out_without_grad("logsumexp", input, out, [&] { op.call(input, dim, keepdim, out); });
}

template <bool kRoot>
void spread_out_autograd(const at::Tensor& input, at::OptionalIntArrayRef dim,
                         const std::optional<c10::Scalar>& correction, bool keepdim, const at::Tensor& out) {
  static const auto find = [](const char* name) {
    return c10::Dispatcher::singleton()
        .findSchemaOrThrow(name, "correction_out")
        .typed<void(const at::Tensor&, at::OptionalIntArrayRef, const std::optional<c10::Scalar>&, bool,
                    const at::Tensor&)>();
  };
  static const auto var = find("gpureduce::var"), std = find("gpureduce::std");
  out_without_grad(kRoot ? "std" : "var", input, out,
                   [&] { (kRoot ? std : var).call(input, dim, correction, keepdim, out); });
}

at::Tensor call_vector_norm(const at::Tensor& input, const c10::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("gpureduce::linalg_vector_norm", "")
                             .typed<at::Tensor(const at::Tensor&, const c10::Scalar&, at::OptionalIntArrayRef, bool,
                                               std::optional<at::ScalarType>)>();
  return op.call(input, ord, dim, keepdim, dtype);
}

// linalg_vector_norm, as torch's formula (norm_backward): ord 0 has no
// gradient (an undefined one, as torch's); 1 the gradient times sgn(x); 2 times x / norm (0 where
// the norm is 0); inf and -inf split evenly among the elements whose
// magnitude is the norm (or NaN), times sgn(x); other p times sgn(x)
// |x|^(p-1) / norm^(p-1). Built of ATen ops; the result is saved detached,
// and computed again through the op's autograd where the backward records
// a graph, as logsumexp's is.
struct GpureduceLinalgVectorNormBackward : public GpureduceSumBackward {
  torch::autograd::SavedVariable self_, result_;
  c10::Scalar ord;
  std::optional<at::ScalarType> dtype;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    if (!grads[0].defined()) return {at::Tensor()};
    const at::Tensor self = self_.unpack();
    const double p = ord.toDouble();
    if (p == 0.0) return {at::Tensor()};  // none, as torch's (autograd reads it as zeros)
    const bool records = at::GradMode::is_enabled() && self.requires_grad();
    const at::Tensor norm = records ? call_vector_norm(self, ord, reduced, /*keepdim=*/true, dtype)
                                    : kept(result_.unpack());
    const at::Tensor g = kept(grads[0]);
    at::Tensor grad_in;
    if (p == 1.0) {
      grad_in = self.sgn().mul(g);
    } else if (p == 2.0) {
      grad_in = g.mul(self.div(norm).masked_fill(norm.eq(0), 0));
    } else if (std::isinf(p)) {
      const at::Tensor magnitude = self.abs();
      const at::Tensor hit = magnitude.eq(norm).logical_or(magnitude.isnan());
      grad_in = self.sgn().mul(g.div(hit.sum(reduced, /*keepdim=*/true)).mul(hit));
    } else if (p < 1.0) {
      const at::Tensor scaled = self.sgn().mul(self.abs().pow(p - 1).masked_fill(self.eq(0), 0));
      grad_in = scaled.mul(g).mul(norm.pow(1 - p));
    } else {
      const at::Tensor scaled = p < 2.0 ? self.sgn().mul(self.abs().pow(p - 1)) : self.mul(self.abs().pow(p - 2));
      grad_in = scaled.mul(g.div(norm.pow(p - 1)).masked_fill(norm.eq(0), 0));
    }
    if (grad_in.scalar_type() != input_dtype) grad_in = grad_in.to(input_dtype);
    return {grad_in};
  }
  void release_variables() override {
    self_.reset_data();
    result_.reset_data();
  }
  std::string name() const override { return "GpureduceLinalgVectorNormBackward"; }
};

// linalg_vector_norm's tangent, as torch's norm_jvp: by order, the sum
// over each slice of Re(conj(w) dx) for w the backward's factor (sgn(x),
// x / norm, ...); 0 for ord 0.
at::Tensor vector_norm_tangent(const at::Tensor& p, const at::Tensor& t, double ord, const at::Tensor& norm,
                               const std::vector<int64_t>& reduced, bool keepdim) {
  if (ord == 0.0) return at::zeros_like(norm);
  const at::Tensor along_sign = real_part(p.sgn().mul(t.conj()));  // Re(sgn(x) conj(dx))
  if (ord == 1.0) return along_sign.sum(reduced, keepdim);
  if (ord == 2.0) return real_part(p.mul(t.conj())).sum(reduced, keepdim).div(norm).masked_fill(norm.eq(0), 0);
  if (std::isinf(ord)) {
    const at::Tensor kept_norm = with_reduced_dims(norm, reduced, keepdim);
    const at::Tensor hit = p.abs().eq(kept_norm).logical_or(p.isnan().logical_and(kept_norm.isnan()));
    return along_sign.mul(hit).div(hit.sum(reduced, /*keepdim=*/true)).sum(reduced, keepdim);
  }
  if (ord < 1.0)
    return p.abs().pow(ord - 1).masked_fill(p.eq(0), 0).mul(along_sign).sum(reduced, keepdim).mul(norm.pow(1 - ord));
  const at::Tensor sum_pow = ord < 2.0 ? p.abs().pow(ord - 1).mul(along_sign).sum(reduced, keepdim)
                                       : p.abs().pow(ord - 2).mul(real_part(p.mul(t.conj()))).sum(reduced, keepdim);
  return sum_pow.div(norm.pow(ord - 1)).masked_fill(norm.eq(0), 0);
}

at::Tensor vector_norm_autograd(const at::Tensor& input, const c10::Scalar& ord, at::OptionalIntArrayRef dim,
                                bool keepdim, std::optional<at::ScalarType> dtype) {
  TORCH_CHECK_NOT_IMPLEMENTED(!input.is_nested(), "gpureduce::linalg_vector_norm does not take nested tensors");
  at::Tensor result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = call_vector_norm(input, ord, dim, keepdim, dtype);
  }
  if (auto* n = record_with_saved_result<GpureduceLinalgVectorNormBackward>(input, dim, keepdim, result)) {
    n->ord = ord;
    n->dtype = dtype;
  }
  set_tangent(input, result, [&](const at::Tensor& p, const at::Tensor& t) {
    return vector_norm_tangent(p, t, ord.toDouble(), result, reduced_list(p.dim(), dim), keepdim);
  });
  return result;
}

void vector_norm_out_autograd(const at::Tensor& input, const c10::Scalar& ord, at::OptionalIntArrayRef dim,
                              bool keepdim, std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("gpureduce::linalg_vector_norm", "out")
                             .typed<void(const at::Tensor&, const c10::Scalar&, at::OptionalIntArrayRef, bool,
                                         std::optional<at::ScalarType>, const at::Tensor&)>();
  out_without_grad("linalg_vector_norm", input, out, [&] { op.call(input, ord, dim, keepdim, dtype, out); });
}

// max and min of every element: the gradient split evenly among the
// elements equal to the result, or among the NaNs where the result is NaN,
// as torch's evenly_distribute_backward.
struct GpureduceExtremumAllBackward : public GpureduceSumBackward {
  torch::autograd::SavedVariable self_, result_;
  bool is_max = true;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    if (!grads[0].defined()) return {at::Tensor()};
    const at::Tensor self = self_.unpack();
    const at::Tensor result = result_.unpack();
    const at::Tensor hit = self.eq(result).logical_or(self.isnan().logical_and(result.isnan()));
    return {hit.mul(grads[0].div(hit.sum()))};
  }
  void release_variables() override {
    self_.reset_data();
    result_.reset_data();
  }
  std::string name() const override { return is_max ? "GpureduceMaxBackward0" : "GpureduceMinBackward0"; }
};

template <bool kMax>
at::Tensor extremum_all_autograd(const at::Tensor& input) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow(kMax ? "gpureduce::max" : "gpureduce::min", "")
                             .typed<at::Tensor(const at::Tensor&)>();
  TORCH_CHECK_NOT_IMPLEMENTED(!input.is_nested(), "gpureduce::", kMax ? "max" : "min",
                              " does not take nested tensors");
  at::Tensor result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = op.call(input);
  }
  if (auto* n = record_with_saved_result<GpureduceExtremumAllBackward>(input, std::nullopt, false, result))
    n->is_max = kMax;
  set_tangent(input, result, [&](const at::Tensor& p, const at::Tensor& t) {
    return extremum_tangent(p, t, result, reduced_list(p.dim(), std::nullopt), /*keepdim=*/false);
  });
  return result;
}

// max.dim and min.dim: the values' gradient goes to the element each index
// names, zero elsewhere (torch's value_selecting_reduction_backward), a
// scatter into zeros, itself differentiable in the gradient. The indices
// carry no gradient.
struct GpureduceExtremumDimBackward : public torch::autograd::Node {
  torch::autograd::SavedVariable indices_;
  int64_t dim = 0;
  bool keepdim = false;
  bool is_max = true;
  std::vector<c10::SymInt> input_sizes;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    if (!grads[0].defined()) return {at::Tensor()};
    at::Tensor g = grads[0];
    at::Tensor index = indices_.unpack();
    if (!keepdim && !input_sizes.empty()) {
      g = g.unsqueeze(dim);
      index = index.unsqueeze(dim);
    }
    return {at::zeros_symint(input_sizes, g.options()).scatter(dim, index, g)};
  }
  void release_variables() override { indices_.reset_data(); }
  std::string name() const override { return is_max ? "GpureduceMaxBackward1" : "GpureduceMinBackward1"; }
};

using ExtremumDimOp =
    c10::TypedOperatorHandle<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, int64_t, bool)>;

template <bool kMax>
std::tuple<at::Tensor, at::Tensor> extremum_dim_autograd(const at::Tensor& input, int64_t dim, bool keepdim) {
  static const ExtremumDimOp op = c10::Dispatcher::singleton()
                                      .findSchemaOrThrow(kMax ? "gpureduce::max" : "gpureduce::min", "dim")
                                      .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, int64_t, bool)>();
  TORCH_CHECK_NOT_IMPLEMENTED(!input.is_nested(), "gpureduce::", kMax ? "max" : "min",
                              " does not take nested tensors");
  std::tuple<at::Tensor, at::Tensor> result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = op.call(input, dim, keepdim);
  }
  if (at::GradMode::is_enabled() && input.requires_grad()) {
    NodePtr node = make_node<GpureduceExtremumDimBackward>();
    auto* n = static_cast<GpureduceExtremumDimBackward*>(node.get());
    n->dim = input.dim() == 0 ? 0 : c10::maybe_wrap_dim(dim, input.dim());
    n->keepdim = keepdim;
    n->is_max = kMax;
    n->input_sizes = input.sym_sizes().vec();
    n->indices_ = torch::autograd::SavedVariable(std::get<1>(result), /*is_output=*/false);
    node->set_next_edges(torch::autograd::collect_next_edges(input));
    torch::autograd::set_history(std::get<0>(result), node);
  }
  // The values' tangent: the input's at each index (torch's
  // gather_with_keepdimed_indices).
  set_tangent(input, std::get<0>(result), [&](const at::Tensor& p, const at::Tensor& t) {
    if (p.dim() == 0) return t;
    const int64_t d = c10::maybe_wrap_dim(dim, p.dim());
    const at::Tensor& indices = std::get<1>(result);
    return keepdim ? t.gather(d, indices) : t.gather(d, indices.unsqueeze(d)).squeeze(d);
  });
  return result;
}

template <bool kMax>
void extremum_dim_out_autograd(const at::Tensor& input, int64_t dim, bool keepdim, const at::Tensor& values,
                               const at::Tensor& indices) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow(kMax ? "gpureduce::max" : "gpureduce::min", kMax ? "dim_max" : "dim_min")
                             .typed<void(const at::Tensor&, int64_t, bool, const at::Tensor&, const at::Tensor&)>();
  check_no_tangent_for_out(kMax ? "max" : "min", input, indices);
  out_without_grad(kMax ? "max" : "min", input, values, [&] { op.call(input, dim, keepdim, values, indices); });
  torch::autograd::impl::bump_version(indices);
}

// argmax and argmin: integer results, no gradient; straight to the kernel.
template <bool kMax>
at::Tensor arg_extremum_autograd(const at::Tensor& input, std::optional<int64_t> dim, bool keepdim) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow(kMax ? "gpureduce::argmax" : "gpureduce::argmin", "")
                             .typed<at::Tensor(const at::Tensor&, std::optional<int64_t>, bool)>();
  at::AutoDispatchBelowADInplaceOrView guard;
  return op.call(input, dim, keepdim);
}

template <bool kMax>
void arg_extremum_out_autograd(const at::Tensor& input, std::optional<int64_t> dim, bool keepdim,
                               const at::Tensor& out) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow(kMax ? "gpureduce::argmax" : "gpureduce::argmin", "out")
                             .typed<void(const at::Tensor&, std::optional<int64_t>, bool, const at::Tensor&)>();
  check_no_tangent_for_out(kMax ? "argmax" : "argmin", input, out);
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    op.call(input, dim, keepdim, out);
  }
  torch::autograd::impl::bump_version(out);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, Autograd, m) {
  m.impl("sum", &sum_autograd);
  m.impl("sum.dim_IntList", &sum_dim_autograd);
  m.impl("sum.IntList_out", &sum_out_autograd);
  m.impl("nansum", &nansum_autograd);
  m.impl("nansum.out", &nansum_out_autograd);
  m.impl("mean", &mean_autograd);
  m.impl("mean.dim", &mean_dim_autograd);
  m.impl("mean.out", &mean_out_autograd);
  m.impl("prod", &prod_autograd);
  m.impl("prod.dim_int", &prod_dim_autograd);
  m.impl("prod.int_out", &prod_out_autograd);
  m.impl("amax", &extremum_autograd<true>);
  m.impl("amax.out", &extremum_out_autograd<true>);
  m.impl("amin", &extremum_autograd<false>);
  m.impl("amin.out", &extremum_out_autograd<false>);
  m.impl("max", &extremum_all_autograd<true>);
  m.impl("min", &extremum_all_autograd<false>);
  m.impl("max.unary_out", &extremum_all_out_autograd<true>);
  m.impl("min.unary_out", &extremum_all_out_autograd<false>);
  m.impl("max.dim", &extremum_dim_autograd<true>);
  m.impl("max.dim_max", &extremum_dim_out_autograd<true>);
  m.impl("min.dim", &extremum_dim_autograd<false>);
  m.impl("min.dim_min", &extremum_dim_out_autograd<false>);
  m.impl("argmax", &arg_extremum_autograd<true>);
  m.impl("argmax.out", &arg_extremum_out_autograd<true>);
  m.impl("argmin", &arg_extremum_autograd<false>);
  m.impl("argmin.out", &arg_extremum_out_autograd<false>);
  m.impl("logsumexp", &logsumexp_autograd);
  m.impl("logsumexp.out", &logsumexp_out_autograd);
  m.impl("var.correction", &spread_autograd<false>);
  m.impl("var.correction_out", &spread_out_autograd<false>);
  m.impl("std.correction", &spread_autograd<true>);
  m.impl("std.correction_out", &spread_out_autograd<true>);
  m.impl("var_mean.correction", &spread_mean_autograd<false>);
  m.impl("std_mean.correction", &spread_mean_autograd<true>);
  m.impl("linalg_vector_norm", &vector_norm_autograd);
  m.impl("linalg_vector_norm.out", &vector_norm_out_autograd);
}

}  // namespace gpureduce
