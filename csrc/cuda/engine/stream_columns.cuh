// Stream-columns kernel of the CUDA engine: dense planes of R rows of C
// narrow columns (a middle dim reduced, a kept inner dim of a few elements,
// [B, R, C] over R), read as one stream of 16-byte vectors. The planes
// follow each other in memory, or lie where the outer dims put them
// (scattered: [A, B, R, C][:, ::2] over R), each then a stream of its own.
//
// No vector fits such columns when C is not a multiple of a vector's VE
// elements, so the columns kernel reads them an element per load, and the
// dense tiles pay an index computation and a shared-memory load per element.
// Here the T threads given a plane read its aligned vectors T apart, with
// T a multiple of P = C / gcd(C, VE): T vectors are then a whole number of
// rows, and lane j of every vector a thread reads holds the same column.
// Each thread keeps one partial per lane; threads P apart hold the same
// columns and are combined by a tree in shared memory; the P * VE lane sums
// left (lcm(C, VE) of them) fold into the C columns; the partial vectors at
// the range's two ends are added element by element. Every combine has a
// fixed order, so results are bitwise reproducible. Planes too small for a
// block's threads share a block, a group of threads each; a plane split
// across blocks writes a partial per column and block, which
// gpureduce_finish_partials, launched after it as a programmatic dependent,
// combines in a fixed order.
//
// Against the columns kernel's element loads and the dense tiles (H200,
// NOTES.md session 12): [4440, 9807, 11] float16 over dim 1 538 -> 251 us
// (torch.sum 395), [2, 26843545, 5] bfloat16 466 -> 135 (277), [248901,
// 246, 7] bfloat16 565 -> 275 (438).
#pragma once

#include "common.cuh"

namespace gpureduce {
namespace cuda {

template <typename acc_t>
struct StreamColumnsArgs {
  OuterIndexer outer;  // plane -> output offset
  int64_t out_col_stride;
  int64_t n_planes, R, C, plane;  // plane = R * C elements
  int64_t rows_per_split;
  int split;
  int period;         // P: threads this far apart read the same columns
  int group_threads;  // threads per plane (a multiple of P); a block holds blockDim.x / group_threads planes
  int phase;          // elements from the 16-byte boundary at or below the input to it
  acc_t* partials;  // [n_planes * C][split]
  Projection projection;  // ReducePass::projection
  // Planes at the outer dims' input strides rather than each right after
  // the one before (DenseArgs::scattered).
  bool scattered;
  // Launched as a programmatic dependent (launch_engine_kernel): whether the
  // next kernel may be scheduled from this grid's start (a grid of one wave).
  int early_trigger = 0;
  // A split plane's blocks are one cluster (blockIdx.y its rank), the first
  // combining the others' column sums from their shared memory: no partials
  // in global memory, no second launch (launch_stream_columns says where).
  int cluster_finish = 0;
};

// The element offset of plane p's first element.
template <typename acc_t>
__device__ __forceinline__ int64_t stream_columns_plane_start(const StreamColumnsArgs<acc_t>& a, int64_t p) {
  if (!a.scattered) return p * a.plane;
  int64_t in_off, out_off;
  a.outer.offsets(p, in_off, out_off);
  return in_off;
}

struct StreamColumnsPolicy {
  static constexpr int kMaxThreads = 512;
  static constexpr int kUnroll = 4;
  // At most this many columns, so that a block's P * VE lane sums (P <= C)
  // fit its scratch (kMaxThreads / 2 slots a lane) and its threads (at
  // least C) fit a block. Up to 64 before: wider columns no vector fits
  // took the columns kernel's element loads, at 0.72-0.98x of torch.sum
  // where they run at 1.5-2x here ([2, 543744, 203] bfloat16 over dim 1
  // 237 -> 106 us, torch.sum 175; H200, NOTES.md session 23).
  static constexpr int kMaxColumns = 256;
  // A plane gives each of its threads about this many vectors (fewer
  // threads for smaller planes, down to P or C): 16 against 8 on the H200,
  // 64 MB of planes of 32-128 KB 26.5 -> 24.5 us.
  static constexpr int kVecsPerThread = 16;
  // Planes that at kVecsPerThread would give the GPU fewer than
  // kFewPlanesWarpsPerSm warps an SM give each thread kFewPlanesVecsPerThread
  // vectors instead (more threads a plane, up to kMaxThreads). A/B on the
  // H200 (NOTES.md, session 61): at 8 warps and 4 vectors, the 132 planes of
  // [132, 364, 45] float16 over dim 1 (4 MB) 0.84x -> 1.00x of torch.sum,
  // [132, 3276, 5] bfloat16 3.93x -> 4.69x; 16 planes (split along their
  // rows) held; 10 vectors for passes that fill the GPU lost ([1000, 3276,
  // 5] float16 2.33x -> 1.83x). Session 62, 423 passes: 16 warps and 8
  // vectors against 8 and 4 gained 6-9% on passes of 200-341 planes
  // ([341, 364, 45] float16 0.88x -> 0.97x), lost 6-12% on four still over
  // 1.2x ([100, 3276, 5] float16 4.95x -> 4.43x); below 0.97x 32 -> 30.
  // 32 warps lost up to 25% on 500-1000 planes.
  static constexpr int kFewPlanesWarpsPerSm = 16;
  static constexpr int kFewPlanesVecsPerThread = 8;
  // A plane must give each of its P threads of distinct columns at least
  // this many vectors: planes of fewer rows (R * gcd(C, VE) < 4 VE) spend
  // more on the block's tree and ends than on their loads, and read faster
  // through the dense tiles. A/B on the H200 over 130 made 16-bit [B, R, C]
  // passes of 512-byte to 40 KB planes (NOTES.md session 23): 23 faster by
  // over 5%, none slower, below 0.97x of torch.sum 23 -> 13 ([47123, 8,
  // 45] bfloat16 over dim 1 53.5 -> 20.3 us); 6 and 8 lost planes of 32-56
  // rows ([15972, 38, 123] bfloat16 59.5 -> 92.8 us, torch.sum 60.7).
  static constexpr int kMinVecsPerPeriodThread = 4;
  // Scattered planes (DenseArgs::scattered) need twice as many to read faster
  // here than through the columns kernel (HostPolicy::kStreamColumnsScatteredMinBytes).
  static constexpr int kScatteredMinVecsPerPeriodThread = 8;
  // Few planes are split along their rows into blocks of at least this many
  // vectors a thread, and only into kMinSplit blocks or more: the finish
  // costs more than a split of two or three gains (measured with the
  // last-block ticket this kernel had until session 23; H200:
  // [240, 3, 128, 128] channels_last bfloat16 over (2, 3) 10.2 us unsplit,
  // 14.5 split in two, torch.sum 28.9), while 8 against 16 gained 3% over
  // 231 passes of 2 to 64 MB of 1 to 100 planes ([4, 36776, 7] float32 over
  // dim 1 11.2 -> 9.9 us).
  static constexpr int kSplitVecsPerThread = 8;
  static constexpr int kMinSplit = 4;
  // Blocks of several planes have at least this many threads
  // (stream_columns_planes_a_block): a plane a block lost where planes
  // took 33 and 45 threads ([3000, 100, 33] float16 over dim 1 1.13x ->
  // 0.94x of torch.sum, [1800, 636, 9] bfloat16 1.16x -> 1.08x; H200,
  // NOTES.md session 69).
  static constexpr int kMinBlockThreads = 128;
};

static_assert(StreamColumnsPolicy::kMaxColumns <= StreamColumnsPolicy::kMaxThreads / 2,
              "a block's lane sums must fit its scratch");

// Shared memory for the tree over threads of one class: after its first
// level, at most half the block's threads write VE partials each.
template <typename in_t, typename acc_t>
constexpr int stream_columns_scratch_bytes() {
  return StreamColumnsPolicy::kMaxThreads / 2 * (16 / int(sizeof(in_t))) * int(sizeof(acc_t));
}

// Folds the J values of threads x + y * P, 0 <= y < ny, into thread x (y ==
// 0), in a fixed order: the rows from the largest power of two below ny
// first, then by halving; each level writes at most ny * P / 2 slots of
// scratch ([J][kMaxThreads / 2], from slot_base). Every thread of the block
// calls it; those with y >= ny take no part.
template <class Op, int J, typename acc_t>
__device__ __forceinline__ void fold_period_rows(acc_t (&v)[J], int x, int y, int ny, int P, acc_t* scratch,
                                                 int slot_base = 0) {
  constexpr int kSlots = StreamColumnsPolicy::kMaxThreads / 2;
  int h = 1;
  while (h * 2 < ny) h *= 2;
  for (int top = ny; top > 1; top = h, h /= 2) {
    // rows [h, top) fold into rows [0, top - h)
    if (y >= h && y < top) {
      const int slot = slot_base + (y - h) * P + x;
#pragma unroll
      for (int j = 0; j < J; ++j) scratch[j * kSlots + slot] = v[j];
    }
    __syncthreads();
    if (y < top - h) {
      const int slot = slot_base + y * P + x;
#pragma unroll
      for (int j = 0; j < J; ++j) v[j] = Op::combine(v[j], scratch[j * kSlots + slot]);
    }
    __syncthreads();
  }
}

// Where a thread's walk lies. A block reads blockDim.x / T planes (T =
// group_threads), a group of T threads each, or, split (then one group),
// rows of one plane: elements [e0, e1) of the input, vector w holding
// elements w * VE - phase and the VE - 1 after it (16-byte aligned).
template <int VE>
struct StreamRange {
  int gi, s;
  int64_t p, base, e0, e1, w_first, w_end;
  bool live;
  template <typename acc_t>
  __device__ __forceinline__ explicit StreamRange(const StreamColumnsArgs<acc_t>& a) {
    const int T = a.group_threads;
    gi = threadIdx.x / T;
    s = threadIdx.x % T;
    p = static_cast<int64_t>(blockIdx.x) * (blockDim.x / T) + gi;
    live = p < a.n_planes;
    const int64_t r0 = static_cast<int64_t>(blockIdx.y) * a.rows_per_split;
    const int64_t r1 = r0 + a.rows_per_split < a.R ? r0 + a.rows_per_split : a.R;
    base = live ? stream_columns_plane_start(a, p) : 0;
    e0 = live ? base + r0 * a.C : 0;
    e1 = live ? base + r1 * a.C : 0;
    w_first = (e0 + a.phase + VE - 1) / VE;  // the first whole vector
    w_end = (e1 + a.phase) / VE;             // past the last whole one
    if (w_end < w_first) w_end = w_first;
  }
};

template <class Op, typename in_t, typename out_t>
__global__ void __launch_bounds__(StreamColumnsPolicy::kMaxThreads, 3)
    gpureduce_stream_columns(StreamColumnsArgs<typename Op::acc_type> a, const in_t* __restrict__ in,
                             Outputs<out_t> out) {
  start_as_dependent(a.early_trigger);
  using acc_t = typename Op::acc_type;
  using walk_t = typename Op::template walk_type<in_t>;
  constexpr int VE = 16 / int(sizeof(in_t));
  constexpr int U = StreamColumnsPolicy::kUnroll;
  const int T = a.group_threads;
  const int64_t C = a.C;
  const in_t* aligned = in - a.phase;
  walk_t walk[VE];
#pragma unroll
  for (int j = 0; j < VE; ++j) walk[j] = Op::template walk_start<in_t>();
  {
    const StreamRange<VE> r(a);
    const in_t* ptr = aligned + (r.w_first + r.s) * VE;
    const in_t* const end = aligned + r.w_end * VE;
    const int64_t step = int64_t(T) * VE;
    for (; ptr + (U - 1) * step < end; ptr += U * step) {
      alignas(16) in_t v[U][VE];
#pragma unroll
      for (int u = 0; u < U; ++u) load_vec<VE>(ptr + u * step, v[u]);
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < VE; ++j) walk[j] = Op::walk(walk[j], v[u][j]);
    }
    for (; ptr < end; ptr += step) {
      alignas(16) in_t v[VE];
      load_vec<VE>(ptr, v);
#pragma unroll
      for (int j = 0; j < VE; ++j) walk[j] = Op::walk(walk[j], v[j]);
    }
  }
  acc_t acc[VE];
#pragma unroll
  for (int j = 0; j < VE; ++j) acc[j] = static_cast<acc_t>(walk[j]);

  // Recomputed rather than kept through the walk (registers).
  const StreamRange<VE> r(a);
  const int gi = r.gi, s = r.s;
  const int64_t p = r.p, base = r.base, e0 = r.e0, e1 = r.e1, w_first = r.w_first, w_end = r.w_end;
  const bool live = r.live;
  // Threads x + y * P (same x) hold the same columns.
  __shared__ __align__(16) unsigned char scratch_raw[stream_columns_scratch_bytes<in_t, acc_t>()];
  acc_t* scratch = reinterpret_cast<acc_t*>(scratch_raw);
  const int P = a.period;
  const int x = s % P, y = s / P;
  fold_period_rows<Op>(acc, x, y, T / P, P, scratch, gi * (T / 2));
  // The P * VE lane sums of each group, in order q = x * VE + j; q holds
  // column (c00 + q) % C (the host keeps groups * P * VE within scratch).
  acc_t* lanes = scratch + gi * P * VE;
  if (y == 0) {
#pragma unroll
    for (int j = 0; j < VE; ++j) lanes[x * VE + j] = acc[j];
  }
  __syncthreads();
  const bool writer = live && s < C;
  acc_t col = Op::identity();
  if (writer) {
    // Columns count from the plane's start (a multiple of C from the
    // input's where planes follow densely, anywhere where they scatter).
    const int64_t c00 = (w_first * VE - a.phase - base) % C;
    const int L = P * VE;
    for (int q = static_cast<int>((s - c00 + C) % C); q < L; q += static_cast<int>(C))
      col = Op::combine(col, lanes[q]);
    // The elements of the partial vectors at the two ends, one by one.
    const int64_t head_end = w_first * VE - a.phase < e1 ? w_first * VE - a.phase : e1;
    const int64_t tail_begin = w_end * VE - a.phase > head_end ? w_end * VE - a.phase : head_end;
    for (int64_t i = e0 + s; i < head_end; i += C) col = Op::reduce(col, in[i]);
    for (int64_t i = tail_begin + (s - (tail_begin - base) % C + C) % C; i < e1; i += C) col = Op::reduce(col, in[i]);
  }
  if (a.split == 1) {
    int64_t in_off, out_off;
    a.outer.offsets(live ? p : 0, in_off, out_off);
    if (writer) out.template store<Op>(out_off + s * a.out_col_stride, col, a.projection);
    return;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (a.cluster_finish) {
    // The barrier: other threads may still read the lane sums in scratch.
    __syncthreads();
    if (writer) scratch[s] = col;
    cluster_sync();
    if (cluster_block_rank() == 0 && writer) {
      acc_t total = Op::identity();
      for (int k = 0; k < a.split; ++k) total = Op::combine(total, cluster_shared(scratch, k)[s]);
      int64_t in_off, out_off;
      a.outer.offsets(p, in_off, out_off);
      out.template store<Op>(out_off + s * a.out_col_stride, total, a.projection);
    }
    cluster_sync();  // every block's shared memory stays until the first block has read it
    return;
  }
#endif
  // Split: the column's partial, for gpureduce_finish_partials.
  if (writer) a.partials[(p * C + s) * a.split + blockIdx.y] = col;
  allow_next_grid();  // the finish kernel, our own dependent
}

}  // namespace cuda
}  // namespace gpureduce
