// Dense-tiles kernel of the CUDA engine: the pass reads one dense stream of
// n_planes planes of R rows of C elements, and output (p, c) reduces column c
// of plane p over its R rows. A middle dim with a small kept inner dim is
// C > 1; rows are C = 1 (a plane is one row). The stream rows
// (engine/stream_rows.cuh) take most of what fits a tile: short rows no
// vector fits, and whole planes of enough rows (launch_dense); here stay
// planes of few rows, planes larger than a tile, misaligned pointers and
// 16-byte elements.
//
// Rows whose width is not a whole number of 16-byte vectors, and columns too
// narrow for a vector, could only be read one element per load by the rows
// and columns kernels (650-1450 GB/s on the H200, benchmarks/NOTES.md). Here a
// block copies a tile of the stream, whatever its alignment, into shared
// memory with 16-byte loads, four in flight per thread, and the threads then
// reduce their outputs from shared memory. A tile holds whole planes (P of
// them), or, for planes larger than a tile, rows of one plane, which the
// block walks tile after tile. The order of every combine is fixed by the
// shape, so results are bitwise reproducible.
#pragma once

#include "common.cuh"

namespace gpureduce {
namespace cuda {

struct DensePolicy {
  static constexpr int kThreads = 256;
  // A tile is at most this many bytes: with the partial vectors at its two
  // ends it spans at most 1024 16-byte vectors, four per thread.
  static constexpr int kTileBytes = 16384 - 32;
  static constexpr int kVecPerThread = 4;
  // At least this many blocks per SM (a register bound): with the next
  // tile's loads in flight while a tile is reduced, four blocks keep about
  // 64 KB of loads in flight per SM.
  static constexpr int kMinBlocksPerSm = 4;
};

struct DenseArgs {
  int64_t n_planes, R, C, plane;  // plane = R * C elements (see kept)
  // Of a plane's C columns, the first `kept` are outputs: C, but for rows of
  // element stride C read as planes of R rows of C (strided_rows_geometry,
  // the stream-rows kernel only), where kept is 1 and `plane`, the elements
  // from one plane's start to the next's, may be under R * C: the dropped
  // columns of a plane's last row may lie in the next plane.
  int64_t kept;
  // >= 1: each tile is this many whole planes, and a unit of work is a tile;
  // 0: each tile is rows_per_tile rows of one plane, and a unit is a plane.
  int64_t planes_per_tile;
  int64_t rows_per_tile;
  int64_t n_units;
  // Threads per output: with group > 1 (or row tiles) thread t owns the slot
  // (p, j, c) = (t / (C * group), t / C % group, t % C), reads rows j, j +
  // group, ... of column c of plane p, and the group's partials are combined
  // in j order; with group == 1 (whole planes) the threads loop over the
  // tile's outputs, each reading all R rows of one.
  int group;
  OuterIndexer outer;     // plane -> output offset (its in_strides are the dense stream's)
  int64_t out_col_stride;
  int64_t total;  // elements read: the stream's, times n_slabs
  // Slabs (the stream-rows kernel only): an outer reduced dim of n_slabs
  // indices, slab_stride elements apart, each a copy of the stream's geometry.
  int64_t n_slabs = 1, slab_stride = 0;
  // Segments (the stream-rows kernel only): the planes follow densely only
  // seg_planes at a time (StreamRowsArgs::seg_planes); n_planes (or 0) for
  // one stream.
  int64_t seg_planes = 0;
  // Scattered planes (the stream-columns kernel only): each plane is dense,
  // but they lie at the outer dims' input strides, not one after another
  // ([A, B, R, C][:, ::2] over R); total counts their elements alone.
  bool scattered = false;
  // Launched as a programmatic dependent (launch_engine_kernel): whether the
  // next kernel may be scheduled from this grid's start (a grid of one wave).
  int early_trigger = 0;
  Projection projection;  // ReducePass::projection
  // Whole planes with group == 1 (set only for those): thread t's outputs q = t, t + kThreads, ...
  // are (p, c) = (q / C, q % C), stepped by (step_p, step_c) and wrapped at
  // C; with them the tile byte of (p, 0, c) and, for planes along one outer
  // dim, the output's offset (set by DenseArgs::set_output_steps).
  int step_p, step_c;
  unsigned byte_step, byte_wrap;
  int64_t out_step, out_wrap;

  void set_output_steps(int64_t elem_bytes) {
    step_p = static_cast<int>(DensePolicy::kThreads / C);
    step_c = static_cast<int>(DensePolicy::kThreads % C);
    byte_step = static_cast<unsigned>((step_p * plane + step_c) * elem_bytes);
    byte_wrap = static_cast<unsigned>((plane - C) * elem_bytes);
    const int64_t s0 = outer.ndim == 1 ? outer.out_strides[0] : 0;
    out_step = step_p * s0 + step_c * out_col_stride;
    out_wrap = s0 - C * out_col_stride;
  }
};

// Output offset of plane p, column c.
__device__ __forceinline__ int64_t dense_out_offset(const DenseArgs& a, int64_t p, int64_t c) {
  int64_t in_off, out_off;
  if (a.outer.ndim == 1) {
    out_off = p * a.outer.out_strides[0];
  } else {
    a.outer.offsets(p, in_off, out_off);
  }
  return out_off + c * a.out_col_stride;
}

// Shared-memory layout of a tile: its bytes from the 16-byte boundary at or
// below its first element, with kPad bytes of padding after every 128 bytes,
// so that threads reading rows of a power-of-two width do not all land in
// one bank.
template <typename in_t>
struct DenseTileLayout {
  static constexpr int kPad = sizeof(in_t) < 4 ? 4 : static_cast<int>(sizeof(in_t));
  static constexpr int kRawBytes = DensePolicy::kTileBytes + 32;  // the tile and the vectors at both ends
  static constexpr int kBytes = kRawBytes + kRawBytes / 128 * kPad + kPad;
  // Unsigned, so that the division is a shift.
  __device__ static __forceinline__ unsigned padded(unsigned byte) { return byte + byte / 128 * kPad; }
};

// One thread's share of a tile in flight: up to kVecPerThread 16-byte
// vectors, loaded from global memory before they are stored to shared memory,
// so that the loads of the next tile overlap the reduction of this one.
// Whole vectors inside the stream are loaded as such; the partial ones at its
// two ends element by element.
template <typename in_t>
struct TileLoad {
  uint4 r[DensePolicy::kVecPerThread];
  int nvec;  // 16-byte vectors of the tile, from a0 (at most 1024 + 1)
  uintptr_t a0;

  // Loads this thread's vectors of elements [e0, e0 + ne) of `in`; returns
  // the byte offset of element e0 from the 16-byte boundary below it.
  // Indices are 32-bit and the bounds are tested once per tile: only the
  // stream's first and last vectors can reach outside it (an element-wise
  // load each), every other one is a plain 16-byte load.
  __device__ __forceinline__ int load(const in_t* __restrict__ in, int64_t total, int64_t e0, int64_t ne) {
    const uintptr_t lo = reinterpret_cast<uintptr_t>(in);
    const uintptr_t hi = reinterpret_cast<uintptr_t>(in + total);
    const uintptr_t start = reinterpret_cast<uintptr_t>(in + e0);
    const uintptr_t end16 = (reinterpret_cast<uintptr_t>(in + e0 + ne) + 15) & ~uintptr_t(15);
    a0 = start & ~uintptr_t(15);
    nvec = static_cast<int>((end16 - a0) / 16);
    // Vectors [whole_lo, whole_hi) lie wholly inside the stream.
    const int whole_lo = a0 < lo ? 1 : 0;
    const int whole_hi = end16 > hi ? nvec - 1 : nvec;
#pragma unroll
    for (int u = 0; u < DensePolicy::kVecPerThread; ++u) {
      const int idx = static_cast<int>(threadIdx.x) + u * DensePolicy::kThreads;
      if (idx >= nvec) continue;
      const uintptr_t addr = a0 + static_cast<uintptr_t>(idx) * 16;
      if (idx >= whole_lo && idx < whole_hi) {
        r[u] = *reinterpret_cast<const uint4*>(addr);
      } else {
        r[u] = load_partial(addr, lo, hi);
      }
    }
    return static_cast<int>(start - a0);
  }

  // The elements of the vector at addr that lie inside [lo, hi), zeros elsewhere.
  __device__ __forceinline__ static uint4 load_partial(uintptr_t addr, uintptr_t lo, uintptr_t hi) {
    uint4 part = make_uint4(0, 0, 0, 0);
    for (int k = 0; k < int(16 / sizeof(in_t)); ++k) {
      const uintptr_t ea = addr + k * sizeof(in_t);
      if (ea >= lo && ea + sizeof(in_t) <= hi) reinterpret_cast<in_t*>(&part)[k] = *reinterpret_cast<const in_t*>(ea);
    }
    return part;
  }

  __device__ __forceinline__ void store(unsigned char* tile) const {
    using Layout = DenseTileLayout<in_t>;
#pragma unroll
    for (int u = 0; u < DensePolicy::kVecPerThread; ++u) {
      const int idx = static_cast<int>(threadIdx.x) + u * DensePolicy::kThreads;
      if (idx >= nvec) continue;
      // 4-byte aligned (the padding)
      unsigned* w = reinterpret_cast<unsigned*>(tile + Layout::padded(static_cast<unsigned>(idx) * 16));
      w[0] = r[u].x, w[1] = r[u].y, w[2] = r[u].z, w[3] = r[u].w;
    }
  }
};

// The element at unpadded byte offset `byte` of the tile.
template <typename in_t>
__device__ __forceinline__ in_t tile_at(const unsigned char* tile, unsigned byte) {
  return *reinterpret_cast<const in_t*>(tile + DenseTileLayout<in_t>::padded(byte));
}

// The tiles a block reads, in order: units blockIdx.x, blockIdx.x +
// gridDim.x, ..., each one tile (whole planes) or its plane's row tiles.
struct DenseTileCursor {
  int64_t unit, r0;
  __device__ __forceinline__ bool valid(const DenseArgs& a) const { return unit < a.n_units; }
  __device__ __forceinline__ int64_t planes(const DenseArgs& a) const {
    if (a.planes_per_tile < 1) return 1;
    const int64_t left = a.n_planes - unit * a.planes_per_tile;
    return a.planes_per_tile < left ? a.planes_per_tile : left;
  }
  __device__ __forceinline__ int64_t first_plane(const DenseArgs& a) const {
    return a.planes_per_tile >= 1 ? unit * a.planes_per_tile : unit;
  }
  __device__ __forceinline__ int64_t rows(const DenseArgs& a) const {
    return a.rows_per_tile < a.R - r0 ? a.rows_per_tile : a.R - r0;
  }
  __device__ __forceinline__ int64_t first_element(const DenseArgs& a) const {
    return first_plane(a) * a.plane + r0 * a.C;
  }
  __device__ __forceinline__ int64_t elements(const DenseArgs& a) const {
    return a.planes_per_tile >= 1 ? planes(a) * a.plane : rows(a) * a.C;
  }
  __device__ __forceinline__ bool last_of_unit(const DenseArgs& a) const { return r0 + a.rows_per_tile >= a.R; }
  __device__ __forceinline__ void advance(const DenseArgs& a) {
    if (last_of_unit(a)) {
      unit += gridDim.x;
      r0 = 0;
    } else {
      r0 += a.rows_per_tile;
    }
  }
};

template <class Op, typename in_t, typename out_t>
__global__ void __launch_bounds__(DensePolicy::kThreads, DensePolicy::kMinBlocksPerSm)
    gpureduce_dense_tiles(DenseArgs a, const in_t* __restrict__ in, Outputs<out_t> out) {
  start_as_dependent(a.early_trigger);
  using acc_t = typename Op::acc_type;
  using WideOp = typename Op::wide_op;
  using wide_t = typename WideOp::acc_type;
  __shared__ __align__(16) unsigned char tile[DenseTileLayout<in_t>::kBytes];
  __shared__ __align__(16) unsigned char partials_raw[DensePolicy::kThreads * sizeof(wide_t)];
  wide_t* partials = reinterpret_cast<wide_t*>(partials_raw);

  const int64_t C = a.C;
  const int g = a.group;
  const bool looped = a.planes_per_tile >= 1 && g == 1;
  const int64_t t = threadIdx.x;
  const int64_t c_slot = t % C;
  const int64_t j_slot = (t / C) % g;
  const int64_t p_slot = t / (C * g);

  DenseTileCursor cur{static_cast<int64_t>(blockIdx.x), 0};
  if (!cur.valid(a)) return;
  TileLoad<in_t> next;
  int next_head = next.load(in, a.total, cur.first_element(a), cur.elements(a));
  wide_t run = WideOp::identity();
  while (cur.valid(a)) {
    next.store(tile);
    const int head = next_head;
    __syncthreads();
    DenseTileCursor ahead = cur;
    ahead.advance(a);
    if (ahead.valid(a)) next_head = next.load(in, a.total, ahead.first_element(a), ahead.elements(a));
    const int64_t p0 = cur.first_plane(a), np = cur.planes(a), nr = cur.rows(a);
    // Indices inside a tile fit 32 bits (a tile holds at most 16 K elements).
    const int c32 = static_cast<int>(C), nr32 = static_cast<int>(nr);
    constexpr unsigned E = sizeof(in_t);
    if (looped) {
      // Output (p, c) = (q / C, q % C) for q = t, t + kThreads, ...: the
      // quotient and remainder are stepped, not divided, at each output, and
      // so are the tile byte of (p, 0, c) and the output's offset, by steps
      // set on the host. A division by the runtime C cost as much as reading
      // planes of two or three rows (H200: [1832202, 2, 7] float64 over dim 1
      // 0.86x -> 1.13x of torch.sum, [12863801, 3, 5] float32 0.90x -> 0.97x),
      // and 64-bit and signed index arithmetic made an output of three rows
      // about 95 instructions (SASS, NOTES.md session 22).
      const int np32 = static_cast<int>(np), R32 = static_cast<int>(a.R);
      int p = static_cast<int>(p_slot), c = static_cast<int>(c_slot);
      const unsigned row_bytes = static_cast<unsigned>(c32) * E;
      unsigned byte = static_cast<unsigned>(head) + static_cast<unsigned>(p * static_cast<int>(a.plane) + c) * E;
      const bool one_outer = a.outer.ndim == 1;
      int64_t o = one_outer ? (p0 + p) * a.outer.out_strides[0] + c * a.out_col_stride : 0;
      while (p < np32) {
        acc_t acc = Op::identity();
        unsigned b = byte;
#pragma unroll 4
        for (int r = 0; r < R32; ++r, b += row_bytes) acc = Op::reduce(acc, tile_at<in_t>(tile, b));
        out.template store<Op>(one_outer ? o : dense_out_offset(a, p0 + p, c), acc, a.projection);
        p += a.step_p, c += a.step_c, byte += a.byte_step, o += a.out_step;
        if (c >= c32) c -= c32, ++p, byte += a.byte_wrap, o += a.out_wrap;
      }
    } else if (p_slot < np) {
      acc_t acc = Op::identity();
      const unsigned row_bytes = static_cast<unsigned>(c32) * E;
      unsigned b = static_cast<unsigned>(head) +
                   static_cast<unsigned>((static_cast<int>(p_slot) * nr32 + static_cast<int>(j_slot)) * c32 +
                                         static_cast<int>(c_slot)) * E;
      for (int r = static_cast<int>(j_slot); r < nr32; r += g, b += g * row_bytes)
        acc = Op::reduce(acc, tile_at<in_t>(tile, b));
      run = WideOp::combine(run, static_cast<wide_t>(acc));
    }
    if (!looped && cur.last_of_unit(a)) {
      // One column of one plane (C == 1) in groups of whole warps: a warp
      // folds its 32 partials by shuffles first, so that one thread then
      // combines g / 32 of them rather than g (256 for long rows).
      const bool by_warps = C == 1 && g % 32 == 0;
      if (by_warps) run = group_reduce<WideOp>(run, 32);
      partials[t] = run;
      __syncthreads();
      if (j_slot == 0 && p_slot < np) {
        wide_t acc = WideOp::identity();
        const int step = by_warps ? 32 : 1;
        for (int k = 0; k < g; k += step) acc = WideOp::combine(acc, partials[(p_slot * g + k) * C + c_slot]);
        out.template store<WideOp>(dense_out_offset(a, p0 + p_slot, c_slot), acc, a.projection);
      }
      run = WideOp::identity();
    }
    __syncthreads();  // the tile (and partials) are free for the next store
    cur = ahead;
  }
}

}  // namespace cuda
}  // namespace gpureduce
