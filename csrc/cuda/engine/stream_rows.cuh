// Stream-rows kernel of the CUDA engine: dense rows that no 16-byte vector
// fits and too short for a vector body per row (under 16 vectors), one per
// output, end to end in memory ([N, w] over w, [B, T, C] over C for small
// C, a sum over the last dims of a contiguous tensor, from any storage
// offset). Read as what they are, one stream: a block copies
// tiles of whole rows into shared memory in 16-byte pieces with cp.async,
// kStages tiles in flight, whatever the rows' width or alignment, and its
// threads then sum the rows from shared memory, a group of lanes per row.
// With kPlanes, a "row" is a dense plane of R rows of C narrow columns (a
// middle dim with a small kept inner dim, [B, R, C] over R) with C outputs,
// a group of lanes per column. Rows of a small element stride s, one per
// output at a pitch of about s times their length ([N, W][:, ::2] over dim
// 1), are such planes of R rows of s columns, of which only the first is
// summed (kept = 1): the tile's copies read every byte, as one-element loads
// would read every sector, but in 16-byte pieces.
//
// The dense tiles (engine/dense.cuh) read such rows through registers, one
// tile in flight per block at 64 registers (four blocks per SM), and ran
// 2000-2400 GB/s on rows of 5 to 33 float32 or bfloat16 elements (H200,
// NOTES.md). The copies here hold no registers while in flight.
//
// Slabs (kSlabs): where an output's rows lie in several such streams, one
// for each index of an outer reduced dim at a constant stride ([A, N, w]
// over (0, 2), [N, C, 7, 7] over (0, 2, 3)), a block walks the same tile of
// every slab in turn and carries its outputs' sums across them in
// registers. (The host takes slabs of rows only, not of planes.)
//
// Segments: where the planes follow one another densely only within a run
// of them along the innermost outer dims (a view that keeps part of an
// outer dim: [N, T, C][:, :t] or [::3] over C), each run is a stream of its
// own, cut into tiles of its own; a tile never spans two.
//
// Tile t of a segment holds its rows [t R, (t + 1) R); its bytes, from the
// 16-byte boundary at or below its first element to the one at or above its
// end, fit kTileBytes (R is chosen so). The order of every add is fixed by the shape,
// so results are bitwise reproducible.
#pragma once

#include "common.cuh"

namespace gpureduce {
namespace cuda {

template <int kThreads_, int kTileBytes_, int kStages_, int kMinBlocksPerSm_>
struct StreamRowsPolicy {
  static constexpr int kThreads = kThreads_;
  static constexpr int kTileBytes = kTileBytes_;
  // The bytes of whole planes a tile holds: a tile's planes start and end
  // anywhere within their 16-byte vectors, so that 32 bytes of it may be
  // neighbours' (launch_stream_tiles_with).
  static constexpr int kPlaneBytes = kTileBytes - 32;
  static constexpr int kStages = kStages_;
  static constexpr int kVecPerThread = kTileBytes / 16 / kThreads;
  // Bound by shared memory: kStages tiles a block.
  static constexpr int kMinBlocksPerSm = kMinBlocksPerSm_;
};
// Two tile sizes, chosen per pass on the host (launch_stream_rows). A/B on
// the H200 over 117 passes of 256 KB to 1 GB (NOTES.md, session 27): tiles
// of 16 KB, three in flight, read rows of 32 bytes or more of large inputs
// faster ([986895, 17] float32 over dim 1 4.33x -> 5.02x of torch.sum,
// [1016800, 33] bfloat16 8.47x -> 9.00x); tiles of 8 KB, four in flight,
// narrower rows ([5592405, 3] float32 2.41x against 2.27x, [2796202, 12]
// bfloat16 5.36x against 5.18x) and inputs of a few MB, which they split
// into twice the blocks ([46, 394, 26] float32 1.52x against 1.44x).
using StreamRowsNarrowPolicy = StreamRowsPolicy<256, 8192, 4, 6>;
using StreamRowsWidePolicy = StreamRowsPolicy<256, 16384, 3, 4>;

struct StreamRowsArgs {
  int64_t n_rows;  // rows (planes with kPlanes), one output each (C each)
  int64_t n_tiles;
  OuterIndexer outer;  // row (plane) -> output offset
  int rows_per_tile;
  unsigned tile_bytes;       // rows_per_tile rows
  unsigned last_tile_bytes;  // the last tile's rows
  int group_shift;           // lanes per output: 1 << group_shift (1 to 32)
  int slot_rounds;           // ceil(outputs of a tile << group_shift, kThreads)
  // A row's elements (R, C = 1); with kPlanes, a plane's R rows of C
  // columns, of which the first `kept` are outputs (C, or 1 for rows of
  // element stride C), out_col_stride apart, and `plane` elements from one
  // plane's start to the next's (R * C, or fewer for strided rows: see
  // DenseArgs::kept).
  int R, C, kept, plane;
  int64_t out_col_stride;
  // The streams of an output's elements (1 but for slabs), slab_bytes apart.
  int n_slabs;
  int64_t slab_bytes;
  // Segments: planes that follow densely only seg_planes at a time (a kept
  // outer dim of a view, [N, T, C][:, :t] over C): each segment of
  // seg_planes is a stream of its own, at the input offset of its first
  // plane (outer), cut into seg_tiles tiles, its last one last_tile_bytes.
  // One segment (seg_planes = n_rows) but for such passes; not with slabs.
  int64_t seg_planes, seg_tiles;
  Projection projection;  // ReducePass::projection
  // Launched as a programmatic dependent (launch_engine_kernel): whether the
  // next kernel may be scheduled from this grid's start (a grid of one wave).
  int early_trigger = 0;
  // One lane an output (group_shift 0), one output dim, the identity
  // projection, no slabs, and at most HostPolicy::kStreamDirectMaxElements
  // elements an output: reduce_tile's direct loop.
  bool direct_rounds = false;
  // A warp's groups of lanes take outputs 1 << spread_shift apart, not
  // consecutive ones (spread_slot), where the host's model of the tile's
  // shared-memory banks (stream_read_spread_shift) says that reads fewer
  // wavefronts.
  int spread_shift = 0;
};

// The most rounds of a tile's outputs a thread carries across slabs.
constexpr int kMaxSlabRounds = 4;

__device__ __forceinline__ void copy_16_async(unsigned smem, const void* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem) : "memory");
#else
  *reinterpret_cast<uint4*>(__cvta_shared_to_generic(smem)) = *reinterpret_cast<const uint4*>(gmem);
#endif
}

__device__ __forceinline__ void commit_async_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most `kPending` of this thread's committed groups are
// still in flight.
template <int kPending>
__device__ __forceinline__ void wait_async_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

// Where tile k lies: its segment's stream and first plane, and its index
// in the segment.
template <typename in_t>
struct StreamTile {
  const unsigned char* stream;  // the segment's first element
  int64_t first_plane;          // the segment's first plane
  int64_t t;                    // the tile's index in the segment
  __device__ __forceinline__ StreamTile(const StreamRowsArgs& a, const in_t* in, int64_t k) {
    stream = reinterpret_cast<const unsigned char*>(in);
    first_plane = 0;
    t = k;
    if (a.seg_tiles != a.n_tiles) {
      const int64_t seg = k / a.seg_tiles;
      t = k - seg * a.seg_tiles;
      first_plane = seg * a.seg_planes;
      int64_t in_off, out_off;
      a.outer.offsets(first_plane, in_off, out_off);
      stream += in_off * int64_t(sizeof(in_t));
    }
  }
  __device__ __forceinline__ bool last(const StreamRowsArgs& a) const { return t == a.seg_tiles - 1; }
  __device__ __forceinline__ const unsigned char* start(const StreamRowsArgs& a) const {
    return stream + static_cast<uintptr_t>(t) * a.tile_bytes;
  }
};

// Issues this thread's copies of tile `k` (if it exists) into `buf`. A tile
// whose 16-byte pieces all lie inside the stream copies them asynchronously;
// one whose first or last piece reaches outside it (the first tile, the
// last, and the one before a last tile of under 16 bytes) loads such a piece
// element by element, only the tile's own elements, zero-filled around them.
// Offsets inside a tile are 32-bit.
template <class P, typename in_t>
__device__ __forceinline__ void issue_stream_tile(const StreamRowsArgs& a, const in_t* __restrict__ in, int64_t k,
                                                  unsigned buf) {
  if (k >= a.n_tiles) return;
  const StreamTile<in_t> tile(a, in, k);
  const uintptr_t start = reinterpret_cast<uintptr_t>(tile.start(a));
  const unsigned bytes = tile.last(a) ? a.last_tile_bytes : a.tile_bytes;
  const uintptr_t a0 = start & ~uintptr_t(15);
  const uintptr_t end16 = (start + bytes + 15) & ~uintptr_t(15);
  const unsigned nvec = static_cast<unsigned>(end16 - a0) / 16;
  // The segment's (the stream's) first and end bytes.
  const uintptr_t lo = reinterpret_cast<uintptr_t>(tile.stream);
  const uintptr_t hi = lo + static_cast<uintptr_t>(a.seg_tiles - 1) * a.tile_bytes + a.last_tile_bytes;
  if (a0 >= lo && end16 <= hi) {
#pragma unroll
    for (int u = 0; u < P::kVecPerThread; ++u) {
      const unsigned idx = threadIdx.x + u * P::kThreads;
      if (idx < nvec) copy_16_async(buf + idx * 16, reinterpret_cast<const void*>(a0 + idx * 16));
    }
    return;
  }
  // The first and last tiles only: a rolled loop, which ptxas compiles in a
  // fraction of the unrolled one's time. (Its elements stay unrolled: a
  // rolled loop over them put each piece in local memory.)
#pragma unroll 1
  for (int u = 0; u < P::kVecPerThread; ++u) {
    const unsigned idx = threadIdx.x + u * P::kThreads;
    if (idx >= nvec) break;
    const uintptr_t addr = a0 + idx * 16;
    if (addr >= start && addr + 16 <= start + bytes) {
      copy_16_async(buf + idx * 16, reinterpret_cast<const void*>(addr));
    } else {
      uint4 part = make_uint4(0, 0, 0, 0);
      for (int e = 0; e < int(16 / sizeof(in_t)); ++e) {
        const uintptr_t ea = addr + e * sizeof(in_t);
        if (ea >= start && ea < start + bytes) reinterpret_cast<in_t*>(&part)[e] = *reinterpret_cast<const in_t*>(ea);
      }
      *reinterpret_cast<uint4*>(__cvta_shared_to_generic(buf + idx * 16)) = part;
    }
  }
}

// The output that slot s of a round sums, where a warp's W = 32 >> kShift
// groups take outputs M = 2^m apart: within each run of W M slots (M warps'
// groups), group g of the run's warp w takes output g M + w. The rows that
// consecutive groups would read lie a pitch P apart, and where P is near a
// multiple of 128 bytes they fall on the same banks (bfloat16 rows of 127
// elements, P = 254, 8 groups of 4 lanes a warp: 79% of the tile's
// shared-memory wavefronts were conflicts, H200, ncu); rows M P apart fall
// on others. A bijection of each run (M divides the block's warps), and
// each output keeps its lanes and order of adds: the same bits for any M.
template <int kShift>
__device__ __forceinline__ int spread_slot(int s, int m) {
  constexpr int kWShift = 5 - kShift;
  const int run = kWShift + m;
  return ((s >> run) << run) | ((s & ((1 << kWShift) - 1)) << m) | ((s >> kWShift) & ((1 << m) - 1));
}

// Sums the rows of a tile (rows r0, r0 + 1, ..., nr of them) into their
// outputs, a group of 2^kShift lanes per output: slot t + kThreads j is lane
// t % group of output q = spread_slot((t + kThreads j) / group), and a lane reads
// elements lane, lane + group, ... of its row. With kPlanes, output q is
// column q % kept of the tile's plane q / kept, and a lane reads that
// column's rows lane, lane + group, ... The group is a template argument so that a
// lane's unrolled loads of a row take immediate offsets. The rounds are
// uniform across the block, so that every lane of a group reaches the
// shuffles.
//
// With kSlabs, round j's sums are combined into carry[j] (the slabs before
// this one; first: none), and stored only from the last slab. The rounds'
// loop is unrolled so that carry stays in registers (the host keeps
// slot_rounds <= kMaxSlabRounds).
template <class Op, typename in_t, typename out_t, class P, bool kPlanes, bool kSlabs, int kShift>
__device__ __forceinline__ void reduce_tile(const StreamRowsArgs& a, const unsigned char* tile, int64_t r0, int nr,
                                            Outputs<out_t> out, typename Op::acc_type (&carry)[kMaxSlabRounds],
                                            bool first, bool last) {
  using acc_t = typename Op::acc_type;
  constexpr int G = 1 << kShift;
  constexpr unsigned E = sizeof(in_t);
  const int C = kPlanes ? a.C : 1;
  const int lane = threadIdx.x & (G - 1);
  const int mine = a.R > lane ? (a.R - lane + G - 1) >> kShift : 0;
  const unsigned step = static_cast<unsigned>(G * C) * E;
  // One lane an output (kShift 0), stored along one dim with nothing to
  // project: a loop over this thread's outputs with none of a round's
  // per-output branches (the output's indexer, the projection's divisor and
  // root), which cost more than the loads in rows of a few elements: a
  // round issued about 57 instructions a thread an output in rows of 2
  // bfloat16 (H200, ncu: 38.5M instructions a pass, 76% of issue slots).
  // The same outputs, the same loads and adds in the same order.
  if constexpr (!kSlabs && kShift == 0) {
    if (a.direct_rounds) {
      const int64_t os = a.outer.out_strides[0];
      const int kept = kPlanes ? a.kept : 1;
      const int R = a.R;
      // Output q = t + kThreads j is plane q / kept, column q % kept: both
      // advanced by kThreads outputs a round with no division.
      int pl = kPlanes ? static_cast<int>(threadIdx.x) / kept : static_cast<int>(threadIdx.x);
      int c = kPlanes ? static_cast<int>(threadIdx.x) - pl * kept : 0;
      const int dpl = kPlanes ? P::kThreads / kept : P::kThreads;
      const int dc = kPlanes ? P::kThreads - dpl * kept : 0;
      while (pl < nr) {
        const int first = kPlanes ? pl * a.plane + c : pl * R;
        const unsigned char* p = tile + static_cast<unsigned>(first) * E;
        acc_t acc = Op::identity();
#pragma unroll 4
        for (int i = 0; i < R; ++i) acc = Op::reduce(acc, *reinterpret_cast<const in_t*>(p + i * step));
        int64_t off = (r0 + pl) * os;
        if constexpr (kPlanes) off += c * a.out_col_stride;
        out.template store<Op>(off, acc, Projection{});
        c += dc;
        pl += dpl;
        if (kPlanes && c >= kept) c -= kept, ++pl;
      }
      return;
    }
  }
  auto round = [&](int j, acc_t* carried) {
    const int q = spread_slot<kShift>((static_cast<int>(threadIdx.x) + j * P::kThreads) >> kShift, a.spread_shift);
    const int kept = kPlanes ? a.kept : 1;
    const int pl = kPlanes ? q / kept : q;
    const int c = q - pl * kept;
    acc_t acc = Op::identity();
    if (pl < nr) {
      const int first = kPlanes ? pl * a.plane + lane * C + c : pl * a.R + lane;
      const unsigned char* p = tile + static_cast<unsigned>(first) * E;
#pragma unroll 4
      for (int i = 0; i < mine; ++i) acc = Op::reduce(acc, *reinterpret_cast<const in_t*>(p + i * step));
    }
    if constexpr (G > 1) acc = group_reduce<Op>(acc, G);
    if (carried != nullptr) {
      if (!first) acc = Op::combine(*carried, acc);
      *carried = acc;
      if (!last) return;
    }
    if (lane == 0 && pl < nr) {
      const int64_t o = r0 + pl;
      int64_t off;
      if (a.outer.ndim == 1) {
        off = o * a.outer.out_strides[0];
      } else {
        int64_t in_off;
        a.outer.offsets(o, in_off, off);
      }
      if constexpr (kPlanes) off += c * a.out_col_stride;
      out.template store<Op>(off, acc, a.projection);
    }
  };
  if constexpr (kSlabs) {
#pragma unroll
    for (int j = 0; j < kMaxSlabRounds; ++j)
      if (j < a.slot_rounds) round(j, &carry[j]);
  } else {
    for (int j = 0; j < a.slot_rounds; ++j) round(j, nullptr);
  }
}

// The stream of slab s (kSlabs) or the only one.
template <bool kSlabs, typename in_t>
__device__ __forceinline__ const in_t* slab_stream(const StreamRowsArgs& a, const in_t* in, int s) {
  if constexpr (!kSlabs) return in;
  return reinterpret_cast<const in_t*>(reinterpret_cast<const unsigned char*>(in) + s * a.slab_bytes);
}

template <class Op, typename in_t, typename out_t, class P, bool kPlanes, bool kSlabs>
__global__ void __launch_bounds__(P::kThreads, P::kMinBlocksPerSm)
    gpureduce_stream_rows(StreamRowsArgs a, const in_t* __restrict__ in, Outputs<out_t> out) {
  start_as_dependent(a.early_trigger);
  using acc_t = typename Op::acc_type;
  constexpr int S = P::kStages;
  __shared__ __align__(16) unsigned char tiles[S][P::kTileBytes];
  const unsigned smem0 = static_cast<unsigned>(__cvta_generic_to_shared(tiles[0]));
  const int64_t step = gridDim.x;
  const int n_slabs = kSlabs ? a.n_slabs : 1;
  // A block's tiles in order: its row tiles k = blockIdx.x, + gridDim.x, ...,
  // and of each the slabs 0, 1, ... (one without slabs). `next` is the
  // position of the copies issued last, `k, s` that of the tile summed.
  auto advance = [&](int64_t& k, int& s) {
    if (++s == n_slabs) s = 0, k += step;
  };
  int64_t next_k = blockIdx.x;
  int next_s = 0;
  // The first S - 1 tiles in flight; every thread commits a group per tile
  // slot, empty or not, so that wait_async_copies counts the same for all.
#pragma unroll
  for (int b = 0; b < S - 1; ++b) {
    issue_stream_tile<P>(a, slab_stream<kSlabs>(a, in, next_s), next_k, smem0 + b * P::kTileBytes);
    commit_async_copies();
    advance(next_k, next_s);
  }
  acc_t carry[kMaxSlabRounds];
  int buf = 0;
  int64_t k = blockIdx.x;
  int s = 0;
  while (k < a.n_tiles) {
    wait_async_copies<S - 2>();
    // Tile (k, s) is in shared memory for every thread, and every thread is
    // done with the buffer the next copies go to (it held the tile before).
    __syncthreads();
    issue_stream_tile<P>(a, slab_stream<kSlabs>(a, in, next_s), next_k,
                         smem0 + (buf == 0 ? S - 1 : buf - 1) * P::kTileBytes);
    commit_async_copies();
    advance(next_k, next_s);
    const StreamTile<in_t> at(a, slab_stream<kSlabs>(a, in, s), k);
    const int64_t r0 = at.first_plane + at.t * a.rows_per_tile;
    const int nr = at.last(a) ? static_cast<int>(at.first_plane + a.seg_planes - r0) : a.rows_per_tile;
    const unsigned char* tile = tiles[buf] + (reinterpret_cast<uintptr_t>(at.start(a)) & 15);
    const bool first = s == 0, last = s == n_slabs - 1;
    switch (a.group_shift) {
      case 0: reduce_tile<Op, in_t, out_t, P, kPlanes, kSlabs, 0>(a, tile, r0, nr, out, carry, first, last); break;
      case 1: reduce_tile<Op, in_t, out_t, P, kPlanes, kSlabs, 1>(a, tile, r0, nr, out, carry, first, last); break;
      case 2: reduce_tile<Op, in_t, out_t, P, kPlanes, kSlabs, 2>(a, tile, r0, nr, out, carry, first, last); break;
      case 3: reduce_tile<Op, in_t, out_t, P, kPlanes, kSlabs, 3>(a, tile, r0, nr, out, carry, first, last); break;
      case 4: reduce_tile<Op, in_t, out_t, P, kPlanes, kSlabs, 4>(a, tile, r0, nr, out, carry, first, last); break;
      default: reduce_tile<Op, in_t, out_t, P, kPlanes, kSlabs, 5>(a, tile, r0, nr, out, carry, first, last); break;
    }
    advance(k, s);
    buf = buf == S - 1 ? 0 : buf + 1;
  }
  wait_async_copies<0>();
}

}  // namespace cuda
}  // namespace gpureduce
