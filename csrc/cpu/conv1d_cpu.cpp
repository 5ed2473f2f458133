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
      // Window k holds input first - left + k.
      for (int64_t k = 0; k < n + K - 1; ++k) {
        const int64_t t = first - left + k;
        x[k] = t >= 0 && t < L ? static_cast<acc_t>(row[t]) : acc_t(0);
      }
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

}  // namespace
}  // namespace conv
}  // namespace gpureduce

TORCH_LIBRARY_IMPL(gpureduce, CPU, m) { m.impl("_conv1d_padded", &gpureduce::conv::conv1d_padded_cpu); }
