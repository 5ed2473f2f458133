// argmax, argmin, max.dim and min.dim on the CPU key: the engine's indexed
// pass (engine/indexed_plan.h) run by ArgExtremumOp over at::parallel_for.
#include <ATen/Parallel.h>
#include <c10/util/irange.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

#include "../engine/indexed_ops.h"
#include "../engine/indexed_plan.h"
#include "../engine/reduce_entry.h"

namespace gpureduce {
namespace {

template <typename in_t, bool kMax>
struct IndexedCpu {
  using acc_t = arg_acc_t<in_t>;
  using Op = ArgExtremumOp<acc_t, kMax>;
  using State = typename Op::state;
  static constexpr int64_t kBlock = 64;

  static State walk_strided(const in_t* p, int64_t stride, int64_t b, int64_t e, State s) {
    for (int64_t i = b; i < e; ++i) s = Op::reduce(s, static_cast<acc_t>(p[i * stride]), i);
    return s;
  }

  // Positions [b, e) (e > b) of a contiguous stretch as one batch: its
  // extreme (and whether it holds a NaN) in a loop the compiler vectorises,
  // then, only where that beats the state, the batch's first element equal
  // to it (or its first NaN), which a search finds with no chain of
  // reduces: rows of 16 float32 ([262144, 16]) had taken 1.22x of torch's
  // max.dim time element by element (2 threads, NOTES.md).
  static State fold_batch(const in_t* p, int64_t b, int64_t e, State s) {
    acc_t m = static_cast<acc_t>(p[b]);
    bool nan = false;
    for (int64_t k = b; k < e; ++k) {
      const acc_t x = static_cast<acc_t>(p[k]);
      m = (kMax ? x > m : x < m) ? x : m;
      if constexpr (std::is_floating_point_v<acc_t>) nan |= x != x;
    }
    if (!(s.index < 0 || (nan ? s.value == s.value : Op::beats(m, s.value)))) return s;
    for (int64_t k = b; k < e; ++k) {
      const acc_t x = static_cast<acc_t>(p[k]);
      if (nan ? x != x : x == m) return {x, k};
    }
    return s;  // not reached: the batch holds its extreme
  }

  // A contiguous stretch in batches of 64 (fold_batch). Once the state holds
  // a NaN nothing can replace it.
  static State walk_contiguous(const in_t* p, int64_t b, int64_t e, State s) {
    for (int64_t i = b; i < e; i += kBlock) {
      if constexpr (std::is_floating_point_v<acc_t>) {
        if (s.index >= 0 && s.value != s.value) return s;
      }
      s = fold_batch(p, i, std::min(e, i + kBlock), s);
    }
    return s;
  }

  static State walk(const in_t* p, int64_t stride, int64_t b, int64_t e, State s) {
    return stride == 1 ? walk_contiguous(p, b, e, s) : walk_strided(p, stride, b, e, s);
  }

  static void store(const State& s, int64_t out_off, in_t* values, int64_t* indices) {
    if (values != nullptr) values[out_off] = static_cast<in_t>(s.value);
    indices[out_off] = s.index;
  }

  static void run(const IndexedPass& p, const in_t* in, in_t* values, int64_t* indices) {
    const int64_t R = p.n_reduce;
    if (p.along_rows()) {
      const int64_t threads = at::get_num_threads();
      // Few long rows: each split into chunks of its own task, merged in order.
      const int64_t chunks = p.n_out >= threads ? 1 : std::min<int64_t>(threads, std::max<int64_t>(1, R / 32768));
      if (chunks > 1) {
        const int64_t len = (R + chunks - 1) / chunks;
        std::vector<State> parts(static_cast<size_t>(p.n_out * chunks), Op::identity());
        at::parallel_for(0, p.n_out * chunks, 1, [&](int64_t b, int64_t e) {
          for (int64_t t = b; t < e; ++t) {
            int64_t in_off = 0, out_off = 0;
            p.outer.offsets(t / chunks, in_off, out_off);
            const int64_t c = t % chunks;
            parts[t] = walk(in + in_off, p.reduce_stride, c * len, std::min(R, (c + 1) * len), Op::identity());
          }
        });
        for (int64_t o = 0; o < p.n_out; ++o) {
          State s = Op::identity();
          for (int64_t c = 0; c < chunks; ++c) s = Op::combine(s, parts[o * chunks + c]);
          int64_t in_off = 0, out_off = 0;
          p.outer.offsets(o, in_off, out_off);
          store(s, out_off, values, indices);
        }
        return;
      }
      const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, R));
      at::parallel_for(0, p.n_out, grain, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          int64_t in_off = 0, out_off = 0;
          p.outer.offsets(o, in_off, out_off);
          store(walk(in + in_off, p.reduce_stride, 0, R, Op::identity()), out_off, values, indices);
        }
      });
      return;
    }
    // Columns: tiles of up to kBlock neighbouring outputs along the innermost
    // kept dim walk the reduced dim together, a row of the tile at a time.
    // Where the tiles are fewer than the threads, each tile's rows are split
    // into chunks, a task each, their states merged by combine: as one task
    // a tile ran on one thread however many rows it had ([1, 19680, 8]
    // float32 over dim 1: 0.69x of torch's speed, 2 threads).
    const int64_t n0 = static_cast<int64_t>(p.outer.sizes[0].divisor);
    const int64_t col_in = p.outer.in_strides[0], col_out = p.outer.out_strides[0];
    const int64_t tiles0 = (n0 + kBlock - 1) / kBlock;
    const int64_t tiles = p.n_out / n0 * tiles0;
    const int64_t threads = at::get_num_threads();
    const int64_t chunks =
        tiles >= threads ? 1
                         : std::min<int64_t>(threads, std::max<int64_t>(1, R * std::min(n0, kBlock) / 32768));
    const int64_t len = (R + chunks - 1) / chunks;
    std::vector<State> parts(chunks > 1 ? static_cast<size_t>(tiles * chunks * kBlock) : 0);
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, len * kBlock));
    at::parallel_for(0, tiles * chunks, grain, [&](int64_t b, int64_t e) {
      State s[kBlock];
      for (int64_t task = b; task < e; ++task) {
        const int64_t t = task / chunks, chunk = task % chunks;
        const int64_t first = (t % tiles0) * kBlock;
        const int64_t count = std::min(kBlock, n0 - first);
        int64_t in_off = 0, out_off = 0;
        p.outer.offsets(t / tiles0 * n0 + first, in_off, out_off);
        for (int64_t c = 0; c < count; ++c) s[c] = Op::identity();
        const in_t* base = in + in_off;
        for (int64_t i = chunk * len; i < std::min(R, (chunk + 1) * len); ++i) {
          const in_t* row = base + i * p.reduce_stride;
          for (int64_t c = 0; c < count; ++c) s[c] = Op::reduce(s[c], static_cast<acc_t>(row[c * col_in]), i);
        }
        if (chunks > 1) {
          std::copy(s, s + count, parts.begin() + task * kBlock);
        } else {
          for (int64_t c = 0; c < count; ++c) store(s[c], out_off + c * col_out, values, indices);
        }
      }
    });
    if (chunks == 1) return;
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t first = (t % tiles0) * kBlock;
      const int64_t count = std::min(kBlock, n0 - first);
      int64_t in_off = 0, out_off = 0;
      p.outer.offsets(t / tiles0 * n0 + first, in_off, out_off);
      for (int64_t c = 0; c < count; ++c) {
        State s = Op::identity();
        for (int64_t chunk = 0; chunk < chunks; ++chunk) s = Op::combine(s, parts[(t * chunks + chunk) * kBlock + c]);
        store(s, out_off + c * col_out, values, indices);
      }
    }
  }
};

void run_indexed_cpu(const IndexedPass& p, const at::Tensor& in, const at::Tensor* values, const at::Tensor& indices,
                     Extreme extreme) {
  with_indexed_type(in.scalar_type(), [&](auto tag) {
    using in_t = typename decltype(tag)::type;
    const in_t* src = static_cast<const in_t*>(in.const_data_ptr());
    in_t* v = values != nullptr ? static_cast<in_t*>(values->data_ptr()) : nullptr;
    int64_t* idx = indices.data_ptr<int64_t>();
    if (extreme == Extreme::kMax) {
      IndexedCpu<in_t, true>::run(p, src, v, idx);
    } else {
      IndexedCpu<in_t, false>::run(p, src, v, idx);
    }
  });
}

const IndexedKernels& indexed_kernels() {
  static const IndexedKernels k{&run_indexed_cpu, "cpu"};
  return k;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CPU, m) {
  IndexedEntries<&indexed_kernels, NoGuard>::register_on(m);
}

}  // namespace gpureduce
