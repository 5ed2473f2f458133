// The CUDA reduction engine: policy, per-thread / per-warp / per-block stages
// and the deterministic grid finish. Parametrised by an op functor
// (reduce_ops.h), so prod/max/min/mean can reuse it.
//
// Two families of kernels cover every pass the planner (reduce_plan.h)
// produces:
//   gpureduce_sum_*_rows   : the reduced elements of an output are contiguous
//                            (or strided) rows; lanes cooperate along a row
//                            (short, inner and split variants by row length).
//   gpureduce_sum_columns  : outputs are adjacent in memory; each thread owns
//                            a vector of adjacent outputs and walks the rows.
// Both read 16 bytes per load where the layout allows it, keep several loads
// in flight per thread, and finish across blocks without float atomics: each
// block writes its partial, and either a second kernel (split rows) or the
// last block to arrive (columns, an atomic ticket) combines the partials in a
// fixed order. Results are bitwise reproducible.
#pragma once

#include <c10/macros/Macros.h>
#include <c10/util/Half.h>
#include <c10/util/complex.h>

#include <cstdint>
#include <type_traits>

#include "../reduce_ops.h"
#include "../reduce_plan.h"

namespace gpureduce {
namespace cuda {

// Measured on the H200 (see benchmarks/NOTES.md for the figures behind them).
struct EnginePolicy {
  static constexpr int kThreads = 512;
  static constexpr int kUnroll = 4;       // independent loads in flight per thread
  static constexpr int kBlocksPerSm = 2;  // 1024 resident threads, 64 registers each
  // The split rows kernel (full sums) is held to 40 registers so that three
  // blocks fit an SM: one wave of them then has 1536 threads' loads in flight
  // per SM, which the sweep of 2 against 3 blocks favoured (NOTES.md). Not
  // for bfloat16 and int16 vectors and 16-byte elements, which need more
  // than 40: held to 40 they spilled, and bfloat16 full sums of 2^26 fell
  // from 1.04x to 0.92x of torch.sum.
  template <typename in_t, int V, int kStep>
  static constexpr int split_blocks_per_sm() {
    const bool tight = (kStep == 1 && V == 8 && !std::is_same_v<in_t, c10::Half>) || sizeof(in_t) == 16;
    return tight ? 2 : 3;
  }
  // The columns kernel likewise for vectors of four (float32, int32): three
  // blocks of 512 threads, half as many loads again in flight per SM as two.
  // float64 and int64 pairs spill a few bytes at 40 registers.
  template <int V>
  static constexpr int columns_blocks_per_sm() {
    return V == 4 ? 3 : 2;
  }
};

template <typename T, int V>
struct alignas(sizeof(T) * V) VecOf {
  T v[V];
};

template <int V, typename T>
__device__ __forceinline__ void load_vec(const T* p, T (&out)[V]) {
  const VecOf<T, V> w = *reinterpret_cast<const VecOf<T, V>*>(p);
#pragma unroll
  for (int i = 0; i < V; ++i) out[i] = w.v[i];
}

// A load that skips L1, for partials written by other blocks of this grid.
template <typename T>
__device__ __forceinline__ T load_coherent(const T* p) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return __ldcg(p);
  } else if constexpr (std::is_integral_v<T>) {
    static_assert(sizeof(T) == 8, "integer partials are int64");
    return static_cast<T>(__ldcg(reinterpret_cast<const long long*>(p)));
  } else {
    using R = typename T::value_type;
    const R* r = reinterpret_cast<const R*>(p);
    return T(__ldcg(r), __ldcg(r + 1));
  }
}

template <typename T>
__device__ __forceinline__ T shfl_xor(T v, int lane_mask) {
  return __shfl_xor_sync(0xffffffffu, v, lane_mask);
}
template <typename T>
__device__ __forceinline__ c10::complex<T> shfl_xor(c10::complex<T> v, int lane_mask) {
  return c10::complex<T>(shfl_xor(v.real(), lane_mask), shfl_xor(v.imag(), lane_mask));
}

// Butterfly over aligned groups of `group` lanes (a power of two up to 32).
// Every lane ends with the same value; the whole warp must call it.
template <class Op, typename acc_t>
__device__ __forceinline__ acc_t group_reduce(acc_t v, int group) {
  for (int off = group / 2; off > 0; off /= 2) v = Op::combine(v, shfl_xor(v, off));
  return v;
}

// Whole-block reduction in a fixed order; the result is valid in thread 0.
template <class Op, typename acc_t>
__device__ __forceinline__ acc_t block_reduce(acc_t v) {
  __shared__ __align__(16) unsigned char raw[32 * sizeof(acc_t)];
  acc_t* warp_sums = reinterpret_cast<acc_t*>(raw);
  const int tid = threadIdx.x + threadIdx.y * blockDim.x;
  const int lane = tid % 32, warp = tid / 32, n_warps = (blockDim.x * blockDim.y) / 32;
  v = group_reduce<Op>(v, 32);
  __syncthreads();  // warp_sums may still be read by an earlier call
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < n_warps ? warp_sums[lane] : Op::identity();
    v = group_reduce<Op>(v, 32);
  }
  return v;
}

// Called by every thread of a block once `block_total` (valid in thread 0) is
// final. Publishes it as partials[slot]; the last block of the `expected`
// that share `counter` combines all of them, in slot order, into *out.
template <class Op, typename acc_t, typename out_t>
__device__ __forceinline__ void finish_last_block(acc_t block_total, acc_t* partials, int slot,
                                                  unsigned* counter, int expected, out_t* out) {
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    partials[slot] = block_total;
    __threadfence();  // the partial is visible before the ticket is
    is_last = atomicAdd(counter, 1u) == static_cast<unsigned>(expected - 1);
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  acc_t acc = Op::identity();
  for (int i = threadIdx.x; i < expected; i += blockDim.x)
    acc = Op::combine(acc, load_coherent(partials + i));
  acc = block_reduce<Op>(acc);
  if (threadIdx.x == 0) *out = Op::template project<out_t>(acc);
}

// ---------------------------------------------------------------- rows ----

template <typename acc_t>
struct RowsArgs {
  OuterIndexer outer;
  int64_t n_out;
  int64_t chunks;          // per output: n_rows * chunks_per_row
  int64_t chunks_per_row;  // row_len / V
  FastDivmod row_div;      // by chunks_per_row
  int64_t row_stride;      // elements between rows of one output
  int64_t elem_stride;     // elements between chunks in a row (1 when V > 1)
  int group;               // lanes per output (group kernel): 1, 2, ..., 32
  int split;               // blocks per output (split kernel)
  // Split kernel: 0, the split blocks interleave over an output's chunks a
  // block-width at a time; else each block reads its own range of this many
  // consecutive chunks.
  int64_t block_chunks;
  // Queue kernel (gpureduce_sum_full_queue): chunks of each block's first
  // range; block_chunks is then the size of the queued ranges after them.
  int64_t first_chunks;
  // Split kernel launched as a programmatic dependent: whether the next
  // kernel may be scheduled from the start (a grid of one wave), or only
  // once this grid's blocks finish (see gpureduce_sum_split_rows).
  int early_trigger;
  // A single dense row (a full sum) need not start or end on a 16-byte
  // boundary: the vector body starts `head` elements in, and the `head`
  // elements before it and the `tail` after it are read one by one.
  int64_t head;
  int tail;
  acc_t* partials;     // [n_out][split]
  unsigned* counters;  // [n_out]
};

template <int V, typename acc_t>
__device__ __forceinline__ int64_t chunk_offset(const RowsArgs<acc_t>& a, int64_t c) {
  if (a.chunks == a.chunks_per_row) return c * V * a.elem_stride;  // one row per output
  const int64_t row = static_cast<int64_t>(a.row_div.div(static_cast<uint64_t>(c)));
  return row * a.row_stride + (c - row * a.chunks_per_row) * V * a.elem_stride;
}

// The inputs of one chunk: V loaded elements, of which every kStep-th is
// the tensor's (kStep = 2 reads a row of stride 2 with full vector loads and
// drops the elements in between).
template <int V, int kStep, typename in_t>
__device__ __forceinline__ void pick_every(const in_t (&v)[V], in_t (&picked)[V / kStep]) {
#pragma unroll
  for (int i = 0; i < V / kStep; ++i) picked[i] = v[i * kStep];
}

// The registers of one chunk between its load and its sum (the short rows
// kernel): for byte inputs of an integer sum the 16 bytes as the four words
// they arrived in (see SumOp::reduce_packed_bytes), else V elements. Loading
// and summing are separate so that a thread can put several loads in flight
// before it adds.
template <class Op, typename in_t, int V>
struct Chunk {
  static constexpr bool kPacked = V == 16 && Op::template sums_packed_bytes<in_t>();
  std::conditional_t<kPacked, uint4, VecOf<in_t, V>> raw;

  __device__ __forceinline__ void load(const in_t* p) {
    raw = *reinterpret_cast<const decltype(raw)*>(p);
  }
  __device__ __forceinline__ typename Op::acc_type sum() const {
    if constexpr (kPacked) {
      return Op::template reduce_packed_bytes<in_t>(raw);
    } else {
      return Op::template reduce_vector<V>(raw.v);
    }
  }
};

// Programmatic dependent launch (sm_90). A kernel launched with
// programmatic stream serialization may start while the kernel before it in
// the stream is still running; wait_for_prior_grid() returns once that
// kernel has completed and its memory is visible, so it must come before
// the first global memory access. allow_next_grid() lets the next such
// kernel be scheduled early (it still waits for this one to complete before
// it touches memory). Both are no-ops for a normal launch.
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Sum of chunks begin, begin + step, ... < end of one output, kUnroll loads
// in flight, each into its own partial. Partials are of the op's wide type
// (SumOp::wide_op): a vector's elements are added in acc_t, the rest wide.
// The last chunks (fewer than kUnroll) load one after another. A version
// that loaded them together (predicated) needed 46-50 registers instead of
// 38-40, and made [8192,8192] int32 over dim 1 1.3x and its bfloat16 twin
// 1.2x slower on the H200 (NOTES.md); full sums avoid the remainder instead
// (block ranges in multiples of kThreads * kUnroll chunks).
template <class Op, typename in_t, int V, int kStep, typename wide_t>
__device__ __forceinline__ wide_t sum_chunks(const in_t* __restrict__ base, const RowsArgs<wide_t>& a,
                                             int64_t c, int64_t end, int64_t step) {
  using WideOp = typename Op::wide_op;
  constexpr int U = EnginePolicy::kUnroll;
  constexpr int P = V / kStep;
  wide_t acc[U];
#pragma unroll
  for (int u = 0; u < U; ++u) acc[u] = WideOp::identity();
  if constexpr (V == 16 && kStep == 1 && Op::template sums_packed_bytes<in_t>()) {
    for (; c + (U - 1) * step < end; c += U * step) {
      uint4 w[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        w[u] = *reinterpret_cast<const uint4*>(base + chunk_offset<V>(a, c + u * step));
#pragma unroll
      for (int u = 0; u < U; ++u)
        acc[u] = WideOp::combine(acc[u], Op::template reduce_packed_bytes<in_t>(w[u]));
    }
    for (; c < end; c += step)
      acc[0] = WideOp::combine(acc[0], Op::template reduce_packed_bytes<in_t>(
                                           *reinterpret_cast<const uint4*>(base + chunk_offset<V>(a, c))));
  } else {
    for (; c + (U - 1) * step < end; c += U * step) {
      alignas(16) in_t v[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u) load_vec<V>(base + chunk_offset<V>(a, c + u * step), v[u]);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        in_t picked[P];
        pick_every<V, kStep>(v[u], picked);
        acc[u] = WideOp::combine(acc[u], static_cast<wide_t>(Op::template reduce_vector<P>(picked)));
      }
    }
    for (; c < end; c += step) {
      alignas(16) in_t v[V];
      load_vec<V>(base + chunk_offset<V>(a, c), v);
      in_t picked[P];
      pick_every<V, kStep>(v, picked);
      acc[0] = WideOp::combine(acc[0], static_cast<wide_t>(Op::template reduce_vector<P>(picked)));
    }
  }
#pragma unroll
  for (int w = 1; w < U; w *= 2) {
#pragma unroll
    for (int u = 0; u + w < U; u += 2 * w) acc[u] = WideOp::combine(acc[u], acc[u + w]);
  }
  return acc[0];
}

// Many outputs: a group of `group` lanes per output, groups walk the outputs.
template <class Op, typename in_t, typename out_t, int V, int kStep>
__global__ void __launch_bounds__(EnginePolicy::kThreads, EnginePolicy::kBlocksPerSm)
    gpureduce_sum_inner_rows(RowsArgs<typename Op::wide_op::acc_type> a, const in_t* __restrict__ in,
                             out_t* __restrict__ out) {
  using WideOp = typename Op::wide_op;
  using wide_t = typename WideOp::acc_type;
  const int group = a.group;
  const int lane = threadIdx.x % group;
  const int groups_per_block = blockDim.x / group;
  const int64_t first = static_cast<int64_t>(threadIdx.x / group);
  // The loop bound is uniform across the block, so every lane reaches the
  // shuffles in group_reduce.
  for (int64_t o0 = static_cast<int64_t>(blockIdx.x) * groups_per_block; o0 < a.n_out;
       o0 += static_cast<int64_t>(gridDim.x) * groups_per_block) {
    const int64_t o = o0 + first;
    wide_t acc = WideOp::identity();
    int64_t in_off = 0, out_off = 0;
    if (o < a.n_out) {
      a.outer.offsets(o, in_off, out_off);
      acc = sum_chunks<Op, in_t, V, kStep>(in + in_off, a, lane, a.chunks, group);
    }
    acc = group_reduce<WideOp>(acc, group);
    if (o < a.n_out && lane == 0) out[out_off] = WideOp::template project<out_t>(acc);
  }
}

// Input and output offsets of output o of a rows pass: one multiply-add
// each when the outputs sit at constant strides (the usual case), else the
// general indexer.
template <typename wide_t>
__device__ __forceinline__ void output_offsets(const RowsArgs<wide_t>& a, int64_t o, int64_t& in_off,
                                               int64_t& out_off) {
  if (a.outer.ndim == 1) {
    in_off = o * a.outer.in_strides[0];
    out_off = o * a.outer.out_strides[0];
  } else {
    a.outer.offsets(o, in_off, out_off);
  }
}

// Short outputs (at most 32 chunks each). A group of lanes, the power of
// two at or above chunks / P, reads up to P chunks per lane (lane, lane +
// group, ...), and each thread reads kUnroll chunks per step: those of
// kUnroll / P outputs. With P = 1 a warp's load covers 32 / group whole
// neighbouring rows (512 contiguous bytes when the rows are dense); larger P
// needs fewer shuffles per byte. The next step's loads are issued before
// this step's sums, shuffles and stores, so that loads stay in flight while
// the thread computes: without that, P = 1 read 2750-3000 GB/s on the H200
// where the inner rows kernel read 3300-3900 (NOTES.md). The few adds of an
// output stay in the accumulator type (no wide partials).
template <class Op, typename in_t, typename out_t, int V, int P>
__global__ void __launch_bounds__(EnginePolicy::kThreads, EnginePolicy::kBlocksPerSm)
    gpureduce_sum_short_rows(RowsArgs<typename Op::wide_op::acc_type> a, const in_t* __restrict__ in,
                             out_t* __restrict__ out) {
  using acc_t = typename Op::acc_type;
  constexpr int U = EnginePolicy::kUnroll;
  constexpr int kOuts = U / P;  // outputs per thread and step
  static_assert(U % P == 0, "P divides the unroll");
  const int group = a.group;
  const int lane = threadIdx.x & (group - 1);
  const int groups_per_block = blockDim.x / group;
  const int64_t first = static_cast<int64_t>(threadIdx.x / group);
  const int64_t per_block = int64_t(groups_per_block) * kOuts;
  const int64_t grid_step = static_cast<int64_t>(gridDim.x) * per_block;
  int64_t lane_off[P];
  bool reads[P];
#pragma unroll
  for (int j = 0; j < P; ++j) {
    reads[j] = lane + j * group < a.chunks;
    lane_off[j] = reads[j] ? chunk_offset<V>(a, lane + j * group) : 0;
  }

  using ChunkT = Chunk<Op, in_t, V>;
  auto issue = [&](int64_t o0, ChunkT (&ch)[U]) {
#pragma unroll
    for (int q = 0; q < kOuts; ++q) {
      const int64_t o = o0 + q * groups_per_block + first;
      if (o < a.n_out) {
        int64_t in_off, out_off;
        output_offsets(a, o, in_off, out_off);
#pragma unroll
        for (int j = 0; j < P; ++j)
          if (reads[j]) ch[q * P + j].load(in + in_off + lane_off[j]);
      }
    }
  };
  ChunkT next[U];
  int64_t o0 = static_cast<int64_t>(blockIdx.x) * per_block;
  issue(o0, next);
  // Uniform loop bound across the block: every lane reaches the shuffles.
  for (; o0 < a.n_out; o0 += grid_step) {
    ChunkT cur[U];
#pragma unroll
    for (int u = 0; u < U; ++u) cur[u] = next[u];
    if (o0 + grid_step < a.n_out) issue(o0 + grid_step, next);
#pragma unroll
    for (int q = 0; q < kOuts; ++q) {
      const int64_t o = o0 + q * groups_per_block + first;
      acc_t s = Op::identity();
#pragma unroll
      for (int j = 0; j < P; ++j)
        if (o < a.n_out && reads[j]) s = Op::combine(s, cur[q * P + j].sum());
      s = group_reduce<Op>(s, group);
      if (o < a.n_out && lane == 0) {
        int64_t in_off, out_off;
        output_offsets(a, o, in_off, out_off);
        out[out_off] = Op::template project<out_t>(s);
      }
    }
  }
}

// A single dense row's `head` elements before its vector body and `tail`
// after it (RowsArgs), added one per thread into acc (one block calls this).
template <class Op, int V, typename in_t, typename wide_t>
__device__ __forceinline__ wide_t add_ragged_ends(wide_t acc, const RowsArgs<wide_t>& a, const in_t* row) {
  if (threadIdx.x < a.head + a.tail) {
    const int64_t i = threadIdx.x < a.head ? threadIdx.x : threadIdx.x + a.chunks * V;
    acc = Op::wide_op::combine(acc, static_cast<wide_t>(Op::reduce(Op::identity(), row[i])));
  }
  return acc;
}

// Few, long outputs (a full sum is one): blockIdx.y is the output, and the
// `split` blocks along x each read a range of its chunks (or interleave over
// them, a.block_chunks == 0). With split > 1 each block
// writes its partial; then either the last block to arrive (a.counters set)
// or gpureduce_sum_finish_partials (a.counters null) combines them.
template <class Op, typename in_t, typename out_t, int V, int kStep>
__global__ void __launch_bounds__(EnginePolicy::kThreads,
                                  EnginePolicy::template split_blocks_per_sm<in_t, V, kStep>())
    gpureduce_sum_split_rows(RowsArgs<typename Op::wide_op::acc_type> a, const in_t* __restrict__ in,
                             out_t* __restrict__ out) {
  using WideOp = typename Op::wide_op;
  using wide_t = typename WideOp::acc_type;
  wait_for_prior_grid();
  // A dependent kernel scheduled early waits on an SM slot: fine while this
  // grid fits one wave, but a grid of several waves would lose those slots
  // for its later waves, so it lets the next kernel in only at its end.
  if (a.early_trigger) allow_next_grid();
  const int64_t o = blockIdx.y;
  int64_t in_off, out_off;
  a.outer.offsets(o, in_off, out_off);
  int64_t first, end, step;
  if (a.block_chunks == 0) {
    first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    end = a.chunks;
    step = static_cast<int64_t>(a.split) * blockDim.x;
  } else {
    const int64_t begin = static_cast<int64_t>(blockIdx.x) * a.block_chunks;
    first = begin + threadIdx.x;
    end = begin + a.block_chunks < a.chunks ? begin + a.block_chunks : a.chunks;
    step = blockDim.x;
  }
  wide_t acc = sum_chunks<Op, in_t, V, kStep>(in + in_off + a.head, a, first, end, step);
  if (blockIdx.x == 0) acc = add_ragged_ends<Op, V>(acc, a, in + in_off);
  acc = block_reduce<WideOp>(acc);
  if (a.split == 1) {
    if (threadIdx.x == 0) out[out_off] = WideOp::template project<out_t>(acc);
    allow_next_grid();
    return;
  }
  if (a.counters == nullptr) {
    if (threadIdx.x == 0) a.partials[o * a.split + blockIdx.x] = acc;
    allow_next_grid();
    return;
  }
  finish_last_block<WideOp>(acc, a.partials + o * a.split, blockIdx.x, a.counters + o, a.split,
                            out + out_off);
}

// A full sum of an integer type (one dense row) whose blocks take part of
// their ranges from a queue rather than a fixed share each. With fixed shares
// the SMs finish up to a sixth apart (Nsight Compute on uint8 2^28: SM active
// cycles 101.7K to 122.5K of 126.7K), so the last part of the read runs on
// fewer and fewer SMs. Integer sums give the same bits in any order, so the
// order in which blocks take ranges does not change the result.
// Block b first reads its own range b of a.first_chunks chunks (most of the
// input), then ranges of a.block_chunks after all the first ranges: range
// gridDim.x + t for each ticket t it draws from *queue. A ticket is drawn as
// the block starts reading the range before, so that the atomic's round trip
// hides behind the loads. Tickets that find no range stop the block; each
// block draws exactly one of those, so the queue ends at exactly n_ranges,
// which the finish kernel checks before it sets the queue back to zero for
// the next call.
// Ranges of a queued full sum: `blocks` first ranges of first_chunks, then
// ranges of queued_chunks over the rest (the host and the kernel both count).
C10_HOST_DEVICE inline int64_t queue_ranges(int64_t chunks, int64_t blocks, int64_t first_chunks,
                                            int64_t queued_chunks) {
  const int64_t rest = chunks - blocks * first_chunks;
  return blocks + (rest > 0 ? (rest + queued_chunks - 1) / queued_chunks : 0);
}

template <class Op, typename in_t, int V>
__global__ void __launch_bounds__(EnginePolicy::kThreads, EnginePolicy::template split_blocks_per_sm<in_t, V, 1>())
    gpureduce_sum_full_queue(RowsArgs<typename Op::wide_op::acc_type> a, const in_t* __restrict__ in,
                             unsigned* __restrict__ queue) {
  using WideOp = typename Op::wide_op;
  using wide_t = typename WideOp::acc_type;
  static_assert(std::is_integral_v<wide_t>, "only order-free (integer) sums may take ranges in any order");
  wait_for_prior_grid();
  if (a.early_trigger) allow_next_grid();
  __shared__ unsigned drawn[2];
  const int64_t n_ranges = queue_ranges(a.chunks, gridDim.x, a.first_chunks, a.block_chunks);
  const int64_t queued_from = int64_t(gridDim.x) * a.first_chunks;
  const in_t* body = in + a.head;
  wide_t acc = WideOp::identity();
  int64_t range = blockIdx.x;
  for (int k = 0; range < n_ranges; ++k) {  // range is the same in every thread
    unsigned ticket = 0;
    if (threadIdx.x == 0) ticket = atomicAdd(queue, 1u);  // its value is needed only after the loads
    const int64_t begin = range < gridDim.x ? range * a.first_chunks
                                            : queued_from + (range - gridDim.x) * a.block_chunks;
    const int64_t size = range < gridDim.x ? a.first_chunks : a.block_chunks;
    const int64_t end = begin + size < a.chunks ? begin + size : a.chunks;
    acc = WideOp::combine(acc, sum_chunks<Op, in_t, V, 1>(body, a, begin + threadIdx.x, end, blockDim.x));
    if (threadIdx.x == 0) drawn[k & 1] = ticket;
    __syncthreads();  // drawn[k & 1] is written, and every thread read drawn[(k + 1) & 1] a round ago
    range = int64_t(gridDim.x) + drawn[k & 1];
  }
  if (blockIdx.x == 0) acc = add_ragged_ends<Op, V>(acc, a, in);
  acc = block_reduce<WideOp>(acc);
  if (threadIdx.x == 0) a.partials[blockIdx.x] = acc;
  allow_next_grid();
}

// The second launch of a split rows pass without tickets: block o combines
// output o's `split` partials in slot order (the order finish_last_block
// uses), so that no counter has to be zeroed before the first launch.
template <class WideOp, typename out_t>
__global__ void __launch_bounds__(EnginePolicy::kThreads)
    gpureduce_sum_finish_partials(const typename WideOp::acc_type* __restrict__ partials, int split,
                                  OuterIndexer outer, out_t* __restrict__ out, unsigned* queue,
                                  unsigned queue_end) {
  using wide_t = typename WideOp::acc_type;
  wait_for_prior_grid();
  allow_next_grid();
  if (queue != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
    // A queue shared by two calls at once would have handed out ranges
    // twice or not at all: stop rather than return a wrong sum.
    CUDA_KERNEL_ASSERT(*queue == queue_end && "gpureduce: a full sum's range queue was shared by two calls");
    *queue = 0;
  }
  const int64_t o = blockIdx.x;
  wide_t acc = WideOp::identity();
  for (int i = threadIdx.x; i < split; i += blockDim.x) acc = WideOp::combine(acc, partials[o * split + i]);
  acc = block_reduce<WideOp>(acc);
  if (threadIdx.x == 0) {
    int64_t in_off, out_off;
    outer.offsets(o, in_off, out_off);
    out[out_off] = WideOp::template project<out_t>(acc);
  }
}

// ------------------------------------------------------------- columns ----

template <typename acc_t>
struct ColumnsArgs {
  OuterIndexer outer;
  int64_t n_outer;
  int64_t n_cols, col_stride, out_col_stride;
  // Rows r < n_reduce * n_reduce_outer sit at (r % n_reduce) * reduce_stride
  // + (r / n_reduce) * reduce_outer_stride: up to two reduced dims per pass.
  int64_t n_reduce, reduce_stride, n_reduce_outer, reduce_outer_stride, n_rows;
  FastDivmod reduce_div;  // by n_reduce
  int64_t vec_cols;       // n_cols / V
  int64_t x_tiles;        // column tiles per outer index
  int64_t rows_per_split;
  int split;
  acc_t* partials;     // [split][n_outer * n_cols]
  unsigned* counters;  // [n_outer * x_tiles]
};

template <typename acc_t>
__device__ __forceinline__ int64_t column_row_offset(const ColumnsArgs<acc_t>& a, int64_t r) {
  if (a.n_reduce_outer == 1) return r * a.reduce_stride;
  const int64_t q = static_cast<int64_t>(a.reduce_div.div(static_cast<uint64_t>(r)));
  return (r - q * a.n_reduce) * a.reduce_stride + q * a.reduce_outer_stride;
}

// Combines acc[V] across threadIdx.y with a fixed halving tree (row y takes
// row y + h's partials); the result is valid in the threads with
// threadIdx.y == 0. Each level moves all V columns of a thread at once, so a
// block pays two barriers per level rather than per column and level.
template <class Op, int V, typename acc_t>
__device__ __forceinline__ void combine_over_y(acc_t (&acc)[V]) {
  constexpr int kSlots = EnginePolicy::kThreads / 2;
  __shared__ __align__(16) unsigned char raw[kSlots * V * sizeof(acc_t)];
  acc_t* sm = reinterpret_cast<acc_t*>(raw);  // [V][slot]: neighbouring threads, neighbouring words
  for (int h = blockDim.y / 2; h > 0; h /= 2) {
    if (threadIdx.y >= h && threadIdx.y < 2 * h) {
      const int slot = (threadIdx.y - h) * blockDim.x + threadIdx.x;
#pragma unroll
      for (int j = 0; j < V; ++j) sm[j * kSlots + slot] = acc[j];
    }
    __syncthreads();
    if (threadIdx.y < h) {
      const int slot = threadIdx.y * blockDim.x + threadIdx.x;
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] = Op::combine(acc[j], sm[j * kSlots + slot]);
    }
    __syncthreads();
  }
}

// The running type of a columns thread: int32 for byte inputs into an
// integer sum, else the accumulator itself.
constexpr int64_t kMaxNarrowColumnRows = int64_t(1) << 23;
template <typename in_t, typename acc_t>
using ColumnWalkAcc =
    std::conditional_t<sizeof(in_t) == 1 && std::is_integral_v<acc_t>, int32_t, acc_t>;

template <class Op, typename walk_t>
__device__ __forceinline__ walk_t walk_start() {
  if constexpr (std::is_same_v<walk_t, typename Op::acc_type>) {
    return Op::identity();
  } else {
    return walk_t(0);
  }
}

template <class Op, typename walk_t, typename in_t>
__device__ __forceinline__ walk_t walk_add(walk_t w, in_t x) {
  if constexpr (std::is_same_v<walk_t, typename Op::acc_type>) {
    return Op::reduce(w, x);
  } else {
    return w + static_cast<walk_t>(x);
  }
}

// Block (bx, by): threadIdx.x picks a vector of V adjacent columns,
// threadIdx.y strides over the rows of blockIdx.y's slice.
template <class Op, typename in_t, typename out_t, int V>
__global__ void __launch_bounds__(EnginePolicy::kThreads, EnginePolicy::template columns_blocks_per_sm<V>())
    gpureduce_sum_columns(ColumnsArgs<typename Op::acc_type> a, const in_t* __restrict__ in,
                          out_t* __restrict__ out) {
  using acc_t = typename Op::acc_type;
  constexpr int U = EnginePolicy::kUnroll;
  const int64_t tile = blockIdx.x;
  const int64_t oi = tile / a.x_tiles;
  const int64_t cv = (tile - oi * a.x_tiles) * blockDim.x + threadIdx.x;
  const bool valid = cv < a.vec_cols;
  int64_t in_off, out_off;
  a.outer.offsets(oi, in_off, out_off);
  const in_t* base = in + in_off + cv * V * a.col_stride;
  const int64_t rb = static_cast<int64_t>(blockIdx.y) * a.rows_per_split;
  const int64_t re = rb + a.rows_per_split < a.n_rows ? rb + a.rows_per_split : a.n_rows;
  const int64_t by = blockDim.y;

  // Byte inputs add up in int32 while walking the rows (the host keeps a
  // thread under kMaxNarrowColumnRows rows, so 255 * rows cannot overflow):
  // 16 columns of int64 partials would not fit in the registers.
  using walk_t = ColumnWalkAcc<in_t, acc_t>;
  walk_t walk[V];
#pragma unroll
  for (int j = 0; j < V; ++j) walk[j] = walk_start<Op, walk_t>();
  if (valid) {
    int64_t r = rb + threadIdx.y;
    for (; r + (U - 1) * by < re; r += U * by) {
      alignas(16) in_t v[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u) load_vec<V>(base + column_row_offset(a, r + u * by), v[u]);
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < V; ++j) walk[j] = walk_add<Op>(walk[j], v[u][j]);
    }
    for (; r < re; r += by) {
      alignas(16) in_t v[V];
      load_vec<V>(base + column_row_offset(a, r), v);
#pragma unroll
      for (int j = 0; j < V; ++j) walk[j] = walk_add<Op>(walk[j], v[j]);
    }
  }
  acc_t acc[V];
#pragma unroll
  for (int j = 0; j < V; ++j) acc[j] = static_cast<acc_t>(walk[j]);
  if (blockDim.y > 1) combine_over_y<Op, V>(acc);

  const bool writer = threadIdx.y == 0 && valid;
  if (a.split == 1) {
    if (writer) {
#pragma unroll
      for (int j = 0; j < V; ++j)
        out[out_off + (cv * V + j) * a.out_col_stride] = Op::template project<out_t>(acc[j]);
    }
    return;
  }
  const int64_t n_total = a.n_outer * a.n_cols;
  const int64_t col0 = oi * a.n_cols + cv * V;
  if (writer) {
#pragma unroll
    for (int j = 0; j < V; ++j) a.partials[blockIdx.y * n_total + col0 + j] = acc[j];
    __threadfence();
  }
  __shared__ bool is_last;
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0)
    is_last = atomicAdd(a.counters + tile, 1u) == static_cast<unsigned>(a.split - 1);
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  // The last block of this tile combines the `split` partials of each column,
  // all threads taking part: threadIdx.y strides over the splits, then the
  // same fixed tree as above.
#pragma unroll
  for (int j = 0; j < V; ++j) acc[j] = Op::identity();
  if (valid) {
    for (int k = threadIdx.y; k < a.split; k += blockDim.y) {
#pragma unroll
      for (int j = 0; j < V; ++j)
        acc[j] = Op::combine(acc[j], load_coherent(a.partials + k * n_total + col0 + j));
    }
  }
  if (blockDim.y > 1) combine_over_y<Op, V>(acc);
  if (writer) {
#pragma unroll
    for (int j = 0; j < V; ++j)
      out[out_off + (cv * V + j) * a.out_col_stride] = Op::template project<out_t>(acc[j]);
  }
}

}  // namespace cuda
}  // namespace gpureduce
