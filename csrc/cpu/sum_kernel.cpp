// CPU kernels of gpureduce::sum. Multi-threaded with at::parallel_for; float
// sums are blocked (short leaves with several accumulators, which the compiler
// vectorises) and the leaf sums are combined pairwise, so rounding error grows
// like log n. Chunking depends only on the shape, never on the thread count,
// so results are bitwise reproducible.
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

#include "../reduce_ops.h"
#include "../reduce_plan.h"
#include "../sum_dispatch.h"
#include "../sum_entry.h"

namespace gpureduce {
namespace {

constexpr int64_t kLeaf = 256;           // elements per leaf of a row
constexpr int64_t kLeavesPerTask = 128;  // leaves per parallel task (32K elements)
constexpr int64_t kColWidth = 64;        // columns per column task
constexpr int64_t kColLeafRows = 16;     // rows summed directly in a column leaf
constexpr int64_t kRowsPerTask = 4096;   // rows per parallel column task

template <typename acc_t>
acc_t pairwise_combine(const acc_t* v, int64_t n) {
  if (n == 0) return acc_t(0);
  if (n == 1) return v[0];
  const int64_t h = n / 2;
  return pairwise_combine(v, h) + pairwise_combine(v + h, n - h);
}

template <typename in_t, typename acc_t>
acc_t leaf_sum(const in_t* p, int64_t n, int64_t stride) {
  using Op = SumOp<acc_t>;
  acc_t acc[8];
  for (auto& a : acc) a = Op::identity();
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) acc[j] = Op::reduce(acc[j], p[i + j]);
  } else {
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) acc[j] = Op::reduce(acc[j], p[(i + j) * stride]);
  }
  for (; i < n; ++i) acc[0] = Op::reduce(acc[0], p[i * stride]);
  return pairwise_combine(acc, 8);
}

// Rows: each output's rows are cut into leaves; leaves are grouped into tasks
// of a fixed count, tasks run in parallel, and the sums are combined pairwise.
template <typename in_t, typename out_t>
void run_rows(const ReducePass& p, const in_t* in, out_t* out) {
  using acc_t = typename SumAcc<out_t>::type;
  const int64_t leaves_per_row = (p.row_len + kLeaf - 1) / kLeaf;
  const int64_t n_leaves = p.n_rows * leaves_per_row;
  const int64_t tasks_per_out = (n_leaves + kLeavesPerTask - 1) / kLeavesPerTask;

  auto sum_leaves = [&](const in_t* base, int64_t first, int64_t count) {
    std::vector<acc_t> leaf(static_cast<size_t>(count));
    for (int64_t l = 0; l < count; ++l) {
      const int64_t row = (first + l) / leaves_per_row;
      const int64_t start = ((first + l) % leaves_per_row) * kLeaf;
      const int64_t len = std::min(kLeaf, p.row_len - start);
      leaf[l] = leaf_sum<in_t, acc_t>(base + row * p.row_stride + start * p.elem_stride, len,
                                      p.elem_stride);
    }
    return pairwise_combine(leaf.data(), count);
  };

  if (tasks_per_out == 1) {
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, p.n_rows * p.row_len));
    at::parallel_for(0, p.n_out, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        int64_t in_off, out_off;
        p.outer.offsets(o, in_off, out_off);
        out[out_off] = SumOp<acc_t>::template project<out_t>(sum_leaves(in + in_off, 0, n_leaves));
      }
    });
    return;
  }
  std::vector<acc_t> partial(static_cast<size_t>(p.n_out * tasks_per_out));
  at::parallel_for(0, p.n_out * tasks_per_out, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / tasks_per_out, k = t % tasks_per_out;
      int64_t in_off, out_off;
      p.outer.offsets(o, in_off, out_off);
      const int64_t first = k * kLeavesPerTask;
      partial[t] = sum_leaves(in + in_off, first, std::min(kLeavesPerTask, n_leaves - first));
    }
  });
  for (int64_t o = 0; o < p.n_out; ++o) {
    int64_t in_off, out_off;
    p.outer.offsets(o, in_off, out_off);
    out[out_off] = SumOp<acc_t>::template project<out_t>(
        pairwise_combine(partial.data() + o * tasks_per_out, tasks_per_out));
  }
}

// Sums rows [r0, r0 + nr) of `width` columns into dst, pairwise over rows.
template <typename in_t, typename acc_t>
void column_block_sum(const in_t* base, int64_t width, int64_t col_stride, int64_t r0, int64_t nr,
                      const ReducePass& p, acc_t* dst) {
  if (nr <= kColLeafRows) {
    for (int64_t c = 0; c < width; ++c) dst[c] = acc_t(0);
    for (int64_t r = r0; r < r0 + nr; ++r) {
      const in_t* row = base + p.column_row_offset(r);
      if (col_stride == 1) {
        for (int64_t c = 0; c < width; ++c) dst[c] += static_cast<acc_t>(row[c]);
      } else {
        for (int64_t c = 0; c < width; ++c) dst[c] += static_cast<acc_t>(row[c * col_stride]);
      }
    }
    return;
  }
  const int64_t h = nr / 2;
  acc_t upper[kColWidth];
  column_block_sum(base, width, col_stride, r0, h, p, dst);
  column_block_sum(base, width, col_stride, r0 + h, nr - h, p, upper);
  for (int64_t c = 0; c < width; ++c) dst[c] += upper[c];
}

template <typename in_t, typename out_t>
void run_columns(const ReducePass& p, const in_t* in, out_t* out) {
  using acc_t = typename SumAcc<out_t>::type;
  const int64_t col_blocks = (p.n_cols + kColWidth - 1) / kColWidth;
  const int64_t n_rows = p.n_reduce * p.n_reduce_outer;
  const int64_t row_tasks = (n_rows + kRowsPerTask - 1) / kRowsPerTask;
  const int64_t tasks = p.n_out * col_blocks;
  std::vector<acc_t> partial(static_cast<size_t>(tasks * row_tasks * kColWidth));
  at::parallel_for(0, tasks * row_tasks, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t task = t / row_tasks, rt = t % row_tasks;
      const int64_t o = task / col_blocks, cb = task % col_blocks;
      int64_t in_off, out_off;
      p.outer.offsets(o, in_off, out_off);
      const int64_t c0 = cb * kColWidth, width = std::min(kColWidth, p.n_cols - c0);
      const int64_t r0 = rt * kRowsPerTask, nr = std::min(kRowsPerTask, n_rows - r0);
      column_block_sum<in_t, acc_t>(in + in_off + c0 * p.col_stride, width, p.col_stride, r0, nr, p,
                                    partial.data() + t * kColWidth);
    }
  });
  at::parallel_for(0, tasks, 1, [&](int64_t b, int64_t e) {
    std::vector<acc_t> column(static_cast<size_t>(row_tasks));
    for (int64_t task = b; task < e; ++task) {
      const int64_t o = task / col_blocks, cb = task % col_blocks;
      int64_t in_off, out_off;
      p.outer.offsets(o, in_off, out_off);
      const int64_t c0 = cb * kColWidth, width = std::min(kColWidth, p.n_cols - c0);
      for (int64_t c = 0; c < width; ++c) {
        for (int64_t rt = 0; rt < row_tasks; ++rt)
          column[rt] = partial[(task * row_tasks + rt) * kColWidth + c];
        out[out_off + (c0 + c) * p.out_col_stride] =
            SumOp<acc_t>::template project<out_t>(pairwise_combine(column.data(), row_tasks));
      }
    }
  });
}

void run_pass_cpu(const ReducePass& pass, const at::Tensor& in, const at::Tensor& out) {
  dispatch_sum_types(in.scalar_type(), out.scalar_type(), [&](auto in_tag, auto out_tag) {
    using in_t = typename decltype(in_tag)::type;
    using out_t = typename decltype(out_tag)::type;
    const in_t* x = static_cast<const in_t*>(in.const_data_ptr());
    out_t* y = static_cast<out_t*>(out.data_ptr());
    if (pass.kind == ReducePass::Kind::kRows) {
      run_rows<in_t, out_t>(pass, x, y);
    } else {
      run_columns<in_t, out_t>(pass, x, y);
    }
  });
}

at::Tensor sum_dim_cpu(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype) {
  return sum_dim_with(input, dim, keepdim, dtype, run_pass_cpu, "sum_cpu");
}

at::Tensor sum_cpu(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return sum_dim_cpu(input, std::nullopt, false, dtype);
}

void sum_out_cpu(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                 std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  sum_out_with(input, dim, keepdim, dtype, out, run_pass_cpu, "sum_cpu");
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CPU, m) {
  m.impl("sum", &sum_cpu);
  m.impl("sum.dim_IntList", &sum_dim_cpu);
  m.impl("sum.IntList_out", &sum_out_cpu);
}

}  // namespace gpureduce
