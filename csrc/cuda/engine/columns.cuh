// Columns kernel of the CUDA engine: outputs are adjacent in memory; each
// thread owns a vector of adjacent outputs and walks the reduced rows. A
// columns pass split along its rows is finished either inside a thread-block
// cluster (splits of up to kMaxClusterSplit blocks: the tile's blocks are one
// cluster, and its first block combines the others' partials from their
// shared memory) or by the last block of each tile to arrive (an atomic
// ticket on a zeroed counter). Both combine in a fixed order.
#pragma once

#include "common.cuh"

namespace gpureduce {
namespace cuda {

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
  // A row thread's step from row r to r + blockDim.y (set with the block):
  // row_step_inner rows along the inner reduced dim (blockDim.y % n_reduce)
  // and row_step elements of input, then row_carry elements more where the
  // inner index passes n_reduce.
  int64_t row_step_inner, row_step, row_carry;
  // Vectors of V columns per outer index. A thread's vector starts at column
  // cv * V - col_shift: with a shift, the columns are read as an aligned
  // body of whole vectors from the first 16-byte boundary, and the vectors
  // that overhang the first or last column (the edges) read only the
  // columns they hold (ragged columns, see launch_columns).
  int64_t vec_cols;
  int64_t col_shift;
  int64_t x_tiles;        // column tiles per outer index
  // Outer indices per block (blockDim.x = outer_group * vec_cols): for
  // outputs with few columns, so that a block's threads are not idle along
  // short rows; then x_tiles == 1 and a tile is outer_group outer indices.
  int64_t outer_group;
  int64_t rows_per_split;
  int split;
  // The split blocks of a tile are one cluster (blockIdx.y is the rank),
  // finished through distributed shared memory; else through partials and
  // counters.
  int cluster_finish;
  acc_t* partials;     // [split][n_outer * vec_cols * V]
  unsigned* counters;  // [n_outer * x_tiles]
  Projection projection;  // ReducePass::projection
  // Launched as a programmatic dependent (launch_engine_kernel): whether the
  // next kernel may be scheduled from this grid's start (a grid of one wave).
  int early_trigger = 0;
};

// Shared memory of a columns block, in slots of V accumulators: a slot per
// thread of the block where that stays within 32 KB (all but byte inputs),
// else kColumnSlots. The halving tree takes them all (one barrier a level
// with a slot per thread, two with kColumnSlots); the cluster finish one per
// thread along x, so blocks up to column_scratch_slots wide can take it.
constexpr int kColumnSlots = EnginePolicy::kThreads / 2;
template <int V, typename acc_t>
constexpr int column_scratch_slots() {
  return EnginePolicy::kThreads * V * sizeof(acc_t) <= 32768 ? EnginePolicy::kThreads : kColumnSlots;
}

// Where a columns thread finds its rows r, r + by, r + 2 by, ... (by =
// blockDim.y): next() gives the current row and steps to the thread's next.
// One reduced dim: a pointer stepped by by * reduce_stride. Recomputing
// row * reduce_stride for each load took about ten instructions a load (a
// 64-bit multiply, the pointer's shift and add, and a branch on
// n_reduce_outer that the compiler left inside the loop): more than the load
// itself when it reads one 2-byte element.
template <typename in_t>
struct SteppedRows {
  const in_t* p;
  int64_t step;
  __device__ __forceinline__ const in_t* next() {
    const in_t* row = p;
    p += step;
    return row;
  }
};
// Two reduced dims: the pointer and the row's index along the inner reduced
// dim, carried into the outer one where it passes n_reduce. Finding each
// row's offset from its index instead took a 64-bit division by n_reduce (a
// multiply-high by its inverse) and two multiplies a row.
template <typename in_t, typename acc_t>
struct CarriedRows {
  const ColumnsArgs<acc_t>& a;
  const in_t* p;
  int64_t inner;
  __device__ __forceinline__ const in_t* next() {
    const in_t* row = p;
    p += a.row_step;
    inner += a.row_step_inner;
    if (inner >= a.n_reduce) {
      inner -= a.n_reduce;
      p += a.row_carry;
    }
    return row;
  }
};

// Adds a thread's n rows (of V columns) into walk[], U loads in flight, in
// an order fixed by the shape: each unrolled loop's rows last to first,
// then the last rows (fewer than U) first to last. In row order ptxas put
// each load's adds before the next load to save registers (sm_90, CUDA 13.0:
// one to three of the four loads in flight for float32 vectors of four at
// 40 registers, and for 16-bit singles summed in double); with the loop's
// first add waiting on its last load it kept every load first, save for
// float32 vectors of four over two reduced dims (one in flight), where it
// moved the loads themselves. Check the SASS after changing the walk.
// How a columns thread loads the V columns of a row. A whole vector: one
// aligned load. An edge vector (its columns lo to hi - 1 inside the row):
// each lane loads its own column, the lanes outside load the nearest inside
// one, so that the walk (and its order of adds) is the whole vector's and
// the lanes outside are simply not stored.
struct WholeVector {
  template <int V, typename T>
  __device__ __forceinline__ static void load(const T* p, int, int, T (&out)[V]) {
    load_vec_words<V>(p, out);
  }
};
struct EdgeVector {
  template <int V, typename T>
  __device__ __forceinline__ static void load(const T* p, int lo, int hi, T (&out)[V]) {
#pragma unroll
    for (int j = 0; j < V; ++j) out[j] = p[j < lo ? lo : (j >= hi ? hi - 1 : j)];
  }
};

template <class Op, int U, typename in_t, class Load = WholeVector, int V, typename walk_t, class Rows>
__device__ __forceinline__ void walk_column_rows(walk_t (&walk)[V], Rows& rows, int n, int lo = 0, int hi = V) {
  // Not unrolled further: unrolled four times by the compiler, its sixteen
  // loads went out interleaved with the adds.
#pragma unroll 1
  for (int loops = n / U; loops > 0; --loops) {
    alignas(16) in_t v[U][V];
#pragma unroll
    for (int u = 0; u < U; ++u) Load::template load<V>(rows.next(), lo, hi, v[u]);
#pragma unroll
    for (int u = U - 1; u >= 0; --u)
#pragma unroll
      for (int j = 0; j < V; ++j) walk[j] = Op::walk(walk[j], v[u][j]);
  }
  // The last rows loaded together too: one memory round rather than one
  // per row.
  if constexpr (U > 1) {
  const int last = static_cast<int>(n % U);
  alignas(16) in_t v[U - 1][V];
#pragma unroll
  for (int u = 0; u < U - 1; ++u)
    if (u < last) Load::template load<V>(rows.next(), lo, hi, v[u]);
#pragma unroll
  for (int u = 0; u < U - 1; ++u)
    if (u < last) {
#pragma unroll
      for (int j = 0; j < V; ++j) walk[j] = Op::walk(walk[j], v[u][j]);
    }
  }
}

// Combines acc[V] across threadIdx.y with a fixed halving tree (row y takes
// row y + h's partials); the result is valid in the threads with
// threadIdx.y == 0. Each level moves all V columns of a thread at once.
// Levels whose pairs lie in one warp (block width a power of two up to 32,
// h * width < 32) go through shuffles, the others through shared memory
// (sm: [V][kSlots], neighbouring threads in neighbouring words). Where
// every thread of the block has a slot (kSlots = kThreads: all but inputs
// whose block of partials would pass 32 KB) a shared level takes one
// barrier: each row is written at one level only, so no level's writes
// land where an earlier level still reads. Otherwise the rows share half
// the block's slots, and a level takes two. The same tree either way, so
// the same results. The width is tested with bit operations, not a
// remainder and a division by a runtime value (tens of instructions each).
// A/B against the tree of two barriers a level and no shuffles, on the H200
// in one process over 995 columns passes with trees from the random seeds
// 0-9 (NOTES.md, session 63): time 0.992x in geometric mean, below 0.97x of
// torch.sum 39 -> 19 ([1, 16, 16, 16] channels_last float16 over (0, 2, 3)
// 0.88x -> 0.99x); byte columns of 5 to 11 outputs in deep trees lost
// 12-15%, all still over 2x of torch.sum. The caller puts a barrier between
// this and any other use of sm.
template <class Op, int V, int kSlots, typename acc_t>
__device__ __forceinline__ void combine_over_y(acc_t (&acc)[V], acc_t* sm) {
  const int bx = blockDim.x, by = blockDim.y, y = threadIdx.y;
  const int warp_rows = bx <= 32 && (bx & (bx - 1)) == 0 ? 32 >> (__ffs(bx) - 1) : 1;
  int h = by / 2;
  for (; h >= warp_rows; h /= 2) {
    if constexpr (kSlots >= EnginePolicy::kThreads) {
      if (y >= h && y < 2 * h) {
        const int slot = (y - 1) * bx + threadIdx.x;
#pragma unroll
        for (int j = 0; j < V; ++j) sm[j * kSlots + slot] = acc[j];
      }
      __syncthreads();
      if (y < h) {
        const int slot = (y + h - 1) * bx + threadIdx.x;
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] = Op::combine(acc[j], sm[j * kSlots + slot]);
      }
    } else {
      if (y >= h && y < 2 * h) {
        const int slot = (y - h) * bx + threadIdx.x;
#pragma unroll
        for (int j = 0; j < V; ++j) sm[j * kSlots + slot] = acc[j];
      }
      __syncthreads();
      if (y < h) {
        const int slot = y * bx + threadIdx.x;
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] = Op::combine(acc[j], sm[j * kSlots + slot]);
      }
      __syncthreads();
    }
  }
  // The levels inside a warp: only the first warp's rows (y < warp_rows)
  // still take part, so the other warps skip them (vectors of 16 int64
  // partials take 32 shuffles a level).
  if (h > 0 && y < warp_rows) {
    // A block of under a warp has only bx * by lanes in it.
    const int lanes = bx * by;
    const unsigned members = lanes >= 32 ? 0xffffffffu : (1u << lanes) - 1u;
    for (; h > 0; h /= 2) {
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const acc_t theirs = shfl_xor(acc[j], h * bx, members);
        if (y < h) acc[j] = Op::combine(acc[j], theirs);
      }
    }
  }
}

// The running type of a columns thread (Op::walk_type: int32 for byte
// inputs of an integer sum, else the accumulator itself). A narrower one is
// widened after at most kMaxNarrowColumnRows rows (the host splits to that).
constexpr int64_t kMaxNarrowColumnRows = int64_t(1) << 23;
// Columns of loads of up to 4 bytes a thread (V * sizeof(in_t) <= 4) whose
// row threads walk kUnroll rows or more in a grid under the columns
// target (no fold into one wave) keep kLongWalkUnroll loads in flight, at
// kLongWalkBlocksPerSm blocks an SM (40 registers: at 32, eight in flight
// spilled 28-68 bytes). Their warps' loads are 32 to 128 bytes, and four of
// them a thread left the SMs waiting on latency. A/B on the H200 in one
// process over 199 such passes of the random seeds 0-9 (NOTES.md, session
// 63): time 0.939x in geometric mean, 70 faster by over 5%, 2 slower (two
// expanded inputs, 5-7%) ([253, 121, 7, 265][:, :, :, ::3] float32 over
// dim 0 1.41x -> 1.72x of torch.sum). Not walks of fewer rows (neutral: 202 passes, 0.997x), nor
// the folded grids, whose blocks fill the GPU already (72 passes, 0.996x,
// 22 of them slower by over 5%: [65, 107297] int32 over dim 0 4.6x ->
// 3.6x).
constexpr int kLongWalkUnroll = 8;
constexpr int kLongWalkBlocksPerSm = 3;

// Every thread's count of rows is an int (the host splits to that): a 64-bit
// loop counter held two of the registers that float32 vectors of four need
// to keep four loads in flight at three blocks per SM.
constexpr int64_t kMaxColumnThreadRows = int64_t(1) << 30;

// Block (bx, by): threadIdx.x picks a vector of V adjacent columns,
// threadIdx.y strides over the rows of blockIdx.y's slice, U loads in flight
// (kLongWalkUnroll or EnginePolicy::kUnroll: launch_columns).
template <class Op, int U, typename in_t, typename out_t, int V>
__global__ void __launch_bounds__(EnginePolicy::kThreads,
                                  U == EnginePolicy::kUnroll
                                      ? EnginePolicy::template columns_blocks_per_sm<in_t, typename Op::acc_type, V>()
                                      : kLongWalkBlocksPerSm)
    gpureduce_columns(ColumnsArgs<typename Op::acc_type> a, const in_t* __restrict__ in, Outputs<out_t> out) {
  start_as_dependent(a.early_trigger);
  using acc_t = typename Op::acc_type;
  const int64_t tile = blockIdx.x;
  // 32-bit divisions: a 64-bit one is a call of about a hundred
  // instructions, as much as a thread's whole walk in a pass of short
  // columns (the host keeps tiles under 2^31, and vec_cols is at most
  // kThreads where outer_group > 1).
  int64_t oi, cv;
  if (a.outer_group == 1) {
    const uint32_t x_tiles = static_cast<uint32_t>(a.x_tiles);
    const uint32_t t = static_cast<uint32_t>(tile) / x_tiles;
    oi = t;
    cv = static_cast<int64_t>(static_cast<uint32_t>(tile) - t * x_tiles) * blockDim.x + threadIdx.x;
  } else {
    const uint32_t vec_cols = static_cast<uint32_t>(a.vec_cols);
    oi = tile * a.outer_group + threadIdx.x / vec_cols;
    cv = threadIdx.x % vec_cols;
  }
  const bool valid = cv < a.vec_cols && oi < a.n_outer;
  int64_t in_off, out_off;
  a.outer.offsets(oi, in_off, out_off);
  // The thread's first column, and the lanes of its vector inside the row
  // (all but in an edge vector of ragged columns).
  const int64_t col = cv * V - a.col_shift;
  // Only vectors of 16 bytes of 2- to 8-byte elements are ever shifted
  // (ragged_columns_shift): the edge code spilled registers in narrower
  // vectors (sum of float16 in pairs: 76 bytes) and in vectors of 16 bytes
  // (52 bytes, their 16 int64 accumulators in 32 registers).
  constexpr bool kRagged = V > 1 && V * sizeof(in_t) == 16 && sizeof(in_t) >= 2;
  int lo = 0, hi = V;
  if constexpr (kRagged) {
    lo = col < 0 ? static_cast<int>(-col) : 0;
    hi = a.n_cols - col < V ? static_cast<int>(a.n_cols - col) : V;
  }
  const bool whole = lo == 0 && hi == V;
  const in_t* base = in + in_off + col * a.col_stride;
  const int64_t out_first = out_off + col * a.out_col_stride;
  const int64_t rb = static_cast<int64_t>(blockIdx.y) * a.rows_per_split;
  const int64_t re = rb + a.rows_per_split < a.n_rows ? rb + a.rows_per_split : a.n_rows;

  // Byte inputs add up in int32 while walking the rows (the host keeps a
  // thread under kMaxNarrowColumnRows rows, so 255 * rows cannot overflow):
  // 16 columns of int64 partials would not fit in the registers.
  using walk_t = typename Op::template walk_type<in_t>;
  walk_t walk[V];
#pragma unroll
  for (int j = 0; j < V; ++j) walk[j] = Op::template walk_start<in_t>();
  if (valid) {
    // The thread's rows: r, r + by, ... below re (blockDim.y is a power of
    // two, so the count is a shift, not a division).
    const int64_t r = rb + threadIdx.y;
    const int n = r < re ? static_cast<int>(((re - r - 1) >> (__ffs(blockDim.y) - 1)) + 1) : 0;
    if (a.n_reduce_outer == 1) {
      // Edge vectors only here: the host shifts columns of one reduced dim
      // only.
      SteppedRows<in_t> rows{base + r * a.reduce_stride, a.row_step};
      // An edge vector's loads are single elements, each in a register of
      // its own: at most 16 in flight (rows of bytes in vectors of 16,
      // unrolled as whole vectors are, spilled 244 bytes).
      constexpr int kEdgeUnroll = 16 / V < U ? 16 / V : U;
      if (!kRagged || whole)
        walk_column_rows<Op, U, in_t>(walk, rows, n);
      else
        walk_column_rows<Op, kEdgeUnroll, in_t, EdgeVector>(walk, rows, n, lo, hi);
    } else {
      const int64_t outer_row = static_cast<int64_t>(a.reduce_div.div(static_cast<uint64_t>(r)));
      const int64_t inner = r - outer_row * a.n_reduce;
      CarriedRows<in_t, acc_t> rows{a, base + inner * a.reduce_stride + outer_row * a.reduce_outer_stride, inner};
      walk_column_rows<Op, U, in_t>(walk, rows, n);
    }
  }
  acc_t acc[V];
#pragma unroll
  for (int j = 0; j < V; ++j) acc[j] = static_cast<acc_t>(walk[j]);
  __shared__ __align__(16) unsigned char scratch_raw[column_scratch_slots<V, acc_t>() * V * sizeof(acc_t)];
  acc_t* scratch = reinterpret_cast<acc_t*>(scratch_raw);
  constexpr int kScratchSlots = column_scratch_slots<V, acc_t>();
  if (blockDim.y > 1) combine_over_y<Op, V, kScratchSlots>(acc, scratch);

  const bool writer = threadIdx.y == 0 && valid;
  if (a.split == 1) {
    if (writer) {
      out.template store_vector<Op, V>(out_first, a.out_col_stride, acc, a.projection, lo, hi);
    }
    return;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (a.cluster_finish) {
    // No workspace and no ticket (whose zeroing is a memset of its own
    // before the kernel): each block leaves its partials in its shared
    // memory, and the first block of the cluster reads them all, in rank
    // order, once the cluster has synchronised. The barrier: the tree's
    // last shared level may still be reading these words.
    __syncthreads();
    if (writer) {
#pragma unroll
      for (int j = 0; j < V; ++j) scratch[j * blockDim.x + threadIdx.x] = acc[j];
    }
    cluster_sync();
    if (cluster_block_rank() == 0 && writer) {
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] = Op::identity();
#pragma unroll
      for (int k = 0; k < kMaxClusterSplit; ++k) {
        if (k < a.split) {
          const acc_t* theirs = cluster_shared(scratch, k);
#pragma unroll
          for (int j = 0; j < V; ++j) acc[j] = Op::combine(acc[j], theirs[j * blockDim.x + threadIdx.x]);
        }
      }
      out.template store_vector<Op, V>(out_first, a.out_col_stride, acc, a.projection, lo, hi);
    }
    cluster_sync();  // every block's shared memory stays until the first block has read it
    return;
  }
#endif
  // Partials by vector, all V lanes (an edge vector's lanes outside the row
  // hold values that are never stored): no lane masks in the loops below,
  // whose registers they spilled.
  const int64_t n_total = a.n_outer * a.vec_cols * V;
  const int64_t col0 = (oi * a.vec_cols + cv) * V;
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
    // F splits' loads in flight before they are combined, in the same order
    // as one at a time: a split of hundreds left the last block a long chain
    // of L2 round trips ([4, 36776, 7] over dim 1, a split of 526).
    constexpr int F = V >= 8 ? 1 : 8 / V;
    const int by = blockDim.y;
    int k = threadIdx.y;
    for (; k + (F - 1) * by < a.split; k += F * by) {
      acc_t part[F][V];
#pragma unroll
      for (int f = 0; f < F; ++f)
#pragma unroll
        for (int j = 0; j < V; ++j) part[f][j] = load_coherent(a.partials + (k + f * by) * n_total + col0 + j);
#pragma unroll
      for (int f = 0; f < F; ++f)
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] = Op::combine(acc[j], part[f][j]);
    }
    for (; k < a.split; k += by) {
#pragma unroll
      for (int j = 0; j < V; ++j)
        acc[j] = Op::combine(acc[j], load_coherent(a.partials + k * n_total + col0 + j));
    }
  }
  if (blockDim.y > 1) combine_over_y<Op, V, kScratchSlots>(acc, scratch);
  if (writer) {
    out.template store_vector<Op, V>(out_first, a.out_col_stride, acc, a.projection, lo, hi);
  }
}

}  // namespace cuda
}  // namespace gpureduce
