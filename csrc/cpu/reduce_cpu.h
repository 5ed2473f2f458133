// The CPU half of the reduction engine, for any op functor: multi-threaded
// with at::parallel_for; rows are blocked (short leaves with several
// accumulators, which the compiler vectorises) and the leaf results are
// combined pairwise, so rounding error grows like log n. Chunking depends
// only on the shape, never on the thread count or the instruction set, so
// results are bitwise reproducible. run_pass_cpu<Family> is instantiated
// once per op and instruction set, each in a file of its own (<op>_cpu.cpp
// and <op>_cpu_avx2.cpp), in namespace GPUREDUCE_CPU_NS: `cpu` for the
// baseline build and `cpu_avx2_kernels` for the one compiled for AVX2, FMA
// and F16C (cpu/isa.h picks one at run time).
#pragma once

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(GPUREDUCE_CPU_AVX2)
#include <immintrin.h>
#endif

#include "../engine/reduce_dtypes.h"
#include "../engine/reduce_ops.h"
#include "../engine/reduce_plan.h"

#ifndef GPUREDUCE_CPU_NS
#define GPUREDUCE_CPU_NS cpu
#endif

namespace gpureduce {
namespace GPUREDUCE_CPU_NS {

constexpr int64_t kLeaf = 256;           // elements per leaf of a row
constexpr int64_t kLeavesPerTask = 128;  // leaves per parallel task (32K elements)
constexpr int64_t kColWidth = 64;        // columns per column task
constexpr int64_t kColLeafRows = 16;     // rows summed directly in a column leaf
constexpr int64_t kRowsPerTask = 4096;   // rows per parallel column task

template <class Op, typename acc_t>
acc_t pairwise_combine(const acc_t* v, int64_t n) {
  if (n == 0) return Op::identity();
  if (n == 1) return v[0];
  const int64_t h = n / 2;
  return Op::combine(pairwise_combine<Op>(v, h), pairwise_combine<Op>(v + h, n - h));
}

// A leaf reads raw inputs (Op::reduce) or, in a pass that reads another
// pass's partials, accumulators (Op::combine).
template <class Op, bool kPartials, typename acc_t, typename in_t>
acc_t fold(acc_t acc, in_t x) {
  if constexpr (kPartials) {
    return Op::combine(acc, static_cast<acc_t>(x));
  } else {
    return Op::reduce(acc, x);
  }
}

// kLanes independent accumulators over a dense leaf, folded at the end by a
// fixed tree written out over constant indices, so that the array is never
// addressed and stays in registers.
constexpr int kLanes = 16;

// 16-bit floats are widened to float a leaf at a time before they are
// folded, with code the vectoriser can follow (c10's conversions are scalar
// calls): bfloat16 is the high half of a float, float16 goes through F16C in
// the AVX2 build. Folding float(x) is what Op::reduce does with x itself, so
// results do not change.
template <typename T>
constexpr bool kWidensToFloat = std::is_same_v<T, c10::BFloat16> || std::is_same_v<T, c10::Half>;

// One element widened to what the op folds: 16-bit floats to float, the
// rest as they are.
template <typename in_t>
inline auto widen_one(in_t x) {
  if constexpr (std::is_same_v<in_t, c10::BFloat16>) {
    const uint32_t w = static_cast<uint32_t>(x.x) << 16;
    float f;
    std::memcpy(&f, &w, sizeof(float));
    return f;
  } else if constexpr (std::is_same_v<in_t, c10::Half>) {
#if defined(GPUREDUCE_CPU_AVX2)
    return _cvtsh_ss(x.x);
#else
    return static_cast<float>(x);
#endif
  } else {
    return x;
  }
}

// n elements at `stride` widened into out[0, n): float16 as 8-wide F16C
// vectors where the build has them and the elements are dense.
template <typename in_t>
inline void widen_block(const in_t* p, int64_t n, int64_t stride, float* out) {
  static_assert(kWidensToFloat<in_t>, "16-bit floats only");
  int64_t i = 0;
#if defined(GPUREDUCE_CPU_AVX2)
  if constexpr (std::is_same_v<in_t, c10::Half>) {
    if (stride == 1) {
      for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));
    }
  }
#endif
  for (; i < n; ++i) out[i] = widen_one(p[i * stride]);
}

// The fold adds the upper half of the lanes to the lower half, then again,
// so that each level is one vector operation: folding neighbours pairwise
// went through the stack one lane at a time, and for rows of 34 float32 it
// was most of the time ([36516, 34] over dim 1: 894 us against torch.sum's
// 236 on one thread).
template <class Op, int N, typename acc_t>
acc_t tree_fold(const acc_t (&a)[N]) {
  static_assert((N & (N - 1)) == 0, "lanes are a power of two");
  acc_t t[N];
#pragma GCC unroll 16
  for (int i = 0; i < N; ++i) t[i] = a[i];
#pragma GCC unroll 16
  for (int w = N / 2; w >= 1; w /= 2) {
#pragma GCC unroll 16
    for (int i = 0; i < w; ++i) t[i] = Op::combine(t[i], t[i + w]);
  }
  return t[0];
}

template <class Op, bool kPartials, typename in_t, typename acc_t>
acc_t leaf_reduce(const in_t* p, int64_t n, int64_t stride);

// A leaf of at most kLeaf 16-bit floats: widened, then folded as floats.
template <class Op, typename in_t, typename acc_t>
acc_t leaf_reduce_widened(const in_t* p, int64_t n, int64_t stride) {
  float buf[kLeaf];
  widen_block(p, n, stride, buf);
  return leaf_reduce<Op, false, float, acc_t>(buf, n, 1);
}

template <class Op, bool kPartials, typename in_t, typename acc_t>
acc_t leaf_reduce(const in_t* p, int64_t n, int64_t stride) {
  if constexpr (kWidensToFloat<in_t> && !kPartials) {
    if (n <= kLeaf) return leaf_reduce_widened<Op, in_t, acc_t>(p, n, stride);
  }
  acc_t acc[kLanes];
#pragma GCC unroll 16
  for (int j = 0; j < kLanes; ++j) acc[j] = Op::identity();
  int64_t i = 0;
  if (stride == 1) {
    for (; i + kLanes <= n; i += kLanes) {
#pragma GCC unroll 16
      for (int j = 0; j < kLanes; ++j) acc[j] = fold<Op, kPartials>(acc[j], p[i + j]);
    }
  } else {
    for (; i + kLanes <= n; i += kLanes) {
#pragma GCC unroll 16
      for (int j = 0; j < kLanes; ++j) acc[j] = fold<Op, kPartials>(acc[j], p[(i + j) * stride]);
    }
  }
  acc_t rest = Op::identity();
  for (; i < n; ++i) rest = fold<Op, kPartials>(rest, p[i * stride]);
  return Op::combine(tree_fold<Op>(acc), rest);
}

// The value an output gets: the accumulator itself where the pass writes
// partials for another pass, else the op's projection.
template <class Op, bool kWritesPartials, typename out_t, typename acc_t>
out_t finish(acc_t a) {
  if constexpr (kWritesPartials) {
    return static_cast<out_t>(a);
  } else {
    return Op::template project<out_t>(a);
  }
}

// Rows: each output's rows are cut into leaves; leaves are grouped into tasks
// of a fixed count, tasks run in parallel, and the sums are combined pairwise.
template <class Op, bool kPartials, bool kWritesPartials, typename in_t, typename out_t>
void run_rows(const ReducePass& p, const in_t* in, out_t* out) {
  using acc_t = typename Op::acc_type;
  const int64_t leaves_per_row = (p.row_len + kLeaf - 1) / kLeaf;
  const int64_t n_leaves = p.n_rows * leaves_per_row;
  const int64_t tasks_per_out = (n_leaves + kLeavesPerTask - 1) / kLeavesPerTask;

  // At most kLeavesPerTask leaves at a time, on the stack: a heap buffer per
  // output cost about 0.1 us per row ([9766, 279] float32 over dim 1 ran
  // 5.9x torch.sum's time, nearly all of it in allocations).
  auto sum_leaves = [&](const in_t* base, int64_t first, int64_t count) {
    acc_t leaf[kLeavesPerTask];
    for (int64_t l = 0; l < count; ++l) {
      const int64_t row = (first + l) / leaves_per_row;
      const int64_t start = ((first + l) % leaves_per_row) * kLeaf;
      const int64_t len = std::min(kLeaf, p.row_len - start);
      leaf[l] = leaf_reduce<Op, kPartials, in_t, acc_t>(base + row * p.row_stride + start * p.elem_stride, len,
                                      p.elem_stride);
    }
    return pairwise_combine<Op>(leaf, count);
  };

  if (n_leaves == 1 && p.outer.ndim == 1) {
    // One leaf per output, outputs at one stride (rows of up to kLeaf
    // elements, the usual short rows): the leaf straight into the output,
    // without the leaf buffer, the pairwise call or the general indexer.
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, p.row_len));
    const int64_t in_step = p.outer.in_strides[0], out_step = p.outer.out_strides[0];
    at::parallel_for(0, p.n_out, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o)
        out[o * out_step] = finish<Op, kWritesPartials, out_t>(
            leaf_reduce<Op, kPartials, in_t, acc_t>(in + o * in_step, p.row_len, p.elem_stride));
    });
    return;
  }
  if (tasks_per_out == 1) {
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, p.n_rows * p.row_len));
    at::parallel_for(0, p.n_out, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        int64_t in_off, out_off;
        p.outer.offsets(o, in_off, out_off);
        out[out_off] = finish<Op, kWritesPartials, out_t>(sum_leaves(in + in_off, 0, n_leaves));
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
    out[out_off] = finish<Op, kWritesPartials, out_t>(
        pairwise_combine<Op>(partial.data() + o * tasks_per_out, tasks_per_out));
  }
}

// A leaf of at most kNarrowColumns columns, their count a template
// argument, so that the accumulators stay in registers: with a run-time
// width gcc kept them in memory and added one column at a time, and
// [3, 32282, 1, 5] float32 over dim 1 ran 3.6x torch.sum's time. Same order
// as the general leaf (each column down its rows). (The same for full
// blocks of 64 columns was measured and dropped: float32 columns got 2-3x
// slower, NOTES.md.)
constexpr int64_t kNarrowColumns = 8;

template <class Op, bool kPartials, int64_t W, typename in_t, typename acc_t>
void fixed_width_column_leaf(const in_t* base, int64_t col_stride, int64_t r0, int64_t nr, const ReducePass& p,
                        acc_t* dst) {
  acc_t acc[W];
#pragma GCC unroll 8
  for (int64_t c = 0; c < W; ++c) acc[c] = Op::identity();
  for (int64_t r = r0; r < r0 + nr; ++r) {
    const in_t* row = base + (p.n_reduce_outer == 1 ? r * p.reduce_stride : p.column_row_offset(r));
#pragma GCC unroll 8
    for (int64_t c = 0; c < W; ++c) {
      if constexpr (kPartials) {
        acc[c] = Op::combine(acc[c], static_cast<acc_t>(row[c * col_stride]));
      } else {
        acc[c] = Op::reduce(acc[c], widen_one(row[c * col_stride]));
      }
    }
  }
#pragma GCC unroll 8
  for (int64_t c = 0; c < W; ++c) dst[c] = acc[c];
}

// Reduces rows [r0, r0 + nr) of `width` columns into dst, pairwise over rows.
template <class Op, bool kPartials, typename in_t, typename acc_t>
void column_block_reduce(const in_t* base, int64_t width, int64_t col_stride, int64_t r0, int64_t nr,
                         const ReducePass& p, acc_t* dst) {
  if (nr <= kColLeafRows && width <= kNarrowColumns) {
    switch (width) {
      case 1: return fixed_width_column_leaf<Op, kPartials, 1>(base, col_stride, r0, nr, p, dst);
      case 2: return fixed_width_column_leaf<Op, kPartials, 2>(base, col_stride, r0, nr, p, dst);
      case 3: return fixed_width_column_leaf<Op, kPartials, 3>(base, col_stride, r0, nr, p, dst);
      case 4: return fixed_width_column_leaf<Op, kPartials, 4>(base, col_stride, r0, nr, p, dst);
      case 5: return fixed_width_column_leaf<Op, kPartials, 5>(base, col_stride, r0, nr, p, dst);
      case 6: return fixed_width_column_leaf<Op, kPartials, 6>(base, col_stride, r0, nr, p, dst);
      case 7: return fixed_width_column_leaf<Op, kPartials, 7>(base, col_stride, r0, nr, p, dst);
      default: return fixed_width_column_leaf<Op, kPartials, 8>(base, col_stride, r0, nr, p, dst);
    }
  }
  if (nr <= kColLeafRows) {
    for (int64_t c = 0; c < width; ++c) dst[c] = Op::identity();
    for (int64_t r = r0; r < r0 + nr; ++r) {
      // One reduced dim (the usual case) needs no division per row.
      const in_t* row = base + (p.n_reduce_outer == 1 ? r * p.reduce_stride : p.column_row_offset(r));
      if constexpr (kWidensToFloat<in_t> && !kPartials) {
        float wide[kColWidth];
        widen_block(row, width, col_stride, wide);
        for (int64_t c = 0; c < width; ++c) dst[c] = Op::reduce(dst[c], wide[c]);
        continue;
      }
      if (col_stride == 1) {
        for (int64_t c = 0; c < width; ++c) dst[c] = fold<Op, kPartials>(dst[c], row[c]);
      } else {
        for (int64_t c = 0; c < width; ++c) dst[c] = fold<Op, kPartials>(dst[c], row[c * col_stride]);
      }
    }
    return;
  }
  const int64_t h = nr / 2;
  acc_t upper[kColWidth];
  column_block_reduce<Op, kPartials>(base, width, col_stride, r0, h, p, dst);
  column_block_reduce<Op, kPartials>(base, width, col_stride, r0 + h, nr - h, p, upper);
  for (int64_t c = 0; c < width; ++c) dst[c] = Op::combine(dst[c], upper[c]);
}

template <class Op, bool kPartials, bool kWritesPartials, typename in_t, typename out_t>
void run_columns(const ReducePass& p, const in_t* in, out_t* out) {
  using acc_t = typename Op::acc_type;
  const int64_t col_blocks = (p.n_cols + kColWidth - 1) / kColWidth;
  const int64_t n_rows = p.n_reduce * p.n_reduce_outer;
  const int64_t row_tasks = (n_rows + kRowsPerTask - 1) / kRowsPerTask;
  const int64_t tasks = p.n_out * col_blocks;
  if (row_tasks == 1) {
    // Rows enough for one task: each task writes its outputs itself, with
    // no partials buffer and no second pass ([19, 7, 8192] float32 over
    // dim 1 zeroed and re-read 600 KB of partials).
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, n_rows * kColWidth));
    at::parallel_for(0, tasks, grain, [&](int64_t b, int64_t e) {
      acc_t column[kColWidth];
      for (int64_t task = b; task < e; ++task) {
        const int64_t o = task / col_blocks, cb = task % col_blocks;
        int64_t in_off, out_off;
        p.outer.offsets(o, in_off, out_off);
        const int64_t c0 = cb * kColWidth, width = std::min(kColWidth, p.n_cols - c0);
        column_block_reduce<Op, kPartials, in_t, acc_t>(in + in_off + c0 * p.col_stride, width, p.col_stride, 0,
                                                        n_rows, p, column);
        for (int64_t c = 0; c < width; ++c)
          out[out_off + (c0 + c) * p.out_col_stride] = finish<Op, kWritesPartials, out_t>(column[c]);
      }
    });
    return;
  }
  std::vector<acc_t> partial(static_cast<size_t>(tasks * row_tasks * kColWidth));
  at::parallel_for(0, tasks * row_tasks, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t task = t / row_tasks, rt = t % row_tasks;
      const int64_t o = task / col_blocks, cb = task % col_blocks;
      int64_t in_off, out_off;
      p.outer.offsets(o, in_off, out_off);
      const int64_t c0 = cb * kColWidth, width = std::min(kColWidth, p.n_cols - c0);
      const int64_t r0 = rt * kRowsPerTask, nr = std::min(kRowsPerTask, n_rows - r0);
      column_block_reduce<Op, kPartials, in_t, acc_t>(in + in_off + c0 * p.col_stride, width, p.col_stride, r0, nr, p,
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
            finish<Op, kWritesPartials, out_t>(pairwise_combine<Op>(column.data(), row_tasks));
      }
    }
  });
}

template <class Op, bool kPartials, bool kWritesPartials, typename in_t, typename out_t>
void run_pass_typed(const ReducePass& pass, const in_t* x, out_t* y) {
  if (pass.kind == ReducePass::Kind::kRows) {
    run_rows<Op, kPartials, kWritesPartials>(pass, x, y);
  } else {
    run_columns<Op, kPartials, kWritesPartials>(pass, x, y);
  }
}

// One pass of the op of `Family` on CPU tensors.
template <class Family>
void run_pass_cpu(const ReducePass& pass, const at::Tensor& in, const at::Tensor& out) {
  dispatch_reduce_types(in.scalar_type(), out.scalar_type(), [&](auto in_tag, auto out_tag) {
    using in_t = typename decltype(in_tag)::type;
    using out_t = typename decltype(out_tag)::type;
    using Op = typename Family::template Op<typename AccOf<out_t>::type>;
    const in_t* x = static_cast<const in_t*>(in.const_data_ptr());
    out_t* y = static_cast<out_t*>(out.data_ptr());
    // Partials flow only between passes of the accumulator type.
    constexpr bool in_acc = std::is_same_v<in_t, typename Op::acc_type>;
    constexpr bool out_acc = std::is_same_v<out_t, typename Op::acc_type>;
    TORCH_INTERNAL_ASSERT((!pass.reads_partials || in_acc) && (!pass.writes_partials || out_acc));
    if constexpr (Op::kPartialsFoldAsInputs) {
      // Folding a partial is then folding an input, and writing one is the
      // projection to the accumulator type: one kernel serves all four roles
      // (fewer instantiations, and a shorter build of these files).
      run_pass_typed<Op, false, false>(pass, x, y);
    } else {
      if constexpr (in_acc) {
        if (pass.reads_partials) {
          if constexpr (out_acc) {
            if (pass.writes_partials) return run_pass_typed<Op, true, true>(pass, x, y);
          }
          return run_pass_typed<Op, true, false>(pass, x, y);
        }
      }
      if constexpr (out_acc) {
        if (pass.writes_partials) return run_pass_typed<Op, false, true>(pass, x, y);
      }
      run_pass_typed<Op, false, false>(pass, x, y);
    }
  });
}

}  // namespace GPUREDUCE_CPU_NS
}  // namespace gpureduce
