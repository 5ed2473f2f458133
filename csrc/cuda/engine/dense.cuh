// Dense-tiles kernel of the CUDA engine: the pass reads one dense stream of
// n_planes planes of R rows of C elements, and output (p, c) reduces column c
// of plane p over its R rows. Rows of any width are C = 1 (a plane is one
// row); a middle dim with a small kept inner dim is C > 1.
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
  static constexpr int kTileBytes = 16384;
  static constexpr int kUnroll = 4;  // 16-byte loads in flight per thread while a tile is copied
};

struct DenseArgs {
  int64_t n_planes, R, C, plane;  // plane = R * C elements
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
  int64_t total;  // elements in the stream
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
  __device__ static __forceinline__ int64_t padded(int64_t byte) { return byte + byte / 128 * kPad; }
};

// Copies elements [e0, e0 + ne) of the stream `in` into `tile`; returns the
// byte offset of element e0 in the unpadded tile. Whole 16-byte vectors are
// loaded where they lie inside the stream, the partial ones at its two ends
// element by element.
template <typename in_t>
__device__ __forceinline__ int64_t copy_tile(const in_t* __restrict__ in, int64_t total, int64_t e0, int64_t ne,
                                             unsigned char* tile) {
  using Layout = DenseTileLayout<in_t>;
  constexpr int U = DensePolicy::kUnroll;
  const uintptr_t lo = reinterpret_cast<uintptr_t>(in);
  const uintptr_t hi = reinterpret_cast<uintptr_t>(in + total);
  const uintptr_t start = reinterpret_cast<uintptr_t>(in + e0);
  const uintptr_t a0 = start & ~uintptr_t(15);
  const uintptr_t a1 = (reinterpret_cast<uintptr_t>(in + e0 + ne) + 15) & ~uintptr_t(15);
  const int64_t nvec = static_cast<int64_t>((a1 - a0) / 16);
  for (int64_t v = threadIdx.x; v < nvec; v += int64_t(U) * blockDim.x) {
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t idx = v + int64_t(u) * blockDim.x;
      const uintptr_t addr = a0 + static_cast<uintptr_t>(idx) * 16;
      if (idx < nvec && addr >= lo && addr + 16 <= hi) r[u] = *reinterpret_cast<const uint4*>(addr);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t idx = v + int64_t(u) * blockDim.x;
      if (idx >= nvec) break;
      const uintptr_t addr = a0 + static_cast<uintptr_t>(idx) * 16;
      unsigned char* dst = tile + Layout::padded(idx * 16);
      if (addr >= lo && addr + 16 <= hi) {
        unsigned* w = reinterpret_cast<unsigned*>(dst);  // 4-byte aligned only (padding)
        w[0] = r[u].x, w[1] = r[u].y, w[2] = r[u].z, w[3] = r[u].w;
      } else {
        for (int b = 0; b < 16; b += static_cast<int>(sizeof(in_t))) {
          if (addr + b >= lo && addr + b + sizeof(in_t) <= hi)
            *reinterpret_cast<in_t*>(dst + b) = *reinterpret_cast<const in_t*>(addr + b);
        }
      }
    }
  }
  return static_cast<int64_t>(start - a0);
}

template <typename in_t>
__device__ __forceinline__ in_t tile_element(const unsigned char* tile, int64_t head, int64_t i) {
  return *reinterpret_cast<const in_t*>(tile + DenseTileLayout<in_t>::padded(head + i * int64_t(sizeof(in_t))));
}

template <class Op, typename in_t, typename out_t>
__global__ void __launch_bounds__(DensePolicy::kThreads)
    gpureduce_dense_tiles(DenseArgs a, const in_t* __restrict__ in, out_t* __restrict__ out) {
  using acc_t = typename Op::acc_type;
  using WideOp = typename Op::wide_op;
  using wide_t = typename WideOp::acc_type;
  __shared__ __align__(16) unsigned char tile[DenseTileLayout<in_t>::kBytes];
  __shared__ __align__(16) unsigned char partials_raw[DensePolicy::kThreads * sizeof(wide_t)];
  wide_t* partials = reinterpret_cast<wide_t*>(partials_raw);

  const int64_t C = a.C;
  const int g = a.group;
  const bool whole_planes = a.planes_per_tile >= 1;
  const bool looped = whole_planes && g == 1;
  const int64_t P = whole_planes ? a.planes_per_tile : 1;
  const int64_t t = threadIdx.x;
  const int64_t c_slot = t % C;
  const int64_t j_slot = (t / C) % g;
  const int64_t p_slot = t / (C * g);

  for (int64_t unit = blockIdx.x; unit < a.n_units; unit += gridDim.x) {
    const int64_t p0 = whole_planes ? unit * P : unit;
    const int64_t np = whole_planes ? (P < a.n_planes - p0 ? P : a.n_planes - p0) : 1;
    wide_t run = WideOp::identity();
    for (int64_t r0 = 0; r0 < a.R; r0 += a.rows_per_tile) {
      const int64_t nr = a.rows_per_tile < a.R - r0 ? a.rows_per_tile : a.R - r0;
      const int64_t e0 = p0 * a.plane + r0 * C;
      const int64_t ne = whole_planes ? np * a.plane : nr * C;
      const int64_t head = copy_tile(in, a.total, e0, ne, tile);
      __syncthreads();
      if (looped) {
        for (int64_t q = t; q < np * C; q += blockDim.x) {
          const int64_t p = q / C, c = q - p * C;
          acc_t acc = Op::identity();
          for (int64_t r = 0; r < nr; ++r) acc = Op::reduce(acc, tile_element<in_t>(tile, head, p * a.plane + r * C + c));
          out[dense_out_offset(a, p0 + p, c)] = Op::template project<out_t>(acc);
        }
      } else if (p_slot < np) {
        acc_t acc = Op::identity();
        for (int64_t r = j_slot; r < nr; r += g)
          acc = Op::reduce(acc, tile_element<in_t>(tile, head, p_slot * nr * C + r * C + c_slot));
        run = WideOp::combine(run, static_cast<wide_t>(acc));
      }
      __syncthreads();  // the tile is free for the next copy
    }
    if (!looped) {
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
        out[dense_out_offset(a, p0 + p_slot, c_slot)] = WideOp::template project<out_t>(acc);
      }
      __syncthreads();  // partials are free for the next unit
    }
  }
}

}  // namespace cuda
}  // namespace gpureduce
