// gpureduce::conv1d: a 1-D cross-correlation under a short mask, as
// F.conv1d computes it, out[i] = bias + sum_j in[i - left + j] * w[j] with
// in[t] = 0 outside [0, L) (the book's ghost cells). The public op takes a
// padding name ("same", "causal", "valid") and calls _conv1d_padded, which
// takes `left` and the output length themselves: the backward's correlation
// (the gradient with the flipped mask) needs paddings no name gives.
//
// Shapes: input [L], [B, L] or [B, C, L]; weight [K] (one mask for every
// row) or [C, K] (depthwise: a mask per channel, input [B, C, L] only);
// bias of one element for a [K] mask, [C] for a [C, K] one. float32,
// float64, float16 and bfloat16, all three of one dtype; the 16-bit types
// accumulate in float32.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymInt.h>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace gpureduce {
namespace conv {

// The longest mask: masks are short in the models this op serves (2 to 8
// taps in depthwise causal convolutions), and the GPU kernels keep a mask in
// constant memory or registers.
constexpr int64_t kMaxTaps = 1024;

// Taps left of each output (the zero ghost cells before the input) and the
// output length, for a padding name: "same" (left (K - 1) / 2, length L,
// as F.conv1d's), "causal" (left K - 1, length L), "valid" (no padding,
// length L - K + 1, which needs L >= K).
struct Padding {
  c10::SymInt left;
  c10::SymInt out_len;
};
// A size, or a list of sizes, as text for an error message (conv1d.cpp says
// why the numbers are not streamed).
std::string sym_text(const c10::SymInt& v);
std::string shape_text(c10::SymIntArrayRef sizes);

Padding padding_for(std::string_view padding, const c10::SymInt& L, const c10::SymInt& K);

// The checks of every key's kernel, with torch's kinds of errors: ranks,
// channel counts, dtypes, devices, the mask's length (1 to kMaxTaps) and
// the bias's shape. `left` and `out_len` are _conv1d_padded's (0 <= left,
// 0 <= out_len).
void check_args(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                const c10::SymInt& left, const c10::SymInt& out_len);

// The type a kernel sums in: float64 for float64, float32 for the rest.
template <typename scalar_t>
using acc_of = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;

// Whether the weight is a mask per channel ([C, K]) rather than one mask.
inline bool per_channel(const at::Tensor& weight) { return weight.dim() == 2; }

// What every device's kernel of _conv1d_padded starts from: the operands
// checked (check_args) and contiguous, the output allocated, and the
// geometry. The input is `rows` rows of L; row r's mask is row r %
// channels of a mask per channel (channels = C), else the one mask
// (channels = 1).
struct Conv1dOperands {
  at::Tensor input, weight, bias;  // bias undefined when there is none
  at::Tensor out;                  // [..., out_len]; nothing to do when empty
  int64_t rows = 0, L = 0, out_len = 0, channels = 1, K = 0, left = 0;
  bool per_channel = false;
};
Conv1dOperands prepare_operands(const at::Tensor& input, const at::Tensor& weight,
                                const std::optional<at::Tensor>& bias, int64_t left, int64_t out_len);

// _conv1d_weight_grad(grad, input, weight, left): the mask's gradient of
// _conv1d_padded(input, weight, bias, left, grad.size(-1)), in weight's shape
// and dtype: grad_w[c][j] = sum over the rows of channel c (every row, for
// one mask) and i < out_len of grad[r][i] * input[r][i - left + j] (zero
// outside the row), summed in acc_of<scalar_t> in an order fixed by the
// shapes. Every device's kernel starts from these operands: checked (the
// input and weight as check_args does, the gradient of the output's shape,
// dtype and device), contiguous, and the output allocated.
struct WeightGradOperands {
  at::Tensor grad, input;
  at::Tensor out;  // weight's shape and dtype
  int64_t rows = 0, L = 0, out_len = 0, channels = 1, K = 0, left = 0;
  bool per_channel = false;
};
void check_weight_grad_args(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& weight,
                            const c10::SymInt& left);
WeightGradOperands prepare_weight_grad(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& weight,
                                       int64_t left);

// The four steps of PMPP chapter 8 (classic_conv1d, CUDA only:
// cuda/conv1d_cuda.cu), in the book's order.
inline std::vector<std::string> book_kernel_names() { return {"basic", "constant", "tiled_halo", "tiled_l2"}; }
inline bool is_book_kernel(std::string_view name) {
  for (const auto& k : book_kernel_names())
    if (k == name) return true;
  return false;
}

}  // namespace conv
}  // namespace gpureduce
