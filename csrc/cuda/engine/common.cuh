// Device building blocks shared by the engine's kernels: the policy, vector
// loads, warp and block reductions in a fixed order, and the programmatic
// dependent launch (PDL) hooks. Parametrised by an op functor
// (engine/reduce_ops.h); nothing here names an op.
#pragma once

#include <c10/macros/Macros.h>
#include <c10/util/Half.h>
#include <c10/util/complex.h>

#include <cstdint>
#include <type_traits>

#include "../../engine/reduce_ops.h"
#include "../../engine/reduce_plan.h"

namespace gpureduce {
namespace cuda {

// The largest split finished inside a cluster (the columns kernels'
// cluster finish): the portable cluster size.
constexpr int kMaxClusterSplit = 8;

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
  // from 1.04x to 0.92x of torch.sum; unless the op's vectors of eight 2-byte
  // inputs fit 40 (Op::kSplitRows16BitFits). Nor for accumulators wider than a
  // double (var's three words, logsumexp's float64 pair): var of float64
  // held to 40 spilled 596 bytes and ran at 0.60x torch.var (H200).
  template <class Op, typename in_t, int V, int kStep>
  static constexpr int split_blocks_per_sm() {
    using wide_t = typename Op::wide_op::acc_type;
    const bool wide_2_byte_vectors = kStep == 1 && V == 8 && !std::is_same_v<in_t, c10::Half>;
    const bool tight = (wide_2_byte_vectors && !Op::kSplitRows16BitFits) || sizeof(in_t) == 16 || sizeof(wide_t) > 8;
    return tight ? 2 : 3;
  }
  // The inner rows kernel likewise for 16-bit float vectors of eight on
  // short rows (at most two unrolled loops per lane, where a warp's time is
  // a round or two of loads and then its shuffles): they fit 40 registers
  // with no spill (their lanes load the last chunks one after another,
  // tail_together), and three blocks per SM hide more of that latency. A/B
  // on the H200 over 1500 random cases: 40 faster by over 5% ([30529, 1000]
  // float16 over dim 1 29.9 -> 25.2 us, torch.sum 21.4). Long rows lost:
  // [8192, 8192] bfloat16 over dim 1 4003 -> 3543 GB/s (512 blocks over 396
  // slots, a second wave a third full). Not int16 (spills at 40) nor
  // float32 (its predicated tail spills 168 bytes).
  template <typename in_t, int V>
  static constexpr int short_inner_rows_blocks_per_sm() {
    const bool half_floats = std::is_same_v<in_t, c10::Half> || std::is_same_v<in_t, c10::BFloat16>;
    return half_floats && V == 8 ? 3 : kBlocksPerSm;
  }
  // The inner rows kernel reading an element per load (V == 1: strided rows,
  // rows of outer dims that do not merge, widths no vector fits): three
  // blocks of 512 threads, 40 registers, for elements of up to 4 bytes (no
  // spill; 8-byte ones spill at 40). Two held 54 registers and left half
  // the SM's threads idle on loads of single elements. A/B on the H200 over
  // 815 random passes of 1 MB or more (NOTES.md, session 14): 17 faster by
  // over 5%, 5 slower (a repeat of the same code: 10 and 4); [13898, 349]
  // float32 .step over dim 1 13.6 -> 11.2 us, [15, 69473, 1, 26] float32
  // over (0, 2, 3) 90.5 -> 83.1.
  template <typename in_t, int V>
  static constexpr int element_inner_rows_blocks_per_sm() {
    return V == 1 && sizeof(in_t) <= 4 ? 3 : kBlocksPerSm;
  }
  // The pitch rows kernel: four blocks of 512 threads (32 registers, no
  // spill) for 4-byte elements in rows a vector fits; three for the rest
  // and for ragged rows (held to 32 registers, 1- and 2-byte vectors and
  // ragged ends spill, and 8-byte sums lost: [1, 1024, 768] int64 over dim 2
  // 4.4 -> 7.9 us, [65536, 768] bfloat16 3467 -> 3081 GB/s; float32 rows of
  // 372 gained 3160 -> 3571 GB/s; H200).
  // Dense rows of float64 whose fold tests each input for NaN
  // (Op::kTestsNan: amax, amin, nansum) take four too: 32 registers, no
  // spill. A/B on the H200, four against three blocks, the op's time over
  // torch's, two runs of alternating graphs (NOTES.md, session 77): amax
  // over [32768, 384] 0.88x -> 1.06x, [62914, 200] 1.09x -> 1.20x, [16384,
  // 768] 1.01x -> 1.06x, nansum [32768, 384] 0.88x -> 1.04x; float64 sums
  // went either way ([253, 256, 384] 1.00x -> 0.94x, [41943, 300] 1.01x ->
  // 1.05x), int64 sums and amax lost ([125829, 100] 1.70x -> 1.53x, 1.84x ->
  // 1.57x).
  template <class Op, typename in_t, bool kRagged>
  static constexpr int pitch_rows_blocks_per_sm() {
    // (Ragged rows of 8-byte elements take the inner rows kernel.)
    if constexpr (std::is_same_v<in_t, double> && Op::kTestsNan) return 4;
    return sizeof(in_t) == 4 && !kRagged ? 4 : 3;
  }
  // The pitch vector rows kernel (rows of one or two vectors): its kUnroll
  // vectors in flight take 40 registers for elements of 4 bytes or more
  // (three blocks), and more for 1- and 2-byte ones, whose vectors unpack
  // into more values (two blocks: at 40, bfloat16 spilled 68 bytes and int16
  // summed in int64 214; at 64, int16 in int64 6; ptxas, sm_90).
  template <typename in_t>
  static constexpr int pitch_vector_rows_blocks_per_sm() {
    return sizeof(in_t) <= 2 ? 2 : 3;
  }
  // The columns kernel: as many blocks of 512 threads as its walk's
  // registers allow with no spill inside the walk and every load of an
  // unrolled loop in flight before the first add (ptxas, sm_90; check both
  // in the SASS after changing the walk): four (32 registers) for single
  // elements of up to 4 bytes and 4-byte vectors of 16-bit elements, three
  // (40) for other loads of 8 bytes and for float32 vectors of four, two for
  // the rest. 16-bit floats summed in double (dtype=float64) in vectors of
  // four keep only one or three loads in flight at 40 registers.
  template <typename in_t, typename acc_t, int V>
  static constexpr int columns_blocks_per_sm() {
    if (V == 1 ? sizeof(in_t) <= 4 : sizeof(in_t) == 2 && V == 2) return 4;
    const bool half_to_double = sizeof(in_t) == 2 && std::is_same_v<acc_t, double>;
    if (V * sizeof(in_t) == 8 && sizeof(in_t) >= 2 && !half_to_double) return 3;
    return V == 4 && sizeof(in_t) == 4 && sizeof(acc_t) == 4 ? 3 : 2;
  }
  // Whether the inner rows kernel loads a lane's last chunks (fewer than
  // kUnroll) together rather than one after another (rows.cuh,
  // reduce_chunks). Not for 16-bit vectors of eight: bfloat16 and int16
  // spilled at 64 registers with it, and rows of 16-bit floats ran 10-15%
  // slower on the H200 ([2993, 244] bfloat16 over dim 1 0.94x -> 0.80x of
  // torch.sum, [4, 4096, 768] float16 over dim 2 0.74x -> 0.69x) while
  // float32 rows gained ([12951, 372] over dim 1 0.64x -> 0.77x).
  template <typename in_t, int V, int kStep>
  static constexpr bool tail_together() {
    return !(sizeof(in_t) == 2 && V == 8);
  }
  // Whether a dtype pair's passes may take the tiled kernels (stream rows,
  // stream columns, dense tiles) where those read faster, or only the rows
  // and columns kernels. Integer inputs of float results (sum's dtype=,
  // logsumexp's) take the latter: five pairs a family, for inputs few
  // models reduce so, and the tiled kernels were over half of their device
  // compile (sum_integer_to_float.cu 46.9 -> 26.4 s; NOTES.md, session 53).
  // Full reductions, rows and columns a vector fits read as fast either way.
  template <typename in_t, typename out_t>
  static constexpr bool takes_tiles() {
    return !(std::is_integral_v<in_t> && std::is_floating_point_v<out_t>);
  }
  // Whether a pass of Op from in_t to out_t may take the stream-rows kernel
  // (engine/stream_rows.cuh), a pass that takes_tiles: where the op's own
  // policy says so (OpBase::kStreamTiles), and not for float64 results of
  // narrower floats (sum's and mean's dtype=float64, for which torch casts
  // first): without it those passes ran 2.17x torch.sum's time or better
  // (H200, 9 of 5 x 1000 random cases: 4.40x -> 3.50x in geometric mean),
  // and the pairs compile a third less each (NOTES.md, session 55).
  template <class Op, typename in_t, typename out_t>
  static constexpr bool takes_stream_tiles() {
    return Op::kStreamTiles && !(std::is_same_v<out_t, double> && !std::is_same_v<in_t, double>);
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

// load_vec as one word of 4, 8 or 16 bytes, for the columns kernel's walk.
// Through load_vec's struct of V elements ptxas put a loop's adds between
// its loads (float32 vectors of four: one load in flight), and through
// __ldg's read-only words likewise for float32 vectors of four at 40
// registers; plain words kept every load first (sm_90, CUDA 13.0).
template <int V, typename T>
__device__ __forceinline__ void load_vec_words(const T* p, T (&out)[V]) {
  constexpr int kBytes = sizeof(T) * V;
  if constexpr (kBytes == 16) {
    const uint4 w = *reinterpret_cast<const uint4*>(p);
    memcpy(&out, &w, 16);
  } else if constexpr (kBytes == 8) {
    const uint2 w = *reinterpret_cast<const uint2*>(p);
    memcpy(&out, &w, 8);
  } else if constexpr (kBytes == 4 && sizeof(T) < 4) {
    const unsigned w = *reinterpret_cast<const unsigned*>(p);
    memcpy(&out, &w, 4);
  } else {
    load_vec<V>(p, out);
  }
}

// Stores V outputs at p, p + stride, ...: in 16-byte words where they are
// adjacent and the address allows (up to 16 words a thread, for byte inputs
// summed in int64), else one at a time. An element per store made each
// store instruction of a warp touch 32 sectors for a few bytes of each,
// which bound columns passes of few rows, whose output is as large as their
// input or larger. A/B on the H200 (NOTES.md, session 26): [132331, 384, 1,
// 1] uint8 over (2, 3) 0.53x -> 1.08x of torch.sum, [20000, 2, 512] int16
// over dim 1 1.33x -> 2.63x, [4096, 3, 4096] bfloat16 1.80x -> 2.18x; over
// 370 random passes of 1 MB or more, 6 faster by over 5%, 3 slower by 5-10%
// (one a rows pass, which this does not touch: run-to-run noise).
template <int V, typename T>
__device__ __forceinline__ void store_outputs(T* p, int64_t stride, const T (&v)[V]) {
  constexpr int kBytes = sizeof(T) * V;
  if constexpr (kBytes % 16 == 0 && sizeof(T) <= 16) {
    if (stride == 1 && reinterpret_cast<uintptr_t>(p) % 16 == 0) {
#pragma unroll
      for (int w = 0; w < kBytes / 16; ++w) {
        uint4 word;
        memcpy(&word, reinterpret_cast<const unsigned char*>(&v) + 16 * w, 16);
        reinterpret_cast<uint4*>(p)[w] = word;
      }
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < V; ++j) p[j * stride] = v[j];
}

// store_outputs for lanes lo to hi - 1 of v only (an edge vector of ragged
// columns overhangs its row), else all V.
template <int V, typename T>
__device__ __forceinline__ void store_lanes(T* p, int64_t stride, const T (&v)[V], int lo, int hi) {
  if (lo == 0 && hi == V) {
    store_outputs<V>(p, stride, v);
    return;
  }
#pragma unroll
  for (int j = 0; j < V; ++j)
    if (j >= lo && j < hi) p[j * stride] = v[j];
}

// v[j] = acc[j] projected to T (project_output).
template <class Op, typename T, int V, typename acc_t>
__device__ __forceinline__ void project_lanes(const acc_t (&acc)[V], const Projection& projection, T (&v)[V]) {
#pragma unroll
  for (int j = 0; j < V; ++j) v[j] = project_output<Op, T>(acc[j], projection);
}

// Where a kernel stores its outputs: out_t elements, projected from the
// accumulator (the pass's Projection, project_output) as they are stored.
template <typename out_t>
struct Outputs {
  using element_type = out_t;
  out_t* p;
  template <class Op, typename acc_t>
  __device__ __forceinline__ void store(int64_t i, const acc_t& acc, const Projection& projection) const {
    p[i] = project_output<Op, out_t>(acc, projection);
  }
  // V outputs from i, `stride` apart, each projected (store_lanes).
  template <class Op, int V, typename acc_t>
  __device__ __forceinline__ void store_vector(int64_t i, int64_t stride, const acc_t (&acc)[V],
                                               const Projection& projection, int lo = 0, int hi = V) const {
    alignas(16) out_t v[V];
    project_lanes<Op>(acc, projection, v);
    store_lanes<V>(p + i, stride, v, lo, hi);
  }
};

// The outputs of a 16-bit float input's passes: its own type (a float16 sum
// into float16) or float32 (dtype=torch.float32, and the partials one pass
// hands the next), picked at run time. The two pairs' kernels differ in
// their stores alone, so they are compiled once: a 16-bit instance file
// compiled half its kernels twice, once for each type.
template <typename narrow_t>
struct NarrowOrFloat {
  using narrow_type = narrow_t;
};
template <typename T>
constexpr bool is_narrow_or_float = false;
template <typename narrow_t>
constexpr bool is_narrow_or_float<NarrowOrFloat<narrow_t>> = true;

template <typename narrow_t>
struct Outputs<NarrowOrFloat<narrow_t>> {
  void* p;
  bool as_float;
  // Projected once, in float (every op projects in its accumulator's type,
  // float here, and rounds to the output type last), then stored as either
  // type.
  template <class Op, typename acc_t>
  __device__ __forceinline__ void store(int64_t i, const acc_t& acc, const Projection& projection) const {
    const float v = project_output<Op, float>(acc, projection);
    if (as_float)
      static_cast<float*>(p)[i] = v;
    else
      static_cast<narrow_t*>(p)[i] = static_cast<narrow_t>(v);
  }
  template <class Op, int V, typename acc_t>
  __device__ __forceinline__ void store_vector(int64_t i, int64_t stride, const acc_t (&acc)[V],
                                               const Projection& projection, int lo = 0, int hi = V) const {
    alignas(16) float v[V];
    project_lanes<Op>(acc, projection, v);
    if (as_float) {
      store_lanes<V>(static_cast<float*>(p) + i, stride, v, lo, hi);
    } else {
      alignas(16) narrow_t n[V];
#pragma unroll
      for (int j = 0; j < V; ++j) n[j] = static_cast<narrow_t>(v[j]);
      store_lanes<V>(static_cast<narrow_t*>(p) + i, stride, n, lo, hi);
    }
  }
};

// A load that skips L1, for partials written by other blocks of this grid.
// Scalars, complex numbers, and structs of 4-byte words (logsumexp's
// MaxScaledSum) word by word.
template <typename T>
__device__ __forceinline__ T load_coherent(const T* p) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return __ldcg(p);
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 4) {
    return static_cast<T>(__ldcg(reinterpret_cast<const int*>(p)));
  } else if constexpr (std::is_integral_v<T>) {
    static_assert(sizeof(T) == 8, "integer partials are int32 or int64");
    return static_cast<T>(__ldcg(reinterpret_cast<const long long*>(p)));
  } else if constexpr (c10::is_complex<T>::value) {
    using R = typename T::value_type;
    const R* r = reinterpret_cast<const R*>(p);
    return T(__ldcg(r), __ldcg(r + 1));
  } else {
    static_assert(sizeof(T) % 4 == 0 && alignof(T) >= 4, "a struct of 4-byte words");
    unsigned w[sizeof(T) / 4];
    const unsigned* src = reinterpret_cast<const unsigned*>(p);
#pragma unroll
    for (int i = 0; i < int(sizeof(T) / 4); ++i) w[i] = __ldcg(src + i);
    T v;
    memcpy(&v, w, sizeof(T));
    return v;
  }
}

// members: the lanes taking part (all of them unless the block is smaller
// than a warp).
template <typename T>
__device__ __forceinline__ T shfl_xor(T v, int lane_mask, unsigned members = 0xffffffffu) {
  if constexpr (std::is_arithmetic_v<T>) {
    return __shfl_xor_sync(members, v, lane_mask);
  } else {
    static_assert(sizeof(T) % 4 == 0, "a struct of 4-byte words");
    unsigned w[sizeof(T) / 4];
    memcpy(w, &v, sizeof(T));
#pragma unroll
    for (int i = 0; i < int(sizeof(T) / 4); ++i) w[i] = __shfl_xor_sync(members, w[i], lane_mask);
    memcpy(&v, w, sizeof(T));
    return v;
  }
}
template <typename T>
__device__ __forceinline__ c10::complex<T> shfl_xor(c10::complex<T> v, int lane_mask, unsigned members = 0xffffffffu) {
  return c10::complex<T>(shfl_xor(v.real(), lane_mask, members), shfl_xor(v.imag(), lane_mask, members));
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

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// A thread-block cluster's barrier (every thread of every block of it), this
// block's rank in it, and where another block's shared memory lies (sm_90):
// what cooperative groups' cluster_group gives, through the same
// intrinsics, without its header (a second of every kernel file's compile).
__device__ __forceinline__ void cluster_sync() {
  __cluster_barrier_arrive();
  __cluster_barrier_wait();
}
__device__ __forceinline__ unsigned cluster_block_rank() { return __clusterRelativeBlockRank(); }
template <typename T>
__device__ __forceinline__ const T* cluster_shared(const T* mine, unsigned rank) {
  return static_cast<const T*>(__cluster_map_shared_rank(mine, rank));
}
#endif

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

// The start of an engine kernel, which the host may launch as a
// programmatic dependent (launch_engine_kernel): it waits for the grid
// before it, then, in a grid of one wave (`early`), lets the next kernel be
// scheduled at once. In a grid of several waves that let the next grid's
// blocks take SM slots that its own later waves wanted (up to 36% slower,
// NOTES.md session 64).
__device__ __forceinline__ void start_as_dependent(int early) {
  wait_for_prior_grid();
  if (early) allow_next_grid();
}

// The second launch of a split pass (split rows, split stream columns):
// output o's `split` partials ([n_out][split], accumulators of PartialOp)
// are combined in slot order by a group of `group` threads (a power of two:
// a whole block above 32, else blockDim.x / group outputs a block). Output
// o is column o % n_cols of outer index o / n_cols (n_cols 1 for rows).
template <class PartialOp, typename out_t>
__global__ void __launch_bounds__(EnginePolicy::kThreads)
    gpureduce_finish_partials(const typename PartialOp::acc_type* __restrict__ partials, int split, int group,
                              int64_t n_out, OuterIndexer outer, int64_t n_cols, int64_t out_col_stride,
                              Projection projection, Outputs<out_t> out) {
  using acc_t = typename PartialOp::acc_type;
  wait_for_prior_grid();
  allow_next_grid();
  const int64_t o = static_cast<int64_t>(blockIdx.x) * (blockDim.x / group) + threadIdx.x / group;
  const int lane = threadIdx.x % group;
  acc_t acc = PartialOp::identity();
  if (o < n_out)
    for (int i = lane; i < split; i += group) acc = PartialOp::combine(acc, partials[o * split + i]);
  acc = group > 32 ? block_reduce<PartialOp>(acc) : group_reduce<PartialOp>(acc, group);
  if (lane == 0 && o < n_out) {
    int64_t in_off, out_off;
    outer.offsets(o / n_cols, in_off, out_off);
    out.template store<PartialOp>(out_off + o % n_cols * out_col_stride, acc, projection);
  }
}

}  // namespace cuda
}  // namespace gpureduce
