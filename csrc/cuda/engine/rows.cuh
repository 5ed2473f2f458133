// Rows kernels of the CUDA engine: the reduced elements of an output are
// contiguous (or strided) rows. Lanes cooperate along a row: short rows (a
// lane group per output, at most 32 vectors), inner rows (a group of up to a
// warp), split rows (blocks per output, for few long outputs, finished by a
// second kernel). Every kernel takes an op functor (engine/reduce_ops.h).
#pragma once

#include "common.cuh"

namespace gpureduce {
namespace cuda {

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
  // Split kernel launched as a programmatic dependent: whether the next
  // kernel may be scheduled from the start (a grid of one wave), or only
  // once this grid's blocks finish (see gpureduce_split_rows).
  int early_trigger;
  // Ragged rows (dense rows of any width and alignment, one per output or
  // several a whole number of 16-byte vectors apart): the vector body of
  // each row starts at its first 16-byte boundary, `head` elements in
  // (row_head), and is chunks_per_row vectors long; the row_len -
  // chunks_per_row * V elements before and after it (at most 2V - 2 a row)
  // are read one by one (RaggedEnds).
  int ragged;
  int64_t row_len;
  // Strided spans (the split kernel's kStrided): the bits of the multiples
  // of elem_stride below V, as PitchRowsArgs::kept_pattern.
  uint32_t kept_pattern;
  acc_t* partials;  // [n_out][split]
  // A thread's chunks c, c + step, ... (ChunkWalk), set on the host for
  // the launch's step by set_chunk_step: the columns a step adds (step %
  // chunks_per_row; 0 for one row per output, where no column carries), the
  // element offset it adds, and the offset a carry into the next row adds.
  int64_t step_cols, step_offset, carry_offset;
  Projection projection;  // ReducePass::projection

  template <int V>
  void set_chunk_step(int64_t step) {
    const int64_t chunk_elems = V * elem_stride;
    if (chunks == chunks_per_row) {
      step_cols = 0, step_offset = step * chunk_elems, carry_offset = 0;
    } else {
      step_cols = step % chunks_per_row;
      step_offset = step / chunks_per_row * row_stride + step_cols * chunk_elems;
      carry_offset = row_stride - chunks_per_row * chunk_elems;
    }
  }
};

template <int V, typename acc_t>
__device__ __forceinline__ int64_t chunk_offset(const RowsArgs<acc_t>& a, int64_t c) {
  if (a.chunks == a.chunks_per_row) return c * V * a.elem_stride;  // one row per output
  const int64_t row = static_cast<int64_t>(a.row_div.div(static_cast<uint64_t>(c)));
  return row * a.row_stride + (c - row * a.chunks_per_row) * V * a.elem_stride;
}

// The chunks c, c + step, c + 2 step, ... of an output, their element
// offsets stepped rather than divided (chunk_offset: a 64-bit division and
// multiplies, about 20 instructions a load): a thread's first chunk is
// divided into its row and column once, and each step adds the columns and
// offset that the host set for the launch's step (RowsArgs::set_chunk_step),
// carrying a column past the row's end into the next row.
struct ChunkWalk {
  int64_t off;  // elements from the output's first element to the chunk
  int64_t col;  // the chunk's column in its row (0 for one row per output)

  template <int V, typename acc_t>
  __device__ __forceinline__ static ChunkWalk at(const RowsArgs<acc_t>& a, int64_t c) {
    if (a.chunks == a.chunks_per_row) return {c * V * a.elem_stride, 0};
    const int64_t row = static_cast<int64_t>(a.row_div.div(static_cast<uint64_t>(c)));
    const int64_t col = c - row * a.chunks_per_row;
    return {row * a.row_stride + col * V * a.elem_stride, col};
  }
  template <typename acc_t>
  __device__ __forceinline__ int64_t next(const RowsArgs<acc_t>& a) {
    const int64_t at = off;
    col += a.step_cols;
    off += a.step_offset;
    if (col >= a.chunks_per_row) col -= a.chunks_per_row, off += a.carry_offset;
    return at;
  }
};

// Whether a rows instance walks its chunks stepped (ChunkWalk): loads of
// one element, where the division cost 176 instructions a round of four
// loads against 80 stepped (float32, SASS). Vector instances keep the
// division, which their 16-byte loads amortise: stepped, 16-bit vectors
// held to 40 registers (three blocks per SM) and bytes summed in int64
// spilled, and float32 vectors issued their round's loads one or three at
// a time rather than four (NOTES.md session 22).
template <int V>
constexpr bool kSteppedChunks = V == 1;

// Elements of a ragged row before its first 16-byte boundary.
template <typename in_t>
__device__ __forceinline__ int64_t row_head(const in_t* row) {
  return static_cast<int64_t>(((16 - (reinterpret_cast<uintptr_t>(row) & 15)) & 15) / sizeof(in_t));
}

// Ragged rows are read with vectors (V > 1) of the row's own elements
// (kStep == 1); other instances compile no ragged code, whose ends would
// cost them registers (element rows at three blocks per SM spilled).
template <int V, int kStep>
constexpr bool kMayBeRagged = V > 1 && kStep == 1;

// The elements of ragged rows outside their vector bodies (at most 2V - 2 a
// row) that one thread adds: k = first, first + step, ..., over the rows of
// an output in turn (n_ends a row; k % n_ends < head before the body, the
// rest after it). kSeveralRows: an output may have several rows (the split
// rows kernel only; the inner rows kernel's 16-bit instances at 40
// registers spilled 46 bytes with it), a whole number of 16-byte vectors
// apart (the host checks), so every row has the first row's head. The
// first is loaded before the body (load), so that its load is in flight
// with the body's rather than a memory round of its own after them; any
// further ones are added one by one.
template <class Op, int V, bool kSeveralRows, typename in_t, typename wide_t>
struct RaggedEnds {
  const in_t* row;
  int64_t head, first, step, n_ends, n_total, body, row_stride;
  in_t first_value;

  __device__ __forceinline__ RaggedEnds(const RowsArgs<wide_t>& a, const in_t* row_, int64_t head_,
                                        int64_t first_, int64_t step_)
      : row(row_), head(head_), first(first_), step(step_), first_value() {
    body = a.chunks_per_row * V;
    n_ends = a.row_len - body;
    n_total = kSeveralRows ? n_ends * static_cast<int64_t>(a.row_div.div(static_cast<uint64_t>(a.chunks))) : n_ends;
    row_stride = a.row_stride;
    if (first < n_total) first_value = row[index(first)];
  }
  __device__ __forceinline__ int64_t index(int64_t k) const {
    if (!kSeveralRows || n_total == n_ends) return k < head ? k : k + body;
    // 32 bits: the host takes ragged rows only while n_total < 2^31.
    const uint32_t r = static_cast<uint32_t>(k) / static_cast<uint32_t>(n_ends);
    const int64_t j = k - int64_t(r) * n_ends;
    return int64_t(r) * row_stride + (j < head ? j : j + body);
  }
  __device__ __forceinline__ wide_t add_to(wide_t acc) const {
    for (int64_t k = first; k < n_total; k += step) {
      const in_t x = k == first ? first_value : row[index(k)];
      acc = Op::wide_op::combine(acc, static_cast<wide_t>(Op::reduce(Op::identity(), x)));
    }
    return acc;
  }
};

// The inputs of one chunk: V loaded elements, of which every kStep-th is
// the tensor's (kStep = 2 reads a row of stride 2 with full vector loads and
// drops the elements in between).
template <int V, int kStep, typename in_t>
__device__ __forceinline__ void pick_every(const in_t (&v)[V], in_t (&picked)[V / kStep]) {
#pragma unroll
  for (int i = 0; i < V / kStep; ++i) picked[i] = v[i * kStep];
}

// acc, of the op's wide type, with the V inputs v folded in: the op's own
// fold_vector where it accumulates in its own type, else the vector's state
// widened and combined.
template <class Op, int V, typename in_t, typename wide_t>
__device__ __forceinline__ wide_t fold_vector_into(wide_t acc, const in_t (&v)[V]) {
  if constexpr (std::is_same_v<typename Op::wide_op, Op>) {
    return Op::template fold_vector<V>(acc, v);
  } else {
    return Op::wide_op::combine(acc, static_cast<wide_t>(Op::template reduce_vector<V>(v)));
  }
}

// The registers of one chunk between its load and its sum (the short rows
// kernel): for byte inputs of an integer sum the 16 bytes as the four words
// they arrived in (see SumOp::reduce_packed_bytes), else V elements. Loading
// and summing are separate so that a thread can put several loads in flight
// before it adds.
template <class Op, typename in_t, int V>
struct Chunk {
  using element_type = in_t;
  static constexpr int kWidth = V;
  static constexpr bool kPacked = V == 16 && Op::template packs_bytes<in_t>();
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
  // acc (the op's wide type) with the chunk folded in.
  template <typename wide_t>
  __device__ __forceinline__ wide_t fold_into(wide_t acc) const {
    if constexpr (kPacked) {
      return Op::wide_op::combine(acc, static_cast<wide_t>(Op::template reduce_packed_bytes<in_t>(raw)));
    } else {
      return fold_vector_into<Op, V>(acc, raw.v);
    }
  }
  // The elements at the set bits of keep (bit j keeps element j), reduced
  // one after another: a strided row read through the dense memory it spans
  // keeps every stride-th element, at positions that vary from chunk to
  // chunk. An element that is not the tensor's never reaches the op, so the
  // op needs no neutral input.
  __device__ __forceinline__ typename Op::acc_type sum_kept(uint32_t keep) const {
    in_t v[V];
    static_assert(sizeof(v) == sizeof(raw), "a chunk is V elements");
    memcpy(v, &raw, sizeof(raw));
    typename Op::acc_type t = Op::identity();
#pragma unroll
    for (int j = 0; j < V; ++j)
      if ((keep >> j) & 1u) t = Op::reduce(t, v[j]);
    return t;
  }
};

// A round of U loaded chunks, `left` of them the thread's, folded into
// acc (Op::folds_rounds): a whole round as one state of its U * V inputs
// (reduce_vector), merged once; a part round chunk by chunk.
template <class Op, int U, typename ChunkT, typename wide_t>
__device__ __forceinline__ void fold_round(wide_t& acc, const ChunkT (&ch)[U], int left) {
  using WideOp = typename Op::wide_op;
  using in_t = typename ChunkT::element_type;
  constexpr int V = ChunkT::kWidth;
  if (left >= U) {
    in_t v[U * V];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int j = 0; j < V; ++j) v[u * V + j] = ch[u].raw.v[j];
    acc = fold_vector_into<Op, U * V>(acc, v);
    return;
  }
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (u < left) acc = ch[u].fold_into(acc);
}

// The chunks c, c + step, ... below end of one thread, kUnroll loads in
// flight, each into its own partial. Partials are of the op's wide type
// (SumOp::wide_op): a vector's elements are added in acc_t, the rest wide.
//
// The last chunks (fewer than kUnroll): with kTailTogether they are loaded
// together (predicated) before any is added, so that a thread waits on one
// memory round for them rather than one per chunk. Rows of 93 float32
// vectors over 32 lanes leave every lane 2 or 3 chunks, all in the tail:
// loaded one after another, [12951, 372] over dim 1 took 10.7 us against
// torch.sum's 6.0 (H200). The inner rows kernel takes it where it does not
// spill (EnginePolicy::tail_together). The split rows kernel keeps them one
// after another: held to 40 registers, the predicated tail needed 46-50 and made
// [8192,8192] int32 over dim 1 1.3x slower (NOTES.md); its full sums avoid
// the tail instead (block ranges in multiples of kThreads * kUnroll chunks).
//
// kFoldRounds (the split rows kernel, where Op::folds_rounds): each whole
// round is one state of its U P inputs, merged into acc[0] (fold_round).
template <class Op, typename in_t, int V, int kStep, bool kTailTogether, bool kFoldRounds = false, typename wide_t>
__device__ __forceinline__ wide_t reduce_chunks(const in_t* __restrict__ base, const RowsArgs<wide_t>& a,
                                             int64_t c, int64_t end, int64_t step) {
  using WideOp = typename Op::wide_op;
  constexpr int U = EnginePolicy::kUnroll;
  constexpr int P = V / kStep;
  wide_t acc[U];
#pragma unroll
  for (int u = 0; u < U; ++u) acc[u] = WideOp::identity();
  ChunkWalk walk{};
  if constexpr (kSteppedChunks<V>) walk = ChunkWalk::at<V>(a, c);
  // The offset of chunk c + u * step, the u-th of a round (stepped: called
  // for each chunk in turn).
  auto offset = [&](int u) -> int64_t {
    if constexpr (kSteppedChunks<V>) {
      return walk.next(a);
    } else {
      return chunk_offset<V>(a, c + u * step);
    }
  };
  if constexpr (V == 16 && kStep == 1 && Op::template packs_bytes<in_t>()) {
    for (; c + (U - 1) * step < end; c += U * step) {
      uint4 w[U];
#pragma unroll
      for (int u = 0; u < U; ++u) w[u] = *reinterpret_cast<const uint4*>(base + offset(u));
#pragma unroll
      for (int u = 0; u < U; ++u)
        acc[u] = WideOp::combine(acc[u], Op::template reduce_packed_bytes<in_t>(w[u]));
    }
    if constexpr (kTailTogether) {
      uint4 w[U - 1];
#pragma unroll
      for (int u = 0; u < U - 1; ++u)
        if (c + u * step < end) w[u] = *reinterpret_cast<const uint4*>(base + offset(u));
#pragma unroll
      for (int u = 0; u < U - 1; ++u)
        if (c + u * step < end) acc[u] = WideOp::combine(acc[u], Op::template reduce_packed_bytes<in_t>(w[u]));
    } else {
      for (; c < end; c += step)
        acc[0] = WideOp::combine(acc[0], Op::template reduce_packed_bytes<in_t>(
                                             *reinterpret_cast<const uint4*>(base + offset(0))));
    }
  } else {
    for (; c + (U - 1) * step < end; c += U * step) {
      alignas(16) in_t v[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u) load_vec<V>(base + offset(u), v[u]);
      if constexpr (kFoldRounds) {
        in_t round[U * P];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int i = 0; i < P; ++i) round[u * P + i] = v[u][i * kStep];
        acc[0] = fold_vector_into<Op, U * P>(acc[0], round);
      } else {
        // Stepped, the round's adds go last chunk first, so that the first
        // add waits on the last load: in chunk order ptxas issued each add
        // right after its load, and the loads went out one at a time (SASS).
#pragma unroll
        for (int k = 0; k < U; ++k) {
          const int u = kSteppedChunks<V> ? U - 1 - k : k;
          in_t picked[P];
          pick_every<V, kStep>(v[u], picked);
          acc[u] = fold_vector_into<Op, P>(acc[u], picked);
        }
      }
    }
    if constexpr (kTailTogether) {
      alignas(16) in_t v[U - 1][V];
#pragma unroll
      for (int u = 0; u < U - 1; ++u)
        if (c + u * step < end) load_vec<V>(base + offset(u), v[u]);
#pragma unroll
      for (int u = 0; u < U - 1; ++u) {
        if (c + u * step < end) {
          in_t picked[P];
          pick_every<V, kStep>(v[u], picked);
          acc[u] = fold_vector_into<Op, P>(acc[u], picked);
        }
      }
    } else {
      for (; c < end; c += step) {
        alignas(16) in_t v[V];
        load_vec<V>(base + offset(0), v);
        in_t picked[P];
        pick_every<V, kStep>(v, picked);
        acc[0] = fold_vector_into<Op, P>(acc[0], picked);
      }
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
template <class Op, typename in_t, typename out_t, int V, int kStep, int kBlocksPerSm = EnginePolicy::kBlocksPerSm>
__global__ void __launch_bounds__(EnginePolicy::kThreads, kBlocksPerSm)
    gpureduce_inner_rows(RowsArgs<typename Op::wide_op::acc_type> a, const in_t* __restrict__ in,
                             Outputs<out_t> out) {
  start_as_dependent(a.early_trigger);
  using WideOp = typename Op::wide_op;
  using wide_t = typename WideOp::acc_type;
  constexpr bool kTail = EnginePolicy::template tail_together<in_t, V, kStep>();
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
      const in_t* row = in + in_off;
      if (kMayBeRagged<V, kStep> && a.ragged) {
        const int64_t head = row_head(row);
        const RaggedEnds<Op, V, false, in_t, wide_t> ends(a, row, head, lane, group);
        acc = ends.add_to(reduce_chunks<Op, in_t, V, kStep, kTail>(row + head, a, lane, a.chunks, group));
      } else {
        acc = reduce_chunks<Op, in_t, V, kStep, kTail>(row, a, lane, a.chunks, group);
      }
    }
    acc = group_reduce<WideOp>(acc, group);
    if (o < a.n_out && lane == 0) out.template store<WideOp>(out_off, acc, a.projection);
  }
}

// One dense row per output, the rows at a constant pitch (the outer dims
// merged into one): logits, [B, T, C] over C, any contiguous 2-D tensor over
// its last dim. The general kernels above pay for every layout they take (a
// 64-bit division per chunk for several rows per output, the general outer
// indexer, ragged ends in 64 bits) in registers: 54-64 of them, two blocks
// of 512 per SM. Here the only 64-bit arithmetic is a row's start and a lane
// walks its chunks by pointer, so that the kernel fits three or four blocks
// (EnginePolicy::pitch_rows_blocks_per_sm).
//
// kRagged: the rows' width or alignment fits no vector. A row's vector body
// then starts at its first 16-byte boundary (`head` elements in) and holds
// (row_len - head) / V chunks; the elements before and after it (fewer than
// 2V) are read one by one.
//
// kStrided (with kRagged): rows of 2- or 4-byte elements at a stride s =
// elem_stride of at most 12 bytes, at any pitch (strided_span_rows_fit;
// where a stride-2 vector fits every row, launch_rows reads them with kStep
// = 2). The vector body is then that of the dense memory the row spans,
// (row_len - 1) * s + 1 elements, and a chunk keeps the elements at
// multiples of s from the row's start (Chunk::sum_kept); the ends are the
// row's own elements outside the body. The sectors read are those element
// loads read, in a quarter to a half of the load instructions: [8188,
// 2049][:, ::2] float32 over dim 1 0.76x -> 0.92x of torch.sum (H200,
// NOTES.md session 60).
constexpr int kPitchEndsPerLane = 4;

// A strided row read through the dense memory it spans keeps the elements
// at multiples of its stride s from its start (Chunk::sum_kept). Those of a
// chunk that starts at dense index i begin -i mod s into it; the chunk a
// step further on begins `back` = step mod s earlier, modulo s. (The pitch
// rows and split rows kernels' kStrided.)
template <typename I>
__device__ __forceinline__ int first_kept_at(I dense_index, int s) {
  return static_cast<int>((s - dense_index % s) % s);
}
__device__ __forceinline__ int next_first_kept(int first_kept, int back, int s) {
  return first_kept >= back ? first_kept - back : first_kept + s - back;
}
// End k of a ragged row (its elements i < before, ahead of its vector body,
// then i >= after, past it): element k, or after + (k - before).
template <typename I>
__device__ __forceinline__ I ragged_end_element(I k, int before, int after) {
  return k < before ? k : after + (k - before);
}

// Up to this many output dims of a pitch rows pass (PitchRowsArgs::out_offset).
constexpr int kPitchOutDims = 4;

struct PitchRowsArgs {
  int64_t n_out;
  int64_t in_pitch;  // elements between the starts of consecutive rows
  // Where output o goes. The rows are read in memory order, and their
  // outputs may be in another: [A, B, C].transpose(0, 1) over dim 2 reads
  // rows (a, b) at a pitch of C but writes them to b * A + a. Such outputs
  // are o's index over the outer dims (innermost first, out_sizes) at
  // out_strides; outputs in memory order are one dim, o * out_strides[0].
  int out_dims;
  FastDivmod out_sizes[kPitchOutDims];
  int64_t out_strides[kPitchOutDims];
  int row_len;
  int group;  // lanes per output: 1, 2, ..., 32
  int row_chunks;  // the pitch vector rows kernel: chunks per row, 1 or 2
  // Ragged rows: the rounds of a lane's ends, ceil((2V - 2) / group) (at
  // most kPitchEndsPerLane). A group of 16 lanes has one round of them,
  // and its lanes ran the other three rounds' index arithmetic and
  // predicated loads for nothing: bounded, ragged rows of 1 to 256 MB read
  // up to 7% faster, none slower by over 3% (H200, NOTES.md session 32).
  int end_rounds;
  // kStrided: the rows' element stride, and the bits of the multiples of it
  // below V (a chunk's kept elements when its first one is kept).
  int elem_stride;
  uint32_t kept_pattern;
  Projection projection;  // ReducePass::projection
  // Launched as a programmatic dependent (launch_engine_kernel): whether the
  // next kernel may be scheduled from this grid's start (a grid of one wave).
  int early_trigger = 0;

  // A store's division per dim is paid once per output (one lane's), not per load.
  __device__ __forceinline__ int64_t out_offset(int64_t o) const {
    int64_t off = 0;
#pragma unroll
    for (int d = 0; d < kPitchOutDims; ++d) {
      if (d == out_dims - 1) break;
      const int64_t q = static_cast<int64_t>(out_sizes[d].div(static_cast<uint64_t>(o)));
      off += (o - q * static_cast<int64_t>(out_sizes[d].divisor)) * out_strides[d];
      o = q;
    }
    return off + o * out_strides[out_dims - 1];
  }
};

template <class Op, typename in_t, typename out_t, int V, bool kRagged, int kBlocksPerSm, bool kStrided = false>
__global__ void __launch_bounds__(EnginePolicy::kThreads, kBlocksPerSm)
    gpureduce_pitch_rows(PitchRowsArgs a, const in_t* __restrict__ in, Outputs<out_t> out) {
  start_as_dependent(a.early_trigger);
  static_assert(kRagged || !kStrided, "strided rows are read as ragged dense spans");
  constexpr bool kFoldRounds = Op::template folds_rounds<in_t>() && !kStrided;
  using WideOp = typename Op::wide_op;
  using wide_t = typename WideOp::acc_type;
  using ChunkT = Chunk<Op, in_t, V>;
  constexpr int U = EnginePolicy::kUnroll;
  const int group = a.group;
  const int lane = threadIdx.x & (group - 1);
  const int groups_per_block = blockDim.x / group;
  const int first = threadIdx.x / group;
  // The loop bound is uniform across the block, so every lane reaches the
  // shuffles in group_reduce.
  for (int64_t o0 = static_cast<int64_t>(blockIdx.x) * groups_per_block; o0 < a.n_out;
       o0 += static_cast<int64_t>(gridDim.x) * groups_per_block) {
    const int64_t o = o0 + first;
    wide_t acc = WideOp::identity();
    if (o < a.n_out) {
      const in_t* row = in + o * a.in_pitch;
      // The dense elements the row spans (kStrided: its own every s-th).
      const int s = kStrided ? a.elem_stride : 1;
      const int span = kStrided ? (a.row_len - 1) * s + 1 : a.row_len;
      // Ragged rows: the body starts at the row's first 16-byte boundary.
      const int head = kRagged ? min(static_cast<int>(row_head(row)), span) : 0;
      const int chunks = (span - head) / V;
      // Ends: the row's elements i < before (ahead of the body) and i >=
      // after (past it); end k is element k, or after + (k - before). A
      // lane's ends (lane, lane + group, ...: at most kPitchEndsPerLane, the
      // host sees to it) are loaded before the body, in flight with it, and
      // added after it.
      in_t ends[kRagged ? kPitchEndsPerLane : 1];
      int n_mine = 0;
      if constexpr (kRagged) {
        const int before = kStrided ? (head + s - 1) / s : head;
        const int after = kStrided ? (head + chunks * V + s - 1) / s : head + chunks * V;
        const int n_ends = before + a.row_len - after;
#pragma unroll
        for (int j = 0; j < kPitchEndsPerLane; ++j) {
          if (j >= a.end_rounds) break;
          const int k = lane + j * group;
          if (k < n_ends) {
            ends[j] = row[ragged_end_element(k, before, after) * s];
            n_mine = j + 1;
          }
        }
      }
      // This lane's chunks: lane, lane + group, ...
      const int mine = chunks > lane ? (chunks - lane + group - 1) / group : 0;
      const in_t* p = row + head + lane * V;
      const int step = group * V;
      // kStrided: the first kept element of the lane's next chunk, -(its
      // dense index) mod s; each chunk on is step elements further, which
      // moves it back by step mod s.
      int first_kept = 0, back = 0;
      if constexpr (kStrided) {
        first_kept = first_kept_at(head + lane * V, s);
        back = step % s;
      }
      wide_t part[U];
#pragma unroll
      for (int u = 0; u < U; ++u) part[u] = WideOp::identity();
      // Whole rounds of U chunks, then one round for the rest whose spare
      // loads re-read the lane's first chunk and are not added: one loop
      // body, so that the rest costs no registers of its own (a separate
      // predicated tail spilled at 40 registers).
#pragma unroll 1
      for (int left = mine; left > 0; left -= U, p += U * step) {
        ChunkT ch[U];
#pragma unroll
        for (int u = 0; u < U; ++u) ch[u].load(u < left ? p + u * step : p);
        if constexpr (kFoldRounds) {
          fold_round<Op>(part[0], ch, left);
        } else {
#pragma unroll
          for (int u = 0; u < U; ++u) {
            if (u < left) {
              if constexpr (kStrided) {
                part[u] = WideOp::combine(part[u], static_cast<wide_t>(ch[u].sum_kept(a.kept_pattern << first_kept)));
                first_kept = next_first_kept(first_kept, back, s);
              } else {
                part[u] = ch[u].fold_into(part[u]);
              }
            }
          }
        }
      }
      // (Folded rounds leave only part[0] filled.)
#pragma unroll
      for (int w = 1; w < (kFoldRounds ? 1 : U); w *= 2) {
#pragma unroll
        for (int u = 0; u + w < U; u += 2 * w) part[u] = WideOp::combine(part[u], part[u + w]);
      }
      acc = part[0];
      if constexpr (kRagged) {
#pragma unroll
        for (int j = 0; j < kPitchEndsPerLane; ++j) {
          if (j >= a.end_rounds) break;
          if (j < n_mine) acc = WideOp::combine(acc, static_cast<wide_t>(Op::reduce(Op::identity(), ends[j])));
        }
      }
    }
    acc = group_reduce<WideOp>(acc, group);
    if (o < a.n_out && lane == 0) out.template store<WideOp>(a.out_offset(o), acc, a.projection);
  }
}

// Pitch rows of one or two chunks (a row of 4 float32 or 8 bfloat16, a
// [N, C, 2, 2] float32 feature map over (2, 3)), a thread per output: the
// pitch rows kernel's lane then has one or two chunks to load in its round of
// kUnroll, and re-reads the first for the rest, so that a thread has one or
// two distinct loads in flight. Here each thread loads the chunks of
// kUnroll / C outputs T apart (T the grid's threads; consecutive threads read
// consecutive rows) in one round, then sums each output as (identity + chunk
// 0) + chunk 1: the bits of the pitch rows kernel's partials and tree.
// Outputs in memory order only (PitchRowsArgs::out_dims 1): with the
// index arithmetic of others, its float32 and float64 instances spilled 48
// to 64 bytes at 40 registers, against 32 without (sm_90, CUDA 13.0).
template <class Op, typename in_t, typename out_t, int V, int C>
__device__ __forceinline__ void pitch_vector_rows(const PitchRowsArgs& a, const in_t* __restrict__ in,
                                                  Outputs<out_t> out) {
  using WideOp = typename Op::wide_op;
  using wide_t = typename WideOp::acc_type;
  using ChunkT = Chunk<Op, in_t, V>;
  constexpr int U = EnginePolicy::kUnroll;
  constexpr int K = U / C;
  const int64_t T = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < a.n_out; o += K * T) {
    ChunkT ch[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t r = o + (u / C) * T;
      if (r < a.n_out) ch[u].load(in + r * a.in_pitch + (u % C) * V);
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int64_t r = o + k * T;
      if (r < a.n_out) {
        wide_t acc = WideOp::combine(WideOp::identity(), static_cast<wide_t>(ch[k * C].sum()));
#pragma unroll
        for (int c = 1; c < C; ++c) acc = WideOp::combine(acc, static_cast<wide_t>(ch[k * C + c].sum()));
        out.template store<WideOp>(r * a.out_strides[0], acc, a.projection);
      }
    }
  }
}

template <class Op, typename in_t, typename out_t, int V, int kBlocksPerSm>
__global__ void __launch_bounds__(EnginePolicy::kThreads, kBlocksPerSm)
    gpureduce_pitch_vector_rows(PitchRowsArgs a, const in_t* __restrict__ in, Outputs<out_t> out) {
  start_as_dependent(a.early_trigger);
  if (a.row_chunks == 1) return pitch_vector_rows<Op, in_t, out_t, V, 1>(a, in, out);
  pitch_vector_rows<Op, in_t, out_t, V, 2>(a, in, out);
}

// Input and output offsets of output o of a short rows pass: one
// multiply-add each when the outputs sit at constant strides (the usual
// case), one division for two dims (the outer index is the quotient, as o <
// n_out), else the general indexer, whose loop is rolled in device code and
// reads each dim's divisor and strides from the parameters at a run-time
// index. Each output pays this twice (its loads, its store) for a few loads:
// with two dims by the loop, [13, 2, 22, 25, 5] float32 over (1, 4) took 3.28
// us against 2.84 straight (torch.sum 2.52; H200, NOTES.md session 58).
// Here and not in OuterIndexer::offsets: the same straight code there, for
// every kernel, left 1005 random cases unchanged and cost the 89 expanded
// ones 3.5% in the same A/B.
template <typename wide_t>
__device__ __forceinline__ void output_offsets(const RowsArgs<wide_t>& a, int64_t o, int64_t& in_off,
                                               int64_t& out_off) {
  const OuterIndexer& outer = a.outer;
  if (outer.ndim == 1) {
    in_off = o * outer.in_strides[0];
    out_off = o * outer.out_strides[0];
  } else if (outer.ndim == 2) {
    const int64_t q = static_cast<int64_t>(outer.sizes[0].div(static_cast<uint64_t>(o)));
    const int64_t i = o - q * static_cast<int64_t>(outer.sizes[0].divisor);
    in_off = i * outer.in_strides[0] + q * outer.in_strides[1];
    out_off = i * outer.out_strides[0] + q * outer.out_strides[1];
  } else {
    outer.offsets(o, in_off, out_off);
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
    gpureduce_short_rows(RowsArgs<typename Op::wide_op::acc_type> a, const in_t* __restrict__ in,
                             Outputs<out_t> out) {
  start_as_dependent(a.early_trigger);
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
        out.template store<Op>(out_off, s, a.projection);
      }
    }
  }
}

// Few, long outputs (a full sum is one): blockIdx.y is the output, and the
// `split` blocks along x each read a range of its chunks (or interleave over
// them, a.block_chunks == 0). With split > 1 each block
// writes its partial and gpureduce_finish_partials, launched after it as a
// programmatic dependent, combines them in a fixed order. (A last-block
// ticket needed a memset per call, and a one-launch version whose last block
// finished on a self-resetting ticket measured slower: benchmarks/NOTES.md.)
// A strided row's share of one thread in the split rows kernel (kStrided):
// the chunks first, first + step, ... below end of the vector body of the
// dense memory the row spans (from its first 16-byte boundary, as for
// ragged rows), each keeping the elements at multiples of the row's stride
// (Chunk::sum_kept), kUnroll loads in flight; then the row's own elements
// outside the body, end_first, end_first + end_step, ... of them.
template <class Op, typename in_t, int V, typename wide_t>
__device__ __forceinline__ wide_t reduce_strided_span(const in_t* __restrict__ row, const RowsArgs<wide_t>& a,
                                                      int64_t first, int64_t end, int64_t step, int64_t end_first,
                                                      int64_t end_step) {
  using WideOp = typename Op::wide_op;
  using ChunkT = Chunk<Op, in_t, V>;
  constexpr int U = EnginePolicy::kUnroll;
  // 32 bits: the host takes spans of fewer than 2^31 elements.
  const int s = static_cast<int>(a.elem_stride);
  const int span = static_cast<int>((a.row_len - 1) * a.elem_stride + 1);
  const int head = min(static_cast<int>(row_head(row)), span);
  const int body = static_cast<int>(a.chunks_per_row) * V;
  const in_t* p = row + head;
  // The kept elements of this thread's chunks (first_kept_at); each step
  // moves them back by step V mod s.
  int first_kept = first_kept_at(head + first * V, s);
  const int back = static_cast<int>((step * V) % s);
  wide_t part[U];
#pragma unroll
  for (int u = 0; u < U; ++u) part[u] = WideOp::identity();
  int64_t c = first;
  for (; c + (U - 1) * step < end; c += U * step) {
    ChunkT ch[U];
#pragma unroll
    for (int u = 0; u < U; ++u) ch[u].load(p + (c + u * step) * V);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      part[u] = WideOp::combine(part[u], static_cast<wide_t>(ch[u].sum_kept(a.kept_pattern << first_kept)));
      first_kept = next_first_kept(first_kept, back, s);
    }
  }
  for (; c < end; c += step) {
    ChunkT ch;
    ch.load(p + c * V);
    part[0] = WideOp::combine(part[0], static_cast<wide_t>(ch.sum_kept(a.kept_pattern << first_kept)));
    first_kept = next_first_kept(first_kept, back, s);
  }
#pragma unroll
  for (int w = 1; w < U; w *= 2) {
#pragma unroll
    for (int u = 0; u + w < U; u += 2 * w) part[u] = WideOp::combine(part[u], part[u + w]);
  }
  // The ends: the row's elements ahead of the body and past it.
  const int before = (head + s - 1) / s;
  const int after = (head + body + s - 1) / s;
  const int64_t n_ends = before + a.row_len - after;
  wide_t acc = part[0];
  for (int64_t k = end_first; k < n_ends; k += end_step)
    acc = WideOp::combine(acc, static_cast<wide_t>(Op::reduce(Op::identity(), row[ragged_end_element(k, before, after) * s])));
  return acc;
}

// kStrided: each output is one strided row read through the dense memory it
// spans (reduce_strided_span; elements of 2 and 4 bytes, as the pitch rows
// kernel's kStrided), for rows too long and too few for a warp each.
template <class Op, typename in_t, typename out_t, int V, int kStep, bool kStrided = false>
__global__ void __launch_bounds__(EnginePolicy::kThreads,
                                  EnginePolicy::template split_blocks_per_sm<Op, in_t, V, kStep>())
    gpureduce_split_rows(RowsArgs<typename Op::wide_op::acc_type> a, const in_t* __restrict__ in,
                             Outputs<out_t> out) {
  static_assert(!kStrided || (V > 1 && kStep == 1), "strided spans are read with vectors of their own elements");
  using WideOp = typename Op::wide_op;
  using wide_t = typename WideOp::acc_type;
  constexpr bool kFoldRounds = Op::template folds_rounds<in_t>();
  // Its grid lets the next kernel in early only where it fits one wave
  // (start_as_dependent); a grid of several waves does so at its end.
  start_as_dependent(a.early_trigger);
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
  const in_t* row = in + in_off;
  wide_t acc;
  if constexpr (kStrided) {
    // The ends are spread over the output's blocks, as for ragged rows.
    acc = reduce_strided_span<Op, in_t, V>(row, a, first, end, step,
                                           static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                                           static_cast<int64_t>(a.split) * blockDim.x);
  } else if (kMayBeRagged<V, kStep> && a.ragged) {
    // The ends are spread over the output's blocks (one row's few all fall
    // to its first block).
    const int64_t head = row_head(row);
    const RaggedEnds<Op, V, true, in_t, wide_t> ends(a, row, head,
                                                     static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                                                     static_cast<int64_t>(a.split) * blockDim.x);
    acc = ends.add_to(reduce_chunks<Op, in_t, V, kStep, false, kFoldRounds>(row + head, a, first, end, step));
  } else {
    acc = reduce_chunks<Op, in_t, V, kStep, false, kFoldRounds>(row, a, first, end, step);
  }
  acc = block_reduce<WideOp>(acc);
  if (a.split == 1) {
    if (threadIdx.x == 0) out.template store<WideOp>(out_off, acc, a.projection);
    allow_next_grid();
    return;
  }
  if (threadIdx.x == 0) a.partials[o * a.split + blockIdx.x] = acc;
  allow_next_grid();
}

}  // namespace cuda
}  // namespace gpureduce
