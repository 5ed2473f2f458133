// _conv1d_padded on the CPU key (conv/conv1d.h): each row of the input
// ([B, C] rows of L, or one row) convolved with its mask, in chunks of
// outputs spread over at::parallel_for. A chunk copies its window of inputs
// (zeros for the ghost cells) and accumulates tap by tap, each tap a pass
// over the chunk (out[i] += w[j] * window[i + j]), so that the inner loop
// is a plain multiply-add over contiguous elements that the compiler
// vectorises; every output adds its taps in order j = 0, 1, ..., K - 1
// after its bias, whatever the thread count, so results are bitwise
// reproducible.
// 16-bit inputs accumulate in float32, float32 in float32, float64 in
// float64.
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/util/irange.h>
#include <torch/library.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "../conv/conv1d.h"

namespace gpureduce {
namespace conv {
namespace {

// Outputs in chunks of kChunk: a task is a chunk of one row, so that one
// long row ([L], a single channel) spreads over the threads as many rows do.
constexpr int64_t kChunk = 4096;

// x[k] = row[start + k] for k < len, zero outside the row (the ghost cells).
template <typename scalar_t, typename acc_t>
void fill_window(const scalar_t* row, int64_t L, int64_t start, int64_t len, acc_t* x) {
  for (int64_t k = 0; k < len; ++k) {
    const int64_t t = start + k;
    x[k] = t >= 0 && t < L ? static_cast<acc_t>(row[t]) : acc_t(0);
  }
}

template <typename scalar_t>
void conv1d_rows(const scalar_t* in, const scalar_t* w, const scalar_t* bias, scalar_t* out, int64_t rows,
                 int64_t channels, bool mask_per_channel, int64_t L, int64_t K, int64_t left, int64_t out_len) {
  using acc_t = acc_of<scalar_t>;
  const int64_t chunks = (out_len + kChunk - 1) / kChunk;
  // A few chunks a task where they are little work (short rows, short masks).
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, std::min(out_len, kChunk) * K));
  at::parallel_for(0, rows * chunks, grain, [&](int64_t t0, int64_t t1) {
    // The chunk's window of inputs (zeros outside the row) and its sums.
    std::vector<acc_t> x(static_cast<size_t>(kChunk + K - 1));
    std::vector<acc_t> acc(static_cast<size_t>(kChunk));
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t r = task / chunks;
      const int64_t first = (task - r * chunks) * kChunk;  // the chunk's first output
      const int64_t n = std::min(kChunk, out_len - first);
      const int64_t c = mask_per_channel ? r % channels : 0;
      const scalar_t* wr = w + (mask_per_channel ? c * K : 0);
      const scalar_t* row = in + r * L;
      fill_window(row, L, first - left, n + K - 1, x.data());
      const acc_t b = bias != nullptr ? static_cast<acc_t>(bias[mask_per_channel ? c : 0]) : acc_t(0);
      std::fill(acc.begin(), acc.begin() + n, b);
      for (const auto j : c10::irange(K)) {
        const acc_t wj = static_cast<acc_t>(wr[j]);
        const acc_t* src = x.data() + j;
        acc_t* dst = acc.data();
        for (int64_t i = 0; i < n; ++i) dst[i] += wj * src[i];
      }
      scalar_t* o = out + r * out_len + first;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<scalar_t>(acc[i]);
    }
  });
}

at::Tensor conv1d_padded_cpu(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                             int64_t left, int64_t out_len) {
  const Conv1dOperands o = prepare_operands(input, weight, bias, left, out_len);
  if (o.out.numel() == 0) return o.out;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, o.input.scalar_type(), "gpureduce_conv1d_cpu", [&] {
    conv1d_rows<scalar_t>(o.input.const_data_ptr<scalar_t>(), o.weight.const_data_ptr<scalar_t>(),
                          o.bias.defined() ? o.bias.const_data_ptr<scalar_t>() : nullptr,
                          o.out.mutable_data_ptr<scalar_t>(), o.rows, o.channels, o.per_channel, o.L, o.K, o.left,
                          o.out_len);
  });
  return o.out;
}

// The mask's gradient (_conv1d_weight_grad). A channel's work is its rows'
// chunks of kChunk outputs, in order (row by row, chunk by chunk), cut into
// runs of consecutive chunks; a task is a run, whose K sums (one a tap: for
// each chunk, the dot product of its gradient with its window of inputs
// from tap j on) add up in chunk order into a slot of its own; then each
// channel adds its runs' slots in order. The runs are the shapes' (about
// kWeightGradRuns in all), not the thread count's: bitwise reproducible,
// and the slots stay small beside the input whatever the mask's length. A
// dot product runs in 8 lanes (the compiler vectorises independent chains,
// not one chain it may not reorder), added pairwise at the end.
constexpr int64_t kWeightGradRuns = 256;

template <typename scalar_t>
void weight_grad_rows(const WeightGradOperands& o) {
  using acc_t = acc_of<scalar_t>;
  const scalar_t* g = o.grad.const_data_ptr<scalar_t>();
  const scalar_t* in = o.input.const_data_ptr<scalar_t>();
  const int64_t K = o.K, L = o.L, out_len = o.out_len, left = o.left;
  const int64_t groups = o.per_channel ? o.channels : 1;
  const int64_t chunks = (out_len + kChunk - 1) / kChunk;
  const int64_t group_chunks = (groups > 0 ? o.rows / groups : 0) * chunks;
  const int64_t want = std::max<int64_t>(1, (kWeightGradRuns + groups - 1) / std::max<int64_t>(groups, 1));
  const int64_t run_len = std::max<int64_t>(1, (group_chunks + want - 1) / want);
  const int64_t runs = (group_chunks + run_len - 1) / run_len;
  std::vector<acc_t> slots(static_cast<size_t>(groups * runs * K));
  at::parallel_for(0, groups * runs, 1, [&](int64_t t0, int64_t t1) {
    std::vector<acc_t> x(static_cast<size_t>(kChunk + K - 1)), gv(static_cast<size_t>(kChunk));
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t c = task / runs;
      const int64_t first_chunk = (task - c * runs) * run_len;
      const int64_t last_chunk = std::min(group_chunks, first_chunk + run_len);
      acc_t* slot = slots.data() + task * K;
      for (int64_t t = first_chunk; t < last_chunk; ++t) {
        const int64_t q = t / chunks;  // the channel's q-th row
        const int64_t first = (t - q * chunks) * kChunk;
        const int64_t n = std::min(kChunk, out_len - first);
        const int64_t r = o.per_channel ? q * o.channels + c : q;
        const scalar_t* row = in + r * L;
        fill_window(row, L, first - left, n + K - 1, x.data());
        for (int64_t i = 0; i < n; ++i) gv[i] = static_cast<acc_t>(g[r * out_len + first + i]);
        for (int64_t j = 0; j < K; ++j) {
          acc_t lane[8] = {};
          const acc_t* xj = x.data() + j;
          int64_t i = 0;
          for (; i + 8 <= n; i += 8)
            for (int e = 0; e < 8; ++e) lane[e] += gv[i + e] * xj[i + e];
          for (int e = 0; i < n; ++i, ++e) lane[e] += gv[i] * xj[i];
          slot[j] += ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
        }
      }
    }
  });
  scalar_t* out = o.out.mutable_data_ptr<scalar_t>();
  for (int64_t c = 0; c < groups; ++c) {
    for (int64_t j = 0; j < K; ++j) {
      acc_t total(0);
      for (int64_t u = 0; u < runs; ++u) total += slots[(c * runs + u) * K + j];
      out[c * K + j] = static_cast<scalar_t>(total);
    }
  }
}

at::Tensor conv1d_weight_grad_cpu(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& weight,
                                  int64_t left) {
  const WeightGradOperands o = prepare_weight_grad(grad, input, weight, left);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, o.input.scalar_type(), "gpureduce_conv1d_weight_grad_cpu",
                                  [&] { weight_grad_rows<scalar_t>(o); });
  return o.out;
}

}  // namespace
}  // namespace conv
}  // namespace gpureduce

TORCH_LIBRARY_IMPL(gpureduce, CPU, m) {
  m.impl("_conv1d_padded", &gpureduce::conv::conv1d_padded_cpu);
  m.impl("_conv1d_weight_grad", &gpureduce::conv::conv1d_weight_grad_cpu);
}
