// gpureduce::conv1d's arguments, its padding names (CompositeImplicitAutograd:
// it calls _conv1d_padded with the left padding and output length the name
// gives), and _conv1d_padded's Meta and Autograd kernels. The device kernels
// register themselves (cpu/conv1d_cpu.cpp).
//
// The backward: out[i] = sum_j in[i - left + j] w[j] gives
// - grad_in[t] = sum_m g[t - (K - 1 - left) + m] w[K - 1 - m]: the same
//   correlation of the gradient with the flipped mask, left K - 1 - left,
//   length L (so `left` stays within [0, K - 1]);
// - grad_w[j] = sum_i g[i] in[i - left + j] over the batch (and the
//   channels, for one mask), and grad_bias the gradient's sum likewise.
// grad_in goes through _conv1d_padded itself, grad_w through
// _conv1d_weight_grad (each device's kernel sums in an order fixed by the
// shapes, with no atomics) and grad_bias through ATen's sum. Each is
// differentiable: _conv1d_weight_grad's own backward is two correlations,
// through _conv1d_padded (GpureduceConv1dWeightGradBackward below), so double
// backward works. Each op's Autograd kernel also sets the result's tangent
// (forward-mode AD, forward_ad.h).
#include "conv1d.h"

#include "../autograd/forward_ad.h"
#include "../autograd/node.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/flip.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros_like.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <algorithm>
#include <string>
#include <vector>

namespace gpureduce {
namespace conv {

// Numbers in error messages are written out as text here: streaming an
// integer (an int64_t, a SymInt, a size list) into a TORCH_CHECK message
// from this library segfaults on the GPU machine's toolchain (GCC 13, torch
// 2.11; benchmarks/NOTES.md, "The crash that was not a kernel bug"), while
// torch 2.13 on the CPU runs it. A symbolic size is written as its expression.
std::string sym_text(const c10::SymInt& v) {
  if (const auto n = v.maybe_as_int()) return std::to_string(*n);
  return v.toSymNodeImplUnowned()->str();
}

std::string shape_text(c10::SymIntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + sym_text(sizes[i]);
  return s + "]";
}

Padding padding_for(std::string_view padding, const c10::SymInt& L, const c10::SymInt& K) {
  if (padding == "same") return {(K - 1) / 2, L};
  if (padding == "causal") return {K - 1, L};
  if (padding == "valid") {
    TORCH_SYM_CHECK(L.sym_ge(K), "gpureduce.conv1d: padding='valid' needs an input at least as long as the mask; got ",
                    "an input of length ", sym_text(L), " and a mask of ", sym_text(K), " taps");
    return {0, L - K + 1};
  }
  TORCH_CHECK(false, "gpureduce.conv1d: invalid padding string '", std::string(padding),
              "'; expected 'same', 'causal' or 'valid'");
}

void check_args(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                const c10::SymInt& left, const c10::SymInt& out_len) {
  TORCH_CHECK(input.dim() >= 1 && input.dim() <= 3,
              "gpureduce.conv1d: expected an input of shape [L], [B, L] or [B, C, L], got ",
              std::to_string(input.dim()), " dims of shape ", shape_text(input.sym_sizes()));
  TORCH_CHECK(weight.dim() == 1 || weight.dim() == 2,
              "gpureduce.conv1d: expected a weight of shape [K] (one mask) or [C, K] (a mask per channel), got ",
              std::to_string(weight.dim()), " dims of shape ", shape_text(weight.sym_sizes()));
  const c10::SymInt K = weight.sym_size(-1);
  TORCH_SYM_CHECK(K.sym_ge(1), "gpureduce.conv1d: the mask needs at least one tap, got a weight of shape ",
                  shape_text(weight.sym_sizes()));
  TORCH_SYM_CHECK(K.sym_le(kMaxTaps), "gpureduce.conv1d: masks of at most ", std::to_string(kMaxTaps),
                  " taps are supported, got ", sym_text(K));
  if (per_channel(weight)) {
    TORCH_CHECK(input.dim() == 3, "gpureduce.conv1d: a weight of shape [C, K] (a mask per channel) needs an input ",
                "of shape [B, C, L], got ", shape_text(input.sym_sizes()));
    TORCH_SYM_CHECK(weight.sym_size(0).sym_eq(input.sym_size(1)), "gpureduce.conv1d: the weight has ",
                    sym_text(weight.sym_size(0)), " masks but the input has ", sym_text(input.sym_size(1)), " channels");
  }
  const auto dtype = input.scalar_type();
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kDouble || dtype == at::kHalf || dtype == at::kBFloat16,
              "gpureduce.conv1d: \"conv1d\" not implemented for '", c10::toString(dtype),
              "' (float32, float64, float16 and bfloat16 are)");
  TORCH_CHECK(weight.scalar_type() == dtype, "gpureduce.conv1d: the input (", c10::toString(dtype),
              ") and the weight (", c10::toString(weight.scalar_type()), ") must have the same dtype");
  TORCH_CHECK(weight.device() == input.device(),
              "Expected all tensors to be on the same device, but found at least two devices, ", input.device(),
              " and ", weight.device(), "!");
  if (bias.has_value() && bias->defined()) {
    TORCH_CHECK(bias->scalar_type() == dtype, "gpureduce.conv1d: the input (", c10::toString(dtype),
                ") and the bias (", c10::toString(bias->scalar_type()), ") must have the same dtype");
    TORCH_CHECK(bias->device() == input.device(),
                "Expected all tensors to be on the same device, but found at least two devices, ", input.device(),
                " and ", bias->device(), "!");
    if (per_channel(weight)) {
      TORCH_CHECK(bias->dim() == 1, "gpureduce.conv1d: expected a bias of shape [C] for a weight of shape [C, K], ",
                  "got ", shape_text(bias->sym_sizes()));
      TORCH_SYM_CHECK(bias->sym_size(0).sym_eq(weight.sym_size(0)), "gpureduce.conv1d: expected a bias of ",
                      sym_text(weight.sym_size(0)), " elements (one a channel), got ", sym_text(bias->sym_size(0)));
    } else {
      TORCH_CHECK(bias->dim() <= 1, "gpureduce.conv1d: expected a bias of one element for a weight of shape [K], ",
                  "got shape ", shape_text(bias->sym_sizes()));
      TORCH_SYM_CHECK(bias->sym_numel().sym_eq(1), "gpureduce.conv1d: expected a bias of one element for a ",
                      "weight of shape [K], got ", sym_text(bias->sym_numel()));
    }
  }
  TORCH_SYM_CHECK(left.sym_ge(0).sym_and(left.sym_le(K - 1)),
                  "gpureduce._conv1d_padded: left must be in [0, K - 1] = [0, ", sym_text(K - 1), "], got ", sym_text(left));
  TORCH_SYM_CHECK(out_len.sym_ge(0), "gpureduce._conv1d_padded: the output length must be >= 0, got ", sym_text(out_len));
}

Conv1dOperands prepare_operands(const at::Tensor& input, const at::Tensor& weight,
                                const std::optional<at::Tensor>& bias, int64_t left, int64_t out_len) {
  check_args(input, weight, bias, left, out_len);
  Conv1dOperands o;
  o.input = input.contiguous();
  o.weight = weight.contiguous();
  if (bias.has_value() && bias->defined()) o.bias = bias->contiguous();
  std::vector<int64_t> sizes = o.input.sizes().vec();
  o.L = sizes.back();
  sizes.back() = out_len;
  o.out = at::empty(sizes, o.input.options());
  o.out_len = out_len;
  o.rows = out_len > 0 ? o.out.numel() / out_len : 0;
  o.per_channel = per_channel(o.weight);
  o.channels = o.per_channel ? o.input.size(1) : 1;
  o.K = o.weight.size(-1);
  o.left = left;
  return o;
}

void check_weight_grad_args(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& weight,
                            const c10::SymInt& left) {
  TORCH_CHECK(grad.dim() >= 1, "gpureduce._conv1d_weight_grad: expected a gradient of the output's shape, got a ",
              "0-dim tensor");
  check_args(input, weight, std::nullopt, left, grad.sym_size(-1));
  TORCH_CHECK(grad.dim() == input.dim(), "gpureduce._conv1d_weight_grad: the gradient has ", std::to_string(grad.dim()),
              " dims but the input has ", std::to_string(input.dim()));
  for (int64_t d = 0; d + 1 < input.dim(); ++d)
    TORCH_SYM_CHECK(grad.sym_size(d).sym_eq(input.sym_size(d)), "gpureduce._conv1d_weight_grad: expected a gradient ",
                    "of shape [..., out_len] with the input's leading dims ", shape_text(input.sym_sizes()),
                    ", got ", shape_text(grad.sym_sizes()));
  TORCH_CHECK(grad.scalar_type() == input.scalar_type(), "gpureduce._conv1d_weight_grad: the gradient (",
              c10::toString(grad.scalar_type()), ") and the input (", c10::toString(input.scalar_type()),
              ") must have the same dtype");
  TORCH_CHECK(grad.device() == input.device(),
              "Expected all tensors to be on the same device, but found at least two devices, ", input.device(),
              " and ", grad.device(), "!");
}

WeightGradOperands prepare_weight_grad(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& weight,
                                       int64_t left) {
  check_weight_grad_args(grad, input, weight, left);
  WeightGradOperands o;
  o.grad = grad.contiguous();
  o.input = input.contiguous();
  o.out = at::empty(weight.sizes(), weight.options());
  o.L = o.input.size(-1);
  o.out_len = o.grad.size(-1);
  o.rows = 1;  // the product of the leading dims, which L = 0 would hide in numel
  for (int64_t d = 0; d + 1 < o.input.dim(); ++d) o.rows *= o.input.size(d);
  o.per_channel = per_channel(weight);
  o.channels = o.per_channel ? o.input.size(1) : 1;
  o.K = weight.size(-1);
  o.left = left;
  return o;
}

namespace {

using PaddedOp = c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, const at::Tensor&,
                                                      const std::optional<at::Tensor>&, c10::SymInt, c10::SymInt)>;

using WeightGradOp = c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                          c10::SymInt)>;

const PaddedOp& padded_op() {
  static const PaddedOp op = c10::Dispatcher::singleton()
                                 .findSchemaOrThrow("gpureduce::_conv1d_padded", "")
                                 .typed<at::Tensor(const at::Tensor&, const at::Tensor&,
                                                   const std::optional<at::Tensor>&, c10::SymInt, c10::SymInt)>();
  return op;
}

at::Tensor conv1d_composite(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                            std::string_view padding) {
  // The ranks first: the padding needs the last dims of both.
  TORCH_CHECK(input.dim() >= 1 && weight.dim() >= 1, "gpureduce.conv1d: expected an input of shape [L], [B, L] or ",
              "[B, C, L] and a weight of shape [K] or [C, K], got ", shape_text(input.sym_sizes()), " and ",
              shape_text(weight.sym_sizes()));
  const Padding p = padding_for(padding, input.sym_size(-1), weight.sym_size(-1));
  return padded_op().call(input, weight, bias, p.left, p.out_len);
}

at::Tensor conv1d_padded_meta(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                              c10::SymInt left, c10::SymInt out_len) {
  check_args(input, weight, bias, left, out_len);
  std::vector<c10::SymInt> sizes(input.sym_sizes().begin(), input.sym_sizes().end());
  sizes.back() = out_len;
  return at::empty_symint(sizes, input.options());
}

const WeightGradOp& weight_grad_op() {
  static const WeightGradOp op = c10::Dispatcher::singleton()
                                     .findSchemaOrThrow("gpureduce::_conv1d_weight_grad", "")
                                     .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                       c10::SymInt)>();
  return op;
}

at::Tensor conv1d_weight_grad_meta(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& weight,
                                   c10::SymInt left) {
  check_weight_grad_args(grad, input, weight, left);
  return at::empty_symint(weight.sym_sizes(), weight.options());
}

// _conv1d_weight_grad's backward: with gw[c][j] = sum g[r][i] x[r][i - left
// + j], a gradient ggw of gw gives
// - for g: sum_j ggw[c][j] x[r][i - left + j], the forward correlation of
//   the input with ggw as its mask (left, out_len);
// - for x: sum_j ggw[c][j] g[r][t + left - j], the gradient correlated with
//   the flipped ggw (left K - 1 - left, length L), as grad_in is.
// The weight gives only the shape: no gradient.
struct GpureduceConv1dWeightGradBackward : public torch::autograd::Node {
  torch::autograd::SavedVariable grad_, input_;
  c10::SymInt left = 0, K = 0;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    const at::Tensor& ggw = grads[0];
    at::Tensor for_grad, for_input;
    if (ggw.defined()) {
      const at::Tensor grad = grad_.unpack(), input = input_.unpack();
      if (task_should_compute_output(0)) for_grad = padded_op().call(input, ggw, std::nullopt, left, grad.sym_size(-1));
      if (task_should_compute_output(1))
        for_input = padded_op().call(grad, at::flip(ggw, {-1}), std::nullopt, K - 1 - left, input.sym_size(-1));
    }
    return {for_grad, for_input, at::Tensor()};
  }
  void release_variables() override {
    grad_.reset_data();
    input_.reset_data();
  }
  std::string name() const override { return "GpureduceConv1dWeightGradBackward"; }
};

at::Tensor conv1d_weight_grad_autograd(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& weight,
                                       c10::SymInt left) {
  check_weight_grad_args(grad, input, weight, left);
  at::Tensor result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = weight_grad_op().call(grad, input, weight, left);
  }
  if (at::GradMode::is_enabled() && (grad.requires_grad() || input.requires_grad())) {
    NodePtr node = make_node<GpureduceConv1dWeightGradBackward>();
    auto* n = static_cast<GpureduceConv1dWeightGradBackward*>(node.get());
    n->grad_ = torch::autograd::SavedVariable(grad, /*is_output=*/false);
    n->input_ = torch::autograd::SavedVariable(input, /*is_output=*/false);
    n->left = left;
    n->K = weight.sym_size(-1);
    node->set_next_edges(torch::autograd::collect_next_edges(grad, input, weight));
    torch::autograd::set_history(result, node);
  }
  // The op is bilinear in (grad, input): its tangent is the op of each
  // tangent with the other primal.
  if (has_tangent(grad) || has_tangent(input)) {
    at::Tensor tangent = at::zeros_like(result);
    if (has_tangent(grad)) tangent = tangent.add(weight_grad_op().call(tangent_of(grad), primal(input), weight, left));
    if (has_tangent(input)) tangent = tangent.add(weight_grad_op().call(primal(grad), tangent_of(input), weight, left));
    set_tangent(result, tangent);
  }
  return result;
}

at::Tensor bias_grad(const at::Tensor& grad, const at::Tensor& weight, const at::Tensor& bias) {
  const auto acc = grad.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor g = per_channel(weight) ? at::sum(grad.to(acc), at::IntArrayRef{0, 2}) : grad.to(acc).sum();
  return g.reshape_symint(bias.sym_sizes()).to(bias.scalar_type());
}

// The correlation's backward: grad_input the gradient correlated with the
// flipped mask, grad_weight through _conv1d_weight_grad (the mask's by its
// own op: one node for DTensor's rule and for the double backward, whatever
// each device's kernel does), grad_bias the gradient summed over B and L.
struct GpureduceConv1dBackward : public torch::autograd::Node {
  torch::autograd::SavedVariable input_, weight_, bias_;
  c10::SymInt left = 0;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    const at::Tensor& grad = grads[0];
    at::Tensor grad_input, grad_weight, grad_bias;
    if (grad.defined()) {
      const at::Tensor input = input_.unpack(), weight = weight_.unpack();
      if (task_should_compute_output(0)) {
        const c10::SymInt K = weight.sym_size(-1);
        grad_input = padded_op().call(grad, at::flip(weight, {-1}), std::nullopt, K - 1 - left, input.sym_size(-1));
      }
      if (task_should_compute_output(1)) grad_weight = weight_grad_op().call(grad, input, weight, left);
      const at::Tensor bias = bias_.unpack();
      if (bias.defined() && task_should_compute_output(2)) grad_bias = bias_grad(grad, weight, bias);
    }
    return {grad_input, grad_weight, grad_bias};
  }
  void release_variables() override {
    input_.reset_data();
    weight_.reset_data();
    bias_.reset_data();
  }
  std::string name() const override { return "GpureduceConv1dBackward"; }
};

at::Tensor conv1d_padded_autograd(const at::Tensor& input, const at::Tensor& weight,
                                  const std::optional<at::Tensor>& bias, c10::SymInt left, c10::SymInt out_len) {
  // The arguments' errors before any node is made.
  check_args(input, weight, bias, left, out_len);
  const at::Tensor b = bias.has_value() ? *bias : at::Tensor();
  at::Tensor result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = padded_op().call(input, weight, b.defined() ? std::optional<at::Tensor>(b) : std::nullopt, left, out_len);
  }
  if (at::GradMode::is_enabled() && (input.requires_grad() || weight.requires_grad() ||
                                     (b.defined() && b.requires_grad()))) {
    NodePtr node = make_node<GpureduceConv1dBackward>();
    auto* n = static_cast<GpureduceConv1dBackward*>(node.get());
    n->input_ = torch::autograd::SavedVariable(input, /*is_output=*/false);
    n->weight_ = torch::autograd::SavedVariable(weight, /*is_output=*/false);
    n->bias_ = torch::autograd::SavedVariable(b, /*is_output=*/false);
    n->left = left;
    node->set_next_edges(torch::autograd::collect_next_edges(input, weight, b));
    torch::autograd::set_history(result, node);
  }
  // The correlation is bilinear in (input, weight): its tangent is the
  // correlation of each tangent with the other primal, plus the bias's.
  const bool bias_tangent = b.defined() && has_tangent(b);
  if (has_tangent(input) || has_tangent(weight) || bias_tangent) {
    at::Tensor tangent = at::zeros_like(result);
    if (has_tangent(input))
      tangent = tangent.add(padded_op().call(tangent_of(input), primal(weight), std::nullopt, left, out_len));
    if (has_tangent(weight))
      tangent = tangent.add(padded_op().call(primal(input), tangent_of(weight), std::nullopt, left, out_len));
    if (bias_tangent) tangent = tangent.add(per_channel(weight) ? tangent_of(b).reshape({-1, 1}) : tangent_of(b).reshape({}));
    set_tangent(result, tangent);
  }
  return result;
}

}  // namespace
}  // namespace conv
}  // namespace gpureduce

TORCH_LIBRARY_IMPL(gpureduce, CompositeImplicitAutograd, m) { m.impl("conv1d", &gpureduce::conv::conv1d_composite); }

TORCH_LIBRARY_IMPL(gpureduce, Meta, m) {
  m.impl("_conv1d_padded", &gpureduce::conv::conv1d_padded_meta);
  m.impl("_conv1d_weight_grad", &gpureduce::conv::conv1d_weight_grad_meta);
}

TORCH_LIBRARY_IMPL(gpureduce, Autograd, m) {
  m.impl("_conv1d_padded", &gpureduce::conv::conv1d_padded_autograd);
  m.impl("_conv1d_weight_grad", &gpureduce::conv::conv1d_weight_grad_autograd);
}
