// CUDA kernels of gpureduce::sum: the host half of the engine. It sizes each
// pass (vector width, lanes per output, split across blocks), takes workspace
// from the caching allocator, and launches on the current stream under a
// device guard. Nothing here synchronises with the host, so calls can be
// captured in CUDA graphs.
#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAStream.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../reduce_plan.h"
#include "device_info.h"
#include "tuning.h"
#include "../sum_dispatch.h"
#include "../sum_entry.h"
#include "reduce_engine.cuh"

namespace gpureduce {
namespace cuda {
namespace {

using Policy = EnginePolicy;
// Split policies, chosen by sweeps on the H200 (benchmarks/NOTES.md). Each is
// read once; GPUREDUCE_TUNE_<NAME> overrides it for benchmarks/sweep.py.
struct SplitPolicy {
  // A full sum smaller than this many unrolled loops per thread of one block
  // stays in one block, with no workspace and no memset: 4 made 2^16
  // elements 1.3x slower than 8.
  int64_t one_block_loops = tuned("ONE_BLOCK_LOOPS", 8);
  // A rows pass gives each lane of an output about this many vector loads
  // before more lanes share the output.
  int64_t row_chunks_per_lane = tuned("ROW_CHUNKS_PER_LANE", 4);
  // Rows passes with fewer outputs than the resident warps take a block (or
  // several) per output rather than a warp or less; so do those with up to
  // split_rows_out_factor times as many, if each row gives every thread of a
  // block at least one unrolled loop. A warp per row left the second wave of
  // blocks part empty: with 2, [8192,8192] float32 over dim 1 went from
  // 1.23x to 1.27x of torch.sum and the [:, ::2] slice from 0.96x to 1.02x,
  // while bfloat16 rows of 1024 vectors (half a loop per thread) fell to 0.75x.
  int64_t split_rows_out_factor = tuned("SPLIT_ROWS_OUT_FACTOR", 2);
  // At most this many blocks per SM in a split rows pass (fewer if the
  // kernel's registers allow fewer).
  int64_t split_rows_blocks_per_sm = tuned("SPLIT_ROWS_BLOCKS_PER_SM", 4);
  // Blocks of an inner-rows pass per resident block slot (the rest loop).
  int64_t inner_rows_blocks_per_slot = tuned("INNER_ROWS_BLOCKS_PER_SLOT", 8);
  // A columns thread walks about this many rows before more threads share a
  // column, and at most max_row_threads share one.
  int64_t rows_per_column_thread = tuned("ROWS_PER_COLUMN_THREAD", 16);
  int64_t max_row_threads = tuned("MAX_ROW_THREADS", 16);
  // At least this many 16-byte vectors of adjacent columns per block row.
  int64_t column_min_bx = tuned("COLUMN_MIN_BX", 32);
  // A split columns pass gives each thread at least this many unrolled
  // loops: with 1, [64,512,512] over dim 0 fell from 0.96x to 0.62x of
  // torch.sum. A small input (at most small_column_input_bytes) whose unsplit
  // pass fills at most a quarter wave of blocks is bound by latency, not
  // bandwidth, and takes min_column_loops_small instead: [1024,1024] over
  // dim 0 went from 0.89x to 1.00x of torch.sum with 1, while [8192,8192]
  // uint8 over dim 0 (64 MB) lost a third with it, and [16,16,16,16,64] over
  // (1, 3) (256 tiles, split in two) half.
  int64_t min_column_loops = tuned("MIN_COLUMN_LOOPS", 4);
  // A columns pass with fewer tiles than this many waves of resident blocks
  // is split along its rows to reach it (within the loop minimums).
  // 2 against 4 (H200 sweep): [256,1024,256] over dim 1 0.96x -> 1.03x,
  // [8192,8192] over dim 0 0.97x -> 1.03x, nothing slower.
  int64_t column_target_waves = tuned("COLUMN_TARGET_WAVES", 2);
  int64_t min_column_loops_small = tuned("MIN_COLUMN_LOOPS_SMALL", 1);
  int64_t small_column_input_bytes = tuned("SMALL_COLUMN_INPUT_BYTES", int64_t(32) << 20);
  // Outputs of at most 32 chunks go to the short rows kernel (1), or to the
  // inner rows kernel like longer ones (2).
  int64_t short_rows = tuned("SHORT_ROWS", 1);
  // Chunks per lane in the short rows kernel, 1 or 2. On the H200, 2 against
  // 1: [4194304,16] float32 over dim 1 6.25x against 6.01x of torch.sum,
  // [2097152,32] 6.31x / 6.11x, [1048576,64] 3.48x / 3.17x, [524288,128]
  // 1.87x / 1.59x; 4 was no better than 2. bfloat16 and int16 vectors take 1:
  // with 2 they spill at 64 registers.
  int64_t short_rows_per_lane = tuned("SHORT_ROWS_PER_LANE", 2);
  // Columns passes count the resident blocks of a wave from the kernel's
  // occupancy (1) or from EnginePolicy::kBlocksPerSm (2).
  // 2 against 1 on the H200 (float32 and int32 columns hold 3 blocks per
  // SM): [8192,8192] over dim 0 1.06x against 1.01x of torch.sum, its
  // transpose 1.04x / 1.00x, [1024,1024] 1.17x / 1.15x, nothing slower: the
  // larger split that counting 2 per SM asks for pays off.
  int64_t column_waves_from_occupancy = tuned("COLUMN_WAVES_FROM_OCCUPANCY", 2);
  // How a split rows pass combines its blocks' partials: 1, the last block
  // to take a ticket (the tickets zeroed by a memset first); 2, a second
  // kernel; 3, a second kernel, both launched as programmatic dependents;
  // 4, the same with only the second kernel so launched. Mode 3 also beat
  // one launch whose last block finishes on a ticket that resets itself (no
  // memset): uint8 2^24 7.0 against 8.7 us, 2^28 61.6 against 61.8 us
  // (NOTES.md; the patch is in benchmarks/experiments/).
  int64_t split_finish = tuned("SPLIT_FINISH", 3);
  // 1: a split rows grid lets the next kernel be scheduled from its start
  // always; 2: only when the grid fits one wave of resident blocks.
  int64_t split_early_trigger = tuned("SPLIT_EARLY_TRIGGER", 2);
  // The blocks of a split rows pass interleave over the chunks (1), or,
  // where each output is one row, each reads a range of its own (2). 2
  // against 1, full sums on the H200 (two pairs of runs): float32 2^30
  // 4657-4661 against 4617-4627 GB/s, float64 2^28 4641-4643 / 4590-4607,
  // int32 2^28 4561-4564 / 4531-4533; bytes within noise. Outputs of many
  // rows keep interleaving: with ranges, [4096,32,4096] over (0, 2) read 3734
  // GB/s against 3835 in the run before.
  int64_t split_rows_contiguous = tuned("SPLIT_ROWS_CONTIGUOUS", 2);
  // Blocks per output of a split rows pass: 1, enough to fill one wave
  // (rounded up, so a grid may spill a few blocks into a second wave); 2,
  // the count that minimises waves x work per block (split_for_waves).
  int64_t split_rows_wave_fit = tuned("SPLIT_ROWS_WAVE_FIT", 2);
  // Integer full sums: 1, each block reads a fixed range; 2, each block
  // reads a first range of its own, about full_sum_queue_first_pct percent
  // of its share (at least one unrolled loop), and then takes ranges of
  // full_sum_queue_loops unrolled loops from a queue
  // (gpureduce_sum_full_queue). Only for sums of at least
  // full_sum_queue_min_loops unrolled loops per block. 2 (first range one
  // loop, queued ranges two) against 1 on the H200, two runs each, same
  // process pair (NOTES.md): uint8 2^28 62.17-62.18 against 62.58-63.04 us,
  // bool 2^28 62.14 / 62.65-62.92, int32 2^30 932 / 944-949, uint8 2^26
  // 18.68 / 18.99-19.16; queued ranges of one loop were 2 us slower at 2^28,
  // and first ranges of 60-85% of the share no better.
  int64_t full_sum_queue = tuned("FULL_SUM_QUEUE", 2);
  int64_t full_sum_queue_loops = tuned("FULL_SUM_QUEUE_LOOPS", 2);
  int64_t full_sum_queue_first_pct = tuned("FULL_SUM_QUEUE_FIRST_PCT", 0);
  int64_t full_sum_queue_min_loops = tuned("FULL_SUM_QUEUE_MIN_LOOPS", 4);
};

const SplitPolicy& split_policy() {
  static const SplitPolicy policy;
  return policy;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t pow2_at_least(int64_t x) {
  int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// Blocks per output for a split rows pass of n_out outputs over a wave of
// `wave` resident blocks, at most max_split. Rounding wave / n_out up can
// leave a few blocks for a second wave, each with a whole share of an output
// to read almost alone: [4096,32,4096] over (0, 2) ran 13 blocks for each of
// 32 outputs, 416 blocks against 396 slots, and read 3700-3835 GB/s. A
// block's time is about its share of an output, 1 / s, so the grid's time
// goes as waves(s * n_out) / s; the smallest of that wins, ties going to the
// larger split (12 per output there: one wave of 384 blocks).
int64_t split_for_waves(int64_t n_out, int64_t wave, int64_t max_split) {
  const int64_t most = std::min(ceil_div(wave, n_out), max_split);
  int64_t best = 1, best_waves = ceil_div(n_out, wave);
  for (int64_t s = 2; s <= most; ++s) {
    const int64_t waves = ceil_div(s * n_out, wave);
    if (waves * best <= best_waves * s) best = s, best_waves = waves;  // waves/s <= best_waves/best
  }
  return best;
}

// Threads of the kernel that combines a split pass's partials: a thread per
// partial where a block holds them all (396 for a full sum), so that each
// makes one load, not two in a row, on the path the next kernel waits for.
int64_t finish_threads(int64_t split) {
  return std::min<int64_t>(std::max<int64_t>(pow2_at_least(split), 32), EnginePolicy::kThreads);
}

bool outer_strides_divisible(const OuterIndexer& outer, int64_t v) {
  for (int d = 0; d < outer.ndim; ++d)
    if (outer.in_strides[d] % v != 0) return false;
  return true;
}

// How many blocks of `threads` threads of `kernel` one SM can hold.
template <typename Kernel>
int64_t max_resident_blocks(Kernel kernel, int threads) {
  int n = 0;
  C10_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, 0));
  return n;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Whether a rows pass of element stride 2 can be read with vector loads as
// dense rows of twice the length: every row and outer offset on a 16-byte
// boundary, and the one element read past each row's end still inside the
// storage (a slice x[..., ::2] of an odd-length dim ends on its last element).
bool stride2_rows_fit(const ReducePass& p, const at::Tensor& in, int64_t v) {
  if (p.elem_stride != 2 || !aligned16(in.const_data_ptr()) || (2 * p.row_len) % v != 0) return false;
  if (!outer_strides_divisible(p.outer, v) || (p.n_rows > 1 && p.row_stride % v != 0)) return false;
  int64_t last = (p.n_rows - 1) * p.row_stride + 2 * p.row_len - 1;  // the last element read
  for (int d = 0; d < p.outer.ndim; ++d)
    last += (static_cast<int64_t>(p.outer.sizes[d].divisor) - 1) * p.outer.in_strides[d];
  const int64_t bytes_needed = (in.storage_offset() + last + 1) * int64_t(in.element_size());
  return in.storage().nbytes() >= static_cast<size_t>(bytes_needed);
}

// The range queue of an integer full sum (gpureduce_sum_full_queue): a
// counter that is zero now and that the call's finish kernel leaves at zero,
// so that no memset runs before each call. Kernels that may run at the same
// time must not share one, so:
//   - eager calls take their stream's own counter (the calls on one stream
//     run one after another: with PDL a kernel touches memory only once the
//     one before it has completed);
//   - the calls captured on one stream in one capture share a counter, for
//     good (they run one after another in every replay, and one graph's
//     replays do too; two executable graphs made from one capture must not
//     replay at the same time, which the finish kernel would trap);
// and where none is left, on the per-thread default stream (one handle for
// many streams), or in a capture before any eager call has made the pool
// (it is zeroed once, with one host synchronisation, which a capture does
// not allow), there is no queue and the blocks read fixed ranges. The sum is
// the same either way.
unsigned* range_queue(cudaStream_t stream) {
  constexpr int kSlots = 8192, kStreamSlots = 1024;  // slots from kStreamSlots on: captured calls
  struct DeviceQueues {
    unsigned* base = nullptr;
    std::vector<cudaStream_t> streams;  // slot i is streams[i]'s
    std::map<std::pair<unsigned long long, cudaStream_t>, int> captures;  // (capture id, stream) -> slot
    int next_captured = kStreamSlots;
  };
  static std::mutex mutex;
  static std::unordered_map<int, DeviceQueues> per_device;
  if (stream == cudaStreamPerThread) return nullptr;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  unsigned long long capture_id = 0;
  C10_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &capture, &capture_id));
  const int device = c10::cuda::current_device();
  const std::lock_guard<std::mutex> lock(mutex);
  DeviceQueues& d = per_device[device];
  if (d.base == nullptr) {
    if (capture != cudaStreamCaptureStatusNone) return nullptr;
    void* p = nullptr;
    C10_CUDA_CHECK(cudaMalloc(&p, kSlots * sizeof(unsigned)));  // kept for the process's life
    C10_CUDA_CHECK(cudaMemsetAsync(p, 0, kSlots * sizeof(unsigned), stream));
    C10_CUDA_CHECK(cudaStreamSynchronize(stream));  // zero before any stream's kernel reads it
    d.base = static_cast<unsigned*>(p);
  }
  if (capture != cudaStreamCaptureStatusNone) {
    if (capture != cudaStreamCaptureStatusActive) return nullptr;
    const auto key = std::make_pair(capture_id, stream);
    auto it = d.captures.find(key);
    if (it == d.captures.end()) {
      if (d.next_captured >= kSlots) return nullptr;
      it = d.captures.emplace(key, d.next_captured++).first;
    }
    return d.base + it->second;
  }
  for (size_t i = 0; i < d.streams.size(); ++i)
    if (d.streams[i] == stream) return d.base + i;
  if (d.streams.size() >= static_cast<size_t>(kStreamSlots)) return nullptr;
  d.streams.push_back(stream);
  return d.base + (d.streams.size() - 1);
}

// Workspace for a split pass: `n_counters` zeroed tickets, then partials.
template <typename acc_t>
std::pair<unsigned*, acc_t*> split_workspace(const at::Tensor& like, at::Tensor& holder,
                                             int64_t n_counters, int64_t n_partials) {
  const int64_t counter_bytes = ceil_div(n_counters * int64_t(sizeof(unsigned)), 16) * 16;
  holder = at::empty({counter_bytes + n_partials * int64_t(sizeof(acc_t))},
                     like.options().dtype(at::kByte));
  auto* bytes = static_cast<unsigned char*>(holder.data_ptr());
  C10_CUDA_CHECK(cudaMemsetAsync(bytes, 0, counter_bytes, c10::cuda::getCurrentCUDAStream()));
  return {reinterpret_cast<unsigned*>(bytes), reinterpret_cast<acc_t*>(bytes + counter_bytes)};
}

// Launches `kernel` on `stream`; with `pdl`, as a programmatic dependent of
// the work before it (the kernel waits for that work itself: see
// wait_for_prior_grid in reduce_engine.cuh).
template <typename... Params, typename... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, bool pdl,
                   Args&&... args) {
  if (!pdl) {
    kernel<<<grid, block, 0, stream>>>(std::forward<Args>(args)...);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  C10_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// `head`/`tail`: scalar elements before and after the vector body of a single
// dense row (see RowsArgs); zero otherwise.
// kStep = 2: the row has element stride 2 and is read as dense memory of
// twice its length with full vector loads (the caller checked that this stays
// inside the storage); every other element is dropped.
template <typename in_t, typename out_t, int V, int kStep = 1>
void launch_rows(const ReducePass& p, const in_t* x, out_t* y, const at::Tensor& like,
                 int64_t head = 0) {
  using acc_t = typename SumAcc<out_t>::type;
  using wide_t = typename SumOp<acc_t>::wide_op::acc_type;
  RowsArgs<wide_t> a{};
  a.outer = p.outer;
  a.n_out = p.n_out;
  a.head = head;
  a.tail = kStep == 1 ? static_cast<int>((p.row_len - head) % V) : 0;
  a.chunks_per_row = (p.row_len - head) * kStep / V;
  a.chunks = a.chunks_per_row * p.n_rows;
  a.row_div = FastDivmod(static_cast<uint64_t>(a.chunks_per_row));
  a.row_stride = p.row_stride;
  a.elem_stride = kStep == 1 ? p.elem_stride : 1;
  a.split = 1;

  const int64_t resident_blocks = int64_t(sm_count()) * Policy::kBlocksPerSm;
  const int64_t resident_warps = resident_blocks * (Policy::kThreads / 32);
  const SplitPolicy& sp = split_policy();
  const int64_t lanes_wanted = pow2_at_least(ceil_div(a.chunks, sp.row_chunks_per_lane));
  auto stream = c10::cuda::getCurrentCUDAStream();

  // Long reductions with too few outputs to give every resident warp one: a
  // whole block per output, split across blocks until the GPU is full.
  const bool ragged = a.head + a.tail > 0;
  const auto split_kernel = gpureduce_sum_split_rows<SumOp<acc_t>, in_t, out_t, V, kStep>;
  const bool long_rows = a.chunks >= Policy::kThreads * Policy::kUnroll;
  const bool few_outputs =
      p.n_out < resident_warps || (long_rows && p.n_out < resident_warps * sp.split_rows_out_factor);
  // A single output (a full sum) always takes whole blocks: through the
  // inner rows kernel, one warp of one block summed 2^10 bfloat16 values in
  // 2.3 µs against 1.4 µs for 2^10 float32 here (H200).
  if (ragged || p.n_out == 1 || (lanes_wanted > 32 && few_outputs && p.n_out <= 65535)) {
    // Small sums stay in one block; larger ones take up to one wave of
    // resident blocks, each thread at least one unrolled iteration. The wave
    // counts the blocks this kernel's registers let an SM hold (3 of 512
    // threads for most types), not the 2 that the launch bounds promise.
    static const int64_t split_blocks_per_sm = std::max<int64_t>(
        Policy::kBlocksPerSm, std::min<int64_t>(sp.split_rows_blocks_per_sm,
                                                max_resident_blocks(split_kernel, Policy::kThreads)));
    const int64_t split_wave = int64_t(sm_count()) * split_blocks_per_sm;
    const int64_t per_loop = Policy::kThreads * Policy::kUnroll;
    const int64_t max_split = a.chunks < per_loop * sp.one_block_loops ? 1 : a.chunks / per_loop;
    const int64_t split = sp.split_rows_wave_fit == 2 ? split_for_waves(p.n_out, split_wave, max_split)
                                                      : std::min(ceil_div(split_wave, p.n_out), max_split);
    a.split = static_cast<int>(split);
    if (sp.split_rows_contiguous == 2 && split > 1 && p.n_rows == 1)
      // Whole unrolled loops per thread, so that no remainder loads trail.
      a.block_chunks = ceil_div(ceil_div(a.chunks, split), Policy::kThreads * Policy::kUnroll) *
                       Policy::kThreads * Policy::kUnroll;
    a.early_trigger = sp.split_early_trigger == 1 || split * p.n_out <= split_wave;
    const dim3 grid(static_cast<unsigned>(split), static_cast<unsigned>(p.n_out));
    at::Tensor workspace;
    if constexpr (kStep == 1 && std::is_integral_v<wide_t>) {
      const int64_t loops = a.chunks / per_loop;  // whole unrolled loops of a block
      if (sp.full_sum_queue == 2 && sp.split_finish >= 2 && p.n_out == 1 && p.n_rows == 1 && split > 1 &&
          loops >= split * sp.full_sum_queue_min_loops) {
        // First ranges: whole loops, at most the share that leaves something
        // to queue; queued ranges: full_sum_queue_loops loops each.
        const int64_t first_loops = std::clamp<int64_t>(loops * sp.full_sum_queue_first_pct / (100 * split), 1,
                                                        std::max<int64_t>(loops / split - 1, 1));
        const int64_t first_chunks = first_loops * per_loop;
        const int64_t queued_chunks = std::max<int64_t>(sp.full_sum_queue_loops, 1) * per_loop;
        const int64_t n_ranges = queue_ranges(a.chunks, split, first_chunks, queued_chunks);
        // Without a queue (see range_queue), the fixed ranges below.
        unsigned* queue = n_ranges < (int64_t(1) << 31) ? range_queue(stream) : nullptr;
        if (queue != nullptr) {
          a.first_chunks = first_chunks;
          a.block_chunks = queued_chunks;
          workspace = at::empty({split * int64_t(sizeof(wide_t))}, like.options().dtype(at::kByte));
          a.partials = reinterpret_cast<wide_t*>(workspace.data_ptr());
          launch_kernel(gpureduce_sum_full_queue<SumOp<acc_t>, in_t, V>, grid, dim3(Policy::kThreads), stream,
                        sp.split_finish == 3, a, x, queue);
          launch_kernel(gpureduce_sum_finish_partials<typename SumOp<acc_t>::wide_op, out_t>, dim3(1),
                        dim3(static_cast<unsigned>(finish_threads(split))), stream, sp.split_finish >= 3,
                        static_cast<const wide_t*>(a.partials), a.split, p.outer, y, queue,
                        static_cast<unsigned>(n_ranges));
          return;
        }
      }
    }
    if (split > 1 && sp.split_finish == 1) {
      std::tie(a.counters, a.partials) = split_workspace<wide_t>(like, workspace, p.n_out, p.n_out * split);
    } else if (split > 1) {
      workspace = at::empty({p.n_out * split * int64_t(sizeof(wide_t))}, like.options().dtype(at::kByte));
      a.partials = reinterpret_cast<wide_t*>(workspace.data_ptr());
    }
    launch_kernel(split_kernel, grid, dim3(Policy::kThreads), stream, sp.split_finish == 3, a, x, y);
    if (split > 1 && sp.split_finish != 1) {
      launch_kernel(gpureduce_sum_finish_partials<typename SumOp<acc_t>::wide_op, out_t>,
                    dim3(static_cast<unsigned>(p.n_out)), dim3(static_cast<unsigned>(finish_threads(split))),
                    stream, sp.split_finish >= 3, static_cast<const wide_t*>(a.partials), a.split, p.outer, y,
                    static_cast<unsigned*>(nullptr), 0u);
    }
    return;
  }
  // Outputs of at most 32 chunks: a lane per chunk (gpureduce_sum_short_rows).
  // [2097152, 32] float32 over dim 1 read 3302 GB/s with two lanes of four
  // chunks each through the inner rows kernel (benchmarks/NOTES.md).
  if constexpr (kStep == 1) {
    if (a.chunks <= 32 && sp.short_rows == 1) {
      constexpr bool spills_at_two = sizeof(in_t) == 2 && V == 8 && !std::is_same_v<in_t, c10::Half>;
      const int64_t per_lane = !spills_at_two && sp.short_rows_per_lane >= 2 ? 2 : 1;
      a.group = static_cast<int>(pow2_at_least(ceil_div(a.chunks, per_lane)));
      const int64_t per_block = (Policy::kThreads / a.group) * (Policy::kUnroll / per_lane);
      const unsigned blocks = static_cast<unsigned>(
          std::min(ceil_div(p.n_out, per_block), resident_blocks * sp.inner_rows_blocks_per_slot));
      if constexpr (!spills_at_two) {
        if (per_lane == 2)
          gpureduce_sum_short_rows<SumOp<acc_t>, in_t, out_t, V, 2><<<blocks, Policy::kThreads, 0, stream>>>(a, x, y);
      }
      if (per_lane == 1)
        gpureduce_sum_short_rows<SumOp<acc_t>, in_t, out_t, V, 1><<<blocks, Policy::kThreads, 0, stream>>>(a, x, y);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
  }
  a.group = static_cast<int>(std::min<int64_t>(lanes_wanted, 32));
  const int64_t groups_per_block = Policy::kThreads / a.group;
  const int64_t blocks = std::min(ceil_div(p.n_out, groups_per_block), resident_blocks * sp.inner_rows_blocks_per_slot);
  gpureduce_sum_inner_rows<SumOp<acc_t>, in_t, out_t, V, kStep>
      <<<static_cast<unsigned>(blocks), Policy::kThreads, 0, stream>>>(a, x, y);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename in_t, typename out_t, int V>
void launch_columns(const ReducePass& p, const in_t* x, out_t* y, const at::Tensor& like) {
  using acc_t = typename SumAcc<out_t>::type;
  using Op = SumOp<acc_t>;
  ColumnsArgs<acc_t> a{};
  a.outer = p.outer;
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
  a.vec_cols = p.n_cols / V;
  // Threads along the rows (by) only as many as give each one about
  // rows_per_column_thread rows; at least column_min_bx (32 or more) along
  // the columns where there are that many, for long row segments per warp.
  const SplitPolicy& sp = split_policy();
  int64_t by_wanted = 1;
  while (by_wanted * 2 * sp.rows_per_column_thread <= a.n_rows && by_wanted < sp.max_row_threads)
    by_wanted *= 2;
  const int64_t bx = std::min<int64_t>(
      {pow2_at_least(a.vec_cols), std::max(Policy::kThreads / by_wanted, pow2_at_least(sp.column_min_bx)),
       int64_t(Policy::kThreads)});
  const int64_t by = Policy::kThreads / bx;
  a.x_tiles = ceil_div(a.vec_cols, bx);
  const int64_t tiles = a.x_tiles * a.n_outer;
  TORCH_CHECK(tiles < (int64_t(1) << 31), "gpureduce: too many output tiles");

  // Waves of resident blocks: by default counted at EnginePolicy::kBlocksPerSm
  // per SM, though float32 and int32 columns hold three (see SplitPolicy).
  static const int64_t column_blocks_per_sm =
      max_resident_blocks(gpureduce_sum_columns<Op, in_t, out_t, V>, Policy::kThreads);
  const int64_t resident_blocks =
      int64_t(sm_count()) * (sp.column_waves_from_occupancy == 1 ? column_blocks_per_sm : Policy::kBlocksPerSm);
  const int64_t target_blocks = resident_blocks * sp.column_target_waves;
  int64_t split = 1;
  if (tiles < target_blocks) {
    const int64_t input_bytes = a.n_outer * a.n_cols * a.n_rows * int64_t(sizeof(in_t));
    const bool small = tiles * 4 <= resident_blocks && input_bytes <= sp.small_column_input_bytes;
    const int64_t min_loops = small ? sp.min_column_loops_small : sp.min_column_loops;
    const int64_t max_split = std::max<int64_t>(1, a.n_rows / (by * Policy::kUnroll * min_loops));
    split = std::min({ceil_div(target_blocks, tiles), max_split, int64_t(65535)});
  }
  if constexpr (!std::is_same_v<ColumnWalkAcc<in_t, acc_t>, acc_t>) {
    // int32 running sums: no thread may walk more than kMaxNarrowColumnRows rows.
    split = std::max(split, ceil_div(a.n_rows, by * kMaxNarrowColumnRows));
    TORCH_CHECK(split <= 65535, "gpureduce: too many rows for one columns pass");
  }
  a.rows_per_split = ceil_div(a.n_rows, split);
  split = ceil_div(a.n_rows, a.rows_per_split);
  a.split = static_cast<int>(split);
  at::Tensor workspace;
  if (split > 1) {
    std::tie(a.counters, a.partials) =
        split_workspace<acc_t>(like, workspace, tiles, split * a.n_outer * a.n_cols);
  }
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(split));
  const dim3 block(static_cast<unsigned>(bx), static_cast<unsigned>(by));
  gpureduce_sum_columns<Op, in_t, out_t, V>
      <<<grid, block, 0, c10::cuda::getCurrentCUDAStream()>>>(a, x, y);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void run_pass_cuda(const ReducePass& p, const at::Tensor& in, const at::Tensor& out) {
  dispatch_sum_types(in.scalar_type(), out.scalar_type(), [&](auto in_tag, auto out_tag) {
    using in_t = typename decltype(in_tag)::type;
    using out_t = typename decltype(out_tag)::type;
    constexpr int kVec = sizeof(in_t) >= 16 ? 1 : 16 / int(sizeof(in_t));
    const in_t* x = static_cast<const in_t*>(in.const_data_ptr());
    out_t* y = static_cast<out_t*>(out.data_ptr());
    const bool base_ok = kVec > 1 && aligned16(x) && outer_strides_divisible(p.outer, kVec);
    if (p.kind == ReducePass::Kind::kRows) {
      const bool vec = base_ok && p.elem_stride == 1 && p.row_len % kVec == 0 &&
                       (p.n_rows == 1 || p.row_stride % kVec == 0);
      if constexpr (kVec > 1) {
        if (vec) return launch_rows<in_t, out_t, kVec>(p, x, y, in);
        if constexpr (sizeof(in_t) == 2 || sizeof(in_t) == 4) {
          if (stride2_rows_fit(p, in, kVec)) return launch_rows<in_t, out_t, kVec, 2>(p, x, y, in);
        }
        // One dense row (a full sum) of any length or alignment: vector body,
        // scalar head and tail.
        const int64_t head = (16 - int64_t(reinterpret_cast<uintptr_t>(x) % 16)) % 16 / int64_t(sizeof(in_t));
        const bool one_row = p.n_out == 1 && p.n_rows == 1 && p.elem_stride == 1;
        if (one_row && reinterpret_cast<uintptr_t>(x) % sizeof(in_t) == 0 &&
            p.row_len >= head + 4 * kVec * Policy::kThreads)
          return launch_rows<in_t, out_t, kVec>(p, x, y, in, head);
      }
      launch_rows<in_t, out_t, 1>(p, x, y, in);
    } else {
      const bool vec = base_ok && p.col_stride == 1 && p.n_cols % kVec == 0 &&
                       p.reduce_stride % kVec == 0 && p.reduce_outer_stride % kVec == 0;
      if constexpr (kVec > 1) {
        if (vec) return launch_columns<in_t, out_t, kVec>(p, x, y, in);
      }
      launch_columns<in_t, out_t, 1>(p, x, y, in);
    }
  });
}

at::Tensor sum_dim_cuda(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype) {
  const c10::cuda::CUDAGuard guard(input.device());
  return sum_dim_with(input, dim, keepdim, dtype, run_pass_cuda, "sum_cuda");
}

at::Tensor sum_cuda(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return sum_dim_cuda(input, std::nullopt, false, dtype);
}

void sum_out_cuda(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(input.device());
  sum_out_with(input, dim, keepdim, dtype, out, run_pass_cuda, "sum_cuda");
}

}  // namespace
}  // namespace cuda

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) {
  m.impl("sum", &cuda::sum_cuda);
  m.impl("sum.dim_IntList", &cuda::sum_dim_cuda);
  m.impl("sum.IntList_out", &cuda::sum_out_cuda);
}

}  // namespace gpureduce
