// The host half of the CUDA engine, for any op family: it picks the kernel
// for each pass the planner produces and sizes it (vector width, lanes per
// output, split across blocks), takes workspace from the caching allocator
// and launches on the current stream. Nothing here synchronises with the
// host, so calls can be captured in CUDA graphs. run_pass_cuda_group is
// instantiated once per op and dtype group, in a file of its own
// (instances/, through instance.h), which includes no ATen header.
#pragma once

#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

#include "../engine/reduce_dtypes.h"
#include "../engine/reduce_family.h"
#include "../engine/reduce_plan.h"
#include "device_info.h"
#include "engine/columns.cuh"
#include "engine/dense.cuh"
#include "engine/rows.cuh"
#include "engine/stream_columns.cuh"
#include "engine/stream_rows.cuh"
#include "launch.h"
#include "policy.h"
#include "instance.h"
#include "workspace.h"

namespace gpureduce {
namespace cuda {

using Policy = EnginePolicy;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline int64_t pow2_at_least(int64_t x) {
  int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// A grid of a few waves of blocks leaves its last wave's blocks to read
// almost alone, the rest of the GPU idle: [342, 128256] float32 over dim 0
// ran 1002 blocks of 512 threads, three per SM, in 2.5 waves (0.95x of
// torch.sum). Giving each thread f times the share (f a power of two: fewer
// row threads per block, or fewer lanes per output) until the grid fits one
// wave reads the pass in one round of blocks. `waves` is the grid's waves
// now (rounded up); fits(f) says whether it is one wave with f, and
// longer_ok(f) whether an f-times longer walk per thread is worth it (the
// callers say when); returns the f to use, 1 for none. Only grids of up to
// kFoldMaxWaves waves fold.
template <typename Fits, typename LongerOk>
int64_t fold_into_one_wave(int64_t waves, int64_t max_f, Fits fits, LongerOk longer_ok) {
  if (waves <= 1 || waves > HostPolicy::kFoldMaxWaves) return 1;
  for (int64_t f = 2; f <= max_f; f *= 2) {
    if (fits(f)) return longer_ok(f) ? f : 1;
  }
  return 1;
}

// Rounds of kUnroll loads in a walk of `chunks` over `lanes` lanes.
inline int64_t lane_rounds(int64_t chunks, int64_t lanes) {
  return ceil_div(ceil_div(chunks, lanes), EnginePolicy::kUnroll);
}

// Whether a rows pass of `chunks` per output, `group` lanes each, in
// `waves` waves, reads faster folded by f: its lanes' rounds of kUnroll
// loads then, at most the rounds of all its waves now. A/B on the H200
// (NOTES.md, session 25): the rows that lost folded walked more rounds than
// that ([20000, 512] float32 over dim 1, 3 waves of one round against 4
// rounds: 1.29x -> 1.23x of torch.sum; [17955, 6789] float64 1.03x ->
// 0.82x; [17521, 5005] .step 0.93x -> 0.70x), those that gained as many or
// fewer ([13061, 270] float32 0.92x -> 1.23x, [7916, 2367] float16 0.93x ->
// 1.06x, [47842, 136] float32 1.48x -> 1.71x).
inline bool rows_fold_pays(int64_t chunks, int64_t group, int64_t waves, int64_t f) {
  return lane_rounds(chunks, group / f) <= waves * lane_rounds(chunks, group);
}

// Blocks per output for a split rows pass of n_out outputs over a wave of
// `wave` resident blocks, at most max_split. Rounding wave / n_out up can
// leave a few blocks for a second wave, each with a whole share of an output
// to read almost alone: [4096,32,4096] over (0, 2) ran 13 blocks for each of
// 32 outputs, 416 blocks against 396 slots, and read 3700-3835 GB/s. A
// block's time is about its share of an output, 1 / s, so the grid's time
// goes as waves(s * n_out) / s; the smallest of that wins, ties going to the
// larger split (12 per output there: one wave of 384 blocks).
inline int64_t split_for_waves(int64_t n_out, int64_t wave, int64_t max_split) {
  const int64_t most = std::min(ceil_div(wave, n_out), max_split);
  int64_t best = 1, best_waves = ceil_div(n_out, wave);
  for (int64_t s = 2; s <= most; ++s) {
    const int64_t waves = ceil_div(s * n_out, wave);
    if (waves * best <= best_waves * s) best = s, best_waves = waves;  // waves/s <= best_waves/best
  }
  return best;
}

// Launches the kernel that combines a split pass's partials ([n_out][split])
// as a programmatic dependent of the pass. A thread per partial: a block per
// output where a block holds them all (396 for a full sum), so that each
// thread makes one load, not two in a row, on the path the next kernel waits
// for; several outputs a block for splits of up to 32, where a block per
// output launched thousands of blocks of a warp ([89, 782, 241] int16 over
// dim 1, 21449 outputs of a few partials each: 41.2 us, 16.8 grouped; H200,
// NOTES.md session 23).
template <class PartialOp, typename out_t>
void launch_finish_partials(const typename PartialOp::acc_type* partials, int64_t split, int64_t n_out,
                            const OuterIndexer& outer, int64_t n_cols, int64_t out_col_stride, const Projection& projection,
                            Outputs<out_t> y, cudaStream_t stream) {
  const int64_t group = std::min<int64_t>(pow2_at_least(split), EnginePolicy::kThreads);
  const int64_t per_block = group > 32 ? 1 : std::min<int64_t>(HostPolicy::kFinishGroupedThreads / group, n_out);
  const int64_t threads = ceil_div(group * per_block, 32) * 32;  // whole warps (group_reduce)
  const int64_t blocks = ceil_div(n_out, per_block);
  TORCH_CHECK(blocks < (int64_t(1) << 31), "gpureduce: too many outputs for one finish");
  static const bool marked =
      (mark_early_trigger(reinterpret_cast<const void*>(gpureduce_finish_partials<PartialOp, out_t>)), true);
  (void)marked;
  launch_kernel(gpureduce_finish_partials<PartialOp, out_t>, dim3(static_cast<unsigned>(blocks)),
                dim3(static_cast<unsigned>(threads)), stream, /*pdl=*/true, partials, static_cast<int>(split),
                static_cast<int>(group), n_out, outer, n_cols, out_col_stride, projection, y);
}

inline bool outer_strides_divisible(const OuterIndexer& outer, int64_t v) {
  for (int d = 0; d < outer.ndim; ++d)
    if (outer.in_strides[d] % v != 0) return false;
  return true;
}

// Whether the outer dims put their rows one after another at a constant
// pitch (each dim's stride the one inside it times that one's size), and
// are few enough for the pitch rows kernel's outputs (kPitchOutDims).
inline bool rows_at_one_pitch(const OuterIndexer& outer) {
  if (outer.ndim < 1 || outer.ndim > kPitchOutDims) return false;
  for (int d = 1; d < outer.ndim; ++d)
    if (outer.in_strides[d] != outer.in_strides[d - 1] * static_cast<int64_t>(outer.sizes[d - 1].divisor)) return false;
  return true;
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Whether a columns pass can be read in vectors of v adjacent columns: its
// columns dense and a multiple of v, every row and outer offset a multiple
// of v, and the data aligned to the vector.
template <typename in_t>
bool columns_vector_fits(const ReducePass& p, const in_t* x, int64_t v) {
  return reinterpret_cast<uintptr_t>(x) % (v * sizeof(in_t)) == 0 && p.col_stride == 1 && p.n_cols % v == 0 &&
         p.reduce_stride % v == 0 && p.reduce_outer_stride % v == 0 && outer_strides_divisible(p.outer, v);
}

// Ragged columns: a columns pass of one or two rows that no vector fits,
// because of its column count or its start, but whose rows and outer
// indices all start at the same offset from a v-element boundary, is read in
// vectors of v from the first boundary, with an edge vector at each end that
// reads only its columns (engine/columns.cuh). Returns that offset (the
// vectors' shift), or -1 where the pass is not such a one or has too few
// whole vectors to pay for the edges. One reduced dim, and elements of 2 to
// 8 bytes (the edge code spilled registers in the kernels of byte inputs).
// A thread of the element-load columns kernel makes one or two loads in
// such a pass: the pass over one-element rows of nansum over the size-1 dim
// of [109830871, 1] float16 went 645 -> 414 us (torch.nansum 626), [22763557,
// 1] float32 141 -> 70, [n, 1] float64 1.16x; [55, 2, 20350] float64 over dim
// 1 (two rows) 1.20x. Over more rows the element loads of neighbouring
// threads merge in L1 and the vectors lost: 41 of 58 padded slices and
// shifted starts of 11 to 441479 rows slower by over 5%, down to 0.58x
// ([4564, 904][:, :901] float16 over dim 0: 7.4 -> 12.7 us). A/B in one
// process on the H100, NOTES.md session 34.
template <typename in_t>
int64_t ragged_columns_shift(const ReducePass& p, const in_t* x, int64_t v) {
  const auto addr = reinterpret_cast<uintptr_t>(x);
  if (sizeof(in_t) < 2 || addr % sizeof(in_t) != 0 || p.col_stride != 1 || p.n_reduce_outer != 1) return -1;
  if (p.n_reduce > HostPolicy::kRaggedColumnMaxRows) return -1;
  if ((p.n_reduce > 1 && p.reduce_stride % v != 0) || !outer_strides_divisible(p.outer, v)) return -1;
  if ((p.n_cols - (v - 1)) / v < HostPolicy::kRaggedColumnMinVectors) return -1;
  return static_cast<int64_t>(addr / sizeof(in_t) % static_cast<uintptr_t>(v));
}

// Whether a rows pass of element stride s can be read as the dense memory
// its rows span (the pitch rows kernel's kStrided): elements of 2 or 4
// bytes at most 12 bytes apart (a 16-byte vector holds one of the row's
// elements or more), one row per output at a constant pitch, spans of fewer
// than 2^31 elements with a vector body of kRaggedRowMinChunks or more. The
// span lies between a row's first and last elements, so inside the storage.
// A/B on the H200 against element loads over 150 passes of odd pitches (138
// made, 12 random; NOTES.md, session 60), torch.sum's time over ours:
// [6704, 5005][:, ::3] bfloat16 0.60x -> 0.91x, [2050, 1023][:, ::2]
// float32 0.66x -> 0.96x, [8188, 2049][:, ::2] int32 2.43x -> 2.89x. Not:
// - byte elements (strides of 5 to 8 keep two or three of a vector's 16, each
//   added alone: [13408, 5005][:, ::5] int8 2.75x -> 2.05x);
// - passes under 1 MB ([1741, 301][:, ::4] float16 1.06x -> 0.83x);
// - outputs too few to give every SM half of kPitchOutputsPerSm warps, whose
//   rows the element loads read a block per output ([1023, 2049][:, ::2]
//   float32 1.40x -> 0.94x); unless the rows give each thread of a block a
//   vector, which the split rows kernel's kStrided then reads, a block or
//   more per output.
// With these left out, geomean 1.92x -> 1.98x and below 0.97x 31 -> 25 over
// the same passes, none slower by over 5%. Strides of 10 and 12 bytes
// (float32 at 3, 16-bit at 5 or 6), where a vector keeps one or two
// elements, against element loads, A/B on the H200 over 60 strided passes
// (NOTES.md, session 85): 12 faster by over 3% ([100000, 301][:, ::3]
// float32 0.73x -> 0.92x of torch.sum, [20000, 3000][:, ::5] bfloat16 0.83x
// -> 0.89x), 2 slower, integer sums still faster than torch.sum ([3000,
// 3001][:, ::5] int16 1.68x -> 1.44x); 14 bytes and more are not tried.
inline bool strided_span_rows_fit(const ReducePass& p, const void* x, int64_t elem_bytes, int64_t v) {
  const int64_t s = p.elem_stride;
  if (p.kind != ReducePass::Kind::kRows || p.n_rows != 1 || s < 2 || s * elem_bytes > 12 || elem_bytes < 2 ||
      reinterpret_cast<uintptr_t>(x) % elem_bytes != 0 || p.row_len < 2)
    return false;
  const int64_t span = (p.row_len - 1) * s + 1;
  // Rows that give every thread of a block a vector, too few to give every
  // SM half of kPitchOutputsPerSm warps, take the split rows kernel's
  // kStrided (launch_rows), as does a single row (a full reduction, of any
  // outer dims).
  const bool split = (span - (v - 1)) / v >= Policy::kThreads;
  if (p.n_out != 1 && p.outer.ndim != 1) return false;
  if (!split && 2 * p.n_out < int64_t(sm_count()) * HostPolicy::kPitchOutputsPerSm) return false;
  return span < (int64_t(1) << 31) && (span - (v - 1)) / v >= HostPolicy::kRaggedRowMinChunks &&
         p.n_out * span * elem_bytes >= HostPolicy::kLatencyBoundBytes;
}

// Whether a rows pass of element stride 2 can be read with vector loads as
// dense rows of twice the length: every row and outer offset on a 16-byte
// boundary, and the one element read past each row's end still inside the
// storage (a slice x[..., ::2] of an odd-length dim ends on its last element).
inline bool stride2_rows_fit(const ReducePass& p, const PassBuffers& b, int64_t v) {
  if (p.elem_stride != 2 || !aligned16(b.in) || (2 * p.row_len) % v != 0) return false;
  if (!outer_strides_divisible(p.outer, v) || (p.n_rows > 1 && p.row_stride % v != 0)) return false;
  int64_t last = (p.n_rows - 1) * p.row_stride + 2 * p.row_len - 1;  // the last element read
  for (int d = 0; d < p.outer.ndim; ++d)
    last += (static_cast<int64_t>(p.outer.sizes[d].divisor) - 1) * p.outer.in_strides[d];
  return b.in_bytes_to_end >= (last + 1) * int64_t(c10::elementSize(b.in_dtype));
}

// The bytes of input a pass reads, dims of stride 0 counted in full
// (launch_engine_kernel's bound on letting the next kernel in early).
template <typename in_t>
int64_t pass_read_bytes(const ReducePass& p) {
  const int64_t per_output = p.kind == ReducePass::Kind::kRows ? p.n_rows * p.row_len
                                                               : p.n_cols * p.n_reduce * p.n_reduce_outer;
  return p.n_out * per_output * int64_t(sizeof(in_t));
}

// A rows pass of one dense row per output at a constant pitch, through the
// pitch rows kernel (engine/rows.cuh). `chunks`: vectors per row (a ragged
// row's body, counted low); `lanes_wanted`: lanes for kRowChunksPerLane each.
// Against the general inner and short rows kernels (A/B in one process on
// the H200 over the 817 random cases of seeds 0-2 whose last dim is reduced,
// NOTES.md): below 0.97x of torch.sum 99 -> 38, geomean 1.70x -> 1.79x;
// [682649, 200] bfloat16 168 -> 80 us (torch.sum 118), [67650, 372] float32
// 2521 -> 3575 GB/s.
template <class Op, typename in_t, typename out_t, int V>
void launch_pitch_rows(const ReducePass& p, const in_t* x, Outputs<out_t> y, int64_t chunks, int64_t lanes_wanted,
                       bool ragged) {
  PitchRowsArgs a{};
  a.n_out = p.n_out;
  a.projection = p.projection;
  a.in_pitch = p.outer.in_strides[0];
  a.out_dims = p.outer.ndim;
  for (int d = 0; d < p.outer.ndim; ++d) {
    a.out_sizes[d] = p.outer.sizes[d];
    a.out_strides[d] = p.outer.out_strides[d];
  }
  a.row_len = static_cast<int>(p.row_len);
  // Strided rows (ragged, elem_stride > 1): read through their dense spans.
  const bool strided = p.elem_stride > 1;
  a.elem_stride = static_cast<int>(p.elem_stride);
  if (strided)
    for (int64_t j = 0; j < V; j += p.elem_stride) a.kept_pattern |= uint32_t(1) << j;
  const int64_t sms = sm_count();
  // As in launch_rows: a pass that would not give every SM a block takes a
  // lane per chunk, in blocks shrunk until every SM has one.
  const int64_t lane_per_chunk = std::min<int64_t>(pow2_at_least(chunks), 32);
  const bool latency_bound = ceil_div(p.n_out, Policy::kThreads / lane_per_chunk) < sms;
  int64_t group = latency_bound ? lane_per_chunk : std::min<int64_t>(lanes_wanted, 32);
  // A ragged row's 2V - 2 or fewer elements outside its body, at most
  // kPitchEndsPerLane per lane.
  if (ragged) group = std::max(group, pow2_at_least(ceil_div(2 * V - 2, kPitchEndsPerLane)));
  a.group = static_cast<int>(group);
  int64_t threads = Policy::kThreads;
  if (latency_bound)
    while (threads > HostPolicy::kMinLatencyThreads && ceil_div(p.n_out, threads / group) < sms) threads /= 2;
  const auto stream = current_stream();
  auto launch = [&](auto kernel, int64_t blocks_per_sm) {
    if (!latency_bound) {
      const int64_t wave = sms * blocks_per_sm;
      const auto blocks_at = [&](int64_t g) { return ceil_div(p.n_out, threads / g); };
      const int64_t ends_group = ragged ? pow2_at_least(ceil_div(2 * V - 2, kPitchEndsPerLane)) : 1;
      // Ragged rows in more waves than fold: half as many lanes where
      // kRowChunksPerLane rounds the group up (up to two rounds of kUnroll
      // chunks a lane, not one part-filled), so that a warp's fixed costs of
      // a row (its head, ends and shuffles) are paid over more rows; then
      // the fold below as for any pass. A/B on the H200 over 519 ragged
      // passes of 1 to 256 MB (NOTES.md, session 32): 21 faster by over 3%,
      // 1 slower; [185029, 299] float32 over dim 1 1.20x of before,
      // [50382, 333] float32 1.15x, [111848, 300] bfloat16 1.08x, [45827,
      // 247] int64 0.90x (folded on to 4 lanes). In fewer waves the half
      // lanes lost ([3856, 109] int64 0.76x, [2979, 183] bfloat16 0.78x),
      // and so did rows a vector fits ([349525, 96] float16 0.86x).
      if (ragged && ceil_div(blocks_at(group), wave) > HostPolicy::kFoldMaxWaves) {
        int64_t fewer = 1;
        while (fewer * 2 <= ceil_div(chunks, HostPolicy::kRowChunksPerLane)) fewer *= 2;
        group = std::max(ends_group, std::min<int64_t>(fewer, group));
      }
      // A grid of a few waves folds into one: fewer lanes per output (down
      // to kFoldMinGroup, and to the lanes a ragged row's ends need).
      const int64_t least = std::max(HostPolicy::kFoldMinGroup, ends_group);
      const int64_t waves = ceil_div(blocks_at(group), wave);
      int64_t fold = fold_into_one_wave(
          waves, group / least, [&](int64_t f) { return blocks_at(group / f) <= wave; },
          [&](int64_t f) { return rows_fold_pays(chunks, group, waves, f); });
      // Fewer than kFoldNarrowGroup lanes only for short walks. A fourfold
      // fold of four waves into one passes rows_fold_pays for any long row
      // (four times the rounds for a quarter of the waves), but such walks
      // of 8 lanes lost to 16 lanes in two waves. A/B on an H100 in one
      // process (NOTES.md, session 110), torch.sum's time over ours: float32
      // [19406, 5249] over dim 1 0.91x -> 1.01x, [24864, 5329] 0.91x ->
      // 0.99x, float64 [17502, 378] 1.09x -> 1.14x (the passes of session
      // 109's H200 sweep that suggested it, where 16 lanes beat 8 on seven
      // of eight such passes and tied on one), and over the 12 of a fresh
      // draw: 1.008x in geometric mean, 9 faster (up to 4%), 3 int32 passes
      // slower (up to 4%). Walks of up to 4 rounds gained from the fold on
      // the H200 (float16 [17526, 696] 1.17x -> 1.29x, 8 lanes of 3 rounds).
      if (group / fold < HostPolicy::kFoldNarrowGroup &&
          lane_rounds(chunks, group / fold) > HostPolicy::kFoldNarrowMaxRounds)
        fold = std::max<int64_t>(1, std::min(fold, group / HostPolicy::kFoldNarrowGroup));
      group /= fold;
      a.group = static_cast<int>(group);
    }
    a.end_rounds = static_cast<int>(std::min<int64_t>(ceil_div(2 * V - 2, group), kPitchEndsPerLane));
    // A thread of the pitch vector rows kernel takes kUnroll / row_chunks rows a round.
    const int64_t rows_per_thread = a.row_chunks > 0 ? EnginePolicy::kUnroll / a.row_chunks : 1;
    const int64_t blocks = std::min(ceil_div(p.n_out, threads / group * rows_per_thread),
                                    sms * blocks_per_sm * HostPolicy::kInnerRowsBlocksPerSlot);
    launch_engine_kernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(static_cast<unsigned>(threads)), stream,
                         pass_read_bytes<in_t>(p), a, x, y);
  };
  // (Ragged rows of 8-byte elements take the inner rows kernel: launch_rows.)
  if constexpr (V > 1 && sizeof(in_t) != 8) {
    if (ragged) {
      constexpr int kBlocks = EnginePolicy::template pitch_rows_blocks_per_sm<Op, in_t, true>();
      // (Elements of 2 and 4 bytes only: strided_span_rows_fit.)
      if constexpr (sizeof(in_t) == 2 || sizeof(in_t) == 4) {
        if (strided) return launch(gpureduce_pitch_rows<Op, in_t, out_t, V, true, kBlocks, true>, kBlocks);
      }
      return launch(gpureduce_pitch_rows<Op, in_t, out_t, V, true, kBlocks>, kBlocks);
    }
  }
  TORCH_INTERNAL_ASSERT(!ragged, "gpureduce: ragged pitch rows of this element size take the inner rows kernel");
  constexpr int kBlocks = EnginePolicy::template pitch_rows_blocks_per_sm<Op, in_t, false>();
  // Rows of one or two whole 16-byte vectors that take a lane each: several
  // rows a thread (gpureduce_pitch_vector_rows). A/B on the H200 against the
  // pitch rows kernel over 104 passes of 256 KB to 1 GB (60 made rows of V and 2V
  // elements of every dtype, 12 made feature maps, 29 of the random
  // generator's seeds 0-11; NOTES.md session 31): 73 faster by over 3%, none
  // slower, the same bits; geometric mean 4.40x -> 5.12x of torch.sum
  // ([4194304, 8] bfloat16 over dim 1 1940 -> 3309 GB/s, [35727385, 4]
  // float32 2742 -> 3332, [14418, 384, 2, 2] float32 over (2, 3) 2393 ->
  // 3186). Latency-bound passes keep the pitch rows kernel's blocks.
  if (V * sizeof(in_t) == 16 && !latency_bound && lanes_wanted == 1 && chunks * 2 <= EnginePolicy::kUnroll &&
      a.row_len == chunks * V && a.out_dims == 1) {
    a.row_chunks = static_cast<int>(chunks);
    constexpr int kVectorBlocks = EnginePolicy::template pitch_vector_rows_blocks_per_sm<in_t>();
    return launch(gpureduce_pitch_vector_rows<Op, in_t, out_t, V, kVectorBlocks>, kVectorBlocks);
  }
  launch(gpureduce_pitch_rows<Op, in_t, out_t, V, false, kBlocks>, kBlocks);
}

// The split rows kernel (blocks per output, finished by a second kernel
// where an output takes several) for a pass that launch_rows set up in `a`:
// kStrided for strided spans, one row per output.
template <class Op, typename in_t, typename out_t, int V, int kStep, bool kStrided>
void launch_split_rows(const ReducePass& p, RowsArgs<typename Op::wide_op::acc_type> a, const in_t* x,
                       Outputs<out_t> y, cudaStream_t stream) {
  using wide_t = typename Op::wide_op::acc_type;
  const auto split_kernel = gpureduce_split_rows<Op, in_t, out_t, V, kStep, kStrided>;
  // Small sums stay in one block; larger ones take up to one wave of
  // resident blocks, each thread at least one unrolled iteration. The wave
  // counts the blocks this kernel's registers let an SM hold (3 of 512
  // threads for most types), not the 2 that the launch bounds promise.
  static const int64_t split_blocks_per_sm = std::max<int64_t>(
      Policy::kBlocksPerSm, std::min<int64_t>(HostPolicy::kSplitRowsBlocksPerSm,
                                              max_resident_blocks(split_kernel, Policy::kThreads)));
  const int64_t split_wave = int64_t(sm_count()) * split_blocks_per_sm;
  const int64_t per_loop = Policy::kThreads * Policy::kUnroll;
  const int64_t max_split = a.chunks < per_loop * HostPolicy::kOneBlockLoops ? 1 : a.chunks / per_loop;
  const int64_t split = split_for_waves(p.n_out, split_wave, max_split);
  a.split = static_cast<int>(split);
  // Outputs that take a block each, at least three for every two SMs, take
  // blocks of kRowBlockThreads rather than kThreads.
  int64_t threads = split == 1 && 2 * p.n_out >= 3 * int64_t(sm_count()) ? HostPolicy::kRowBlockThreads
                                                                          : int64_t(Policy::kThreads);
  if (split == 1) {
    // A block per output in a few waves folds into one: smaller blocks
    // (down to kFoldMinBlockThreads), each thread reading more of its row.
    // A/B on the H200 over 95 made logits passes of 700 to 3000 rows and
    // 120 random ones of 8 MB or more (NOTES.md, session 25): below 0.97x
    // of torch.sum 23 -> 7, 30 faster by over 5%, none slower ([873,
    // 50257] float32 0.95x -> 1.06x, [959, 256000] float16 0.88x -> 1.03x,
    // int64 0.84x -> 0.92x).
    static ResidentWave resident;
    const auto wave = [&](int64_t t) { return resident.blocks(split_kernel, t); };
    const int64_t t0 = threads;
    const int64_t waves = ceil_div(p.n_out, wave(t0));
    threads = t0 / fold_into_one_wave(
                       waves, t0 / HostPolicy::kFoldMinBlockThreads,
                       [&](int64_t f) { return p.n_out <= wave(t0 / f); },
                       [&](int64_t f) { return rows_fold_pays(a.chunks, t0, waves, f); });
  }
  if (split > 1 && p.n_rows == 1)
    // Each block reads a range of its own, in whole unrolled loops per
    // thread, so that no remainder loads trail. Against interleaved blocks
    // (H200): float32 2^30 4657-4661 against 4617-4627 GB/s, float64 2^28
    // 4641-4643 / 4590-4607. Outputs of many rows keep interleaving: with
    // ranges, [4096,32,4096] over (0, 2) read 3734 GB/s against 3835.
    a.block_chunks = ceil_div(ceil_div(a.chunks, split), Policy::kThreads * Policy::kUnroll) *
                     Policy::kThreads * Policy::kUnroll;
  // A dependent scheduled early holds an SM slot: only a grid of one wave
  // lets the next kernel in from its start.
  a.early_trigger = split * p.n_out <= split_wave;
  a.template set_chunk_step<V>(a.block_chunks == 0 ? split * threads : threads);
  const dim3 grid(static_cast<unsigned>(split), static_cast<unsigned>(p.n_out));
  Workspace workspace;
  if (split > 1) a.partials = partials_workspace<wide_t>(workspace, p.n_out * split);
  // The finish kernel is a programmatic dependent of the split kernel:
  // scheduled while the split kernel runs, with no ticket memset and no
  // launch gap between them (mode chosen against a last-block ticket and a
  // plain second launch, NOTES.md). The split kernel is one only after a
  // kernel that lets it in early (dependent_launch: while capturing,
  // after our own finish or split kernels). As a dependent of the kernel
  // before it whatever that was, it overlapped the call before it where
  // our calls ran back to back (10-17% faster under 10 MB), but after a
  // torch kernel it was 4-9% slower under 1 MB: a torch kernel and a
  // float32 full sum of 2^10 took 4.62 us a pair, 4.21 with the sum
  // launched plainly, 4.22 with torch.sum. Chosen so, back to back it
  // kept the dependent's times (0.995-1.02x) and after a torch kernel the
  // plain launch's (0.998-1.013x), 8% faster than the dependent there
  // under 10 KB. A/B on the H200 over 502 split-rows passes (NOTES.md,
  // session 64).
  launch_kernel(split_kernel, grid, dim3(static_cast<unsigned>(threads)), stream,
                dependent_launch(stream, reinterpret_cast<const void*>(split_kernel), a.early_trigger != 0), a, x, y);
  if (split > 1) {
    launch_finish_partials<typename Op::wide_op>(static_cast<const wide_t*>(a.partials), split, p.n_out, p.outer,
                                                 int64_t(1), int64_t(0), p.projection, y, stream);
  }
}

// `ragged`: each output is one dense row of any width and alignment, read
// as a vector body from its first 16-byte boundary and one element at a time
// outside it (RowsArgs::ragged); or, with elem_stride > 1, one strided row at
// a constant pitch, whose vector body is that of the dense memory it spans
// (strided_span_rows_fit; the pitch rows kernel, or for few long rows the
// split rows kernel's kStrided).
// kStep = 2: the row has element stride 2 and is read as dense memory of
// twice its length with full vector loads (the caller checked that this stays
// inside the storage); every other element is dropped.
template <class Op, typename in_t, typename out_t, int V, int kStep = 1>
void launch_rows(const ReducePass& p, const in_t* x, Outputs<out_t> y, bool ragged = false) {
  using wide_t = typename Op::wide_op::acc_type;
  RowsArgs<wide_t> a{};
  a.outer = p.outer;
  a.n_out = p.n_out;
  a.projection = p.projection;
  a.ragged = ragged;
  a.row_len = p.row_len;
  const bool strided_span = ragged && p.elem_stride > 1;
  const int64_t span = strided_span ? (p.row_len - 1) * p.elem_stride + 1 : p.row_len;
  // A ragged row's body: the whole vectors after its head, whatever the head.
  a.chunks_per_row = ragged ? (span - (V - 1)) / V : p.row_len * kStep / V;
  a.chunks = a.chunks_per_row * p.n_rows;
  a.row_div = FastDivmod(static_cast<uint64_t>(a.chunks_per_row));
  a.row_stride = p.row_stride;
  a.elem_stride = kStep == 1 ? p.elem_stride : 1;
  a.split = 1;

  const int64_t resident_blocks = int64_t(sm_count()) * Policy::kBlocksPerSm;
  const int64_t resident_warps = resident_blocks * (Policy::kThreads / 32);
  const int64_t lanes_wanted = pow2_at_least(ceil_div(a.chunks, HostPolicy::kRowChunksPerLane));
  auto stream = current_stream();

  // Long reductions with too few outputs to give every resident warp one: a
  // whole block per output, split across blocks until the GPU is full.
  const bool long_rows = a.chunks >= Policy::kThreads * Policy::kUnroll;
  // A block per output only for rows that give each of its threads a vector:
  // rows of 128 to 511 vectors took a block each and left most of it idle
  // (random-shape cases: [3140, 919] float32 over dim 1 at 0.42x of torch.sum).
  const bool fills_block = a.chunks >= Policy::kThreads;
  const bool few_outputs =
      p.n_out < resident_warps || (long_rows && p.n_out < resident_warps * HostPolicy::kSplitRowsOutFactor);
  // Or outputs that fit one wave of blocks: a block per output then puts all
  // of a small input's loads in flight at once, where a warp per output reads
  // them in rounds one after another ([3, 1000] float32 over dim 1: 3.1 us
  // against torch.sum's 2.1).
  const bool one_wave = p.n_out <= resident_blocks;
  // One dense row per output at a constant pitch: the pitch rows kernel
  // (launch_pitch_rows), unless the outputs are few. Outputs in another
  // order than their rows (outer dims that the planner could not merge
  // because the output's strides differ) are written through their index.
  // A/B on the H200 against the short and inner rows kernels those took
  // before (NOTES.md, session 102), over 41 such passes: time 0.30x to
  // 1.19x, median 0.77x, 37 faster by over 3%, 4 slower; float32 [13, 9,
  // 219, 503].transpose(0, 3) over dim 0 26.5 -> 17.4 us (torch.sum 21.7),
  // bfloat16 [8, 16, 1024, 128].transpose(1, 2) over dim 3 40.8 -> 12.3
  // (21.9). Slower:
  // rows of 2 to 8 KB in few waves, as the same rows in memory order are
  // ([5, 2555, 513].transpose(0, 1) float64 16.4 -> 19.4, torch.sum 17.6).
  // Not ragged rows of 8-byte elements, which the inner rows kernel (two
  // blocks an SM) read faster. A/B on the H200 over the 10 such passes of a
  // random rows sweep (NOTES.md, session 109), torch.sum's time over ours:
  // int64 [7279, 933] over dim 1 0.80x -> 1.01x, float64 [3255, 3235] 0.91x
  // -> 1.07x, int64 [57037, 513] 0.94x -> 1.06x, [27758, 1915] 0.91x ->
  // 0.99x; 9 faster, float64 [232473, 259] slower (0.96x -> 0.89x). And on
  // an H100, the rule against the pitch kernel in one process over 19 such
  // passes (12 of the passes above and session 32's, 7 of a fresh random
  // draw): time 1.064x in geometric mean, 13 faster by over 3%, 1 slower
  // (float64 [56184, 79] 0.99x -> 0.91x); below 0.97x of torch.sum 13 -> 2.
  // Why the pitch kernel's ragged instance loses here is not known: at its
  // 40 registers (three blocks an SM) ptxas reports no spill.
  const bool pitch_rows = kStep == 1 && p.n_rows == 1 && (p.elem_stride == 1 || strided_span) &&
                          rows_at_one_pitch(p.outer) && span < (int64_t(1) << 31) &&
                          !(ragged && sizeof(in_t) == 8);
  // Rows of fewer than a block's loop per thread with enough outputs to give
  // every SM kPitchOutputsPerSm warps are not few: [4092, 6000] bfloat16
  // over dim 1 (pitch rows) ran a block per output at 35.1 us, a warp per
  // output 14.2 (torch.sum 17.7). The same held for rows of other layouts,
  // A/B on the H200 (NOTES.md, session 49), torch.sum's time over ours:
  // [2697, 1526][:, ::2] float32 0.50x -> 0.75x, float64 0.78x -> 0.98x,
  // int32 1.43x -> 2.09x, [2, 4000, 1500] float32 over (0, 2) 1.34x ->
  // 1.62x, [3, 2500, 2048] bfloat16 3.0x -> 3.5x; [2, 3000, 2048] float32
  // 2.30x -> 1.99x. Not outputs of several ragged rows, whose vector bodies
  // only the split kernel reads ([5, 2300, 999] float32 over (0, 2) 2.43x
  // -> 1.71x through element loads). Outputs of one dense row each are not
  // few from kOneRowOutputsPerSm warps an SM, half as many, if a block of
  // kRowBlockThreads would give each thread less than a whole unrolled
  // loop: such a block paid its block-wide combine for a few loads a thread
  // (float64 [1610, 1620] over dim 1 at 0.90x of torch.sum, 1.14x a warp
  // per output; H100, NOTES.md session 110). Outputs of several rows or of
  // strided rows were not sampled, and keep kPitchOutputsPerSm.
  const bool one_row_warps = p.n_rows == 1 && p.elem_stride == 1 &&
                             a.chunks < HostPolicy::kRowBlockThreads * Policy::kUnroll &&
                             p.n_out >= int64_t(sm_count()) * HostPolicy::kOneRowOutputsPerSm;
  const bool warp_per_output_fills =
      !(ragged && p.n_rows > 1) && !long_rows &&
      (p.n_out >= int64_t(sm_count()) * HostPolicy::kPitchOutputsPerSm || one_row_warps);
  // A single output (a full sum) always takes whole blocks: through the
  // inner rows kernel, one warp of one block summed 2^10 bfloat16 values in
  // 2.3 µs against 1.4 µs for 2^10 float32 here (H200).
  if (p.n_out == 1 ||
      (!warp_per_output_fills && lanes_wanted > 32 && few_outputs && (fills_block || one_wave) && p.n_out <= 65535)) {
    // Strided spans (of 2- and 4-byte elements) take the split kernel's
    // kStrided instance: vector loads of the dense memory each row spans,
    // where element loads held a quarter to an eighth of the bytes in
    // flight (float16 [1985, 161881][:, ::2] over dim 1 at 0.78x of
    // torch.sum; NOTES.md session 84).
    constexpr bool kSplitSpans = V > 1 && kStep == 1 && (sizeof(in_t) == 2 || sizeof(in_t) == 4);
    if constexpr (kSplitSpans) {
      if (strided_span) {
        for (int64_t j = 0; j < V; j += p.elem_stride) a.kept_pattern |= uint32_t(1) << j;
        return launch_split_rows<Op, in_t, out_t, V, kStep, true>(p, a, x, y, stream);
      }
    }
    if (strided_span) return launch_rows<Op, in_t, out_t, 1>(p, x, y);
    return launch_split_rows<Op, in_t, out_t, V, kStep, false>(p, a, x, y, stream);
  }
  // Outputs of several ragged rows take vector bodies in split passes only
  // (RaggedEnds): here they are read an element per load, as before.
  if constexpr (V > 1) {
    if (ragged && p.n_rows > 1) return launch_rows<Op, in_t, out_t, 1>(p, x, y);
  }
  if constexpr (kStep == 1) {
    if (pitch_rows) return launch_pitch_rows<Op, in_t, out_t, V>(p, x, y, a.chunks, lanes_wanted, ragged);
  }
  TORCH_INTERNAL_ASSERT(!strided_span, "gpureduce: strided spans take the pitch rows kernel");
  // A pass that would not give every SM a block is bound by latency, not
  // bandwidth: a block's time is its longest thread's chain of loads, adds and
  // shuffles. There each output takes a lane per chunk (up to a warp), so a
  // thread reads one output's few chunks in one round, and blocks shrink
  // (down to kMinLatencyThreads) until every SM has one. The short rows
  // kernel had each thread sum four outputs one after another in blocks of
  // 512: [124, 200] bfloat16 over dim 1 took 3.96 us against torch.sum's 2.31
  // (H200; 3.44 with blocks of 128 alone, 1.97 with this).
  const int64_t lane_per_chunk = std::min<int64_t>(pow2_at_least(a.chunks), 32);
  const int64_t sms = sm_count();
  const int64_t latency_blocks = ceil_div(p.n_out, Policy::kThreads / lane_per_chunk);
  // So is an inner rows pass of fewer blocks than SMs whose lanes would load
  // their chunks in several rounds (16-bit vectors load a lane's last chunks
  // one after another: EnginePolicy::tail_together), where a lane per chunk
  // still fits one wave: [2366, 221] bfloat16 over dim 1 3.94 -> 3.16 us
  // (torch.sum 3.00). Not where the lanes load in one round anyway: float32
  // [2715, 171] went 3.83 -> 4.45, and the short rows kernel's vector rows
  // ([2225, 124] float32 2.78 -> 3.40) lost too (H200, NOTES.md).
  const bool short_kernel = kStep == 1 && a.chunks <= 32 && !ragged;
  const int64_t inner_group = std::min<int64_t>(lanes_wanted, 32);
  const bool rounds = !EnginePolicy::template tail_together<in_t, V, kStep>() && ceil_div(a.chunks, inner_group) > 1;
  const bool latency_bound =
      latency_blocks < sms || (!short_kernel && rounds && ceil_div(p.n_out, Policy::kThreads / inner_group) < sms &&
                               latency_blocks <= resident_blocks);
  if (latency_bound) {
    a.group = static_cast<int>(lane_per_chunk);
    a.template set_chunk_step<V>(a.group);
    int64_t threads = Policy::kThreads;
    while (threads > HostPolicy::kMinLatencyThreads && ceil_div(p.n_out, threads / a.group) < sms) threads /= 2;
    launch_engine_kernel(gpureduce_inner_rows<Op, in_t, out_t, V, kStep>,
                  dim3(static_cast<unsigned>(ceil_div(p.n_out, threads / a.group))),
                  dim3(static_cast<unsigned>(threads)), stream, pass_read_bytes<in_t>(p), a, x, y);
    return;
  }
  // Outputs of at most 32 chunks: a lane per chunk (gpureduce_sum_short_rows).
  // [2097152, 32] float32 over dim 1 read 3302 GB/s with two lanes of four
  // chunks each through the inner rows kernel (benchmarks/NOTES.md).
  if constexpr (kStep == 1) {
    if (a.chunks <= 32 && !ragged) {
      constexpr bool spills_at_two = sizeof(in_t) == 2 && V == 8 && !std::is_same_v<in_t, c10::Half>;
      const int64_t per_lane = spills_at_two ? 1 : HostPolicy::kShortRowsPerLane;
      a.group = static_cast<int>(pow2_at_least(ceil_div(a.chunks, per_lane)));
      // Blocks shrink (down to kMinLatencyThreads) until every SM has one:
      // in 56 blocks of 512, [13, 2, 22, 25, 5] float32 over (1, 4) kept 56
      // SMs issuing twice torch.sum's instructions each (ncu) while the rest
      // idled; 3.42 -> 3.06 us (torch.sum 2.47; H200, NOTES.md session 24).
      unsigned threads = Policy::kThreads;
      const int64_t outs_per_group = Policy::kUnroll / per_lane;
      while (threads > HostPolicy::kMinLatencyThreads &&
             ceil_div(p.n_out, (threads / a.group) * outs_per_group) < sms)
        threads /= 2;
      const int64_t per_block = (threads / a.group) * outs_per_group;
      const unsigned blocks = static_cast<unsigned>(
          std::min(ceil_div(p.n_out, per_block), resident_blocks * HostPolicy::kInnerRowsBlocksPerSlot));
      if constexpr (!spills_at_two) {
        if (per_lane == 2)
          launch_engine_kernel(gpureduce_short_rows<Op, in_t, out_t, V, 2>, dim3(blocks), dim3(threads), stream,
                               pass_read_bytes<in_t>(p), a, x, y);
      }
      if (per_lane == 1)
        launch_engine_kernel(gpureduce_short_rows<Op, in_t, out_t, V, 1>, dim3(blocks), dim3(threads), stream,
                             pass_read_bytes<in_t>(p), a, x, y);
      return;
    }
  }
  a.group = static_cast<int>(std::min<int64_t>(lanes_wanted, 32));
  {
    // A grid of a few waves folds into one: fewer lanes per output, down to
    // kFoldMinGroup. (The wave counts the blocks per SM of the launch bounds
    // of the element and default kernels below.)
    const int64_t wave = int64_t(sm_count()) * EnginePolicy::template element_inner_rows_blocks_per_sm<in_t, V>();
    const int64_t group = a.group;
    const auto blocks_at = [&](int64_t g) { return ceil_div(p.n_out, Policy::kThreads / g); };
    const int64_t waves = ceil_div(blocks_at(group), wave);
    a.group = static_cast<int>(group / fold_into_one_wave(
                                           waves, group / HostPolicy::kFoldMinGroup,
                                           [&](int64_t f) { return blocks_at(group / f) <= wave; },
                                           [&](int64_t f) { return rows_fold_pays(a.chunks, group, waves, f); }));
  }
  a.template set_chunk_step<V>(a.group);
  const int64_t groups_per_block = Policy::kThreads / a.group;
  const int64_t blocks = std::min(ceil_div(p.n_out, groups_per_block), resident_blocks * HostPolicy::kInnerRowsBlocksPerSlot);
  constexpr int kShortBlocks = EnginePolicy::template short_inner_rows_blocks_per_sm<in_t, V>();
  constexpr int kElementBlocks = EnginePolicy::template element_inner_rows_blocks_per_sm<in_t, V>();
  const dim3 grid(static_cast<unsigned>(blocks));
  if constexpr (kElementBlocks != EnginePolicy::kBlocksPerSm) {
    launch_engine_kernel(gpureduce_inner_rows<Op, in_t, out_t, V, kStep, kElementBlocks>, grid, dim3(Policy::kThreads),
                         stream, pass_read_bytes<in_t>(p), a, x, y);
    return;
  }
  if constexpr (kShortBlocks != EnginePolicy::kBlocksPerSm) {
    if (ceil_div(a.chunks, a.group) <= 2 * Policy::kUnroll) {
      launch_engine_kernel(gpureduce_inner_rows<Op, in_t, out_t, V, kStep, kShortBlocks>, grid, dim3(Policy::kThreads),
                    stream, pass_read_bytes<in_t>(p), a, x, y);
      return;
    }
  }
  launch_engine_kernel(gpureduce_inner_rows<Op, in_t, out_t, V, kStep>, grid, dim3(Policy::kThreads), stream,
                       pass_read_bytes<in_t>(p), a, x, y);
}

// col_shift: see ragged_columns_shift.
template <class Op, typename in_t, typename out_t, int V>
void launch_columns(const ReducePass& p, const in_t* x, Outputs<out_t> y, int64_t col_shift = 0) {
  using acc_t = typename Op::acc_type;
  ColumnsArgs<acc_t> a{};
  a.outer = p.outer;
  a.projection = p.projection;
  a.n_outer = p.n_out;
  a.n_cols = p.n_cols;
  a.col_stride = p.col_stride;
  a.out_col_stride = p.out_col_stride;
  a.n_reduce = p.n_reduce;
  a.reduce_stride = p.reduce_stride;
  a.n_reduce_outer = p.n_reduce_outer;
  a.reduce_outer_stride = p.reduce_outer_stride;
  a.n_rows = p.n_reduce * p.n_reduce_outer;
  a.reduce_div = FastDivmod(static_cast<uint64_t>(p.n_reduce));
  TORCH_INTERNAL_ASSERT(col_shift == 0 || (V * sizeof(in_t) == 16 && sizeof(in_t) >= 2 && p.n_reduce_outer == 1),
                        "gpureduce: only 16-byte column vectors of 2- to 8-byte elements, one reduced dim, are shifted");
  a.col_shift = col_shift;
  a.vec_cols = ceil_div(p.n_cols + col_shift, V);
  // Threads along the rows (by) only as many as give each one about
  // HostPolicy::rows_per_column_thread rows; at least kColumnMinBx (32 or
  // more) along the columns where there are that many, for long row
  // segments per warp.
  int64_t by_wanted = 1;
  while (by_wanted * 2 * HostPolicy::rows_per_column_thread<in_t, V>() <= a.n_rows &&
         by_wanted < HostPolicy::kMaxRowThreads)
    by_wanted *= 2;
  int64_t bx = std::min<int64_t>(
      {pow2_at_least(a.vec_cols), std::max(Policy::kThreads / by_wanted, pow2_at_least(HostPolicy::kColumnMinBx)),
       int64_t(Policy::kThreads)});
  const int64_t resident_blocks = int64_t(sm_count()) * Policy::kBlocksPerSm;
  const int64_t input_bytes = a.n_outer * a.n_cols * a.n_rows * int64_t(sizeof(in_t));
  // A small pass is bound by latency: its tiles need only give every SM one
  // block, not fill two waves with narrow tiles whose every warp pays the
  // kernel's fixed costs for a load or two ([5, 23, 1589] bfloat16 view over
  // dim 0: 575 blocks of 512 threads, a row each, 4.32 us; 161 blocks 2.93,
  // torch.sum 2.80).
  const bool latency_columns = input_bytes < HostPolicy::kLatencyBoundBytes;
  // Enough vectors of columns that threads walking their rows alone fill
  // the SMs: more row threads would only add levels to the tree over y.
  const bool many_vectors =
      !latency_columns && a.n_outer * a.vec_cols >= int64_t(sm_count()) * HostPolicy::kColumnVectorsPerSm;
  const int64_t target_blocks = latency_columns ? int64_t(sm_count()) : resident_blocks * HostPolicy::kColumnTargetWaves;
  // Narrower tiles (down to kColumnMinBx vectors) before any split, and no
  // more row threads than rows: short rows of many columns ran in a few wide
  // tiles, split along their few rows into partials that cost more traffic
  // than the input ([26, 256000] bool over dim 0: 192 blocks, 100 us against
  // torch.sum's 40).
  while (bx > HostPolicy::kColumnMinBx && ceil_div(a.vec_cols, bx) * a.n_outer < target_blocks) bx /= 2;
  // In a pass under kTinyPassBytes, narrower still (down to one vector)
  // while the tiles are fewer than the target and a row thread would walk
  // more than kTinyColumnWalkRows rows: each halving doubles the row
  // threads, so the pass reads unsplit (below) in more blocks rather than
  // in a cluster ([1, 3642, 3] bfloat16 over dim 1: 3 tiles of 512 row
  // threads, not a cluster of 7 blocks; 0.87x -> 1.00x of torch.sum,
  // [1, 1049, 14] float32 0.91x -> 0.99x; H200, NOTES.md session 24). Not
  // where the walk is already short: narrowing those lost up to 23%
  // ([3, 7, 2048] bfloat16 over dim 1).
  if (input_bytes < HostPolicy::kTinyPassBytes) {
    const auto walk = [&](int64_t b) {
      return ceil_div(a.n_rows, std::min<int64_t>(Policy::kThreads / b, pow2_at_least(a.n_rows)));
    };
    while (bx > 1 && ceil_div(a.vec_cols, bx) * a.n_outer < target_blocks &&
           walk(bx) > HostPolicy::kTinyColumnWalkRows)
      bx /= 2;
  }
  // A thread per row, or, in a latency-bound pass, as many row threads as
  // give each at most one unrolled loop of rows, all loaded in one round:
  // the rest would only add warps and levels to the tree over y. A warp
  // there runs about 300 instructions whatever it loads ([5, 32000]
  // float32 over dim 0 in 250 blocks of 32 x 8 threads for its 5 rows: 8
  // times the instructions of torch.sum's kernel, Nsight Compute on the
  // H200, NOTES.md session 58). The blocks grouping outer indices below
  // take the same count. A/B on the H200 in one process over the 964
  // random cases under 4 MB: 40 faster by over 5%, 19 slower by 5-7% (the
  // slowest of them rows passes and full sums, which it does not change: the
  // run's noise), below 0.97x of torch.sum 32 -> 25 ([1, 305, 8] float32
  // over dim 1 3.00 -> 2.52 us, [10, 1000] over dim 0 2.57 -> 2.13).
  int64_t by = std::min<int64_t>(Policy::kThreads / bx, latency_columns
                                                            ? pow2_at_least(ceil_div(a.n_rows, Policy::kUnroll))
                                                            : pow2_at_least(a.n_rows));
  if (!latency_columns) {
    // Each row thread at least one unrolled loop of rows (kUnroll), its
    // loads in flight together, rather than a row or two and a deeper tree
    // over y. A/B on the H200 over 489 random passes of 1 to 128 MB: 12
    // faster by over 5%, 1 slower ([55, 2048, 4, 4] channels_last float32
    // over (2, 3) 8.37 -> 4.72 us, torch.sum 5.26; [21, 7, 5120] float32
    // over dim 1 5.08 -> 3.71, torch.sum 3.89).
    int64_t cap = 1;
    while (cap * 2 * Policy::kUnroll <= a.n_rows) cap *= 2;
    by = std::min(by, cap);
  }
  if (many_vectors) by = std::min(by, by_wanted);
  // Tiles of equal width, in whole warps: a power-of-two tile a little
  // narrower than the columns left a second tile almost empty in every outer
  // index, whose blocks held SM slots for a warp's work ([27, 355, 8, 1, 1068]
  // float64 over (2, 3): 534 vectors in tiles of 512 and 22, 0.96x -> 1.02x
  // of torch.sum; [739, 42, 524] int64 over dim 1, 256 and 6: 0.87x -> 0.96x;
  // H200, NOTES.md session 26). Columns narrower than the tile trim it the
  // same way ([149, 36, 34, 171] float16 over dim 2 of a .step view ran 85
  // of every 256 threads idle: 49.3 -> 42.4 us, session 14).
  bx = std::min(bx, ceil_div(ceil_div(a.vec_cols, ceil_div(a.vec_cols, bx)), 32) * 32);
  a.x_tiles = ceil_div(a.vec_cols, bx);
  a.outer_group = 1;
  int64_t block_x = bx;
  // Not in a latency-bound pass of kGroupOutersBelowVectors vectors of
  // columns or more whose tiles give each SM at most one: narrow tiles of
  // one outer index give more, smaller blocks than a few wide ones, and no
  // cluster split. With more tiles than SMs they are grouped: a tile per
  // outer index gave [1067, 11, 22] float32 over dim 1 1067 blocks of 16
  // rows of 32 threads, 11 of them walking one row (0.42x -> 1.15x of
  // torch.sum; H200, NOTES.md session 24).
  if (a.n_outer > 1 && pow2_at_least(a.vec_cols) * by_wanted < Policy::kThreads &&
      !(latency_columns && a.vec_cols >= HostPolicy::kGroupOutersBelowVectors &&
        a.x_tiles * a.n_outer <= int64_t(sm_count()))) {
    // Few columns: a block takes several outer indices side by side, with
    // only the row threads that the rows want (a block per outer index left
    // all but 2 of 512 threads idle on a [2, 43384, 2, 70] bfloat16
    // permutation over dim 0: 0.004x of torch.sum).
    by = by_wanted;
    a.outer_group = std::min<int64_t>(std::max<int64_t>(Policy::kThreads / (by * a.vec_cols), 1), a.n_outer);
    if (many_vectors) {
      a.outer_group = std::min<int64_t>(
          std::max<int64_t>(HostPolicy::kColumnGroupedThreads / (by * a.vec_cols), 1), a.n_outer);
    } else if (ceil_div(a.n_outer, a.outer_group) < resident_blocks) {
      // Packed into less than one wave of blocks, the pass is bound by
      // latency, not bandwidth: enough row threads that each walks at most
      // one unrolled loop of rows, and fewer outer indices per block to make
      // room ([8, 16, 1024] bool over dim 1 ran in one block whose threads
      // walked 16 rows each: 13.5 us against torch.sum's 6.1).
      const int64_t by_fits = Policy::kThreads / pow2_at_least(a.vec_cols);
      // Up to kMaxLatencyRowThreads row threads; in a pass of 1 MB or more,
      // beyond kMaxRowThreads only while each still walks
      // kRowsPerColumnThread rows.
      int64_t cap = HostPolicy::kMaxLatencyRowThreads;
      if (!latency_columns) {
        cap = HostPolicy::kMaxRowThreads;
        while (cap < HostPolicy::kMaxLatencyRowThreads && cap * 2 * HostPolicy::kRowsPerColumnThread <= a.n_rows)
          cap *= 2;
      }
      const int64_t by_packed = by;
      by = std::min({std::max(by, pow2_at_least(ceil_div(a.n_rows, Policy::kUnroll))), cap, by_fits});
      // Only as many as keep the blocks within the wave: each doubling
      // halves the outer indices a block takes and doubles the blocks, and
      // past one wave the pass pays a second round of blocks for walks half
      // as long. A/B on the H200 over 60 made [B, R, C] passes of 0.25 to
      // 64 MB (NOTES.md session 23): 9 faster by over 5%, 1 slower;
      // [9079, 34, 24] bfloat16 over dim 1 11.8 -> 8.2 us, [27373, 81, 4]
      // float32 18.4 -> 14.5 (torch.sum 14.4).
      while (by > by_packed && ceil_div(a.n_outer, std::max<int64_t>(Policy::kThreads / (by * a.vec_cols), 1)) >
                                   resident_blocks)
        by /= 2;
      a.outer_group = std::min<int64_t>(std::max<int64_t>(Policy::kThreads / (by * a.vec_cols), 1), a.n_outer);
      // And blocks of fewer outer indices (down to kMinLatencyThreads
      // threads) until every SM has one: [11360, 7, 4] float32 over dim 1
      // ran in 45 blocks of 512 threads (0.93x of torch.sum; H200,
      // NOTES.md session 24).
      while (a.outer_group > 1 && a.outer_group * a.vec_cols * by > HostPolicy::kMinLatencyThreads &&
             ceil_div(a.n_outer, a.outer_group) < int64_t(sm_count()))
        a.outer_group = ceil_div(a.outer_group, 2);
    }
    block_x = a.outer_group * a.vec_cols;
    a.x_tiles = 1;
  }
  const int64_t tiles = a.outer_group > 1 ? ceil_div(a.n_outer, a.outer_group) : a.x_tiles * a.n_outer;
  TORCH_CHECK(tiles < (int64_t(1) << 31), "gpureduce: too many output tiles");

  // Narrow loads on long walks in a grid that will not fold: kLongWalkUnroll
  // loads in flight (engine/columns.cuh). Each kernel keeps its own
  // residency.
  constexpr bool kNarrowLoads = V * sizeof(in_t) <= 4;
  const bool folds = !latency_columns && tiles >= target_blocks;
  const bool long_walk = kNarrowLoads && !folds && ceil_div(a.n_rows, by) >= Policy::kUnroll;
  auto kernel = gpureduce_columns<Op, Policy::kUnroll, in_t, out_t, V>;
  static ResidentWave resident_short, resident_long;
  if constexpr (kNarrowLoads) {
    if (long_walk) kernel = gpureduce_columns<Op, kLongWalkUnroll, in_t, out_t, V>;
  }
  ResidentWave& resident = long_walk ? resident_long : resident_short;
  if (folds) {
    // An unsplit grid of a few waves folds into one: fewer row threads per
    // block, each walking more rows, so that more blocks fit an SM. Where
    // each thread loads single elements its loads in flight are few, and
    // the walk is made at most as many times longer as the waves it
    // replaces; vectors fold freely. A/B on the H200 (NOTES.md, session 25):
    // [342, 128256] float32 over dim 0 0.95x -> 1.01x of torch.sum, [69,
    // 205923] bfloat16 0.78x -> 1.01x, [158, 384, 56, 56] channels_last
    // bfloat16 over (2, 3) 0.93x -> 1.02x, none slower by over 5%.
    // Where a block takes several outer indices, down to four row threads:
    // blocks of one or two warps walking whole columns lost up to 34%
    // ([60931, 96, 12] float32 over dim 1 0.99x -> 0.65x, [22800, 67, 16]
    // bfloat16 summed as float64), while a grid a few blocks past the
    // kernel's real wave left those for a second round ([802, 128, 128]
    // float32 over dim 1: 401 blocks of 512 threads, 396 resident at 40
    // registers). A/B of that fold on the H200 in one process over 70 [B,
    // R, C] sums over R of 1 to 930 MB (NOTES.md, session 44): 3 faster by
    // over 5%, none slower ([802, 128, 128] 0.91x -> 0.99x of torch.sum,
    // [1807, 426, 128] float16 1.02x -> 1.13x).
    const int64_t min_row_threads = a.outer_group > 1 ? 4 : 1;
    const auto wave = [&](int64_t b) { return resident.blocks(kernel, block_x * b); };
    const int64_t waves = ceil_div(tiles, wave(by));
    by /= fold_into_one_wave(
        waves, by, [&](int64_t f) { return tiles <= wave(by / f); },
        [&](int64_t f) { return by / f >= min_row_threads && (V > 1 || f <= waves); });
  }
  // A folded grid of narrow loads (tiles enough to fill the SMs whatever
  // their row threads): the fewest row threads whose grid, in one wave of
  // the long-walk kernel, still gives every SM kLongWalkThreadsPerSm
  // threads, each keeping kLongWalkUnroll loads in flight, where each then
  // walks 2 * kLongWalkUnroll rows or more and the grid takes no more waves
  // than the plan's. Row threads had been chosen for rows a thread
  // (kRowsPerColumnThread), so a few tens of rows went to 2 to 16 row
  // threads each loading 4 at a time, and a shared-memory tree over them.
  // A/B on the H200 in one process over the 124 passes of random seeds 72 to
  // 111 and made odd-width columns that it changes (NOTES.md, session 70):
  // time 0.868x in geometric mean, 102 faster by over 5%, 5 slower (the
  // worst [280, 6787, 14] bfloat16 permuted, 20x -> 14x of torch.sum), below
  // 0.97x of torch.sum 13 -> 4 ([149, 72, 34, 171] float16 over dim 2 of a
  // .step view 0.80x -> 1.07x; [18452, 70, 27] float32 over dim 1 0.88x ->
  // 1.05x; one new: [16812, 105, 11] float32 0.99x -> 0.95x); the 57 of
  // the fresh seeds 92 to 111 alone 0.863x, 2 slower. Counting held threads, not the grid's: blocks of a few columns
  // (15 threads) are capped at 32 an SM. Not vectors of bytes: the one
  // sampled ([86908, 66, 4] bool over dim 1) ran 2.3x slower.
  if constexpr (kNarrowLoads) {
    if (folds && !(sizeof(in_t) == 1 && V > 1)) {
      const auto long_kernel = gpureduce_columns<Op, kLongWalkUnroll, in_t, out_t, V>;
      const auto held_threads = [&](int64_t b) {
        return std::min(tiles, resident_long.blocks(long_kernel, block_x * b)) * block_x * b;
      };
      int64_t b = 1;
      while (b < by && held_threads(b) < int64_t(sm_count()) * HostPolicy::kLongWalkThreadsPerSm) b *= 2;
      if (ceil_div(a.n_rows, b) >= 2 * kLongWalkUnroll &&
          ceil_div(tiles, resident_long.blocks(long_kernel, block_x * b)) <=
              ceil_div(tiles, resident_short.blocks(kernel, block_x * by))) {
        by = b;
        kernel = long_kernel;
      }
    }
  }
  static PerDevice clusters;  // launches_in_clusters' answer, per device
  // Whether a split of this pass could finish inside a cluster: the device
  // and the loaded code have clusters, and the block's partials fit its
  // shared memory.
  const bool cluster_fits =
      launches_in_clusters(clusters, kernel) &&
      block_x <= column_scratch_slots<V, acc_t>();
  int64_t split = 1;
  if (tiles < target_blocks) {
    const bool small = tiles * 4 <= resident_blocks && input_bytes <= HostPolicy::kSmallColumnInputBytes;
    const int64_t min_loops = small ? HostPolicy::kMinColumnLoopsSmall : HostPolicy::kMinColumnLoops;
    // A split writes an accumulator per column: at least kSplitBytesPerPartial
    // input bytes per column and split keep that traffic an eighth of the read.
    const int64_t max_split = std::max<int64_t>(
        1, std::min(a.n_rows / (by * Policy::kUnroll * min_loops),
                    a.n_rows * int64_t(sizeof(in_t)) / (HostPolicy::kSplitBytesPerPartial * int64_t(sizeof(acc_t)))));
    // Up to the target's blocks, but not a few blocks past the kernel's own
    // wave (the target counts kBlocksPerSm a SM, which is all that kernels of
    // 64 registers hold): rounded up, the split left those for a second
    // round, each reading its whole share of a column almost alone. ncu on
    // the H200, [8192, 8192] uint8 over dim 0: 16 tiles split 17 ways, 272
    // blocks against 264 resident, 36.8 us at 39% of DRAM bandwidth. A/B
    // against the rounded-up split over 160 columns passes of 1 MB to 1 GB
    // (NOTES.md, session 31): 26 faster by over 3%, 1 slower ([14434, 18384]
    // bool over dim 0 13.9x -> 13.3x of torch.sum), below 0.97x 7 -> 1
    // ([128, 1280, 56, 56] channels_last float16 over (0, 2, 3) 0.92x ->
    // 1.16x, [103546, 402] float64 over dim 0 0.97x -> 1.16x).
    split = split_for_waves(tiles, resident.blocks(kernel, block_x * by),
                            std::min({ceil_div(target_blocks, tiles), max_split, int64_t(65535)}));
    // A small pass's split is cut to the cluster size where that at most
    // doubles each thread's rows, or leaves it at most kSmallSplitRows: a
    // few more loads per thread cost less than the ticket's memset and the
    // partials' round trips through L2 ([2, 1390, 3] over dim 1, a stride-6
    // view, split 21 ways: 6.1 us against torch.sum's 2.9; cut to 8, 3.8).
    if (small && cluster_fits && split > kMaxClusterSplit &&
        (split <= 2 * kMaxClusterSplit || ceil_div(a.n_rows, by * kMaxClusterSplit) <= HostPolicy::kSmallSplitRows))
      split = kMaxClusterSplit;
  }
  // A tiny pass whose row threads walk few rows unsplit is read unsplit:
  // the cluster's combine costs more than a longer walk ([1, 378, 15]
  // float32 over dim 1, 12 rows a thread: 3.35 -> 2.66 us, torch.sum 2.52).
  // Walks of 33 rows and more lost ([1, 1049, 14] float32 0.91x -> 0.84x
  // of torch.sum; H200, NOTES.md session 24).
  if (input_bytes < HostPolicy::kTinyPassBytes && ceil_div(a.n_rows, by) <= HostPolicy::kTinyColumnWalkRows)
    split = 1;
  // No thread walks more than kMaxColumnThreadRows rows, nor with int32
  // running sums more than kMaxNarrowColumnRows.
  const int64_t max_thread_rows = std::is_same_v<typename Op::template walk_type<in_t>, acc_t>
                                      ? kMaxColumnThreadRows
                                      : kMaxNarrowColumnRows;
  split = std::max(split, ceil_div(a.n_rows, by * max_thread_rows));
  TORCH_CHECK(split <= 65535, "gpureduce: too many rows for one columns pass");
  a.rows_per_split = ceil_div(a.n_rows, split);
  split = ceil_div(a.n_rows, a.rows_per_split);
  a.split = static_cast<int>(split);
  a.row_step_inner = by % a.n_reduce;
  a.row_step = a.row_step_inner * a.reduce_stride + by / a.n_reduce * a.reduce_outer_stride;
  a.row_carry = a.reduce_outer_stride - a.n_reduce * a.reduce_stride;
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(split));
  const dim3 block(static_cast<unsigned>(block_x), static_cast<unsigned>(by));
  const auto stream = current_stream();
  // Splits of a few blocks are finished inside a cluster: the ticket's
  // memset and the round trips of partials through L2 cost small inputs
  // more than their reads ([1, 1049, 14] float32 over dim 1: a 0.8 us memset
  // and a 4.5 us kernel against torch.sum's 2.9 us, H200).
  if (split > 1 && split <= kMaxClusterSplit && cluster_fits) {
    a.cluster_finish = 1;
    a.early_trigger = int64_t(grid.x) * grid.y <= int64_t(sm_count());
    launch_kernel_clustered(kernel, grid, block, dim3(1, static_cast<unsigned>(split), 1), stream,
                            dependent_launch(stream, reinterpret_cast<const void*>(kernel), a.early_trigger != 0), a,
                            x, y);
    return;
  }
  Workspace workspace;
  if (split > 1) {
    std::tie(a.counters, a.partials) = ticket_workspace<acc_t>(workspace, tiles, split * a.n_outer * a.vec_cols * V);
  }
  launch_engine_kernel<kColumnsGap>(kernel, grid, block, stream, input_bytes, a, x, y);
}

// Whether a columns pass that fits vectors of v elements (8 or 4 bytes)
// reads faster in them than one element at a time, or through the dense
// tiles. A/B on the H200 over 1500 random cases (NOTES.md, session 10): they
// took torch.sum's instruction count down where a load of one element had
// been 2-4x it ([1040, 6, 601, 1, 20] float16 over (0, 2) 242 -> 68 us,
// [6285515, 6, 2] float32 over dim 1 158 -> 83, [12591, 360, 10] float16 59
// -> 35), but lost on passes bound by latency (fewer threads for the same
// rows: [59, 800, 4] float16 3.40 -> 5.78 us) and, for 1- and 2-byte
// elements, on dense planes with few outputs' vectors to spread, where the
// tiles or single elements read better ([3970, 11235, 6] bfloat16 277 ->
// 382 us, [69, 310912, 2] 109 -> 135). Not where each row holds several
// vectors (HostPolicy::kNarrowVectorWideRowVectors): A/B on the H200 over
// 102 passes of 1- and 2-byte columns in 1 to 200 dense planes, 1 to 971 MB
// (NOTES.md, session 51), geometric mean of speedup over torch 2.54x ->
// 3.22x, below 0.97x 15 -> 3 ([971276, 1000] uint8 amax over dim 0 0.56x ->
// 1.67x, [192301, 1250] float16 sum 0.69x -> 1.04x, [1000000, 40] uint8
// sum 3.50x -> 7.36x); passes under 4 MB lost ([64, 415, 68] uint8, 1.8 MB,
// 3.27x -> 2.62x) and keep the rule above.
template <typename in_t>
bool narrow_column_vectors_pay(const ReducePass& p, int64_t v, bool dense_planes) {
  const int64_t bytes = p.n_out * p.n_cols * p.n_reduce * p.n_reduce_outer * int64_t(sizeof(in_t));
  if (bytes < HostPolicy::kLatencyBoundBytes) return false;
  // Rows of several 8- or 4-byte vectors take them however few the outputs:
  // a warp's loads then cover whole sectors of a row, where single bytes
  // took a sector a load instruction. (The 16-byte vectors of ragged
  // columns were not measured so.)
  if (v * int64_t(sizeof(in_t)) < 16 && p.n_cols / v >= HostPolicy::kNarrowVectorWideRowVectors &&
      bytes >= HostPolicy::kNarrowVectorWideRowMinBytes)
    return true;
  return sizeof(in_t) >= 4 || !dense_planes || p.n_out * (p.n_cols / v) >= HostPolicy::kNarrowVectorMinLanes;
}

// How many of the outputs' planes of `plane` elements lie each right after
// the one before in memory along the innermost outer dims: all of them
// (n_out) where the outer dims continue the stream densely, else the planes
// of the dims that do (1 where the innermost does not).
inline int64_t dense_run_planes(const OuterIndexer& outer, int64_t plane) {
  int64_t next = plane, planes = 1;
  for (int d = 0; d < outer.ndim; ++d) {
    if (outer.in_strides[d] != next) break;
    next *= static_cast<int64_t>(outer.sizes[d].divisor);
    planes *= static_cast<int64_t>(outer.sizes[d].divisor);
  }
  return planes;
}

// Whether the outputs' outer dims lay their planes of `plane` elements each
// right after the one before in memory, the innermost dim first.
inline bool planes_follow_densely(const ReducePass& p, int64_t plane) {
  return dense_run_planes(p.outer, plane) == p.n_out;
}

// The segments of a stream of planes whose outer dims continue it densely
// only in part (DenseArgs::seg_planes): runs of at least
// HostPolicy::kStreamSegmentMinBytes each, and of more than one plane.
// False where the runs are shorter, or where the planes follow densely
// throughout (one stream).
inline bool stream_segments(const ReducePass& p, int64_t plane, int64_t elem_bytes, DenseArgs& a) {
  const int64_t run = dense_run_planes(p.outer, plane);
  if (run <= 1 || run >= p.n_out || run * plane * elem_bytes < HostPolicy::kStreamSegmentMinBytes) return false;
  a.seg_planes = run;
  return true;
}

// The geometry of a pass as one dense stream of planes (engine/dense.cuh),
// where it is one: rows of one reduced dim, or densely packed columns of one
// reduced dim, with the planes (the outputs' outer indices, in any number of
// dims) each right after the one before in memory. With `slabs`, also such a
// stream of rows repeated along an outer reduced dim (several rows an
// output), for the stream-rows kernel. With seg_elem_bytes (the element's
// size), only planes that follow densely in runs, not throughout: the
// stream-rows kernel's segments (stream_segments).
inline bool dense_geometry(const ReducePass& p, DenseArgs& a, bool slabs = false, int64_t seg_elem_bytes = 0) {
  if (p.kind == ReducePass::Kind::kRows) {
    if (p.elem_stride != 1 || (p.n_rows != 1 && !slabs)) return false;
    a.R = p.row_len, a.C = 1, a.out_col_stride = 0;
    a.n_slabs = p.n_rows, a.slab_stride = p.n_rows > 1 ? p.row_stride : 0;
  } else {
    if (p.col_stride != 1 || p.reduce_stride != p.n_cols || p.n_reduce_outer != 1) return false;
    a.R = p.n_reduce, a.C = p.n_cols, a.out_col_stride = p.out_col_stride;
  }
  a.plane = a.R * a.C;
  a.kept = a.C;
  a.seg_planes = p.n_out;
  if (seg_elem_bytes > 0) {
    if (!stream_segments(p, a.plane, seg_elem_bytes, a)) return false;
  } else if (!planes_follow_densely(p, a.plane)) {
    return false;
  }
  a.outer = p.outer;
  a.n_planes = p.n_out;
  a.total = a.n_planes * a.plane * a.n_slabs;
  a.projection = p.projection;
  return true;
}

// The geometry of a columns pass whose planes (the outputs' outer indices)
// are each dense, R rows of C elements, but do not follow each other in
// memory (a step or a narrowing of an outer dim: [A, B, R, C][:, ::2] or
// [:, 1:] over R; the planner has already sorted permuted dims into memory
// order): the stream-columns kernel reads each plane where the outer dims
// put it (HostPolicy::kStreamColumnsScatteredMinBytes says where).
inline bool scattered_planes_geometry(const ReducePass& p, DenseArgs& a) {
  if (p.kind != ReducePass::Kind::kColumns || p.col_stride != 1 || p.reduce_stride != p.n_cols ||
      p.n_reduce_outer != 1 || p.n_reduce < 2)
    return false;
  a.R = p.n_reduce, a.C = p.n_cols, a.out_col_stride = p.out_col_stride;
  a.plane = a.R * a.C;
  a.kept = a.C;
  a.seg_planes = p.n_out;
  a.scattered = true;
  a.outer = p.outer;
  a.n_planes = p.n_out;
  a.total = a.n_planes * a.plane;
  a.projection = p.projection;
  return true;
}

// Rows of a small element stride s, one per output, as dense planes of R
// rows of s columns whose first column is the output's (DenseArgs::kept),
// for the stream-rows kernel ([N, W][:, ::2] over dim 1): each row starts
// (R - 1) s + 1 to (R + 1) s elements after the one before, along outer dims
// that continue the stream densely, and in passes of kLatencyBoundBytes or
// more (as launch_stream_rows). Where s elements span at most 4 bytes, a
// warp's one-element loads move at most 128 bytes each, and the tiles'
// 16-byte copies read the same sectors in a quarter of the instructions or
// fewer. A/B on the H200 against the rows kernels over 77 strided passes of
// 30 KB to 134 MB (NOTES.md, session 49), torch.sum's time over ours:
// 2-byte elements at stride 2 and bytes at stride 2 to 4 gained ([2697,
// 1526][:, ::2] bfloat16 0.50x -> 0.76x, [4, 77029, 186][..., ::2] bfloat16
// 0.82x -> 2.02x, [278163, 112][:, ::2] int8 2.02x -> 7.06x); wider strides
// lost as often as they gained ([5000, 800][:, ::4] float32 0.93x -> 0.67x,
// [8796, 281][:, ::2] float64 1.22x -> 0.89x). Strides that span 5 to 8
// bytes (float32 at 2, 16-bit at 3 or 4, bytes at 5 to 8) only where an
// 8 KB tile holds three rows or more: A/B over 166 such passes (NOTES.md,
// session 59), rows of up to 2 KB gained in every pass of 4 MB or more
// ([467187, 101][:, ::2] float32 1.03x -> 2.17x of torch.sum, [270406,
// 349][:, ::3] bfloat16 0.69x -> 1.45x, [13898, 349][:, ::2] float32 0.89x
// -> 1.01x), while rows of 4 to 10 KB, a tile to each, lost in small passes
// and in 16 KB tiles ([1025, 1023][:, ::2] float32 1.29x -> 1.04x, [23017,
// 2050][:, ::2] int32 2.59x -> 2.30x).
inline bool strided_rows_geometry(const ReducePass& p, int64_t elem_bytes, DenseArgs& a) {
  const int64_t s = p.elem_stride;
  if (p.kind != ReducePass::Kind::kRows || p.n_rows != 1 || p.row_len < 2 || s < 2 || s * elem_bytes > 8 ||
      p.outer.ndim < 1)
    return false;
  const int64_t pitch = p.outer.in_strides[0];
  if (pitch < (p.row_len - 1) * s + 1 || pitch > (p.row_len + 1) * s) return false;
  if (s * elem_bytes > 4 && 3 * pitch * elem_bytes > StreamRowsNarrowPolicy::kPlaneBytes) return false;
  a.seg_planes = p.n_out;
  if (!planes_follow_densely(p, pitch) && !stream_segments(p, pitch, elem_bytes, a)) return false;
  a.R = p.row_len, a.C = s, a.kept = 1, a.plane = pitch, a.out_col_stride = 0;
  a.outer = p.outer;
  a.n_planes = p.n_out;
  a.total = a.n_planes * pitch;
  a.projection = p.projection;
  return a.total * elem_bytes >= HostPolicy::kLatencyBoundBytes;
}

// The size from which passes of rows, or of planes of at most 64 rows, read
// faster through the dense tiles than through the rows and columns kernels'
// element loads. A/B on the H200 over 170 made passes of 256 KB to 32 MB
// and 1330 small random ones (NOTES.md, session 24), moving it up from 256 KB
// for every type: 4- and 8-byte elements gained to 4 MB ([20845, 11]
// float64 over dim 1 0.95x -> 1.19x of torch.sum, [10268, 63] float32 1.14x
// -> 1.47x) and lost beyond it ([820233, 10] float32 2.81x -> 1.89x at
// 32 MB); 2-byte elements gained to 1 MB and lost from there to 4 MB (rows:
// [15618, 68] int16 2.67x -> 1.67x); byte elements lost at 1 MB ([35116, 2,
// 14] int8 2.14x -> 1.57x).
template <typename in_t>
constexpr int64_t dense_tiles_min_bytes() {
  return sizeof(in_t) == 1 ? HostPolicy::kTinyPassBytes
                           : sizeof(in_t) == 2 ? HostPolicy::kLatencyBoundBytes : 4 * HostPolicy::kLatencyBoundBytes;
}

// The spread (StreamRowsArgs::spread_shift) at which a warp's first reads
// of a tile of rows take the fewest shared-memory wavefronts: for warp 0 of
// round 0, the most distinct 4-byte words that any of the 32 banks serves,
// for outputs 1, 2, 4 and 8 apart (8: the block's warps); a wider spread
// only where it reads fewer. A lane's next loads lie G E bytes on, which
// moves every word by the same number of banks where G E is a multiple of
// 4: one load models them all, else the 4 / (G E) phases are summed. The
// tile is taken to start on a bank's first byte.
inline int model_stream_read_spread_shift(int R, int outs, int elem_bytes, int shift, int warps) {
  const int G = 1 << shift, W = 32 >> shift;
  if (W == 1) return 0;
  const int phases = G * elem_bytes >= 4 ? 1 : 4 / (G * elem_bytes);
  auto wavefronts = [&](int m) {
    int total = 0;
    for (int i = 0; i < phases; ++i) {
      int words[32][16];
      int count[32] = {};
      int most = 0;
      for (int t = 0; t < 32; ++t) {
        const int q = (t >> shift) << m;  // group g of warp 0 takes output g M
        const int row = (t & (G - 1)) + i * G;
        if (q >= outs || row >= R) continue;
        const int byte = (q * R + row) * elem_bytes;  // within a tile: under 16 KB
        for (int w = byte >> 2; w <= (byte + elem_bytes - 1) >> 2; ++w) {
          const int b = w & 31;
          int k = 0;
          while (k < count[b] && words[b][k] != w) ++k;
          if (k == count[b] && k < 16) words[b][count[b]++] = w;
          most = std::max(most, count[b]);
        }
      }
      total += most;
    }
    return total;
  };
  int best = 0, fewest = wavefronts(0);
  for (int m = 1; (1 << m) <= warps; ++m) {
    const int w = wavefronts(m);
    if (w < fewest) best = m, fewest = w;
  }
  return best;
}

// model_stream_read_spread_shift, remembered for the last 16 kinds of tile
// a host thread launched: the model takes 0.4-2.3 us, a call of a repeated
// shape should not pay it again.
inline int stream_read_spread_shift(int R, int outs, int elem_bytes, int shift, int warps) {
  struct Entry {
    uint64_t key = 0;  // 0: empty (R >= 1)
    int spread = 0;
  };
  static thread_local Entry cache[16];
  static thread_local unsigned next = 0;
  const uint64_t key = (uint64_t(uint32_t(R)) << 32) | (uint64_t(outs & 0xffff) << 16) | (uint64_t(elem_bytes) << 8) |
                       (uint64_t(shift) << 4) | uint64_t(warps & 15);
  for (const Entry& e : cache)
    if (e.key == key) return e.spread;
  const int spread = model_stream_read_spread_shift(R, outs, elem_bytes, shift, warps);
  cache[next++ % 16] = Entry{key, spread};
  return spread;
}

// Launches the stream-rows kernel (engine/stream_rows.cuh) with tiles of
// policy P over the dense planes of d (rows where C is 1); false, launching
// nothing, for planes wider than a tile, for slabs of planes, and for slabs
// of too few or too small row tiles.
template <class Op, typename in_t, typename out_t, class P>
bool launch_stream_tiles_with(const DenseArgs& d, const in_t* x, Outputs<out_t> y) {
  const int64_t plane_bytes = d.plane * int64_t(sizeof(in_t));
  const bool slabs = d.n_slabs > 1;
  // Slabs of rows take the 8 KB tiles only (launch_stream_tiles), so that
  // no other policy compiles their kernel. Not slabs of planes: with their
  // kernels too the H200's clean build took 123-146 s, with rows only 103 s
  // (different machines), for a few passes won (NOTES.md, session 28).
  constexpr bool kTakesSlabs = std::is_same_v<P, StreamRowsNarrowPolicy>;
  if (slabs && (!kTakesSlabs || d.C != 1)) return false;
  StreamRowsArgs a{};
  a.n_rows = d.n_planes;
  a.projection = d.projection;
  a.outer = d.outer;
  a.R = static_cast<int>(d.R);
  a.C = static_cast<int>(d.C);
  a.kept = static_cast<int>(d.kept);
  a.plane = static_cast<int>(d.plane);
  a.out_col_stride = d.out_col_stride;
  a.n_slabs = static_cast<int>(d.n_slabs);
  a.slab_bytes = d.slab_stride * int64_t(sizeof(in_t));
  const int64_t seg_planes = d.seg_planes > 0 ? d.seg_planes : d.n_planes;
  if (slabs && seg_planes != d.n_planes) return false;
  // Whole planes whose bytes, padded out to 16-byte boundaries, fit a tile.
  int64_t rows = P::kPlaneBytes / plane_bytes;
  const int64_t resident = int64_t(sm_count()) * P::kMinBlocksPerSm;
  if (slabs) {
    // A thread carries at most kMaxSlabRounds of a tile's outputs across the
    // slabs. Full tiles, not tiles cut down to fill whole waves of blocks:
    // A/B on the H200 over 39 passes (NOTES.md, session 28), whole waves of
    // smaller tiles lost ([28, 47772, 7] float64 over (0, 2) 1.21x -> 0.71x
    // of torch.sum, [5, 294817, 4] bfloat16 4.71x -> 3.98x).
    rows = std::min(rows, int64_t(P::kThreads) * kMaxSlabRounds / d.C);
    // Enough row tiles to spread over the GPU, of enough bytes each that a
    // tile's copies pay for its barrier, and outputs enough for a tile's
    // sums to take every thread (a warp at most to an output: [163, 525,
    // 1833] float16 over (0, 2), a row to a tile, went 1.17x -> 0.96x).
    if (rows < 1 || ceil_div(d.n_planes, rows) < HostPolicy::kStreamSlabsMinTilesPerSm * sm_count() ||
        rows * plane_bytes < HostPolicy::kStreamSlabsMinTileBytes || (rows * d.C) << 5 < P::kThreads)
      return false;
  }
  if (rows < 1) return false;
  a.rows_per_tile = static_cast<int>(rows);
  a.seg_planes = seg_planes;
  a.seg_tiles = ceil_div(seg_planes, int64_t(a.rows_per_tile));
  a.n_tiles = a.seg_tiles * (a.n_rows / seg_planes);
  a.tile_bytes = static_cast<unsigned>(a.rows_per_tile * plane_bytes);
  // A segment's last tile ends at its last plane's last element read (a
  // strided row's dropped elements after it may lie outside the storage).
  const int64_t last_plane_bytes = ((d.R - 1) * d.C + d.kept) * int64_t(sizeof(in_t));
  a.last_tile_bytes =
      static_cast<unsigned>((seg_planes - (a.seg_tiles - 1) * a.rows_per_tile - 1) * plane_bytes + last_plane_bytes);
  // Lanes per output: as many as fill the block with a tile's outputs, up
  // to the plane's rows and a warp.
  const int64_t outs = int64_t(a.rows_per_tile) * a.kept;
  int shift = 0;
  while (shift < 5 && (int64_t(1) << (shift + 1)) <= pow2_at_least(d.R) && outs << (shift + 1) <= P::kThreads) ++shift;
  a.group_shift = shift;
  a.slot_rounds = static_cast<int>(ceil_div(outs << shift, int64_t(P::kThreads)));
  a.direct_rounds = !slabs && shift == 0 && a.outer.ndim == 1 && a.projection.is_identity() &&
                    int64_t(a.R) <= HostPolicy::kStreamDirectMaxElements;
  // Rows only: over uint8 planes of 2 columns ([539154, 123, 2] over dim 1)
  // the modelled spread ran 1.10x slower (NOTES.md, session 73).
  if (!a.direct_rounds && d.C == 1)
    a.spread_shift = stream_read_spread_shift(a.R, static_cast<int>(outs), int(sizeof(in_t)), shift, P::kThreads / 32);
  const auto blocks = static_cast<unsigned>(std::min(a.n_tiles, resident));
  const auto stream = current_stream();
  if (!slabs) {
    if (d.C == 1) {
      launch_engine_kernel(gpureduce_stream_rows<Op, in_t, out_t, P, false, false>, dim3(blocks), dim3(P::kThreads), stream,
                         d.total * int64_t(sizeof(in_t)), a, x, y);
    } else {
      launch_engine_kernel(gpureduce_stream_rows<Op, in_t, out_t, P, true, false>, dim3(blocks), dim3(P::kThreads), stream,
                         d.total * int64_t(sizeof(in_t)), a, x, y);
    }
  } else if constexpr (kTakesSlabs) {
    launch_engine_kernel(gpureduce_stream_rows<Op, in_t, out_t, P, false, true>, dim3(blocks), dim3(P::kThreads), stream,
                         d.total * int64_t(sizeof(in_t)), a, x, y);
  }
  return true;
}

// f(z) for the outputs y as the type the pass stores: NarrowOrFloat's as
// its float32 or 16-bit ones. For the stream-rows kernel, which is compiled
// for each: it stores in each of its six lane groups' copies of the tile
// loop (and each unrolled round of slabs), and one kernel picking the type
// at its stores took ptxas longer than the two (norm_one_half.cu: 4.9 s
// against 3.0; 11.6 against 6.2 picking it once in the kernel, two bodies).
template <typename out_t, class F>
decltype(auto) with_stored_type(Outputs<out_t> y, F&& f) {
  if constexpr (is_narrow_or_float<out_t>) {
    using narrow_t = typename out_t::narrow_type;
    if (y.as_float) return f(Outputs<float>{static_cast<float*>(y.p)});
    return f(Outputs<narrow_t>{static_cast<narrow_t*>(y.p)});
  } else {
    return f(y);
  }
}

// The stream-rows kernel over the dense planes of d, in tiles of 16 KB for
// planes of at least kStreamRowsWideMinRowBytes in passes of at least
// kStreamRowsWideMinBytes (and for planes an 8 KB tile cannot hold), else
// of 8 KB; slabs in tiles of 8 KB only. False, launching nothing, where it
// does not suit the pass.
template <class Op, typename in_t, typename out_t>
bool launch_stream_tiles(const DenseArgs& d, const in_t* x, Outputs<out_t> y) {
  if constexpr (sizeof(in_t) > 8) {
    return false;  // 16-byte elements fill a vector: no stream to share
  } else if (d.scattered) {
    return false;  // tiles of planes that do not follow each other
  } else if constexpr (!EnginePolicy::template takes_stream_tiles<Op, in_t, out_t>()) {
    return false;  // the dense tiles and the rows and columns kernels read it
  } else {
    if (reinterpret_cast<uintptr_t>(x) % sizeof(in_t) != 0) return false;
    const int64_t bytes = d.total * int64_t(sizeof(in_t));
    const int64_t plane_bytes = d.plane * int64_t(sizeof(in_t));
    const bool wide = (plane_bytes >= HostPolicy::kStreamRowsWideMinRowBytes &&
                       bytes >= HostPolicy::kStreamRowsWideMinBytes) ||
                      plane_bytes > StreamRowsNarrowPolicy::kPlaneBytes;
    return with_stored_type(y, [&](auto z) {
      using stored_t = typename decltype(z)::element_type;
      if (wide && d.n_slabs == 1) return launch_stream_tiles_with<Op, in_t, stored_t, StreamRowsWidePolicy>(d, x, z);
      return launch_stream_tiles_with<Op, in_t, stored_t, StreamRowsNarrowPolicy>(d, x, z);
    });
  }
}

// Dense rows that no vector fits and that are too short for a vector body
// per row (RaggedEnds), one output each, through the stream-rows kernel:
// from kLatencyBoundBytes of input (kTinyPassBytes for byte elements), below
// which the kernel's pipeline of tiles costs more than it hides. Against the
// dense tiles and element loads it replaces (A/B on the H200, NOTES.md
// session 27): [1973790, 17] bfloat16 over dim 1 6.35x -> 8.53x of
// torch.sum, [3355443, 5] float32 2.67x -> 3.28x, [3877362, 198] uint8 6.98x
// -> 13.58x, [20625, 54] bfloat16 (2 MB) 1.55x -> 1.92x; smaller passes lost
// ([14725, 7] float32, 412 KB: 1.20x -> 0.98x), and so did rows long enough
// for a vector body ([131586, 255] bfloat16 1.48x -> 1.13x). Returns false,
// launching nothing, where the pass does not suit it.
template <class Op, typename in_t, typename out_t>
bool launch_stream_rows(const DenseArgs& d, const in_t* x, Outputs<out_t> y) {
  if (d.C != 1) return false;
  const int64_t min_bytes = sizeof(in_t) == 1 ? HostPolicy::kTinyPassBytes : HostPolicy::kLatencyBoundBytes;
  if (d.total * int64_t(sizeof(in_t)) < min_bytes) return false;
  return launch_stream_tiles<Op>(d, x, y);
}

// Whether dense planes of a columns pass ([B, R, C] over R) read faster
// through the stream-rows kernel's tile pipeline (launch_stream_tiles) than
// through the columns kernel, whose loads take C * sizeof(in_t) bytes of a
// row of one plane each, from planes far apart. Chosen from an A/B on the
// H200 of every such plane through either kernel (247 passes of 256 KB to
// 1 GB, 177 of them the sampler's), then checked against the routing before
// over 317 passes (NOTES.md, session 30), paired per pass:
// - 1-byte planes a 16-byte vector fits: 6 of 7 faster ([54, 197, 64] int8
//   over dim 1 2.71x -> 3.86x of torch.sum), one slower ([55325, 326, 16]
//   int8 13.98x -> 11.63x);
// - 2-byte planes of rows of one 16-byte vector (kStreamPlanesAnySizeMaxRowBytes)
//   in passes under 4 MB: faster in both A/Bs ([27, 794, 8] float16 3.32x ->
//   5.36x). The rest lost in a check against the build before on shapes of
//   fresh seeds, though the second A/B's few such passes had not: from 4 MB
//   ([60000, 30, 8] bfloat16 over dim 1 1.05x -> 0.90x), and rows of 32 to
//   96 bytes ([4000, 64, 32] bfloat16 1.02x -> 0.65x, channels_last [2584,
//   32, 8, 8] bfloat16 over (2, 3) 1.02x -> 0.72x; in the first A/B
//   [133087, 7, 512] float16 1.66x -> 0.90x);
// - 4- and 8-byte planes of 8 rows or more with rows of at most
//   kStreamPlanesAnySizeMaxRowBytes: 16 of 17 faster, none slower
//   ([13418, 140, 4] float32 0.93x -> 1.11x); with wider rows under
//   kStreamPlanesMaxRowBytes only in passes under 4 MB (32 of 33 faster, none
//   slower: [25, 583, 6] float32 1.64x -> 2.42x), while from 4 MB as many
//   lost as gained in the first A/B ([474497, 39, 6] float32 1.21x -> 0.97x).
// Planes the pipeline's tiles cannot hold return false from
// launch_stream_tiles and stay where they were.
template <typename in_t>
bool stream_planes_beat_columns(const DenseArgs& d, bool vector_fits) {
  if constexpr (c10::is_complex<in_t>::value || sizeof(in_t) > 8) {
    return false;
  } else {
    const int64_t row_bytes = d.C * int64_t(sizeof(in_t));
    const int64_t bytes = d.total * int64_t(sizeof(in_t));
    if (d.C < 2 || bytes < HostPolicy::kTinyPassBytes) return false;
    if (sizeof(in_t) == 1) return vector_fits && d.R >= HostPolicy::kStreamPlanesMinRowsNarrow;
    if (row_bytes >= HostPolicy::kStreamPlanesMaxRowBytes) return false;
    if (sizeof(in_t) == 2)
      return vector_fits && d.R >= HostPolicy::kStreamPlanesMinRowsNarrow &&
             row_bytes <= HostPolicy::kStreamPlanesAnySizeMaxRowBytes && bytes < dense_tiles_min_bytes<float>();
    return d.R >= 2 * Policy::kUnroll &&
           (row_bytes <= HostPolicy::kStreamPlanesAnySizeMaxRowBytes || bytes < dense_tiles_min_bytes<float>());
  }
}

// Launches the dense-tiles kernel for a pass of that geometry, if the tiling
// suits it: a column (C) must leave at least two threads per output, and
// planes larger than a tile (one block each) need at least as many planes as
// SMs. Returns false, launching nothing, otherwise.
template <class Op, typename in_t, typename out_t>
bool launch_dense(DenseArgs a, const in_t* x, Outputs<out_t> y) {
  constexpr int64_t T = DensePolicy::kThreads;
  const int64_t E = DensePolicy::kTileBytes / int64_t(sizeof(in_t));
  if (a.C * 2 > T || a.total <= 0 || a.scattered) return false;
  // Under kTinyPassBytes, the tiles' few blocks each walk their tile through
  // shared memory one step after another, where the columns kernel's
  // threads load theirs in one round ([9, 154, 3] bfloat16 over dim 1 of a
  // transpose: one block of tiles, 0.77x -> 1.01x of torch.sum).
  const int64_t bytes = a.total * int64_t(sizeof(in_t));
  if (bytes < HostPolicy::kTinyPassBytes) return false;
  // Up to dense_tiles_min_bytes<in_t>() a pass is bound by latency more than
  // by the one-element loads that the tiles avoid: the rows and columns
  // kernels read it in fewer instructions and with no barriers, rows of any
  // width and planes of at most 64 rows ([5302, 62] bfloat16 over dim 1
  // 0.91x -> 1.15x of torch.sum, [9453, 4, 13] float32 0.88x -> 0.99x).
  // Longer planes of narrow elements stay on the tiles ([59, 419, 9]
  // float16 over dim 0 of a permutation 1.14x -> 1.01x through columns).
  // Planes of 2-byte elements whose row threads walk at least one unrolled
  // loop of rows read as 4-byte ones do: through the columns kernel up to
  // 4 MB ([19506, 8, 7] float16 over dim 1 0.89x -> 1.00x of torch.sum,
  // [24328, 11, 7] bfloat16 0.90x -> 1.00x; not 3 rows: [50073, 3, 13]
  // bfloat16 1.12x -> 0.88x).
  const bool planes_of_loops = sizeof(in_t) == 2 && a.C > 1 && a.R >= Policy::kUnroll;
  const int64_t min_bytes = planes_of_loops ? dense_tiles_min_bytes<float>() : dense_tiles_min_bytes<in_t>();
  if (bytes < min_bytes && (a.C == 1 || a.R <= Policy::kUnroll * HostPolicy::kMaxRowThreads || sizeof(in_t) >= 4))
    return false;
  // Columns of 4- and 8-byte elements over at least 8 rows read faster through
  // the columns kernel, a thread per column whose loads of neighbouring
  // columns L1 merges, than through the tiles' index arithmetic (H200,
  // against the tiles: [27578, 857, 9] float32 over dim 1 362 -> 259 us,
  // [601, 5147, 5] float64 67 -> 42, [1076037, 16, 9] float32 252 -> 196).
  // Not narrower elements (a load per 1 or 2 bytes: [8320, 58, 7] int16 7.2
  // -> 17.8 us) nor planes of fewer rows ([12863801, 3, 5] float32 515 -> 711).
  if (a.C > 1 && sizeof(in_t) >= 4 && a.R >= 2 * Policy::kUnroll) return false;
  if (a.plane <= E) {
    // Planes of enough rows through the stream-rows kernel's pipeline (the
    // next tiles' copies in flight while this one is summed, no registers
    // held for them). A/B on the H200 against these tiles over 310 passes
    // (NOTES.md, session 27): [31110, 351, 9] uint8 over dim 1 5.43x ->
    // 10.88x of torch.sum, [64116, 4, 9] float32 0.84x -> 1.07x, [127522, 28,
    // 11] bool 6.62x -> 8.48x; planes of 2 or 3 rows lost ([2107490, 2, 14]
    // int8 3.84x -> 3.09x), and so did those of 4 to 6 rows of 1- and 2-byte
    // elements ([1029608, 4, 35] uint8 4.48x -> 3.63x).
    if (a.C > 1 && a.R >= (sizeof(in_t) >= 4 ? HostPolicy::kStreamPlanesMinRows : HostPolicy::kStreamPlanesMinRowsNarrow) &&
        launch_stream_tiles<Op>(a, x, y))
      return true;
    // As many planes as fit a tile, but no fewer tiles than two per SM where
    // there are that many planes: a small input in a few full tiles left each
    // thread a long serial walk through shared memory ([470, 76] float16 over
    // dim 1: 4.7 us against torch.sum's 2.5).
    a.planes_per_tile = std::min(E / a.plane, std::max<int64_t>(ceil_div(a.n_planes, 2 * int64_t(sm_count())), 1));
    a.rows_per_tile = a.R;
    a.n_units = ceil_div(a.n_planes, a.planes_per_tile);
    // Threads per output: as many as the block has for it, but no more than
    // the rows round up to, since the group's partials are combined one after
    // another ([23, 7, 3] float32 over dim 1 gave 85 threads to each output
    // of 7 rows: 2.89 us against torch.sum's 2.00).
    const int64_t outs = a.planes_per_tile * a.C;
    a.group = outs * 2 <= T ? static_cast<int>(std::min(T / outs, pow2_at_least(a.R))) : 1;
    if (a.group == 1) a.set_output_steps(sizeof(in_t));  // outputs looped over (engine/dense.cuh)
  } else {
    // A block per plane: only with enough planes to fill the GPU (145 planes
    // of [145, 35479, 13] over dim 1 ran at 0.33x of torch.sum).
    if (a.n_planes < HostPolicy::kDenseMinPlanesPerSm * sm_count()) return false;
    a.planes_per_tile = 0;
    a.rows_per_tile = E / a.C;
    a.n_units = a.n_planes;
    a.group = static_cast<int>(T / a.C);
  }
  const int64_t blocks = std::min(a.n_units, int64_t(sm_count()) * HostPolicy::kDenseBlocksPerSm);
  launch_engine_kernel(gpureduce_dense_tiles<Op, in_t, out_t>, dim3(static_cast<unsigned>(blocks)),
                dim3(static_cast<unsigned>(T)), current_stream(), a.total * int64_t(sizeof(in_t)), a, x, y);
  return true;
}

// Planes a stream-columns block takes (groups of group_threads threads, P
// of them a period): a grid that fits one wave leaves each SM the planes of
// the blocks it was given, and an SM reads its share no faster for holding
// more of them, so the pass lasts as long as the busiest SM's planes take.
// Of the counts that keep blocks of at least
// StreamColumnsPolicy::kMinBlockThreads and fit one wave, the one whose
// busiest SM holds the fewest planes (the fewest blocks within 1/32 of
// that); a grid too large for one wave takes as many planes a block as fit.
// Before, a block took planes / (2 SMs), rounded up: [341, 477, 15]
// float64 over dim 1 ran 171 blocks of two planes, 39 SMs holding two of
// them and the rest one. A/B on the H200 (NOTES.md, session 69), in one
// process: of 166 stream-columns passes of 1-256 MB, the 9 whose grid
// changed 7 faster by 5-14% ([341, 477, 15] float64 0.85x -> 0.91x of
// torch.sum, [1413, 636, 9] bfloat16 0.99x -> 1.13x, [3000, 100, 33]
// float16 1.14x -> 1.20x), one slower by 5% ([373, 2403, 5] int32 4.58x ->
// 4.36x).
inline int64_t stream_columns_planes_a_block(int64_t n_planes, int64_t group_threads, int64_t P) {
  constexpr int64_t kMaxT = StreamColumnsPolicy::kMaxThreads;
  const int64_t sms = sm_count();
  const int64_t most = std::max<int64_t>(1, std::min(kMaxT / group_threads, kMaxT / 2 / P));
  const int64_t least = std::min(most, ceil_div(StreamColumnsPolicy::kMinBlockThreads, group_threads));
  // Candidates: at most m blocks an SM, g = ceil(n_planes / (m * sms))
  // planes a block (non-increasing in m), where the grid fits one wave (the
  // launch bounds' registers, and 32 blocks an SM).
  int64_t planes[32], busiest[32];
  int n = 0;
  int64_t previous = 0;
  for (int64_t m = 1; m <= 32; ++m) {
    const int64_t g = std::clamp(ceil_div(n_planes, m * sms), least, most);
    if (g == previous) continue;
    previous = g;
    const int64_t blocks_an_sm = ceil_div(ceil_div(n_planes, g), sms);
    if (blocks_an_sm <= std::min<int64_t>(32, 3 * kMaxT / (g * group_threads))) {
      planes[n] = g;
      busiest[n++] = blocks_an_sm * g;
    }
    if (g == least) break;
  }
  if (n == 0) return most;
  const int64_t best = *std::min_element(busiest, busiest + n);
  // The fewest blocks (the most planes a block) within 1/32 of the best.
  int k = 0;
  while (busiest[k] * 32 > best * 33) ++k;
  return planes[k];
}

// Rows a stream-columns pass of n_planes planes (fewer than a wave) is split
// into: the split whose busiest SM reads the least of a plane (its blocks
// over the split), of kMinSplit to most_split, the most blocks on a tie; 1
// if none is. The candidates are the largest splits that give the SMs at
// most m blocks each, m up to blocks_an_sm (a wave's). Before, the split
// that filled the most of a wave of resident blocks: [1, 11076, 179]
// float64 over dim 1 ran 336 blocks, 72 SMs holding three and 60 two. A/B
// on the H200 (NOTES.md, session 69) over 162 split passes of planes under
// 132: 44 faster by over 5%, 5 slower (ties then took the fewer blocks:
// [4, 71871, 16] float64 2.38x -> 2.10x of torch.sum); with the most
// blocks on ties, on a fresh seed of 173: 15 faster ([1, 21738, 246]
// float16 1.49x -> 1.70x), 10 slower, all of integers: 5 of them with their
// grids unchanged (timed first after torch.sum, whose 16- and 32-bit
// integer sums write a widened copy: unchanged int32 grids ran 3% slower
// there in geometric mean), and [3, 5376, 173] int64 1.23x -> 1.13x.
inline int64_t stream_columns_split(int64_t n_planes, int64_t blocks_an_sm, int64_t most_split) {
  const int64_t sms = sm_count();
  int64_t split = 1, busiest = ceil_div(n_planes, sms);
  for (int64_t m = 1; m <= std::min<int64_t>(blocks_an_sm, 32); ++m) {
    const int64_t s = std::min(most_split, m * sms / n_planes);
    if (s < StreamColumnsPolicy::kMinSplit) continue;
    const int64_t b = ceil_div(s * n_planes, sms);
    if (b * split <= busiest * s) split = s, busiest = b;  // b / s <= busiest / split
  }
  return split;
}

// Whether dense planes of narrow rows (HostPolicy::kStreamColumnsFirstMaxRowBytes)
// take the stream-columns kernel ahead of the vector columns kernels:
// planes of kStreamColumnsFirstMinPlaneBytes or more, or of
// kStreamColumnsFirstManyMinPlaneBytes or more in passes of at least
// kStreamColumnsFirstManyPlanesPerSm planes an SM.
inline bool stream_columns_first(const DenseArgs& d, int64_t elem_bytes) {
  const int64_t plane_bytes = d.plane * elem_bytes;
  if (d.C * elem_bytes >= HostPolicy::kStreamColumnsFirstMaxRowBytes) return false;
  return plane_bytes >= HostPolicy::kStreamColumnsFirstMinPlaneBytes ||
         (plane_bytes >= HostPolicy::kStreamColumnsFirstManyMinPlaneBytes &&
          d.n_planes >= HostPolicy::kStreamColumnsFirstManyPlanesPerSm * int64_t(sm_count()));
}

// Launches the stream-columns kernel (engine/stream_columns.cuh) for dense
// planes of at most 256 columns that no vector fits (and, first, for large
// planes of narrow rows whatever vector fits:
// HostPolicy::kStreamColumnsFirstMinPlaneBytes), if it suits them: passes
// of at least 1 MB, planes of at least 32 KB (512 bytes for 2-byte elements,
// several planes to a block) that give each thread of a period at least
// kMinVecsPerPeriodThread vectors. A/B on the H200 (NOTES.md, session 12): from
// 1 MB, planes of 32 KB, geometric mean of speedup over torch.sum 1.06 ->
// 1.43 over 217 passes, below 0.97x 111 -> 40; 16-bit planes of 512 bytes to
// 32 KB, 169 passes, below 0.97x 82 -> 48 ([248901, 246, 7] bfloat16 over
// dim 1 565 -> 275 us, torch.sum 438), while 4- and 8-byte ones lost to the
// columns kernel (2-5%). Smaller passes lost (blocks too short for the tree
// and the split's finish: [2, 9362, 7] float16 over dim 1 6.5 -> 7.8 us). Returns
// false, launching nothing, otherwise.
template <class Op, typename in_t, typename out_t>
bool launch_stream_columns(const DenseArgs& d, const in_t* x, Outputs<out_t> y) {
  // Not complex, nor byte inputs (16 lanes of running sums spill at the
  // launch bounds' 40 registers).
  if constexpr (c10::is_complex<in_t>::value || sizeof(in_t) > 8 || sizeof(in_t) == 1) {
    return false;
  } else {
    using acc_t = typename Op::acc_type;
    constexpr int64_t VE = 16 / int64_t(sizeof(in_t));
    constexpr int64_t kMinPlaneBytes = sizeof(in_t) == 2 ? HostPolicy::kStreamColumnsMinPlaneBytes16
                                                         : HostPolicy::kStreamColumnsMinPlaneBytes;
    if (d.C < 2 || d.C > StreamColumnsPolicy::kMaxColumns || d.plane * int64_t(sizeof(in_t)) < kMinPlaneBytes ||
        d.total * int64_t(sizeof(in_t)) < HostPolicy::kLatencyBoundBytes ||
        reinterpret_cast<uintptr_t>(x) % sizeof(in_t) != 0)
      return false;
    StreamColumnsArgs<acc_t> a{};
    a.outer = d.outer;
    a.projection = d.projection;
    a.scattered = d.scattered;
    a.out_col_stride = d.out_col_stride;
    a.n_planes = d.n_planes;
    a.R = d.R;
    a.C = d.C;
    a.plane = d.plane;
    const int64_t P = d.C / std::gcd(d.C, VE);
    const int64_t plane_vecs = ceil_div(d.plane, VE);
    if (plane_vecs < StreamColumnsPolicy::kMinVecsPerPeriodThread * P) return false;
    // Scattered planes: where they read faster than through the columns
    // kernel (HostPolicy::kStreamColumnsScatteredMinBytes).
    if (d.scattered && (sizeof(in_t) > 4 || plane_vecs < StreamColumnsPolicy::kScatteredMinVecsPerPeriodThread * P ||
                        d.total * int64_t(sizeof(in_t)) < HostPolicy::kStreamColumnsScatteredMinBytes))
      return false;
    // 2-byte planes that an 8 KB tile holds, of rows under
    // kStreamPlanesOverColumnsMaxRowBytes, read faster through the stream-rows
    // kernel's tile pipeline. A/B on the H200 against this kernel (NOTES.md,
    // session 30), 26 passes: 24 faster ([17091, 37, 13] float16 over dim 1
    // 0.83x -> 0.94x of torch.sum, [297895, 44, 13] bfloat16 0.97x -> 1.19x,
    // [8320, 58, 7] int16 2.48x -> 3.79x), 2 slower ([10748, 60, 15]
    // bfloat16 1.12x -> 1.07x). Planes over 8 KB ([1413, 636, 9] bfloat16
    // 1.07x -> 1.00x in the first A/B) and wider rows ([9487, 78, 49]
    // bfloat16 1.05x -> 0.99x) stay here.
    if (sizeof(in_t) == 2 && !d.scattered && d.R >= HostPolicy::kStreamPlanesMinRowsNarrow &&
        d.C * int64_t(sizeof(in_t)) < HostPolicy::kStreamPlanesOverColumnsMaxRowBytes &&
        d.plane * int64_t(sizeof(in_t)) <= StreamRowsNarrowPolicy::kPlaneBytes && launch_stream_tiles<Op>(d, x, y))
      return true;
    a.period = static_cast<int>(P);
    a.phase = static_cast<int>(reinterpret_cast<uintptr_t>(x) % 16 / sizeof(in_t));
    // Threads per plane: a multiple of P, at least C (a thread per column at
    // the end), and no more than give each about `vecs` vectors of the
    // plane: kVecsPerThread, or kFewPlanesVecsPerThread where that would
    // leave the SMs under kFewPlanesWarpsPerSm warps each. Planes too small
    // for a block's threads share one, a group of threads each (as many as
    // fit, their lane sums, groups * P * VE, within scratch).
    constexpr int64_t kMaxT = StreamColumnsPolicy::kMaxThreads;
    const auto threads_a_plane = [&](int64_t vecs) {
      return P * std::clamp(ceil_div(plane_vecs, P * vecs), ceil_div(d.C, P), kMaxT / P);
    };
    int64_t group_threads = threads_a_plane(StreamColumnsPolicy::kVecsPerThread);
    if (group_threads * d.n_planes < int64_t(sm_count()) * StreamColumnsPolicy::kFewPlanesWarpsPerSm * 32)
      group_threads = threads_a_plane(StreamColumnsPolicy::kFewPlanesVecsPerThread);
    const int64_t groups = stream_columns_planes_a_block(d.n_planes, group_threads, P);
    const int64_t T = group_threads * groups;
    a.group_threads = static_cast<int>(group_threads);
    const auto kernel = gpureduce_stream_columns<Op, in_t, out_t>;
    // A wave: the threads the launch bounds' registers let an SM hold.
    const int64_t wave = int64_t(sm_count()) * std::max<int64_t>(1, 3 * kMaxT / T);
    // Few planes: split along the rows, each block keeping at least
    // kSplitVecsPerThread vectors per thread, into kMinSplit blocks or more
    // (stream_columns_split).
    int64_t split = 1;
    if (groups == 1 && d.n_planes < wave) {
      const int64_t most_split = std::min(ceil_div(wave, d.n_planes),
                                          std::max<int64_t>(1, plane_vecs / (T * StreamColumnsPolicy::kSplitVecsPerThread)));
      split = stream_columns_split(d.n_planes, wave / int64_t(sm_count()), most_split);
      // Split planes of 8-byte elements, many outputs of short columns: the
      // columns kernel (HostPolicy::kSplitPlanes8MinOutputs).
      if (sizeof(in_t) == 8 && split > 1 && d.n_planes * d.C >= HostPolicy::kSplitPlanes8MinOutputs &&
          d.R <= HostPolicy::kSplitPlanes8MaxRows && d.total * 8 <= HostPolicy::kSplitPlanes8MaxBytes)
        return false;
    }
    split = std::min<int64_t>(split, std::min<int64_t>(d.R, 65535));
    a.rows_per_split = ceil_div(d.R, split);
    split = ceil_div(d.R, a.rows_per_split);
    a.split = static_cast<int>(split);
    const int64_t blocks = ceil_div(d.n_planes, groups);
    TORCH_CHECK(blocks < (int64_t(1) << 31), "gpureduce: too many planes for one stream-columns pass");
    const auto stream = current_stream();
    const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(split));
    if (split == 1) {
      launch_engine_kernel(kernel, grid, dim3(static_cast<unsigned>(T)), stream, d.total * int64_t(sizeof(in_t)), a, x, y);
      return true;
    }
    // A split plane's partials are combined by a second launch
    // (launch_finish_partials), scheduled while the first runs. The last
    // block to arrive had finished each plane through an atomic ticket, its
    // threads combining T / C columns' partials each, one L2 round trip
    // after another: for wide columns (two threads a column) that chain
    // outlasted the read
    // ([1, 42323, 237] float32 over dim 1: 29 us with the ticket, 15.9 now,
    // 20 with element loads through the columns kernel; over 40 passes of
    // 1 to 100 planes of at most 64 columns, below 0.97x of torch.sum 10 ->
    // 2, [1, 43297, 15] float32 10.6 -> 7.7 us; H200, NOTES.md session 23).
    // In a pass of up to kStreamColumnsClusterMaxBytes, a split of at most
    // kMaxClusterSplit blocks is finished inside a cluster instead: the
    // first block combines the others' column sums from their shared memory,
    // with no partials in global memory and no second launch. A/B on the
    // H200 over 36 such passes of a fresh seed (NOTES.md, session 70): the 13
    // under 16 MB all as fast or faster, 1.00x to 1.12x ([10, 511, 153]
    // float32 over dim 1 6.18 -> 5.62 us, torch.sum 4.84; [5, 837, 47]
    // int64 0.95x -> 1.03x of torch.sum); from 23 MB up, 8 of 11 slower by
    // 6% to 23%: every block of a cluster holds its SM until the slowest has
    // read its share, which costs a large pass more than the finish launch
    // it saves ([46, 106182, 12] int16 47.5 -> 61.3 us).
    static PerDevice clusters;  // launches_in_clusters' answer, per device
    if (split <= kMaxClusterSplit && d.total * int64_t(sizeof(in_t)) <= HostPolicy::kStreamColumnsClusterMaxBytes &&
        launches_in_clusters(clusters, kernel)) {
      a.cluster_finish = 1;
      a.early_trigger = int64_t(grid.x) * grid.y <= int64_t(sm_count());
      launch_kernel_clustered(kernel, grid, dim3(static_cast<unsigned>(T)), dim3(1, static_cast<unsigned>(split), 1),
                              stream, dependent_launch(stream, reinterpret_cast<const void*>(kernel), a.early_trigger != 0),
                              a, x, y);
      return true;
    }
    Workspace workspace;
    a.partials = partials_workspace<acc_t>(workspace, split * d.n_planes * d.C);
    launch_engine_kernel(kernel, grid, dim3(static_cast<unsigned>(T)), stream, d.total * int64_t(sizeof(in_t)), a, x, y);
    launch_finish_partials<Op>(static_cast<const acc_t*>(a.partials), split, d.n_planes * d.C, d.outer, d.C,
                               d.out_col_stride, d.projection, y, stream);
    return true;
  }
}

// The output type the kernels of the pair (in_t, out_t) are compiled for:
// NarrowOrFloat for a 16-bit float input into its own type or float32 (the
// two share their kernels), else out_t itself.
template <typename in_t, typename out_t>
using KernelOutput =
    std::conditional_t<(std::is_same_v<in_t, c10::Half> || std::is_same_v<in_t, c10::BFloat16>) &&
                           (std::is_same_v<out_t, in_t> || std::is_same_v<out_t, float>),
                       NarrowOrFloat<in_t>, out_t>;

template <typename out_t>
Outputs<out_t> pass_outputs(const PassBuffers& b) {
  if constexpr (is_narrow_or_float<out_t>) {
    return {b.out, b.out_dtype == at::kFloat};
  } else {
    return {static_cast<out_t*>(b.out)};
  }
}

// One pass of op Op on CUDA buffers of in_t and (KernelOutput) out_t: picks
// the kernel for the pass's shape and layout and sizes its grid.
template <class Op, typename in_t, typename out_t>
void run_typed_pass(const ReducePass& p, const PassBuffers& b) {
  constexpr int kVec = sizeof(in_t) >= 16 ? 1 : 16 / int(sizeof(in_t));
  constexpr bool kTiles = EnginePolicy::template takes_tiles<in_t, out_t>();
  const in_t* x = static_cast<const in_t*>(b.in);
  const Outputs<out_t> y = pass_outputs<out_t>(b);
  const bool base_ok = kVec > 1 && aligned16(x) && outer_strides_divisible(p.outer, kVec);
  DenseArgs dense{};
  const bool dense_ok = dense_geometry(p, dense);
  if (p.kind == ReducePass::Kind::kRows) {
    const bool vec = base_ok && p.elem_stride == 1 && p.row_len % kVec == 0 &&
                     (p.n_rows == 1 || p.row_stride % kVec == 0);
    if constexpr (kVec > 1) {
      if (vec) return launch_rows<Op, in_t, out_t, kVec>(p, x, y);
      if constexpr (sizeof(in_t) == 2 || sizeof(in_t) == 4) {
        if (stride2_rows_fit(p, b, kVec)) return launch_rows<Op, in_t, out_t, kVec, 2>(p, x, y);
      }
      // Dense rows whose width or alignment no vector fits: a vector body
      // per row from its first 16-byte boundary, if it is long enough to
      // pay for the elements read one by one around it. One row per
      // output, or several a whole number of vectors apart, so that they
      // share the first row's head (and, for 32-bit indices of their
      // ends, fewer than 2^31 / (2 kVec) of them; few outputs only, see
      // launch_rows). A/B on the H200 against
      // element loads for several rows (NOTES.md, session 14): [4820, 40,
      // 26, 47] float32 over (0, 2, 3) 541 -> 239 us (torch.sum 368),
      // [3253, 64, 14, 14] bfloat16 93 -> 35 (83).
      const bool same_heads = p.n_rows == 1 || ((p.row_stride * int64_t(sizeof(in_t))) % 16 == 0 &&
                                                p.n_rows < (int64_t(1) << 31) / (2 * kVec));
      const bool ragged_rows = same_heads && p.elem_stride == 1 &&
                               reinterpret_cast<uintptr_t>(x) % sizeof(in_t) == 0;
      if (ragged_rows && (p.row_len - (kVec - 1)) / kVec >= HostPolicy::kRaggedRowMinChunks)
        return launch_rows<Op, in_t, out_t, kVec>(p, x, y, /*ragged=*/true);
    }
    // Strided rows through their dense spans (strided_span_rows_fit) ahead
    // of the tiles where an 8 KB tile holds at most one of their rows
    // (16-bit elements at stride 2 in rows of 4 KB or more: the only
    // strides that the tiles take at any width and spans take too). A/B on
    // the H200 (NOTES.md, session 60), torch.sum's time over ours: [6704,
    // 5005][:, ::2] float16 0.77x -> 0.98x, [2047, 2049][:, ::2] bfloat16
    // 0.95x -> 1.22x; in rows of 2 KB the tiles read as fast or faster
    // ([32800, 1023][:, ::2] float16 0.95x against 0.91x), and in narrower
    // rows faster ([111476, 301][:, ::2] bfloat16 1.52x against 1.36x).
    [[maybe_unused]] bool spans = false;
    if constexpr (sizeof(in_t) == 2 || sizeof(in_t) == 4) {
      spans = strided_span_rows_fit(p, x, int64_t(sizeof(in_t)), kVec);
      // (A single strided row, of no outer dim, has no pitch; nothing below
      // takes it but its span.)
      if (spans && (p.outer.ndim == 0 ||
                    2 * p.outer.in_strides[0] * int64_t(sizeof(in_t)) > StreamRowsNarrowPolicy::kPlaneBytes))
        return launch_rows<Op, in_t, out_t, kVec>(p, x, y, /*ragged=*/true);
    }
    // Rows of a small element stride (strided_rows_geometry) that a stride-2
    // vector does not fit: as planes, through the stream-rows kernel. (Where
    // the vectors fit they read faster: [2697, 1528][:, ::2] bfloat16 1.03x
    // of torch.sum against 0.80x through the stream, [8192, 1024][:, ::2]
    // 1.11x against 0.85x; H200, NOTES.md session 49.)
    if constexpr (kTiles) {
      DenseArgs strided{};
      if (strided_rows_geometry(p, int64_t(sizeof(in_t)), strided) && launch_stream_tiles<Op>(strided, x, y)) return;
      // Dense rows of a width (or alignment) that no vector fits, in one
      // stream or in slabs.
      if (dense_ok && launch_stream_rows<Op>(dense, x, y)) return;
      if (dense_ok && launch_dense<Op>(dense, x, y)) return;
      DenseArgs slabs{};
      if (!dense_ok && dense_geometry(p, slabs, /*slabs=*/true) && launch_stream_rows<Op>(slabs, x, y)) return;
      // Dense rows in segments, a stream for each run of rows that follow
      // densely ([A, N, w][:, :k] or [::3] over w): the same rows the stream
      // takes where the outer dims are dense, which the rows kernels below
      // read an element per load. A/B on the H200 over 102 passes of 0.3 to
      // 150 MB (NOTES.md, session 50), torch.sum's time over ours: the 70
      // that took segments 1.29x -> 2.43x in geometric mean, below 0.97x 25
      // -> 4 ([491, 42127, 5][::3] float16 0.75x -> 2.37x, [16, 8192,
      // 5][:, :8000] float32 0.70x -> 1.15x, [225, 14022, 43][:, 1608:9718]
      // int8 2.35x -> 11.6x); slower by over 5%: rows of 35 to 59 four-byte
      // elements in two to four runs ([2, 21015, 59] float32 1.72x -> 1.26x).
      // Not planes of narrow columns in runs, which the columns kernel reads
      // as fast or faster (of 5 such passes, none faster by over 5% through
      // the stream, [16, 39, 300, 16] int8 3.80x -> 2.97x).
      DenseArgs segments{};
      if (!dense_ok && dense_geometry(p, segments, false, int64_t(sizeof(in_t))) &&
          launch_stream_rows<Op>(segments, x, y))
        return;
    }
    // Strided rows that the tiles do not take (wide rows of strides over 4
    // bytes, pairs without tiles): vector loads of their dense spans.
    if constexpr (sizeof(in_t) == 2 || sizeof(in_t) == 4) {
      if (spans) return launch_rows<Op, in_t, out_t, kVec>(p, x, y, /*ragged=*/true);
    }
    launch_rows<Op, in_t, out_t, 1>(p, x, y);
  } else {
    bool vector_fits = false;
    if constexpr (kVec > 1) vector_fits = columns_vector_fits(p, x, kVec);
    // Dense planes, following each other (dense) or not (scattered), for
    // the stream-columns kernel.
    [[maybe_unused]] DenseArgs planes = dense;
    [[maybe_unused]] const bool planes_ok = dense_ok || scattered_planes_geometry(p, planes);
    if constexpr (kTiles) {
      if (dense_ok && stream_planes_beat_columns<in_t>(dense, vector_fits) && launch_stream_tiles<Op>(dense, x, y))
        return;
    // Large dense planes of narrow rows: one stream of vectors each
    // (HostPolicy::kStreamColumnsFirstMinPlaneBytes).
      if (planes_ok && stream_columns_first(planes, int64_t(sizeof(in_t))) && launch_stream_columns<Op>(planes, x, y))
        return;
    }
    // 16-byte column vectors where their halving tree (kColumnSlots slots
    // of kVec accumulators) fits 32 KB of shared memory: not 16-bit inputs
    // of var into float64 (states of 24 bytes: 48 KB, over the static
    // limit), which take vectors of 8 bytes.
    constexpr bool kWideColumnsFit = kColumnSlots * kVec * sizeof(typename Op::acc_type) <= 32768;
    if constexpr (kVec > 1 && kWideColumnsFit) {
      if (vector_fits) return launch_columns<Op, in_t, out_t, kVec>(p, x, y);
    }
    // Columns that no 16-byte vector fits, in vectors of 8 or 4 bytes (of
    // two elements at least) where those pay (narrow_column_vectors_pay).
    if constexpr (kVec / 2 > 1) {
      if (columns_vector_fits(p, x, kVec / 2) && narrow_column_vectors_pay<in_t>(p, kVec / 2, dense_ok))
        return launch_columns<Op, in_t, out_t, kVec / 2>(p, x, y);
    }
    if constexpr (kVec / 4 > 1) {
      if (columns_vector_fits(p, x, kVec / 4) && narrow_column_vectors_pay<in_t>(p, kVec / 4, dense_ok))
        return launch_columns<Op, in_t, out_t, kVec / 4>(p, x, y);
    }
    // Columns whose count or start no vector fits, but whose rows all start
    // alike: 16-byte vectors from the first boundary (ragged_columns_shift),
    // where vectors pay.
    if constexpr (kVec > 1 && kWideColumnsFit) {
      const int64_t shift = ragged_columns_shift(p, x, kVec);
      if (shift >= 0 && narrow_column_vectors_pay<in_t>(p, kVec, dense_ok))
        return launch_columns<Op, in_t, out_t, kVec>(p, x, y, shift);
    }
    // Dense planes of columns no vector fits: large planes as one stream
    // of vectors (scattered planes too), the rest in tiles (or one element
    // per load).
    if constexpr (kTiles) {
      if (planes_ok && launch_stream_columns<Op>(planes, x, y)) return;
      if (dense_ok && launch_dense<Op>(dense, x, y)) return;
    }
    launch_columns<Op, in_t, out_t, 1>(p, x, y);
  }
}

// One pass of the op of `Family` on CUDA buffers whose input dtype is of
// group G. A pass that reads another pass's partials runs here only for an
// op whose reduce folds them in as inputs (run_pass_cuda routes the others).
template <class Family, InputGroup G>
void run_pass_cuda_group(const ReducePass& p, const PassBuffers& b) {
  dispatch_reduce_types<G>(b.in_dtype, b.out_dtype, [&](auto in_tag, auto out_tag) {
    using in_t = typename decltype(in_tag)::type;
    using out_t = typename decltype(out_tag)::type;
    using Op = typename Family::template Op<typename AccOf<out_t>::type>;
    if constexpr (!kRunsPair<Family, in_t, out_t>) {
      TORCH_INTERNAL_ASSERT(false, "gpureduce: no CUDA kernel of this op for ", b.in_dtype, " -> ", b.out_dtype);
    } else {
      TORCH_INTERNAL_ASSERT(Op::kPartialsFoldAsInputs || !p.reads_partials,
                            "gpureduce: a partials pass of this op runs PartialsKernelsFor's kernels");
      run_typed_pass<Op, in_t, KernelOutput<in_t, out_t>>(p, b);
    }
  });
}

}  // namespace cuda
}  // namespace gpureduce
