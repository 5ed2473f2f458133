// The CUDA kernels of the engine's indexed pass (engine/indexed_pass.h):
// argmax, argmin, max.dim and min.dim, through ArgExtremumOp. Four shapes,
// as the sum-like kernels have them:
//   groups   rows of up to a few thousand elements, a group of G lanes (a
//            power of two up to a warp) per row, G sized to the row, so that
//            short rows ([tokens, classes]) keep every lane busy;
//   blocks   long rows too few to fill the GPU a warp each (a full argmax):
//            a block per chunk of a row, chunks' states merged by a finish
//            kernel;
//   columns  a reduced dim outer to a kept one: neighbouring threads take
//            neighbouring outputs and walk the reduced dim together, split
//            across blocks where the outputs are few;
//   tiles    dense planes of columns no vector fits (a middle dim with a
//            few odd columns): tiles of the stream in shared memory
//            (indexed_dense_tiles).
// Each thread reads batches of kUnroll loads in increasing position, keeps
// the part of the batch whose extreme is its best (NaN kept) in registers,
// and looks for the index once, after its walk, in what it kept (walk_row,
// and the vector columns kernel a column at a time); threads' states merge
// with combine, whose choice does not depend on order: the bits are the
// same for every launch configuration. Rows of a batch or two a lane find
// their extreme first, then its first position (short_row).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "../../engine/indexed_ops.h"
#include "../../engine/indexed_pass.h"
#include "../device_info.h"
#include "../instance.h"
#include "../launch.h"
#include "../policy.h"
#include "../workspace.h"
#include "common.cuh"
#include "dense.cuh"

namespace gpureduce {

// A state across lanes as its value and the index's two words: the generic
// struct shuffle (common.cuh) moved a float state's padding word too, a
// quarter of the group reductions' shuffles. Found by argument-dependent
// lookup from the engine's group_reduce and block_reduce.
template <typename T>
__device__ __forceinline__ ValueIndex<T> shfl_xor(ValueIndex<T> v, int lane_mask) {
  const unsigned long long index = static_cast<unsigned long long>(v.index);
  const unsigned lo = __shfl_xor_sync(0xffffffffu, static_cast<unsigned>(index), lane_mask);
  const unsigned hi = __shfl_xor_sync(0xffffffffu, static_cast<unsigned>(index >> 32), lane_mask);
  return {cuda::shfl_xor(v.value, lane_mask), static_cast<int64_t>((static_cast<unsigned long long>(hi) << 32) | lo)};
}

namespace cuda {

struct IndexedPolicy {
  static constexpr int kGroupThreads = 256;
  static constexpr int kBlockThreads = 512;
  static constexpr int kColumnThreads = 256;
  static constexpr int kUnroll = 4;
  // Rows fewer than kBlockRowsMaxPerSm a multiprocessor (a warp each would
  // leave most of its warps idle), of more than kBlockRowsMinLoads loads (two
  // rounds of a warp's) times the rows a multiprocessor, are read by blocks
  // rather than groups of lanes. With rows of 1024 float32 (256 loads) read
  // by blocks, [4096, 1024] ran at 0.26x of torch.argmax (H100): a block's
  // 512 threads had a load or none each, and the grid eight waves of them;
  // [1024, 768] int64 at 0.56x (H200).
  // So are rows no more than the multiprocessors, of more loads than a
  // warp's one round (32 lanes x kUnroll): a block a row reads each in one
  // round, where a warp took two or more one after another ([1, 1000]
  // float32: two rounds of L2 latency, 3.0 us a call against torch's 2.7,
  // H200).
  static constexpr int64_t kBlockRowsMinLoads = 256;
  static constexpr int64_t kBlockRowsMaxPerSm = 32;
  // Passes of fewer elements are not split across blocks (a finish launch
  // costs more than the blocks gain), unless a row thread would walk more
  // than 4 rounds of its rows ([1, 3642, 3] over dim 1: one block, 17.3 us
  // against torch's 4.9, H200).
  static constexpr int64_t kSplitMinElements = int64_t(1) << 16;
  // Loads a lane of a group takes at least: each halving of the group
  // costs a shuffle round of the 16-byte state. In passes under
  // kLatencyBoundBytes, one: their time is rounds of loads, not shuffles
  // (and columns there take vectors only where those fill the GPU).
  // Vectors of 8-byte elements take 16 (a row's fixed costs, its two
  // butterflies and the offsets, spread over more elements and more rows a
  // warp), as long as the groups keep kGroupFillThreadsPerSm threads a
  // multiprocessor busy. A/B on the H200 over 42 float64 and int64 rows
  // passes, three ops each (NOTES.md, session 78): 1.135x -> 1.303x of
  // torch's op in geomean, [32768, 384] float64 argmax 0.81x -> 1.11x.
  //
  // Vectors of 4-byte elements take the wide lanes in rows of
  // kWideLanesMinLoads4 vectors or more, but for rows of whole short walks
  // (8 loads a lane, two full batches) of kWholeWalksMinLanes to
  // kWholeWalksMaxLanes lanes, which take those; their groups are doubled
  // for the fill no further than the 4-load rule's. A/B on the H200, argmax
  // and max along dim 1, torch's time over ours in geomean (NOTES.md,
  // session 79): 42 float32 rows passes 1.866x -> 1.972x ([16384, 768]
  // 1.18x -> 1.36x, [12000, 640] 1.38x -> 1.86x, [24576, 512] 1.33x ->
  // 1.57x), the same 42 of int32 1.780x -> 1.820x; 30 held-out float32
  // shapes (rows of 16 to 1100, most of them narrow and unchanged) 2.435x
  // -> 2.417x. Wide lanes under 64 vectors, and whole walks of 2 lanes,
  // lost ([69922, 91] float32 4.16x -> 3.21x, [64754, 64] int32 0.88x of
  // the 4-load rule); fill doubled to 32 lanes lost in few rows ([3105,
  // 430] float32 1.50x -> 1.38x).
  static constexpr int64_t kGroupLoadsPerLane = 4;
  static constexpr int64_t kGroupLoadsPerLaneWide = 16;
  static constexpr int64_t kGroupFillThreadsPerSm = 512;
  static constexpr int64_t kWideLanesMinLoads4 = 64;
  static constexpr int64_t kWholeWalksMinLanes = 4;
  static constexpr int64_t kWholeWalksMaxLanes = 16;
  static constexpr int64_t kLatencyBoundBytes = int64_t(1) << 20;
  // Batches of kUnroll loads a lane of a group walks at most to take the
  // short walk (short_row): rows of up to 1024 float32 by a warp.
  static constexpr int64_t kShortWalkBatches = 2;
  // Rows a columns thread walks at least.
  static constexpr int64_t kColumnRowsPerThread = 8;
  // Blocks a multiprocessor that a split pass aims for.
  static constexpr int64_t kSplitBlocksPerSm = 4;
  // Rows a plane at most of dense planes of columns read through the tiles
  // (indexed_tiles_pay): 1- and 2-byte elements, 4- and 8-byte ones, and
  // either in passes under kLatencyBoundBytes.
  static constexpr int64_t kTilesMaxRowsNarrow = 512;
  static constexpr int64_t kTilesMaxRowsWide = 24;
  static constexpr int64_t kTilesSmallPassMaxRows = 4;
};

template <typename in_t>
struct IndexedArgs {
  const in_t* in;
  in_t* values;  // null: indices only
  int64_t* indices;
  OuterIndexer outer;
  int64_t n_out, n_reduce, reduce_stride;
  // A split pass: `split` chunks of `chunk` positions an output, whose states
  // go to partials[o * split + chunk index] for the finish kernel, or, with
  // cluster_finish (splits of up to kMaxClusterSplit on sm_90), are combined
  // inside the blocks' cluster (cluster_merge).
  int64_t split, chunk;
  void* partials;
  int cluster_finish;
};

// Elements of one vector load of the rows kernels: 16 bytes.
template <typename in_t>
constexpr int indexed_vector() {
  return 16 / int(sizeof(in_t));
}

// Outputs a thread of the vector columns kernel takes: a 16-byte load of
// them, at most 8 (each holds a 16-byte state).
template <typename in_t>
constexpr int indexed_column_vector() {
  return sizeof(in_t) >= 2 ? 16 / int(sizeof(in_t)) : 8;
}

// The next narrower vector of columns than cv: half as many, down to
// 4-byte loads of two columns or more (cv itself where there is none).
template <typename in_t>
constexpr int narrower_column_vector(int cv) {
  return cv / 2 >= 2 && cv / 2 * int(sizeof(in_t)) >= 4 ? cv / 2 : cv;
}

// An output's state: its value and index at out_off (the output's offset,
// from the one offsets() its kernel made: a second cost the columns passes
// of a few rows an output as much as their walk), or, where a pass is
// split, the state itself into partial slot `slot`.
template <class Op, typename in_t>
__device__ __forceinline__ void store_indexed(const IndexedArgs<in_t>& a, int64_t out_off, int64_t slot,
                                              typename Op::state s, bool partial) {
  if (partial) {
    reinterpret_cast<typename Op::state*>(a.partials)[slot] = s;
    return;
  }
  if (a.values != nullptr) a.values[out_off] = static_cast<in_t>(s.value);
  a.indices[out_off] = s.index;
}

// Element k of a 16-byte load of in_t, in the type it is compared in.
template <typename in_t>
__device__ __forceinline__ arg_acc_t<in_t> vector_element(const uint4& w, int k) {
  in_t x;
  memcpy(&x, reinterpret_cast<const char*>(&w) + k * sizeof(in_t), sizeof(in_t));
  return static_cast<arg_acc_t<in_t>>(x);
}

// Two 32-bit words of in_t elements, lane by lane, the larger (kMax) or
// smaller of each pair of lanes, a NaN kept: one instruction for a float
// (max.NaN), a pair of 16-bit floats (__hmax2_nan), a pair of int16
// (__vmaxs2) or four bytes (__vmaxs4, bool as unsigned bytes).
template <bool kMax, typename in_t>
__device__ __forceinline__ unsigned pick_lanes(unsigned a, unsigned b) {
  if constexpr (std::is_same_v<in_t, float>) {
    float r;
    if constexpr (kMax) {
      asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(__uint_as_float(a)), "f"(__uint_as_float(b)));
    } else {
      asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(__uint_as_float(a)), "f"(__uint_as_float(b)));
    }
    return __float_as_uint(r);
  } else if constexpr (std::is_same_v<in_t, c10::Half> || std::is_same_v<in_t, c10::BFloat16>) {
    using pair_t = std::conditional_t<std::is_same_v<in_t, c10::Half>, __half2, __nv_bfloat162>;
    pair_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    const pair_t r = kMax ? __hmax2_nan(x, y) : __hmin2_nan(x, y);
    unsigned out;
    memcpy(&out, &r, 4);
    return out;
  } else if constexpr (sizeof(in_t) == 1 && std::is_signed_v<in_t>) {
    return kMax ? __vmaxs4(a, b) : __vmins4(a, b);
  } else if constexpr (sizeof(in_t) == 1) {
    return kMax ? __vmaxu4(a, b) : __vminu4(a, b);
  } else if constexpr (sizeof(in_t) == 2) {
    return kMax ? __vmaxs2(a, b) : __vmins2(a, b);
  } else {
    static_assert(std::is_same_v<in_t, int32_t>, "32-bit lanes of float, 16-bit floats, int16, bytes or int32");
    const int x = static_cast<int>(a), y = static_cast<int>(b);
    return static_cast<unsigned>(kMax ? max(x, y) : min(x, y));
  }
}

// The extreme of a batch of U 16-byte loads, NaN where any element is NaN.
// Types under 8 bytes fold the loads' words lane by lane (pick_lanes), then
// a word's lanes. An element at a time, each with its NaN test, 16-bit
// full argmax ran at 2533-2595 GB/s and int8 at 1573 (H200, session 39);
// lane by lane, 3556-3659 and 3350 (session 40, NOTES.md).
template <class Op, typename in_t, int U>
__device__ __forceinline__ arg_acc_t<in_t> batch_extreme(const uint4 (&w)[U]) {
  using acc_t = arg_acc_t<in_t>;
  constexpr bool kMax = Op::kLargest;
  if constexpr (sizeof(in_t) == 8) {
    acc_t m = vector_element<in_t>(w[0], 0);
    bool nan = Op::is_nan(m);
#pragma unroll
    for (int q = 1; q < 2 * U; ++q) {
      const acc_t x = vector_element<in_t>(w[q / 2], q % 2);
      m = Op::pick(m, x);
      nan |= Op::is_nan(x);
    }
    return nan ? std::numeric_limits<acc_t>::quiet_NaN() : m;
  } else {
    unsigned x = w[0].x, y = w[0].y, z = w[0].z, v = w[0].w;
#pragma unroll
    for (int u = 1; u < U; ++u) {
      x = pick_lanes<kMax, in_t>(x, w[u].x);
      y = pick_lanes<kMax, in_t>(y, w[u].y);
      z = pick_lanes<kMax, in_t>(z, w[u].z);
      v = pick_lanes<kMax, in_t>(v, w[u].w);
    }
    unsigned m = pick_lanes<kMax, in_t>(pick_lanes<kMax, in_t>(x, y), pick_lanes<kMax, in_t>(z, v));
    // The word's lanes into its lowest.
    if constexpr (sizeof(in_t) <= 2) m = pick_lanes<kMax, in_t>(m, m >> 16);
    if constexpr (sizeof(in_t) == 1) m = pick_lanes<kMax, in_t>(m, m >> 8);
    const uint4 low{m, 0, 0, 0};
    return vector_element<in_t>(low, 0);
  }
}

// The extreme of one 16-byte load's elements, NaN where any is NaN.
template <class Op, typename in_t>
__device__ __forceinline__ arg_acc_t<in_t> load_extreme(const uint4& w) {
  const uint4 one[1] = {w};
  return batch_extreme<Op, in_t, 1>(one);
}

// The larger (kLargest) or smaller of a and b, a NaN kept: max.NaN for a
// float (and a 16-bit float widened to one), a test of each for a double.
template <class Op, typename acc_t>
__device__ __forceinline__ acc_t pick_keep_nan(acc_t a, acc_t b) {
  if constexpr (std::is_same_v<acc_t, float>) {
    return __uint_as_float(pick_lanes<Op::kLargest, float>(__float_as_uint(a), __float_as_uint(b)));
  } else if constexpr (std::is_floating_point_v<acc_t>) {
    return a != a ? a : (b != b ? b : Op::pick(a, b));
  } else {
    return Op::pick(a, b);
  }
}

// The extreme of x[b, e), NaN where any is NaN: a tree (a chain let
// ptxas hold each load back until the one before it had been used).
template <class Op, int b, int e, int U, typename acc_t>
__device__ __forceinline__ acc_t values_extreme(const acc_t (&x)[U]) {
  if constexpr (e - b == 1) {
    return x[b];
  } else {
    constexpr int mid = b + (e - b) / 2;
    return pick_keep_nan<Op>(values_extreme<Op, b, mid>(x), values_extreme<Op, mid, e>(x));
  }
}
template <class Op, int U, typename acc_t>
__device__ __forceinline__ acc_t values_extreme(const acc_t (&x)[U]) {
  return values_extreme<Op, 0, U>(x);
}

// The state of U values at position(u) whose extreme is m: the first equal
// to m (the first NaN where m is NaN), by a chain of selects from the last
// back, no compare waiting on another.
template <class Op, int U, typename acc_t, class Position>
__device__ __forceinline__ typename Op::state find_in_values(const acc_t (&x)[U], acc_t m, Position position) {
  const bool nan = Op::is_nan(m);
  int slot = 0;
  acc_t value = x[0];
#pragma unroll
  for (int u = U - 1; u >= 0; --u) {
    const bool hit = nan ? Op::is_nan(x[u]) : x[u] == m;
    slot = hit ? u : slot;
    value = hit ? x[u] : value;
  }
  return {value, position(slot)};
}

// Column c's element of a load of CV neighbouring columns held as 32-bit
// words, in the type it is compared in.
template <typename in_t, int NW>
__device__ __forceinline__ arg_acc_t<in_t> column_element(const unsigned (&w)[NW], int c) {
  in_t x;
  memcpy(&x, reinterpret_cast<const char*>(&w) + c * sizeof(in_t), sizeof(in_t));
  return static_cast<arg_acc_t<in_t>>(x);
}

// Each column's extreme over U loads of CV neighbouring columns (NW 32-bit
// words each), a NaN kept, by trees over the loads: under 8 bytes on the
// words lane by lane (pick_lanes: a pair of 16-bit columns an instruction,
// four byte columns), else a column at a time.
template <class Op, typename in_t, int CV, int U, int NW>
__device__ __forceinline__ void column_extremes(const unsigned (&w)[U][NW], arg_acc_t<in_t> (&m)[CV]) {
  using acc_t = arg_acc_t<in_t>;
  static_assert((U & (U - 1)) == 0, "a power-of-two batch");
  if constexpr (sizeof(in_t) < 8) {
    unsigned t[U][NW];
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int k = 0; k < NW; ++k) t[u][k] = w[u][k];
    }
#pragma unroll
    for (int half = U / 2; half >= 1; half /= 2) {
#pragma unroll
      for (int u = 0; u < half; ++u) {
#pragma unroll
        for (int k = 0; k < NW; ++k) t[u][k] = pick_lanes<Op::kLargest, in_t>(t[u][k], t[u + half][k]);
      }
    }
#pragma unroll
    for (int c = 0; c < CV; ++c) m[c] = column_element<in_t>(t[0], c);
  } else {
#pragma unroll
    for (int c = 0; c < CV; ++c) {
      acc_t x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) x[u] = column_element<in_t>(w[u], c);
      m[c] = values_extreme<Op>(x);
    }
  }
}

// kept[u] = w[u] in the columns (CV of in_t in NW words) where take[c],
// kept[u] elsewhere: a select a word, its mask built from the columns'
// flags.
template <typename in_t, int CV, int U, int NW>
__device__ __forceinline__ void keep_columns(unsigned (&kept)[U][NW], const unsigned (&w)[U][NW],
                                             const bool (&take)[CV]) {
  unsigned mask[NW];
#pragma unroll
  for (int k = 0; k < NW; ++k) mask[k] = 0;
#pragma unroll
  for (int c = 0; c < CV; ++c) {
    if constexpr (sizeof(in_t) >= 4) {
#pragma unroll
      for (int h = 0; h < int(sizeof(in_t)) / 4; ++h) mask[c * (sizeof(in_t) / 4) + h] = take[c] ? ~0u : 0u;
    } else {
      constexpr int kPerWord = 4 / sizeof(in_t);
      constexpr unsigned kLane = sizeof(in_t) == 2 ? 0xffffu : 0xffu;
      mask[c / kPerWord] |= take[c] ? kLane << (8 * sizeof(in_t) * (c % kPerWord)) : 0u;
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
#pragma unroll
    for (int k = 0; k < NW; ++k) kept[u][k] = (w[u][k] & mask[k]) | (kept[u][k] & ~mask[k]);
  }
}

// A load of NW 32-bit words (16, 8 or 4 bytes) at p.
template <int NW>
__device__ __forceinline__ void load_words(const void* p, unsigned (&w)[NW]) {
  if constexpr (NW == 4) {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
  } else if constexpr (NW == 2) {
    const uint2 v = *reinterpret_cast<const uint2*>(p);
    w[0] = v.x, w[1] = v.y;
  } else {
    static_assert(NW == 1, "16-, 8- or 4-byte loads");
    w[0] = *reinterpret_cast<const unsigned*>(p);
  }
}

// The state of the batch of U loads at position(slot) whose extreme is m:
// its first element equal to m (its first NaN where m is NaN), found by a
// chain of selects from the last slot back, no compare waiting on another.
template <class Op, typename in_t, int U, class Position>
__device__ __forceinline__ typename Op::state find_in_batch(const uint4 (&w)[U], arg_acc_t<in_t> m, Position position) {
  using acc_t = arg_acc_t<in_t>;
  constexpr int V = indexed_vector<in_t>();
  const bool nan = Op::is_nan(m);
  int slot = 0;
  acc_t value = vector_element<in_t>(w[0], 0);
#pragma unroll
  for (int q = U * V - 1; q >= 0; --q) {
    const acc_t x = vector_element<in_t>(w[q / V], q % V);
    const bool hit = nan ? Op::is_nan(x) : x == m;
    slot = hit ? q : slot;
    value = hit ? x : value;
  }
  return {value, position(slot)};
}

// Positions [b, e) of a row of row_len at p, by threads t, t + step, ...,
// in batches of kUnroll loads issued together, each folded by its extreme
// first. V > 1: the row is dense (stride 1) and read in 16-byte vectors
// from its first V-aligned element: its head before that, and its tail
// after the last whole vector, an element a load; chunks (b, e multiples of
// V but for the row's end) own the vectors that start in them, the first
// chunk the head and the last the tail. A thread keeps its best batch's
// extreme and, in registers, the batch's first load holding it, and looks
// for the index once, in that load (find_in_batch), after its walk: looked
// for in every batch that could win, the warp took that path in most
// batches of a long walk (any of its lanes' running best still rising),
// and the loop, with its addresses, was 155 instructions a batch of 16
// floats (full float32 argmax 3835 -> 3994 GB/s, H200, session 40). The
// batch read again after the walk instead of kept, each thread's four
// scattered 16-byte loads cost 64-byte DRAM reads: 1.15 GB read for a
// 1.07 GB input (4038 GB/s; kept: 1.08 GB, 4247 GB/s). The edges are folded in
// increasing position by reduce, the body's state joins them by combine
// (whose choice does not depend on order). V == 1: an element a load at
// `stride`, walked the same way: whole batches of loads made without a
// test each, a batch's extreme (NaN kept) against the thread's best, the
// index found once after the walk. Folded batch by batch with the index
// looked for wherever it could win, the columns kernel's loop was 70-120
// instructions a batch of four 16-bit elements (64-bit addresses rebuilt
// under each load's predicate), its columns passes issue-bound at 10-15%
// of DRAM bandwidth ([12591, 360, 10] float16 over dim 1, H200).
template <class Op, typename in_t, int V, bool kEarlyEdges = false, bool kShort = false>
__device__ __forceinline__ typename Op::state walk_row(const in_t* p, int64_t stride, int64_t b, int64_t e,
                                                       int64_t row_len, int t, int step) {
  using acc_t = arg_acc_t<in_t>;
  using S = typename Op::state;
  constexpr int U = IndexedPolicy::kUnroll;
  S s = Op::identity();
  if constexpr (V > 1) {
    const int64_t misalign = static_cast<int64_t>((reinterpret_cast<uintptr_t>(p) / sizeof(in_t)) % V);
    const int64_t head = std::min<int64_t>(row_len, misalign == 0 ? 0 : V - misalign);
    const int64_t n_vec = (row_len - head) / V;
    const int64_t jb = std::min(b / V, n_vec);
    const int64_t je = e == row_len ? n_vec : std::min(e / V, n_vec);
    const uint4* body = reinterpret_cast<const uint4*>(p + head);
    // The chunk's edges (the row's head where it is the first, its tail
    // where the last), edge k at position edge_pos(k): a round of their
    // loads issued before the body's, so that a short row's walk waits on
    // one round of memory, not three (head, body, tail one after another);
    // kEarlyEdges, the groups kernel's (a block's long chunk does not wait
    // on its edges, and their registers cost it a block a multiprocessor).
    const int64_t tail0 = head + n_vec * V;
    const int64_t n_head = b == 0 ? head : 0;
    const int64_t n_edge = n_head + (e == row_len ? row_len - tail0 : 0);
    const auto edge_pos = [&](int64_t k) { return k < n_head ? k : tail0 + (k - n_head); };
    constexpr int kEdgeLoads = kEarlyEdges ? U : 0;
    acc_t edge[kEdgeLoads > 0 ? kEdgeLoads : 1];
#pragma unroll
    for (int u = 0; u < kEdgeLoads; ++u) {
      const int64_t k = t + u * int64_t(step);
      edge[u] = k < n_edge ? static_cast<acc_t>(p[edge_pos(k)]) : acc_t{};
    }
    const int64_t pitch = step;
    acc_t best{};
    int64_t best_j = -1;  // the vector holding the thread's best, first found
    uint4 kept{};         // and its elements
    // A batch's extreme (by its loads' extremes) against the thread's best;
    // where it wins, its first load holding it is kept.
    const auto fold = [&](int64_t j0, const uint4(&w)[U]) {
      acc_t e[U];
#pragma unroll
      for (int u = 0; u < U; ++u) e[u] = load_extreme<Op, in_t>(w[u]);
      const acc_t m = values_extreme<Op>(e);
      int lu = 0;
#pragma unroll
      for (int u = U - 1; u > 0; --u) lu = e[u] == m || Op::is_nan(e[u]) ? u : lu;
      lu = e[0] == m || Op::is_nan(e[0]) ? 0 : lu;
      uint4 hit = w[0];
#pragma unroll
      for (int u = 1; u < U; ++u) hit = lu == u ? w[u] : hit;
      const bool win = best_j < 0 || Op::beats(m, best);
      best = win ? m : best;
      best_j = win ? j0 + lu * pitch : best_j;
      kept = win ? hit : kept;
    };
    int64_t j = jb + t;
    // Whole batches, every load made.
    for (; j + (U - 1) * pitch < je; j += U * pitch) {
      uint4 w[U];
#pragma unroll
      for (int u = 0; u < U; ++u) w[u] = body[j + u * pitch];
      fold(j, w);
    }
    // The last batch, its missing loads standing in as copies of its first
    // (neither its extreme nor its first occurrence changes).
    if (j < je) {
      uint4 w[U];
      w[0] = body[j];
#pragma unroll
      for (int u = 1; u < U; ++u) w[u] = j + u * pitch < je ? body[j + u * pitch] : w[0];
      fold(j, w);
    }
#pragma unroll
    for (int u = 0; u < kEdgeLoads; ++u) {
      const int64_t k = t + u * int64_t(step);
      if (k < n_edge) s = Op::reduce(s, edge[u], edge_pos(k));
    }
    for (int64_t k = t + kEdgeLoads * int64_t(step); k < n_edge; k += step) {
      s = Op::reduce(s, static_cast<acc_t>(p[edge_pos(k)]), edge_pos(k));
    }
    if (best_j >= 0) {
      const uint4 one[1] = {kept};
      s = Op::combine(s, find_in_batch<Op, in_t>(one, best, [&](int slot) { return head + best_j * V + slot; }));
    }
  } else {
    const int64_t first = b + t;
    if (first >= e) return s;
    // Loads a batch: a warp's loads of neighbouring 2-byte columns are 64
    // bytes each, and four of them in flight a warp too few for the
    // memory's latency.
    constexpr int UE = sizeof(in_t) <= 2 ? 2 * U : U;
    const int64_t pitch = int64_t(step) * stride;
    // The thread's best batch is kept in registers (a select an element):
    // read again after the walk, as dense rows do, it cost a round of
    // memory latency in short walks and traffic in long ones.
    acc_t best{}, kept[UE];
    int64_t best_i = -1;
    const auto fold = [&](int64_t i, const acc_t(&x)[UE]) {
      const acc_t m = values_extreme<Op>(x);
      const bool win = best_i < 0 || Op::beats(m, best);
      best = win ? m : best;
      best_i = win ? i : best_i;
#pragma unroll
      for (int u = 0; u < UE; ++u) kept[u] = win ? x[u] : kept[u];
    };
    int64_t i = first;
    const in_t* at = p + first * stride;
    // (kShort: walks of a batch of U or so, all of it below)
    for (; !kShort && i + (UE - 1) * int64_t(step) < e; i += UE * int64_t(step), at += UE * pitch) {
      in_t raw[UE];  // (every load issued before the first is used)
#pragma unroll
      for (int u = 0; u < UE; ++u) raw[u] = at[u * pitch];
      acc_t x[UE];
#pragma unroll
      for (int u = 0; u < UE; ++u) x[u] = static_cast<acc_t>(raw[u]);
      fold(i, x);
    }
    // The rest, fewer than UE, in batches of U (a short walk's whole walk:
    // columns of a few rows a thread), a missing load standing in as a
    // copy of its batch's first, each batch's index found at once.
    for (; i < e; i += U * int64_t(step), at += U * pitch) {
      acc_t x[U];
      x[0] = static_cast<acc_t>(at[0]);
#pragma unroll
      for (int u = 1; u < U; ++u) x[u] = i + u * int64_t(step) < e ? static_cast<acc_t>(at[u * pitch]) : x[0];
      s = Op::combine(s, find_in_values<Op>(x, values_extreme<Op>(x), [&](int u) { return i + u * int64_t(step); }));
    }
    if (!kShort && best_i >= 0) {
      s = Op::combine(s, find_in_values<Op>(kept, best, [&](int u) { return best_i + u * int64_t(step); }));
    }
  }
  return s;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// A split of a few blocks launched as one cluster (IndexedArgs::
// cluster_finish): each block's holding threads leave their states in
// shared memory, and once the cluster has synchronised the first block's
// holders combine the other blocks' into theirs; no partials and no finish
// kernel, whose launch took 1.8-2.4 us of passes of 5-16 us ([961, 328,
// 15] int32 min over dim 1: 8.9 + 1.9 us, 0.75x torch.min; H200, NOTES.md
// session 44). A thread's states s[c0, c0 + count) go to slots[(c - c0) *
// pitch + slot]. Every thread of the block calls it; true for the threads
// whose states are merged. combine is a total order: the bits are those
// of the finish kernel's merge.
template <class Op, int N>
__device__ __forceinline__ bool cluster_merge(typename Op::state (&s)[N], int c0, int count,
                                              typename Op::state* slots, int slot, int pitch, bool holder,
                                              int64_t split) {
  if (holder) {
#pragma unroll
    for (int c = 0; c < N; ++c) {
      if (c >= c0 && c < c0 + count) slots[(c - c0) * pitch + slot] = s[c];
    }
  }
  cluster_sync();
  const bool merges = holder && cluster_block_rank() == 0;
  if (merges) {
#pragma unroll
    for (int k = 1; k < kMaxClusterSplit; ++k) {
      if (k >= split) break;
      const typename Op::state* theirs = cluster_shared(slots, k);
#pragma unroll
      for (int c = 0; c < N; ++c) {
        if (c >= c0 && c < c0 + count) s[c] = Op::combine(s[c], theirs[(c - c0) * pitch + slot]);
      }
    }
  }
  cluster_sync();  // every block's shared memory stays until the first has read it
  return merges;
}
#endif

// The states of a columns block's row threads (threadIdx.y, a power of two
// of them) merged into those of threadIdx.y == 0, by halves through shared
// memory (`merged`, a state a thread); every thread of the block calls it.
// One thread an output merging the others' states in turn took 63 rounds
// of a shared load and a combine for a block of 4 x 64 ([1, 3642, 3]
// bfloat16 over dim 1: 11.9 us under Nsight Compute, H200), where halves
// take 6. combine's choice does not depend on order: the bits are the same.
template <class Op>
__device__ __forceinline__ typename Op::state merge_rows(typename Op::state s, typename Op::state* merged) {
  const int x = threadIdx.x, y = threadIdx.y, nx = blockDim.x;
  for (int half = blockDim.y / 2; half >= 1; half /= 2) {
    if (y >= half && y < 2 * half) merged[(y - half) * nx + x] = s;
    __syncthreads();
    if (y < half) s = Op::combine(s, merged[y * nx + x]);
    __syncthreads();
  }
  return s;
}

// The first slot (u * V + k, V elements a load) of a batch of U loads whose
// element hits (equals the extreme, or is NaN: a NaN anywhere makes the
// extreme NaN, so a NaN hits only then), with its element in `value`; -1
// where none does. Under 8 bytes the load is found first, by its extreme,
// then the element in it: a select chain over every element of a batch was
// 64 compares for bytes.
template <class Op, typename in_t, int U, class Hits>
__device__ __forceinline__ int first_hit_in_batch(const uint4 (&w)[U], Hits hits, arg_acc_t<in_t>& value) {
  using acc_t = arg_acc_t<in_t>;
  constexpr int V = indexed_vector<in_t>();
  int slot = -1;
  if constexpr (sizeof(in_t) == 8) {
#pragma unroll
    for (int q = U * V - 1; q >= 0; --q) {
      const acc_t x = vector_element<in_t>(w[q / V], q % V);
      const bool hit = hits(x);
      slot = hit ? q : slot;
      value = hit ? x : value;
    }
  } else {
    int lu = -1;
#pragma unroll
    for (int u = U - 1; u >= 0; --u) lu = hits(load_extreme<Op, in_t>(w[u])) ? u : lu;
    uint4 hit_load = w[0];
#pragma unroll
    for (int u = 1; u < U; ++u) hit_load = lu == u ? w[u] : hit_load;
#pragma unroll
    for (int k = V - 1; k >= 0; --k) {
      const acc_t x = vector_element<in_t>(hit_load, k);
      const bool hit = hits(x);
      slot = hit ? k : slot;
      value = hit ? x : value;
    }
    slot = lu < 0 ? -1 : lu * V + slot;
  }
  return slot;
}

// The value a lane without elements holds: never beats one, never hits.
template <class Op, typename acc_t>
__device__ __forceinline__ acc_t worst_value() {
  if constexpr (std::is_floating_point_v<acc_t>) {
    return Op::kLargest ? -std::numeric_limits<acc_t>::infinity() : std::numeric_limits<acc_t>::infinity();
  } else {
    return Op::kLargest ? std::numeric_limits<acc_t>::lowest() : std::numeric_limits<acc_t>::max();
  }
}

// Row o (when live) of dense rows whose lanes' share is a batch or two of
// loads (rows of logits, [tokens, classes]), by the group's `group` lanes,
// lane t: the row's extreme first (each lane's batches folded by their
// extreme, then a butterfly of values), then the first position holding it
// (each lane's first hit, looked for only in a batch whose extreme hits,
// then a butterfly of minimum positions); the lane holding that position
// writes it. Positions are 32-bit (a short row's). The one batch a lane
// searches is read again (from L1). walk_row with a 16-byte state an
// element took the groups kernel to 64 registers (4 blocks of 256 a
// multiprocessor) and five rounds of a state's shuffles and combines:
// [8192, 512] float32 ran at 25% of DRAM bandwidth in 1.94 waves (Nsight
// Compute, H200, session 42). The row's head and tail (before its first aligned vector, after its
// last) are single elements, a lane's first loaded with its batches.
// Every lane of the group calls it (live or not).
template <class Op, typename in_t, int V>
__device__ __forceinline__ void short_row(const IndexedArgs<in_t>& a, int64_t o, bool live, int t, int group) {
  using acc_t = arg_acc_t<in_t>;
  constexpr int U = IndexedPolicy::kUnroll;
  int64_t in_off = 0, out_off = 0;
  if (live) a.outer.offsets(o, in_off, out_off);
  const in_t* p = a.in + in_off;
  const int row_len = static_cast<int>(a.n_reduce);
  const int misalign = static_cast<int>((reinterpret_cast<uintptr_t>(p) / sizeof(in_t)) % V);
  const int head = min(row_len, misalign == 0 ? 0 : V - misalign);
  const int n_vec = (row_len - head) / V;
  const int tail0 = head + n_vec * V;
  const int n_edge = live ? head + (row_len - tail0) : 0;
  const auto edge_pos = [&](int k) { return k < head ? k : tail0 + (k - head); };
  const uint4* body = reinterpret_cast<const uint4*>(p + head);
  constexpr int B = IndexedPolicy::kShortWalkBatches;
  const auto batch_start = [&](int b) { return t + b * U * group; };
  const auto has_batch = [&](int b) { return live && batch_start(b) < n_vec; };
  // (a missing load stands in as a copy of its batch's first: neither the
  // extreme nor its first occurrence changes)
  const auto load_batch = [&](int j, uint4(&w)[U]) {
    w[0] = body[j];
#pragma unroll
    for (int u = 1; u < U; ++u) w[u] = j + u * group < n_vec ? body[j + u * group] : w[0];
  };
  const acc_t worst = worst_value<Op, acc_t>();
  const acc_t edge = t < n_edge ? static_cast<acc_t>(p[edge_pos(t)]) : worst;
  uint4 w[U];
  acc_t mb[B];
  acc_t m = edge;
#pragma unroll
  for (int b = 0; b < B; ++b) {
    mb[b] = worst;
    if (has_batch(b)) {
      load_batch(batch_start(b), w);
      mb[b] = batch_extreme<Op, in_t>(w);
    }
    m = pick_keep_nan<Op>(m, mb[b]);
  }
  for (int k = t + group; k < n_edge; k += group) m = pick_keep_nan<Op>(m, static_cast<acc_t>(p[edge_pos(k)]));
  for (int off = group / 2; off > 0; off /= 2) m = pick_keep_nan<Op>(m, shfl_xor(m, off));
  const acc_t row_extreme = m;
  const auto hits = [&](acc_t x) { return x == row_extreme || Op::is_nan(x); };
  // The lane's first hit: its head edges come before the body, its tail
  // edges after; in the body, earlier batches first.
  constexpr int kNone = std::numeric_limits<int>::max();
  int head_pos = kNone, body_pos = kNone, tail_pos = kNone;
  acc_t head_val = worst, body_val = worst, tail_val = worst;
  for (int k = t; k < n_edge; k += group) {
    const acc_t x = k == t ? edge : static_cast<acc_t>(p[edge_pos(k)]);
    if (!hits(x)) continue;
    if (k < head && head_pos == kNone) head_pos = k, head_val = x;
    if (k >= head && tail_pos == kNone) tail_pos = edge_pos(k), tail_val = x;
  }
  // (the batch read again, from L1: kept in registers across the
  // butterfly, it spilled at the bound of 6 blocks a multiprocessor)
  int hit_batch = -1;
#pragma unroll
  for (int b = B - 1; b >= 0; --b) hit_batch = has_batch(b) && hits(mb[b]) ? b : hit_batch;
  if (hit_batch >= 0) {
    const int j = batch_start(hit_batch);
    load_batch(j, w);
    const int slot = first_hit_in_batch<Op, in_t>(w, hits, body_val);
    body_pos = head + (j + (slot / V) * group) * V + slot % V;
  }
  int pos = head_pos;
  acc_t value = head_val;
  if (pos == kNone) pos = body_pos, value = body_val;
  if (pos == kNone) pos = tail_pos, value = tail_val;
  int first = pos;
  for (int off = group / 2; off > 0; off /= 2) first = min(first, __shfl_xor_sync(0xffffffffu, first, off));
  if (live && pos == first && pos != kNone) store_indexed<Op>(a, out_off, o, {value, pos}, false);
}

// Groups of `group` lanes, a row each; every thread of a block runs the same
// rounds, so that the groups' shuffles see whole warps. kShort: a lane's
// share of its row is a batch or two of loads (short_row; for strided
// rows, walk_row's batches whose index is found at once).
//
// Blocks resident a multiprocessor: 6 for short rows (40 registers; 47
// unbounded, 5 blocks), 4 for long walks (64; 3 for 8-byte types, which
// spilled 44-68 bytes at 64), whose kept load took them to 62-80 unbounded.
// Short rows of float64 take 5 (43 registers): at 40 they spilled 12 bytes.
// A/B on the H200, 5 against 6 blocks, the op's time over torch's, two runs
// of alternating graphs (NOTES.md, session 77): float64 argmax over [49152,
// 256] 0.867x -> 0.932x of torch.argmax, [86256, 278] 0.902x -> 0.952x,
// [24576, 512] 0.940x -> 1.003x, [98304, 128] 1.30x -> 1.42x, [32768, 384]
// unchanged (0.84x); int64, which did not spill, lost at 5 ([49152, 256]
// 1.152x -> 1.089x), and both lost at 4.
template <typename in_t, bool kShort>
constexpr int indexed_groups_min_blocks() {
  if constexpr (kShort) return std::is_same_v<in_t, double> ? 5 : 6;
  return sizeof(in_t) == 8 ? 3 : 4;
}
template <class Op, typename in_t, int V, bool kShort>
__global__ void __launch_bounds__(IndexedPolicy::kGroupThreads, indexed_groups_min_blocks<in_t, kShort>())
    indexed_rows_groups(IndexedArgs<in_t> a, int group) {
  wait_for_prior_grid();
  const int lane = threadIdx.x & (group - 1);
  const int64_t rows_per_block = blockDim.x / group;
  for (int64_t first = blockIdx.x * rows_per_block; first < a.n_out; first += int64_t(gridDim.x) * rows_per_block) {
    const int64_t o = first + threadIdx.x / group;
    if constexpr (kShort && V > 1) {
      short_row<Op, in_t, V>(a, o, o < a.n_out, lane, group);
    } else {
      typename Op::state s = Op::identity();
      int64_t in_off = 0, out_off = 0;
      if (o < a.n_out) {
        a.outer.offsets(o, in_off, out_off);
        s = walk_row<Op, in_t, V, !kShort, kShort>(a.in + in_off, a.reduce_stride, 0, a.n_reduce, a.n_reduce, lane,
                                                   group);
      }
      s = group_reduce<Op>(s, group);
      if (o < a.n_out && lane == 0) store_indexed<Op>(a, out_off, o, s, false);
    }
  }
}

// A block per chunk (blockIdx.x) of a row (blockIdx.y). Blocks resident a
// multiprocessor: 3 (38-40 registers with walk_row's kept load), 2 for
// 8-byte types (44-46; they spilled 36-84 bytes at 40).
template <typename in_t>
constexpr int indexed_blocks_min_blocks() {
  return sizeof(in_t) == 8 ? 2 : 3;
}
template <class Op, typename in_t, int V>
__global__ void __launch_bounds__(IndexedPolicy::kBlockThreads, indexed_blocks_min_blocks<in_t>())
    indexed_rows_blocks(IndexedArgs<in_t> a) {
  wait_for_prior_grid();
  const int64_t o = blockIdx.y;
  int64_t in_off = 0, out_off = 0;
  a.outer.offsets(o, in_off, out_off);
  const int64_t b = int64_t(blockIdx.x) * a.chunk;
  const int64_t e = std::min(a.n_reduce, b + a.chunk);
  typename Op::state s = walk_row<Op, in_t, V>(a.in + in_off, a.reduce_stride, b, e, a.n_reduce, threadIdx.x, blockDim.x);
  s = block_reduce<Op>(s);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (a.cluster_finish) {
    // (a row's chunks one cluster along x)
    __shared__ typename Op::state held;
    typename Op::state mine[1] = {s};
    if (cluster_merge<Op>(mine, 0, 1, &held, 0, 1, threadIdx.x == 0, a.split))
      store_indexed<Op>(a, out_off, o, mine[0], false);
    return;
  }
#endif
  if (threadIdx.x == 0) store_indexed<Op>(a, out_off, o * a.split + blockIdx.x, s, a.split > 1);
}

// Columns: threadIdx.x over neighbouring outputs, threadIdx.y over the rows
// of the block's chunk (blockIdx.y), merged through shared memory. Passes
// of a few rows an output are bound by the latency of their threads'
// loads, and the blocks resident a multiprocessor bound how many are in
// flight: 6 blocks (40 registers) where ptxas left the kernel 48 without
// a bound; 2-byte types (batches of 8) 5 and 8-byte types 4, which
// spilled at 40. kShort: a thread's walk is a batch of U or so (a
// column of a few rows an output), without the long walk's registers: 8
// blocks, every warp slot (6 for 8-byte types, which spilled at 8 blocks'
// 32 registers).
template <typename in_t, bool kShort>
constexpr int indexed_columns_min_blocks() {
  if constexpr (sizeof(in_t) == 8) return kShort ? 6 : 4;
  return kShort ? 8 : (sizeof(in_t) == 2 ? 5 : 6);
}
template <class Op, typename in_t, bool kShort>
__global__ void __launch_bounds__(IndexedPolicy::kColumnThreads, indexed_columns_min_blocks<in_t, kShort>())
    indexed_columns(IndexedArgs<in_t> a) {
  using S = typename Op::state;
  __shared__ S merged[IndexedPolicy::kColumnThreads];
  wait_for_prior_grid();
  const int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  S s = Op::identity();
  int64_t in_off = 0, out_off = 0;
  if (o < a.n_out) {
    a.outer.offsets(o, in_off, out_off);
    const int64_t b = int64_t(blockIdx.y) * a.chunk;
    const int64_t e = std::min(a.n_reduce, b + a.chunk);
    s = walk_row<Op, in_t, 1, false, kShort>(a.in + in_off, a.reduce_stride, b, e, a.n_reduce, threadIdx.y,
                                             blockDim.y);
  }
  s = merge_rows<Op>(s, merged);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (a.cluster_finish) {
    // (an output's chunks one cluster along y)
    S mine[1] = {s};
    if (cluster_merge<Op>(mine, 0, 1, merged, threadIdx.x, blockDim.x, threadIdx.y == 0, a.split) && o < a.n_out)
      store_indexed<Op>(a, out_off, o, mine[0], false);
    return;
  }
#endif
  if (threadIdx.y != 0) return;
  if (o < a.n_out) store_indexed<Op>(a, out_off, o * a.split + blockIdx.y, s, a.split > 1);
}

// A thread's CV neighbouring results (values, if asked for, and indices),
// in 16-byte stores where the outputs are aligned to them (a fresh tensor's
// are), else one element at a time. Stored element by element, each of a
// warp's store instructions wrote 32 scattered pieces of a few bytes: the
// pass over [7958059, 4, 16] float16 over dim 1 (127 M outputs of 4 rows,
// more bytes written than read) ran at 503 GB/s of input, 0.71x torch.min.
template <typename in_t, int CV, typename S>
__device__ __forceinline__ void store_column_group(in_t* values, int64_t* indices, const S (&s)[CV]) {
  constexpr int kValueBytes = CV * int(sizeof(in_t));
  struct alignas(kValueBytes) ValuePack {
    in_t v[CV];
  };
  struct alignas(16) IndexPair {
    int64_t i[2];
  };
  static_assert(CV % 2 == 0, "indices go out in pairs");
  if (values != nullptr) {
    if (reinterpret_cast<uintptr_t>(values) % kValueBytes == 0) {
      ValuePack pack;
#pragma unroll
      for (int c = 0; c < CV; ++c) pack.v[c] = static_cast<in_t>(s[c].value);
      *reinterpret_cast<ValuePack*>(values) = pack;
    } else {
#pragma unroll
      for (int c = 0; c < CV; ++c) values[c] = static_cast<in_t>(s[c].value);
    }
  }
  if (reinterpret_cast<uintptr_t>(indices) % 16 == 0) {
#pragma unroll
    for (int c = 0; c < CV; c += 2) *reinterpret_cast<IndexPair*>(indices + c) = IndexPair{{s[c].index, s[c + 1].index}};
  } else {
#pragma unroll
    for (int c = 0; c < CV; ++c) indices[c] = s[c].index;
  }
}

// Columns of a dense inner dim, CV neighbouring outputs a thread: each row
// of them one load of CV elements (16 bytes, or 8: bytes, and 2- and 4-byte
// columns that no 16-byte vector divides), where an element a
// thread had a warp's load take 64 bytes of a 2-byte row. `a` addresses the
// groups of CV outputs (its dim 0 divided by CV); their outputs are
// neighbours in the output too (out stride 1).
//
// Blocks resident a multiprocessor: 4 (64 registers), 3 for 2-byte types,
// whose best batches and flags spilled at 64.
template <typename in_t>
constexpr int indexed_columns_vec_min_blocks() {
  return sizeof(in_t) == 2 ? 3 : 4;
}
template <class Op, typename in_t, int CV>
__global__ void __launch_bounds__(IndexedPolicy::kColumnThreads, indexed_columns_vec_min_blocks<in_t>())
    indexed_columns_vec(IndexedArgs<in_t> a) {
  using S = typename Op::state;
  constexpr int U = IndexedPolicy::kUnroll;
  __shared__ S merged[IndexedPolicy::kColumnThreads];
  wait_for_prior_grid();
  const int64_t ov = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  S s[CV];
#pragma unroll
  for (int c = 0; c < CV; ++c) s[c] = Op::identity();
  int64_t in_off = 0, out_off = 0;
  if (ov < a.n_out) {
    using acc_t = arg_acc_t<in_t>;
    a.outer.offsets(ov, in_off, out_off);
    const in_t* p = a.in + in_off;
    const int64_t e = std::min(a.n_reduce, (int64_t(blockIdx.y) + 1) * a.chunk);
    const int64_t step = blockDim.y;
    const int64_t pitch = step * a.reduce_stride;
    // As walk_row's strided walk, a column at a time: whole batches of
    // loads, each column's batch extreme against its best, and its best
    // batch kept in registers (keep_columns), where its index is found
    // after the walk. Read again from memory instead, the best batches of
    // float32 and 8-byte columns added up to half the walk's traffic
    // ([407, 512, 1024] float32 over dim 1 230 -> 395 us, H200).
    constexpr int NW = CV * int(sizeof(in_t)) / 4;
    const auto load_batch = [&](int64_t i, const in_t* at, unsigned(&w)[U][NW]) {
      load_words(at, w[0]);
#pragma unroll
      for (int u = 1; u < U; ++u) {
        if (i + u * step < e) {
          load_words(at + u * pitch, w[u]);
        } else {
#pragma unroll
          for (int k = 0; k < NW; ++k) w[u][k] = w[0][k];
        }
      }
    };
    acc_t best[CV];
    int64_t best_i[CV];
    unsigned kept[U][NW];
#pragma unroll
    for (int c = 0; c < CV; ++c) best_i[c] = -1;
    const auto fold = [&](int64_t i, const unsigned(&w)[U][NW]) {
      acc_t m[CV];
      column_extremes<Op, in_t, CV>(w, m);
      bool win[CV];
#pragma unroll
      for (int c = 0; c < CV; ++c) {
        win[c] = best_i[c] < 0 || Op::beats(m[c], best[c]);
        best[c] = win[c] ? m[c] : best[c];
        best_i[c] = win[c] ? i : best_i[c];
      }
      keep_columns<in_t>(kept, w, win);
    };
    int64_t i = int64_t(blockIdx.y) * a.chunk + threadIdx.y;
    const in_t* at = p + i * a.reduce_stride;
    for (; i + (U - 1) * step < e; i += U * step, at += U * pitch) {
      unsigned w[U][NW];
#pragma unroll
      for (int u = 0; u < U; ++u) load_words(at + u * pitch, w[u]);
      fold(i, w);
    }
    if (i < e) {
      unsigned w[U][NW];
      load_batch(i, at, w);
      fold(i, w);
    }
#pragma unroll
    for (int c = 0; c < CV; ++c) {
      if (best_i[c] < 0) continue;
      const int64_t j = best_i[c];
      acc_t x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) x[u] = column_element<in_t>(kept[u], c);
      s[c] = find_in_values<Op>(x, best[c], [&](int u) { return j + u * step; });
    }
  }
#pragma unroll
  for (int c = 0; c < CV; ++c) s[c] = merge_rows<Op>(s[c], merged);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (a.cluster_finish) {
    // (the chunks one cluster along y) Rounds of as many of a thread's CV
    // states as `merged` holds for the block's columns.
    const int per_round = IndexedPolicy::kColumnThreads / blockDim.x;
    bool merges = false;
    for (int c0 = 0; c0 < CV; c0 += per_round)
      merges = cluster_merge<Op>(s, c0, per_round, merged, threadIdx.x, blockDim.x, threadIdx.y == 0, a.split);
    if (merges && ov < a.n_out)
      store_column_group<in_t, CV>(a.values != nullptr ? a.values + out_off : nullptr, a.indices + out_off, s);
    return;
  }
#endif
  if (threadIdx.y != 0 || ov >= a.n_out) return;
  if (a.split > 1) {
#pragma unroll
    for (int c = 0; c < CV; ++c) reinterpret_cast<S*>(a.partials)[(ov * CV + c) * a.split + blockIdx.y] = s[c];
    return;
  }
  store_column_group<in_t, CV>(a.values != nullptr ? a.values + out_off : nullptr, a.indices + out_off, s);
}

// Dense planes of columns no vector fits (an inner kept dim of C elements,
// the reduced dim right outside it, each plane of R rows right after the
// one before: [O, R, C] over dim 1 with C odd), through the dense tiles of
// the sum engine (engine/dense.cuh): a block copies a tile of the stream
// into shared memory with 16-byte loads, the next tile's loads in flight
// while it reduces this one. Whole planes a tile: a thread walks an
// output's R rows (group 1, the outputs looped over) or rows j, j + group,
// ... of it, the group's states merged through shared memory; planes
// larger than a tile: a block per plane, row tile after row tile, each
// thread's state kept across them. A thread's positions rise, so reduce
// keeps the first of equal values; combine's choice does not depend on
// order: the same bits for every tiling. The element columns kernel read
// these a 1-4 byte piece a load, a warp's loads touching 32-byte sectors
// of C * sizeof(in_t) bytes in several planes ([199891, 19, 11] float32
// over dim 1: 1.74 TB/s, 0.78x torch.max, H200, NOTES.md session 46).
template <class Op, typename in_t>
__global__ void __launch_bounds__(DensePolicy::kThreads, DensePolicy::kMinBlocksPerSm)
    indexed_dense_tiles(DenseArgs d, IndexedArgs<in_t> a) {
  using acc_t = arg_acc_t<in_t>;
  using S = typename Op::state;
  constexpr unsigned E = sizeof(in_t);
  __shared__ __align__(16) unsigned char tile[DenseTileLayout<in_t>::kBytes];
  __shared__ S merged[DensePolicy::kThreads];
  wait_for_prior_grid();
  // Indices inside a tile fit 32 bits (a tile holds at most 16 K elements).
  const int C = static_cast<int>(d.C), g = d.group, t = static_cast<int>(threadIdx.x);
  const bool looped = d.planes_per_tile >= 1 && g == 1;
  const int c_slot = t % C, j_slot = t / C % g, p_slot = t / (C * g);
  const unsigned row_bytes = static_cast<unsigned>(C) * E;
  DenseTileCursor cur{static_cast<int64_t>(blockIdx.x), 0};
  if (!cur.valid(d)) return;
  TileLoad<in_t> next;
  int next_head = next.load(a.in, d.total, cur.first_element(d), cur.elements(d));
  S run = Op::identity();
  while (cur.valid(d)) {
    next.store(tile);
    const int head = next_head;
    __syncthreads();
    DenseTileCursor ahead = cur;
    ahead.advance(d);
    if (ahead.valid(d)) next_head = next.load(a.in, d.total, ahead.first_element(d), ahead.elements(d));
    const int64_t p0 = cur.first_plane(d);
    const int np = static_cast<int>(cur.planes(d)), nr = static_cast<int>(cur.rows(d));
    if (looped) {
      // Output (p, c) = (q / C, q % C) for q = t, t + kThreads, ...,
      // stepped as the sum engine's dense tiles step theirs.
      const int R = static_cast<int>(d.R);
      int p = p_slot, c = c_slot;
      unsigned byte = static_cast<unsigned>(head) + static_cast<unsigned>(p * static_cast<int>(d.plane) + c) * E;
      const bool one_outer = d.outer.ndim == 1;
      int64_t o = one_outer ? (p0 + p) * d.outer.out_strides[0] + c * d.out_col_stride : 0;
      while (p < np) {
        acc_t best = static_cast<acc_t>(tile_at<in_t>(tile, byte));
        int best_r = 0;
        unsigned b = byte + row_bytes;
#pragma unroll 4
        for (int r = 1; r < R; ++r, b += row_bytes) {
          const acc_t x = static_cast<acc_t>(tile_at<in_t>(tile, b));
          const bool win = Op::beats(x, best);
          best = win ? x : best;
          best_r = win ? r : best_r;
        }
        store_indexed<Op>(a, one_outer ? o : dense_out_offset(d, p0 + p, c), 0, S{best, best_r}, false);
        p += d.step_p, c += d.step_c, byte += d.byte_step, o += d.out_step;
        if (c >= C) c -= C, ++p, byte += d.byte_wrap, o += d.out_wrap;
      }
    } else if (p_slot < np) {
      unsigned b = static_cast<unsigned>(head) + static_cast<unsigned>((p_slot * nr + j_slot) * C + c_slot) * E;
      for (int r = j_slot; r < nr; r += g, b += g * row_bytes)
        run = Op::reduce(run, static_cast<acc_t>(tile_at<in_t>(tile, b)), cur.r0 + r);
    }
    if (!looped && cur.last_of_unit(d)) {
      merged[t] = run;
      __syncthreads();
      if (j_slot == 0 && p_slot < np) {
        S s = run;
        for (int k = 1; k < g; ++k) s = Op::combine(s, merged[(p_slot * g + k) * C + c_slot]);
        store_indexed<Op>(a, dense_out_offset(d, p0 + p_slot, c_slot), 0, s, false);
      }
      run = Op::identity();
    }
    __syncthreads();  // the tile (and merged) are free for the next store
    cur = ahead;
  }
}

// The split passes' second launch: a group of `group` lanes (a power of two
// up to the block's 256) per output merges its `split` states, a few a
// lane. A warp an output, whatever the split, made the finish of [23, 16,
// 128, 128] float32 over dim 2 (47104 outputs of two partials each) most of
// its 31 us (torch.argmax 14.9), and that of a full int8 argmax (528
// partials, 17 a lane, each load waiting on the one before) 11 us of its
// 90 (H200, session 40).
template <class Op, typename in_t>
__global__ void __launch_bounds__(256) indexed_finish(IndexedArgs<in_t> a, int group) {
  using S = typename Op::state;
  wait_for_prior_grid();
  const int64_t o = int64_t(blockIdx.x) * (blockDim.x / group) + threadIdx.x / group;
  const int lane = threadIdx.x % group;
  S s = Op::identity();
  if (o < a.n_out) {
    const S* parts = reinterpret_cast<const S*>(a.partials) + o * a.split;
    for (int64_t k = lane; k < a.split; k += group) s = Op::combine(s, parts[k]);
  }
  // Every thread of the block takes part; a group over a warp is the block.
  s = group > 32 ? block_reduce<Op>(s) : group_reduce<Op>(s, group);
  if (o < a.n_out && lane == 0) {
    int64_t in_off = 0, out_off = 0;
    a.outer.offsets(o, in_off, out_off);
    store_indexed<Op>(a, out_off, o, s, false);
  }
}

inline int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The largest power of two at most v (1 for v < 1), capped at cap.
inline int pow2_at_most(int64_t v, int cap) {
  int p = 1;
  while (p * 2 <= v && p * 2 <= cap) p *= 2;
  return p;
}

// The most elements a dense row of pass p reads one at a time around its
// vectors of V (walk_row, short_row): its head and tail where every row
// starts at the same place in a vector, else up to V - 1 at each end.
template <typename in_t>
int64_t row_edges(const IndexedPass& p, const in_t* in, int V) {
  bool alike = true;
  for (int d = 0; d < p.outer.ndim; ++d) alike = alike && p.outer.in_strides[d] % V == 0;
  if (!alike) return std::min<int64_t>(p.n_reduce, 2 * (V - 1));
  const int64_t misalign = static_cast<int64_t>((reinterpret_cast<uintptr_t>(in) / sizeof(in_t)) % V);
  const int64_t head = std::min<int64_t>(p.n_reduce, misalign == 0 ? 0 : V - misalign);
  return head + (p.n_reduce - head) % V;
}

// Pass p as dense planes of columns (indexed_dense_tiles): its innermost
// kept dim (C of them, C > 1) dense, the reduced dim right outside it, and
// the planes' outer dims each right after the one before; d.outer then maps
// a plane to its output offset. False where the pass is not one.
inline bool indexed_dense_geometry(const IndexedPass& p, DenseArgs& d) {
  if (p.outer.ndim < 1 || p.outer.in_strides[0] != 1) return false;
  const int64_t C = static_cast<int64_t>(p.outer.sizes[0].divisor);
  if (C < 2 || p.reduce_stride != C) return false;
  d.R = p.n_reduce;
  d.C = C;
  d.plane = d.R * C;
  d.out_col_stride = p.outer.out_strides[0];
  OuterIndexer planes{};
  planes.ndim = p.outer.ndim - 1;
  int64_t next = d.plane;
  for (int k = 1; k < p.outer.ndim; ++k) {
    if (p.outer.in_strides[k] != next) return false;
    next *= static_cast<int64_t>(p.outer.sizes[k].divisor);
    planes.sizes[k - 1] = p.outer.sizes[k];
    planes.in_strides[k - 1] = p.outer.in_strides[k];
    planes.out_strides[k - 1] = p.outer.out_strides[k];
  }
  d.outer = planes;
  d.n_planes = p.n_out / C;
  d.total = d.n_planes * d.plane;
  return true;
}

// Launches indexed_dense_tiles for pass p if it is dense planes of columns
// that the tiles suit (as launch_dense sizes the sum engine's): a column
// leaves two threads or more an output, and planes larger than a tile (a
// block each) are enough to fill the GPU. False, launching nothing,
// otherwise.
template <class Op, typename in_t>
bool launch_indexed_dense(const IndexedPass& p, const IndexedArgs<in_t>& a) {
  constexpr int64_t T = DensePolicy::kThreads;
  const int64_t E = DensePolicy::kTileBytes / int64_t(sizeof(in_t));
  const int64_t sms = sm_count();
  DenseArgs d{};
  if (!indexed_dense_geometry(p, d) || d.C * 2 > T) return false;
  if (d.plane <= E) {
    // As many planes as fit a tile, but two tiles an SM or more where the
    // planes are that many.
    d.planes_per_tile = std::min(E / d.plane, std::max<int64_t>(ceil_div64(d.n_planes, 2 * sms), 1));
    d.rows_per_tile = d.R;
    d.n_units = ceil_div64(d.n_planes, d.planes_per_tile);
    const int64_t outs = d.planes_per_tile * d.C;
    d.group = outs * 2 <= T ? static_cast<int>(std::min<int64_t>(T / outs, pow2_at_most(2 * d.R - 1, 256))) : 1;
    if (d.group == 1) d.set_output_steps(sizeof(in_t));
  } else {
    if (d.n_planes < HostPolicy::kDenseMinPlanesPerSm * sms) return false;
    d.planes_per_tile = 0;
    d.rows_per_tile = E / d.C;
    d.n_units = d.n_planes;
    d.group = static_cast<int>(T / d.C);
  }
  const int64_t blocks = std::min(d.n_units, sms * HostPolicy::kDenseBlocksPerSm);
  launch_kernel(&indexed_dense_tiles<Op, in_t>, dim3(static_cast<unsigned>(blocks)), dim3(static_cast<unsigned>(T)),
                current_stream(), false, d, a);
  return true;
}

// Whether dense planes of columns that no vector fits read faster through
// the tiles (launch_indexed_dense) than through the element columns
// kernel. A/B on the H200 over 60 such passes of argmax and max.dim
// (NOTES.md, session 46): from 1 MB, 1- and 2-byte planes gained at every
// row count to 328 ([1990083, 2, 12] uint8 0.67x -> 2.45x of torch.argmax,
// [204923, 19, 33] int16 0.82x -> 1.61x, [52784, 100, 11] bfloat16 0.74x
// -> 0.96x) and lost at 1000 ([9673, 1000, 3] uint8 1.14x -> 1.06x); 4-
// and 8-byte planes gained to 19 rows ([199891, 19, 11] float32 0.78x ->
// 1.05x, [153799, 5, 63] float64 0.79x -> 1.52x; 64 MB: at 24 rows 1.01x
// -1.29x against 0.94x-1.26x at 25 through columns), were as slow at 32
// and lost from 48, where the columns kernel's loads of neighbouring
// columns merge in L1 and the tiles' threads each walk a long column
// through shared memory ([15887, 48, 11] float64 0.91x -> 0.78x, [88155,
// 176, 15] float32 0.87x -> 0.49x); under 1 MB only planes of up to 4 rows
// gained ([3672, 2, 23] int32 0.99x -> 1.10x, [1138, 32, 6] float16 2.15x
// -> 1.84x lost); under 256 KB they were mixed ([440, 2, 23] float64
// 1.01x -> 0.95x, [1487, 3, 33] int8 1.03x -> 1.07x) and stay.
template <typename in_t>
bool indexed_tiles_pay(const IndexedPass& p) {
  const int64_t bytes = p.n_out * p.n_reduce * int64_t(sizeof(in_t));
  if (bytes < HostPolicy::kTinyPassBytes) return false;
  if (bytes < IndexedPolicy::kLatencyBoundBytes) return p.n_reduce <= IndexedPolicy::kTilesSmallPassMaxRows;
  return p.n_reduce <= (sizeof(in_t) <= 2 ? IndexedPolicy::kTilesMaxRowsNarrow : IndexedPolicy::kTilesMaxRowsWide);
}

// Whether a pass split `split` ways (up to kMaxClusterSplit) finishes in
// clusters of its blocks rather than through partials and a finish kernel:
// on sm_90 with code built for it (the kernels of one build share their
// architectures), and, where `resident` is given, where its `n_clusters`
// clusters are all resident at once. A/B on the H200 over 66 split passes
// (NOTES.md session 47): rows in blocks and vector columns gained where
// their clusters fitted one wave ([35, 49292] bfloat16 argmax over dim 1
// 1.88x -> 2.37x of torch.argmax, [84, 8192] int64 0.73x -> 0.87x, [55,
// 159, 256] float64 1.18x -> 1.33x) and lost where they did not ([8, 512,
// 4096] float32, 256 clusters of 3, 1.38x -> 1.29x; [127, 998895] int16,
// 127 of 3, 2.09x -> 1.85x); the element columns kernel's short walks
// gained without the test ([961, 328, 15] int32, 451 clusters of 2: 0.87x,
// 0.79x through the finish kernel).
template <typename Kernel>
bool finish_in_clusters(Kernel kernel, ResidentClusters* resident, dim3 block, int64_t split, int64_t n_clusters) {
  static PerDevice clusters;  // launches_in_clusters' answer, per device
  if (split < 2 || split > kMaxClusterSplit) return false;
  if (!launches_in_clusters(clusters, kernel)) return false;
  return resident == nullptr || n_clusters <= resident->clusters(kernel, block, static_cast<int>(split));
}

template <class Op, typename in_t>
void launch_indexed(const IndexedPass& p, IndexedArgs<in_t> a) {
  using S = typename Op::state;
  using P = IndexedPolicy;
  constexpr int V = indexed_vector<in_t>();
  const cudaStream_t stream = current_stream();
  const int64_t sms = sm_count();
  const int64_t R = p.n_reduce;
  a.split = 1;
  a.chunk = R;
  Workspace workspace;
  const auto finish = [&] {
    if (a.split == 1) return;
    // Lanes an output: 2 states a lane or more, a block's 256 at most.
    const int group = pow2_at_most(a.split / 2, 256);
    const int threads = group > 32 ? group : 256;
    const int64_t per_block = threads / group;
    launch_kernel(&indexed_finish<Op, in_t>, dim3(static_cast<unsigned>(ceil_div64(p.n_out, per_block))),
                  dim3(threads), stream, true, a, group);
  };
  if (p.along_rows()) {
    // Dense rows in vectors (from each row's first aligned element), rows of
    // two vectors or more.
    const bool vec = p.reduce_stride == 1 && R >= 2 * V;
    const int width = vec ? V : 1;
    const int64_t loads = ceil_div64(R, width);
    const bool few_long_rows =
        p.n_out < sms * P::kBlockRowsMaxPerSm && loads > P::kBlockRowsMinLoads * ceil_div64(p.n_out, sms);
    const bool few_rows_of_rounds = p.n_out <= sms && loads > 32 * P::kUnroll;
    if (few_long_rows || few_rows_of_rounds) {
      // One wave of blocks at most: chunks of whole vectors, at least
      // kUnroll loads a thread each.
      const auto kernel = vec ? &indexed_rows_blocks<Op, in_t, V> : &indexed_rows_blocks<Op, in_t, 1>;
      static ResidentWave resident_vec, resident_elem;  // by kernel
      const int64_t wave = (vec ? resident_vec : resident_elem).blocks(kernel, P::kBlockThreads);
      const int64_t want = std::max<int64_t>(1, wave / p.n_out);
      const int64_t most = std::max<int64_t>(1, loads / (int64_t(P::kBlockThreads) * P::kUnroll));
      const int64_t split = std::min(want, most);
      a.chunk = ceil_div64(ceil_div64(R, split), width) * width;
      a.split = ceil_div64(R, a.chunk);
      const dim3 grid(static_cast<unsigned>(a.split), static_cast<unsigned>(p.n_out));
      static ResidentClusters clusters_vec, clusters_elem;  // by kernel
      if (finish_in_clusters(kernel, vec ? &clusters_vec : &clusters_elem, dim3(P::kBlockThreads), a.split, p.n_out)) {
        a.cluster_finish = 1;
        launch_kernel_clustered(kernel, grid, dim3(P::kBlockThreads), dim3(static_cast<unsigned>(a.split), 1, 1),
                                stream, /*pdl=*/false, a);
        return;
      }
      if (a.split > 1) a.partials = partials_workspace<S>(workspace, p.n_out * a.split);
      launch_kernel(kernel, grid, dim3(P::kBlockThreads), stream, false, a);
      finish();
      return;
    }
    // A group of lanes a row, each with kGroupLoadsPerLane loads or more
    // (kGroupLoadsPerLaneWide for vectors of 8-byte elements, and of 4-byte
    // ones in long rows).
    const bool latency_bound = p.n_out * R * int64_t(sizeof(in_t)) < P::kLatencyBoundBytes;
    // Rows of 4-byte elements whose vectors are whole short walks of 4 to
    // 16 lanes (8 loads each, two full batches) take them; others of
    // kWideLanesMinLoads4 vectors or more take the wide lanes of 8-byte
    // elements, their groups doubled for the fill no further than the
    // 4-load rule's (a lane keeps 4 loads or more).
    const int64_t short_walk_loads = P::kShortWalkBatches * P::kUnroll;
    const int64_t whole_walks = loads / short_walk_loads;
    const bool whole_short_walks = loads % short_walk_loads == 0 && whole_walks >= P::kWholeWalksMinLanes &&
                                   whole_walks <= P::kWholeWalksMaxLanes && (whole_walks & (whole_walks - 1)) == 0;
    const bool wide_4_byte =
        vec && sizeof(in_t) == 4 && !latency_bound && (whole_short_walks || loads >= P::kWideLanesMinLoads4);
    const bool wide_lanes = vec && !latency_bound && (sizeof(in_t) == 8 || wide_4_byte);
    const int64_t per_lane = latency_bound ? 1 : wide_lanes ? P::kGroupLoadsPerLaneWide : P::kGroupLoadsPerLane;
    int group = pow2_at_most(loads / per_lane, 32);
    if (wide_4_byte && whole_short_walks) group = static_cast<int>(whole_walks);
    const int fill_most = wide_4_byte ? pow2_at_most(loads / P::kGroupLoadsPerLane, 32) : 32;
    if (wide_lanes) {
      while (group < fill_most && p.n_out * group < sms * P::kGroupFillThreadsPerSm) group *= 2;
    }
    // In a pass bound by latency, a lane for each edge element (those around
    // a row's vectors, read one at a time), up to 16: a lane loads its first
    // edge with its vectors and any others one after another. Rows of 43
    // int8 had 2 lanes for up to 27 edges: [4, 23, 43] over dim 2 0.58x ->
    // 0.86x of torch.argmin ([32, 21] float16 argmax 0.83x -> 0.97x); up to
    // 32 lanes cost [1119, 94] bool 0.97x -> 0.84x in shuffle rounds (H100,
    // NOTES.md session 45).
    if (vec && latency_bound) group = std::max(group, pow2_at_most(2 * row_edges(p, a.in, V) - 1, 16));
    const int64_t rows_per_block = P::kGroupThreads / group;
    const int64_t blocks = std::min<int64_t>(ceil_div64(p.n_out, rows_per_block), int64_t(1) << 30);
    const bool short_walk = ceil_div64(loads, group) <= P::kShortWalkBatches * P::kUnroll;
    const auto kernel = vec ? (short_walk ? &indexed_rows_groups<Op, in_t, V, true>
                                          : &indexed_rows_groups<Op, in_t, V, false>)
                            : (short_walk ? &indexed_rows_groups<Op, in_t, 1, true>
                                          : &indexed_rows_groups<Op, in_t, 1, false>);
    launch_kernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(P::kGroupThreads), stream, false, a, group);
    return;
  }
  // Columns: CV outputs a thread where the inner dim is dense and aligned,
  // row threads with kColumnRowsPerThread rows each or more (up to 8, or
  // more where the outputs are fewer than a block's columns), the rows
  // split across blocks where the outputs leave the GPU idle.
  // Vectors of 16 bytes, else of 8 for 2- and 4-byte elements (an inner dim
  // of 28 float16 columns: [16293, 32, 28, 28] over dim 2 read an element
  // a thread at 1055 GB/s, 0.79x torch.min), else, where the tiles do not
  // take them, of 4 for 1- and 2-byte ones (16-bit columns of 2 mod 4 read
  // an element a thread: [345, 17, 46354] bfloat16 argmax over dim 1 0.66x
  // -> 1.21x, [3439, 5, 3914] float16 0.71x -> 1.40x; bytes of 4 mod 8 were
  // level, 1.43-1.56x either way; H200, NOTES.md session 47).
  constexpr int CV = indexed_column_vector<in_t>();
  constexpr int kHalfCV = narrower_column_vector<in_t>(CV);
  constexpr int kQuarterCV = narrower_column_vector<in_t>(kHalfCV);
  const auto columns_fit = [&](int cv) {
    bool fit = p.outer.in_strides[0] == 1 && p.outer.out_strides[0] == 1 &&
               static_cast<int64_t>(p.outer.sizes[0].divisor) % cv == 0 && p.reduce_stride % cv == 0 &&
               reinterpret_cast<uintptr_t>(a.in) % (cv * sizeof(in_t)) == 0;
    for (int d = 1; d < p.outer.ndim; ++d) fit = fit && p.outer.in_strides[d] % cv == 0;
    // (with fewer groups than a block's threads, an output a thread keeps
    // more threads busy: [11, 86, 16] float16 over dim 1 ran at 0.58x of
    // torch.argmax with 22 groups of 8, H200)
    fit = fit && p.n_out / cv >= P::kColumnThreads;
    // In a pass too small to be bound by bandwidth, vectors that would leave
    // multiprocessors without a block of them give way to an output a
    // thread: more threads, each with fewer loads in turn.
    return fit && (p.n_out * R * int64_t(sizeof(in_t)) >= P::kLatencyBoundBytes ||
                   ceil_div64(p.n_out / cv, P::kColumnThreads) >= sms);
  };
  int cv = columns_fit(CV) ? CV : kHalfCV != CV && columns_fit(kHalfCV) ? kHalfCV : 1;
  if (cv == 1 && indexed_tiles_pay<in_t>(p) && launch_indexed_dense<Op>(p, a)) return;
  if (cv == 1 && kQuarterCV != kHalfCV && columns_fit(kQuarterCV)) cv = kQuarterCV;
  IndexedArgs<in_t> av = a;
  if (cv > 1) {
    av.outer.sizes[0] = FastDivmod(static_cast<uint64_t>(p.outer.sizes[0].divisor / cv));
    av.outer.in_strides[0] = cv;
    av.outer.out_strides[0] = cv;
    av.n_out = p.n_out / cv;
  }
  const int64_t units = av.n_out;
  int rows = pow2_at_most(R / P::kColumnRowsPerThread, 8);
  int cols = P::kColumnThreads / rows;
  if (units < cols) {
    cols = 1;
    while (cols < units) cols *= 2;
    rows = pow2_at_most(R / P::kColumnRowsPerThread, P::kColumnThreads / cols);
  }
  const int64_t blocks_x = ceil_div64(units, cols);
  int64_t split = 1;
  if (blocks_x < sms * P::kSplitBlocksPerSm &&
      (R * p.n_out >= P::kSplitMinElements || R > int64_t(rows) * P::kColumnRowsPerThread * 4))
    split = std::min(ceil_div64(sms * P::kSplitBlocksPerSm, blocks_x),
                     std::max<int64_t>(1, R / (rows * P::kColumnRowsPerThread)));
  split = std::min<int64_t>(split, 65535);
  av.chunk = ceil_div64(R, split);
  av.split = ceil_div64(R, av.chunk);
  TORCH_CHECK(blocks_x < (int64_t(1) << 31), "gpureduce: too many outputs for one columns pass");
  const dim3 grid(static_cast<unsigned>(blocks_x), static_cast<unsigned>(av.split));
  // (a thread's rows: ceil(chunk / rows))
  const bool short_walk = av.chunk <= int64_t(rows) * P::kUnroll;
  const auto run = [&](auto kernel, ResidentClusters* resident) {
    if (finish_in_clusters(kernel, resident, dim3(cols, rows), av.split, blocks_x)) {
      av.cluster_finish = 1;
      launch_kernel_clustered(kernel, grid, dim3(cols, rows), dim3(1, static_cast<unsigned>(av.split), 1), stream,
                              /*pdl=*/false, av);
      return;
    }
    if (av.split > 1) av.partials = partials_workspace<S>(workspace, p.n_out * av.split);
    a.chunk = av.chunk;
    a.split = av.split;
    a.partials = av.partials;
    launch_kernel(kernel, grid, dim3(cols, rows), stream, false, av);
    finish();
  };
  static ResidentClusters clusters_cv, clusters_half, clusters_quarter;  // by kernel
  if (cv == CV) {
    run(&indexed_columns_vec<Op, in_t, CV>, &clusters_cv);
  } else if (cv == kHalfCV) {
    run(&indexed_columns_vec<Op, in_t, kHalfCV>, &clusters_half);
  } else if (cv == kQuarterCV) {
    run(&indexed_columns_vec<Op, in_t, kQuarterCV>, &clusters_quarter);
  } else {
    run(short_walk ? &indexed_columns<Op, in_t, true> : &indexed_columns<Op, in_t, false>, nullptr);
  }
}

template <typename in_t>
void run_indexed_pass_cuda(const IndexedPass& p, const void* in, void* values, int64_t* indices, Extreme extreme) {
  using acc_t = arg_acc_t<in_t>;
  IndexedArgs<in_t> a{};
  a.in = static_cast<const in_t*>(in);
  a.values = static_cast<in_t*>(values);
  a.indices = indices;
  a.outer = p.outer;
  a.n_out = p.n_out;
  a.n_reduce = p.n_reduce;
  a.reduce_stride = p.reduce_stride;
  if (extreme == Extreme::kMax) {
    launch_indexed<ArgExtremumOp<acc_t, true>>(p, a);
  } else {
    launch_indexed<ArgExtremumOp<acc_t, false>>(p, a);
  }
}

}  // namespace cuda
}  // namespace gpureduce

#define GPUREDUCE_CUDA_INDEXED_INSTANCE(T)                                                                  \
  template void gpureduce::cuda::run_indexed_pass_cuda<T>(const gpureduce::IndexedPass&, const void*, void*, \
                                                          int64_t*, gpureduce::Extreme)
