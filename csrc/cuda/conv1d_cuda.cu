// _conv1d_padded on the CUDA key (conv/conv1d.h): the rows of the input
// (B * C of them, or one) cut into tiles; a tile's window of input (its
// inputs and the K - 1 halo cells around them, zeros outside the row: the
// ghost cells) goes into shared memory, with the row's mask, and each
// thread then slides consecutive outputs' inputs through registers, adding
// the taps in order j = 0, 1, ..., K - 1 after the bias. Every output's sum
// has one order, fixed by K alone, in all four kernels below: bitwise
// reproducible whichever runs. 16-bit inputs accumulate in float32.
// - gpureduce_conv1d_rows_stream, for 2-byte rows (input and output) on
//   16-byte boundaries and masks of up to 8 taps: no shared window, a
//   warp's run of chunks of a row, the halo from the neighbouring threads
//   by shuffles;
// - gpureduce_conv1d_rows_ahead, for the other rows on 16-byte boundaries
//   and masks of up to 31 taps: a block works through tiles one after
//   another (strided over the grid, or a run of consecutive tiles where the
//   arithmetic is the limit), a tile's window loaded into registers
//   (16-byte vectors, 32 bytes a thread) a tile ahead, so that a tile's
//   compute overlaps the next one's loads;
// - gpureduce_conv1d_rows_async, for float32 and float64 rows off 16-byte
//   boundaries and masks of up to 31 taps: the same tiles, the next one's
//   window copied element by element into a second shared buffer by
//   cp.async;
// - gpureduce_conv1d_rows, for the others: a block a tile, loaded in
//   coalesced element loads.
// conv1d_padded_cuda says which runs when, and the measurements behind it.
//
// Beside it, the four steps of PMPP chapter 8 (classic_conv1d, kernel=):
// - basic: a thread an output, its K inputs and taps from global memory,
//   the ghost cells skipped by a bounds test;
// - constant: the taps in constant memory. The book copies them into a
//   __constant__ array before the launch, which two streams' launches would
//   share (a mask copied for one stream may be read by the other's kernel);
//   here they travel as a kernel parameter, which lives in constant memory
//   too and belongs to its launch;
// - tiled_halo: a block loads its tile of inputs and the halo around it
//   (left before, K - 1 - left after) into shared memory, then each thread
//   reads its K inputs from there;
// - tiled_l2: only the tile goes to shared memory; the halo's inputs are
//   read from global memory, where the neighbouring blocks' loads left them
//   in the L2 cache.
// The book's mask is odd and centred (r = (K - 1) / 2 each side); these take
// any K up to kConstantTaps (the parameter's size) and any left padding, and
// any L (a last, part-filled tile). Their taps go in the same order as the
// production kernel's.
#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAStream.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../conv/conv1d.h"
#include "../engine/fast_divmod.h"
#include "launch.h"

namespace gpureduce {
namespace conv {
namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 8;  // consecutive outputs a thread
constexpr int kTile = kThreads * kPerThread;
__host__ __device__ constexpr int padded(int p) { return p + (p >> 3); }
// A block's shared memory, the window and the mask in float64 at the
// longest mask, stays within the 48 KB a launch gets without opting in.
static_assert(sizeof(double) * (kMaxTaps + kTile + kMaxTaps + 7 + (kTile + kMaxTaps + 7) / 8 + 1) <= 48 * 1024,
              "conv1d tiles' shared memory");

// The rows every kernel here computes (Conv1dOperands' geometry, in the
// kernels' parameters): row r's mask is row r % channels of a mask per
// channel.
struct RowGeometry {
  int64_t rows, L, out_len, channels;
  int K, left;
  bool per_channel, has_bias;
};

RowGeometry geometry_of(const Conv1dOperands& o) {
  return {o.rows, o.L, o.out_len, o.channels, static_cast<int>(o.K), static_cast<int>(o.left), o.per_channel,
          o.bias.defined()};
}

// The production kernel's: rows of `tiles` tiles, `total` = rows * tiles blocks of work.
struct RowsArgs : RowGeometry {
  int64_t tiles, total;
};

// kWindowSlack words after the window: add_taps_by_eight loads a tap group's
// 8 inputs whole, up to 8 past the last one a pass uses (never used).
constexpr int kWindowSlack = 8;

// acc[e] += mask[j] * window[at + e + j] for the 8 outputs from window word
// `at` (a multiple of 8) and the taps j = 0, 1, ..., K - 1 in order (the
// same sums, in the same order, as a tap at a time). The taps go 8 at a
// time over 16 inputs held in registers, every index a constant of the
// unrolled code: a tap costs its 8 multiply-adds, one shared load of an
// input and one of the tap, where the tap-at-a-time loop's runtime shift of
// 8 registers and its padded index for every load took 2.8 instructions a
// multiply-add (SASS of the float32 kernel, compiled for sm_90). On the
// H200 it took one channel of 2^26 float32 at K = 31 from 40% to 59% of the
// copy roof, depthwise K = 7 from 73% to 85% (float32) and 49% to 58%
// (bfloat16), with K = 3 within 2% either way (NOTES.md, session 93). The
// window has a pad word after every kV inputs (window index q is word q +
// q / kV), so 8 inputs from a multiple of 8 are 8 consecutive words when kV
// is a multiple of 8. A group's inputs are found by stepping one pointer,
// not by padding each group's index again: 17 instructions a group beside
// its 64 multiply-adds, not 23 (SASS, float32), and one float32 channel at
// K = 31 in 177 us, not 188, at K = 23 157, not 163, with K <= 15 within 1%
// (H200, in one run; NOTES.md, session 98).
template <int kV, typename acc_t>
__device__ __forceinline__ void add_taps_by_eight(const acc_t* __restrict__ window, const acc_t* __restrict__ mask,
                                                  int at, int K, acc_t (&acc)[8]) {
  static_assert(kV % 8 == 0, "8 inputs from a multiple of 8 must not cross a pad word");
  acc_t v[16];
  // The inputs from at + j0 + 8 start 8 words after those from at + j0, or
  // 9 where a pad word lies between ((at + j0 + 8) % kV == 0): for kV = 8
  // always, a fixed step.
  const unsigned u = static_cast<unsigned>(at);
  const unsigned s = kV == 8 ? 0u : u % kV;
  const acc_t* next = window + (u + u / kV);
#pragma unroll
  for (int e = 0; e < 8; ++e) v[e] = next[e];
  int j0 = 0;
  for (; j0 + 8 <= K; j0 += 8) {
    next += 8 + ((s + unsigned(j0) + 8) % kV == 0);  // up to 8 words past the last input used: the slack
#pragma unroll
    for (int e = 0; e < 8; ++e) v[8 + e] = next[e];
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
      const acc_t w = mask[j0 + jj];
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[e] += w * v[e + jj];
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) v[e] = v[8 + e];
  }
  if (j0 < K) {  // the last K % 8 taps, which read K - j0 - 1 more inputs
    // (with all 8 loaded, as a full group does, the float32 tile-ahead
    // kernel took 64 registers, not 48, and depthwise K = 3 ran 1% behind
    // the tap-at-a-time loop; with these loads, 2-3% ahead: session 93)
    const int rest = K - j0;
    next += 8 + ((s + unsigned(j0) + 8) % kV == 0);
#pragma unroll
    for (int e = 0; e < 7; ++e) v[8 + e] = e + 1 < rest ? next[e] : acc_t(0);
#pragma unroll
    for (int jj = 0; jj < 7; ++jj) {
      if (jj < rest) {
        const acc_t w = mask[j0 + jj];
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[e] += w * v[e + jj];
      }
    }
  }
}

// 16 bytes to global memory as one store. Written in C++ (a uint4 through a
// cast pointer), the first of a pass's vector stores in the stream kernel
// came out of the compiler's front end as four 4-byte stores shared with the
// element path's first four (PTX, CUDA 13.0): a warp's 4-byte stores 32
// bytes apart write 8 times the L2 sectors of one 16-byte store each.
__device__ __forceinline__ void store_16_bytes(void* dst, const uint4& v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(dst)), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w));
}

// kN values out to dst, where `n` of them exist (the rest would lie past
// the row's end): as 16-byte vectors, back to back, when all exist and dst
// is on a 16-byte boundary (`aligned`), else one at a time.
template <int kN, typename scalar_t>
__device__ __forceinline__ void store_values(scalar_t* __restrict__ dst, const scalar_t (&vals)[kN], int64_t n,
                                             bool aligned) {
  if (aligned && n >= kN && (sizeof(scalar_t) * kN) % 16 == 0) {
#pragma unroll
    for (int q = 0; q < int(sizeof(scalar_t) * kN / 16); ++q)
      store_16_bytes(reinterpret_cast<uint4*>(dst) + q, reinterpret_cast<const uint4*>(vals)[q]);
  } else {
    const int m = n < kN ? static_cast<int>(n) : kN;
#pragma unroll
    for (int e = 0; e < kN; ++e)
      if (e < m) dst[e] = vals[e];
  }
}

// A pass's kPass sums out to dst, rounded to scalar_t (store_values).
template <int kPass, typename scalar_t, typename acc_t>
__device__ __forceinline__ void store_outputs(scalar_t* __restrict__ dst, const acc_t (&acc)[kPass], int64_t n,
                                              bool aligned) {
  alignas(16) scalar_t vals[kPass];
#pragma unroll
  for (int e = 0; e < kPass; ++e) vals[e] = static_cast<scalar_t>(acc[e]);
  store_values<kPass>(dst, vals, n, aligned);
}

// A block a tile: its window into shared memory in coalesced element
// loads, a barrier, then each thread's kPerThread consecutive outputs, their
// inputs slid through registers 8 taps at a time (add_taps_by_eight, which
// the tile-ahead kernel shares); the window has a pad word after every 8,
// so that threads 8 outputs apart read distinct banks, and the outputs
// leave as 16-byte stores where aligned. Sliding took the element-strided
// form's 1129 GB/s to 1557 at [2^26] float32 K = 31, and 1131 to 1588 at a
// depthwise bfloat16 K = 4, on the H200 (NOTES.md, session 86).
template <typename scalar_t>
__global__ void __launch_bounds__(kThreads)
    gpureduce_conv1d_rows(RowsArgs a, const scalar_t* __restrict__ in, const scalar_t* __restrict__ w,
                           const scalar_t* __restrict__ bias, scalar_t* __restrict__ out) {
  using acc_t = acc_of<scalar_t>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  acc_t* mask = reinterpret_cast<acc_t*>(smem_raw);  // K taps
  acc_t* window = mask + a.K;                         // padded(kTile + K - 1) words
  const int window_len = kTile + a.K - 1;
  for (int64_t work = blockIdx.x; work < a.total; work += gridDim.x) {
    const int64_t r = work / a.tiles;
    const int64_t first = (work - r * a.tiles) * kTile;
    const int64_t c = a.per_channel ? r % a.channels : 0;
    const scalar_t* row = in + r * a.L;
    const int64_t start = first - a.left;
    for (int k = threadIdx.x; k < window_len; k += kThreads) {
      const int64_t t = start + k;
      window[padded(k)] = t >= 0 && t < a.L ? static_cast<acc_t>(row[t]) : acc_t(0);
    }
    for (int j = threadIdx.x; j < a.K; j += kThreads) mask[j] = static_cast<acc_t>(w[c * a.K + j]);
    __syncthreads();
    const acc_t b = a.has_bias ? static_cast<acc_t>(bias[a.per_channel ? c : 0]) : acc_t(0);
    const int base = threadIdx.x * kPerThread;
    acc_t acc[kPerThread];
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) acc[e] = b;
    add_taps_by_eight<8>(window, mask, base, a.K, acc);
    scalar_t* dst = out + r * a.out_len + first + base;
    // outputs of this thread's 8 that exist: a.out_len - first - base
    store_outputs<kPerThread>(dst, acc, a.out_len - first - base, reinterpret_cast<uintptr_t>(dst) % 16 == 0);
    __syncthreads();
  }
}


// A block's tiles, each one's window (body, halo, taps and bias) loaded
// into registers while the tile before it is computed. kV outputs a thread:
// 32 bytes of input, two 16-byte loads, so 16 for 2-byte types and 8 for
// the others (16 bytes a thread, 8 outputs of bfloat16, measured 0.88-0.95x
// of one tile a block; NOTES.md, session 87).
//
// kMinBlocks: the blocks an SM holds (__launch_bounds__), four: 64 registers
// a thread. Left to itself the compiler took 77 for 2-byte types (three
// blocks). For float32 four blocks without spills ran 4-5% ahead of five
// with 24 bytes spilled (H200, in one run: depthwise K = 3 to 7 at 89% of
// the copy roof against 85%; NOTES.md, session 94).
template <typename scalar_t>
struct AheadPolicy {
  static constexpr int kV = sizeof(scalar_t) == 2 ? 16 : 8;
  static constexpr int kMinBlocks = sizeof(scalar_t) == 8 ? 2 : 4;
  // Whether a block's tiles are a run of consecutive ones (kRuns of the
  // kernel, which says what was measured): for 2-byte rows (here K 9 to 31,
  // or outputs staged); for float32, masks of more than 16 taps, rows whose
  // tiles are less than 7/8 full on average (out_len outputs in tiles of
  // kThreads * kV), and launches of at most 8 tiles a block (`resident`
  // blocks at a time).
  static constexpr bool kRunsAlways = sizeof(scalar_t) == 2;
  static constexpr bool kRunsNever = sizeof(scalar_t) == 8;
  static bool runs(int64_t K, int64_t rows, int64_t out_len, int64_t resident) {
    if (kRunsAlways || kRunsNever) return kRunsAlways;
    constexpr int64_t kTileV = int64_t(kThreads) * kV;
    const int64_t tiles = (out_len + kTileV - 1) / kTileV;
    return K > 16 || out_len * 8 < tiles * kTileV * 7 || rows * tiles <= 8 * resident;
  }
};
// The masks it takes: a thread loads a tap, and a halo cell.
constexpr int kAheadMaxTaps = 31;
static_assert(kAheadMaxTaps <= kThreads, "a tap and a halo cell a thread");

// Its shared memory, the padded window and the mask, then (kStaged) a
// tile's outputs on a 16-byte boundary, within the 48 KB a launch gets
// without opting in.
template <typename scalar_t, int kV>
constexpr size_t ahead_window_bytes(int K) {
  constexpr int kTileV = kThreads * kV;
  const size_t window = size_t(kTileV + K - 1 + kWindowSlack);
  return sizeof(acc_of<scalar_t>) * (size_t(K) + window + window / kV + 1);
}
template <typename scalar_t, int kV>
constexpr size_t ahead_staging_offset(int K) {
  return (ahead_window_bytes<scalar_t, kV>(K) + 15) / 16 * 16;
}
template <typename scalar_t, int kV, bool kStaged, bool kTwoWindows>
constexpr size_t ahead_smem_bytes(int K) {
  return kStaged       ? ahead_staging_offset<scalar_t, kV>(K) + sizeof(scalar_t) * kThreads * kV
         : kTwoWindows ? ahead_staging_offset<scalar_t, kV>(K) + ahead_window_bytes<scalar_t, kV>(K)
                       : ahead_window_bytes<scalar_t, kV>(K);
}
static_assert(ahead_smem_bytes<double, AheadPolicy<double>::kV, true, false>(kAheadMaxTaps) <= 48 * 1024 &&
                  ahead_smem_bytes<float, AheadPolicy<float>::kV, true, false>(kAheadMaxTaps) <= 48 * 1024 &&
                  ahead_smem_bytes<c10::BFloat16, AheadPolicy<c10::BFloat16>::kV, true, false>(kAheadMaxTaps) <=
                      48 * 1024 &&
                  ahead_smem_bytes<double, AheadPolicy<double>::kV, false, true>(kAheadMaxTaps) <= 48 * 1024,
              "conv1d tiles' shared memory");

// A tile's n outputs from shared memory (`staged`, on a 16-byte boundary)
// to dst, which is off one: the elements before dst's first 16-byte
// boundary and after its last one a thread each, the rest 16 bytes a
// thread, gathered from shared memory element by element.
template <typename scalar_t>
__device__ __forceinline__ void store_staged_tile(scalar_t* __restrict__ dst, const scalar_t* __restrict__ staged,
                                                  int n) {
  constexpr int kPerVector = 16 / sizeof(scalar_t);
  const int t = threadIdx.x;
  const int head = int((16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16 / sizeof(scalar_t));
  if (t < head && t < n) dst[t] = staged[t];
  const int vectors = n > head ? (n - head) / kPerVector : 0;
  for (int i = t; i < vectors; i += kThreads) {
    alignas(16) scalar_t v[kPerVector];
#pragma unroll
    for (int e = 0; e < kPerVector; ++e) v[e] = staged[head + i * kPerVector + e];
    store_16_bytes(dst + head + i * kPerVector, *reinterpret_cast<const uint4*>(v));
  }
  const int tail = (n > head ? head + vectors * kPerVector : n) + t;
  if (tail < n) dst[tail] = staged[tail];
}

// Its arguments: the tile count and the channel count as multiply-and-shift
// divisors (a 64-bit division is some 20 instructions even on its 32-bit
// path, and a tile took four).
struct AheadArgs : RowsArgs {
  FastDivmod tiles_div, channels_div;
  // kRuns: block b's tiles are the run of run_tiles (+ 1 for b < run_extra)
  // from b * run_tiles + min(b, run_extra).
  int64_t run_tiles, run_extra;
};

// Tile `work`'s row, its first output and its mask's row.
struct TilePlace {
  int64_t r, first, c;
};

template <int kTileV>
__device__ __forceinline__ TilePlace place_of(const AheadArgs& a, int64_t work) {
  const int64_t r = static_cast<int64_t>(a.tiles_div.div(static_cast<uint64_t>(work)));
  const int64_t c = a.per_channel ? r - static_cast<int64_t>(a.channels_div.div(static_cast<uint64_t>(r))) * a.channels
                                  : 0;
  return {r, (work - r * a.tiles) * kTileV, c};
}

// The tile after `at` in row order (the next row's first past a row's last):
// a run's next tile, without the division of place_of.
template <int kTileV>
__device__ __forceinline__ TilePlace next_place(const AheadArgs& a, TilePlace at) {
  at.first += kTileV;
  if (at.first >= a.out_len) {
    at.first = 0;
    ++at.r;
    if (a.per_channel && ++at.c == a.channels) at.c = 0;
  }
  return at;
}

// The cp.async kernel's: the same in 32 bits, its launch keeping `total`
// (the rows' tiles, so also the row and channel indices) below 2^31.
// Measured against the 64-bit form (H200, in one run; NOTES.md, session
// 98): float32 [8, 512, 16383] K = 15 causal 201 us against 211, one row
// of 2^26 + 1 at K = 31 213 against 222, [2, 768, 4095] K = 4 18.7 against
// 19.5; float64 rows within 1%. In the tile-ahead kernel the same change
// cost 2-6% on long float32 rows at K <= 16 (ncu: more time waiting on its
// loads, the same bytes; not understood), so it keeps the 64-bit form.
struct AsyncArgs : RowsArgs {
  FastDivmod32 tiles_div, channels_div;
};

template <int kTileV>
__device__ __forceinline__ TilePlace place_of(const AsyncArgs& a, uint32_t work) {
  const uint32_t r = a.tiles_div.div(work);
  const uint32_t c = a.per_channel ? r - a.channels_div.div(r) * a.channels_div.divisor : 0;
  return {r, int64_t(work - r * a.tiles_div.divisor) * kTileV, c};
}

template <typename scalar_t, int V>
struct TileAhead {
  static constexpr int kV = V;
  alignas(16) scalar_t body[kV];
  scalar_t halo;
  scalar_t tap;
  scalar_t bias;
};

// The rows start on 16-byte boundaries (the launch checks): a thread's kV
// inputs are whole 16-byte vectors, but at the row's end.
template <typename scalar_t, int kV>
__device__ __forceinline__ void load_tile_ahead(const AheadArgs& a, const TilePlace& at,
                                                const scalar_t* __restrict__ in, const scalar_t* __restrict__ w,
                                                const scalar_t* __restrict__ bias, TileAhead<scalar_t, kV>& p) {
  constexpr int kTileV = kThreads * kV;
  const scalar_t* row = in + at.r * a.L;
  const int64_t q0 = at.first + int64_t(threadIdx.x) * kV;
  if (q0 + kV <= a.L) {
#pragma unroll
    for (int u = 0; u < int(sizeof(scalar_t) * kV / 16); ++u)
      reinterpret_cast<uint4*>(p.body)[u] = reinterpret_cast<const uint4*>(row + q0)[u];
  } else {
#pragma unroll
    for (int e = 0; e < kV; ++e) p.body[e] = q0 + e < a.L ? row[q0 + e] : scalar_t(0);
  }
  const int h = threadIdx.x;  // halo cell h: left of the tile for h < left, right of it after
  if (h < a.K - 1) {
    const int64_t t = h < a.left ? at.first - a.left + h : at.first + kTileV + (h - a.left);
    p.halo = t >= 0 && t < a.L ? row[t] : scalar_t(0);
  }
  if (int(threadIdx.x) < a.K) p.tap = w[at.c * a.K + threadIdx.x];
  p.bias = a.has_bias ? bias[at.c] : scalar_t(0);
}

// The per-tile work outside the taps is kept small: a tile's place by
// multiply-and-shift (place_of), its body stored through two base pointers
// whose split is the same for every tile, no loop for the halo or the taps,
// and a pass's stores tested once. ncu had counted about 530 warp
// instructions a warp's tile before (bfloat16, K = 4: issue slots 61% busy,
// DRAM 48%); the SASS along a tile's path is about a third shorter now.
// On the H200, in one run: bfloat16 depthwise went from 57-58% of the copy
// roof to 65-67%, float32 depthwise from 85-87% to 89%, one float32 channel
// at K = 31 from 58% to 67% (NOTES.md, session 94).
//
// kStaged, for output rows off 16-byte boundaries: a tile whose first
// output is off one leaves through shared memory (store_staged_tile), as
// 16-byte stores, where each thread's own outputs could only go element by
// element, a warp's 2- or 4-byte stores 32 bytes apart. On the H200, in one
// run: "valid" bfloat16 [1, 862, 77848] K = 5 took 113 us, not 352, float32
// [1, 1221, 54960] K = 4 151 us, not 356. Tiles on a boundary store
// directly, as before: staging every tile of a row whose start is on one
// (one row of 2^27 float32, K = 15 "valid") had cost 17% (NOTES.md, session
// 96).
//
// kTwoWindows: tiles alternate between two windows (and masks), the second
// where kStaged puts its outputs, so that a tile needs one barrier, not
// two. Where an SM holds two blocks (float64) the second barrier left it
// idle: on the H200, in one run, one float64 channel of 2^25 at K = 3 to
// 31 in 196-206 us against 215-228, "valid" [2, 512, 16384] K = 4 81 against
// 99. Where it holds four (float32 and 2-byte types), two windows lost (one
// float32 channel at K = 31 184 us against 172; bfloat16 K = 15 245 against
// 220): they keep one (NOTES.md, session 98).
//
// kRuns: block b of G takes a run of consecutive tiles (total / G of them,
// one more for the first total % G blocks), the next tile's place stepped
// from the last one's, where the strided order (b, b + G, ...) finds it by
// two 64-bit multiply-and-shift divisions a tile, some 70 of a float32
// tile's 500 instructions at K = 31. It pays where the tile's arithmetic
// is the limit and costs where its loads are. On the H200, in one run
// against the strided order, with the same bits (NOTES.md, session 100):
// one float32 channel of 2^26 at K = 31 in 167 us against 176 (72% of the
// copy roof to 76%), [8, 512, 16384] K = 31 168 against 184, K = 23 and 24
// 152 against 156; bfloat16 [8, 1024, 16384] K = 15 214 against 230, K =
// 31 312 against 337, staged "valid" 2-byte rows 4-9% faster, [16, 64,
// 4104] K = 12 11.9 against 15.8. Float32 rows at K <= 16 that fill
// their tiles, many tiles a block, were 4-7% slower (one channel at K = 3
// 150 us against 143, depthwise K = 3 to 7 149 against 142; ncu at K = 3:
// DRAM throughput 74.6% of peak against 76.3%, L2 hit rate the same: my
// reading is that G runs far apart keep more DRAM pages open than one front
// of G neighbouring tiles). Where tiles are partly filled, the divisions
// weigh more against a tile's fewer bytes: float32 rows at K <= 16 took up
// to 27% less time ([1421, 14, 424] K = 4 39.9 us against 53.1, [205, 44,
// 2344] K = 6 53.5 against 69.5), and launches of up to 8 tiles a block
// 1-5% less (NOTES.md, session 101: 204 shapes, 120 of them random).
// Float64 rows were 2-20% slower in an earlier form. So AheadPolicy takes
// runs for 2-byte rows, and for float32 masks of more than 16 taps, rows
// whose tiles are less than 7/8 full and launches of up to 8 tiles a
// block; strided for the others, whose code is as before. The run's bounds
// come from the host's quotient and remainder: found by two 64-bit
// divisions in the kernel, small launches were 8-9% slower (bfloat16 [6,
// 45, 11840] K = 15 9.3 us against 8.5; with the host's, 7.8 against 8.4).
template <typename scalar_t, int kV, int kMinBlocks, bool kStaged, bool kTwoWindows, bool kRuns>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    gpureduce_conv1d_rows_ahead(AheadArgs a, const scalar_t* __restrict__ in, const scalar_t* __restrict__ w,
                                const scalar_t* __restrict__ bias, scalar_t* __restrict__ out) {
  static_assert(!(kStaged && kTwoWindows), "the second window takes the staging buffer's place");
  using acc_t = acc_of<scalar_t>;
  constexpr int kTileV = kThreads * kV;
  // The window with a pad word after every kV: thread t's kV outputs start
  // at word t * (kV + 1), an odd stride, so a warp's reads meet no bank twice.
  const auto pad = [](int q) { return q + q / kV; };
  extern __shared__ __align__(16) unsigned char smem_raw[];
  acc_t* const mask0 = reinterpret_cast<acc_t*>(smem_raw);  // K taps
  acc_t* const window0 = mask0 + a.K;                        // pad(kTileV + K - 1) words
  scalar_t* const staging = reinterpret_cast<scalar_t*>(smem_raw + ahead_staging_offset<scalar_t, kV>(a.K));
  // kTwoWindows: odd tiles' mask and window at the staging offset.
  const int second = int(ahead_staging_offset<scalar_t, kV>(a.K) / sizeof(acc_t));
  // The block's tiles: work, work + gridDim.x, ... below a.total, or
  // (kRuns) its run of consecutive tiles [work, end).
  int64_t work = blockIdx.x, end = a.total;
  if constexpr (kRuns) {
    const int64_t b = blockIdx.x;
    work = b * a.run_tiles + (b < a.run_extra ? b : a.run_extra);
    end = work + a.run_tiles + (b < a.run_extra);
  }
  if (work >= end) return;
  TilePlace at = place_of<kTileV>(a, work);
  TileAhead<scalar_t, kV> p;
  load_tile_ahead<scalar_t, kV>(a, at, in, w, bias, p);
  // The thread's body inputs, window indices left + base + e, go to words
  // q + q / kV: from `lo` for the first `split` of them and from lo + 1 (past
  // a pad word) after, with `left` the same for every tile.
  const int base = threadIdx.x * kV;
  const unsigned q0 = unsigned(a.left + base);
  const int split = kV - int(q0 % kV);
  for (int k = 0; work < end; work += kRuns ? 1 : gridDim.x, ++k) {
    const int shift = kTwoWindows && (k & 1) ? second : 0;
    acc_t* const mask = mask0 + shift;
    acc_t* const window = window0 + shift;
    acc_t* const lo = window + q0 + q0 / kV;
    // This tile into shared memory, from the registers.
#pragma unroll
    for (int e = 0; e < kV; ++e) (e < split ? lo : lo + 1)[e] = static_cast<acc_t>(p.body[e]);
    if (int(threadIdx.x) < a.K - 1) {
      const int h = threadIdx.x;
      window[pad(h < a.left ? h : kTileV + h)] = static_cast<acc_t>(p.halo);
    }
    if (int(threadIdx.x) < a.K) mask[threadIdx.x] = static_cast<acc_t>(p.tap);
    const acc_t b = static_cast<acc_t>(p.bias);
    // The next tile's loads, in flight while this one is computed.
    TilePlace next;
    if constexpr (kRuns) {
      next = next_place<kTileV>(a, at);
      if (work + 1 < end) load_tile_ahead<scalar_t, kV>(a, next, in, w, bias, p);
    } else if (work + gridDim.x < end) {
      load_tile_ahead<scalar_t, kV>(a, place_of<kTileV>(a, work + gridDim.x), in, w, bias, p);
    }
    __syncthreads();
    // strided: this tile's place again, cheaper than registers held across the loads
    if constexpr (!kRuns) at = place_of<kTileV>(a, work);
    // The thread's kV outputs in passes of kPass (the registers of a pass:
    // kPass sums and 2 kPass inputs, add_taps_by_eight).
    constexpr int kPass = 8;
    scalar_t* const tile_dst = out + at.r * a.out_len + at.first;
    scalar_t* const dst = tile_dst + base;
    const int64_t left_in_row = a.out_len - at.first - base;  // of the thread's kV outputs, those that exist
    const bool staged = kStaged && reinterpret_cast<uintptr_t>(tile_dst) % 16 != 0;  // the same for the block
#pragma unroll
    for (int part = 0; part < kV; part += kPass) {
      if (left_in_row <= part) break;
      acc_t acc[kPass];
#pragma unroll
      for (int e = 0; e < kPass; ++e) acc[e] = b;
      add_taps_by_eight<kV>(window, mask, base + part, a.K, acc);
      if (staged) {
        alignas(16) scalar_t vals[kPass];
#pragma unroll
        for (int e = 0; e < kPass; ++e) vals[e] = static_cast<scalar_t>(acc[e]);
#pragma unroll
        for (int q = 0; q < int(sizeof(scalar_t) * kPass / 16); ++q)
          reinterpret_cast<uint4*>(staging + base + part)[q] = reinterpret_cast<const uint4*>(vals)[q];
      } else {
        store_outputs<kPass>(dst + part, acc, left_in_row - part, reinterpret_cast<uintptr_t>(dst + part) % 16 == 0);
      }
    }
    // With two windows, the next tile's window is the other one: this
    // tile's is written again two tiles on, after the next tile's barrier,
    // which every thread reaches only when done with this one.
    if (!kTwoWindows) __syncthreads();
    // (the next tile's staged outputs are written only after its first
    // barrier, which every thread reaches after this copy)
    if (staged)
      store_staged_tile(tile_dst, staging, left_in_row + base < kTileV ? int(left_in_row + base) : kTileV);
    if constexpr (kRuns) at = next;
  }
}

// Input rows off 16-byte boundaries, float32 and float64, masks of up to
// kAheadMaxTaps taps: the tile-ahead kernel's tiles and sums (8 outputs a
// thread, add_taps_by_eight over the same padded window), with the next
// tile's window copied element by element into the other of two shared
// buffers by cp.async while this one is computed. Thread t copies inputs
// t, t + kThreads, ... of the tile, so that a warp's copies are coalesced
// whatever the row's alignment; the tile-ahead kernel's 16-byte loads need
// rows on 16-byte boundaries, and such rows went to the one-tile kernel,
// whose element loads and barrier a tile left the loads of one tile in
// flight at a time. On the H200, in one run (NOTES.md, session 97): float32
// [8, 512, 16383] K = 3 "same" 176.4 us against 354.0 (36% -> 72% of the
// copy roof), K = 15 causal 212.1 against 297.7, [2, 768, 4095] K = 4 19.2
// us against 39.3, float64 [2, 512, 16383] K = 4 95.6 against 142.9, six
// short or small rows in 7-32% less time, one row of 2^26 + 1 float32 at
// K = 31 the same (225 us). Threads past a short row's end skip the sums:
// computing them anyway had cost 3-6% on short rows. Rows on 16-byte
// boundaries stay on the tile-ahead kernel: this one ran 4-22% behind it
// there (float32 depthwise K = 3 to 7 at 79-80% of the copy against
// 90-91%; ncu at K = 31: fewer instructions, but stalled on the cp.async
// queue and the barrier).
constexpr int kAsyncV = 8;  // a thread's outputs, as the tile-ahead kernel's
constexpr int kAsyncTile = kThreads * kAsyncV;

// One element (4 or 8 bytes) into shared memory by cp.async, or zeros
// where !valid (the source is then not read, but must still be an address
// in the row).
template <typename T>
__device__ __forceinline__ void copy_element_async(T* smem, const T* src, bool valid) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "cp.async copies 4, 8 or 16 bytes");
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(__cvta_generic_to_global(src)),
               "n"(int(sizeof(T))), "r"(valid ? int(sizeof(T)) : 0)
               : "memory");
}

// Each of the two buffers: the mask (kAheadMaxTaps words, the bias in the
// word after), then the padded window (pad word after every kAsyncV), a
// multiple of 4 words so that the second buffer's mask is on a 16-byte
// boundary too (its taps are read 4 at a time). Then, for kStaged, a tile's
// outputs.
constexpr int kAsyncMaskWords = kAheadMaxTaps + 1;
constexpr int kAsyncWindowWords = kAsyncTile + kAheadMaxTaps - 1 + kWindowSlack;
constexpr int kAsyncBufferWords = (kAsyncMaskWords + kAsyncWindowWords + kAsyncWindowWords / kAsyncV + 1 + 3) / 4 * 4;

template <typename scalar_t, bool kStaged>
constexpr size_t async_smem_bytes() {
  return sizeof(scalar_t) * (2 * size_t(kAsyncBufferWords) + (kStaged ? kAsyncTile : 0));
}

// Tile `at`'s taps, bias and window (zeros outside the row) into `buf`, as
// one group of cp.async copies.
template <typename scalar_t>
__device__ __forceinline__ void copy_tile_async(const AsyncArgs& a, const TilePlace& at,
                                                const scalar_t* __restrict__ in, const scalar_t* __restrict__ w,
                                                const scalar_t* __restrict__ bias, scalar_t* buf) {
  // Words between a thread's copies: pad(q + kThreads) - pad(q).
  constexpr int kStride = kThreads + kThreads / kAsyncV;
  const int t = threadIdx.x;
  const scalar_t* row = in + at.r * a.L;
  scalar_t* const window = buf + kAsyncMaskWords;
  const unsigned q0 = unsigned(a.left + t);  // input t of the tile is window word pad(left + t)
  scalar_t* const dst = window + q0 + q0 / kAsyncV;
  const scalar_t* const src = row + at.first + t;
  if (at.first + kAsyncTile <= a.L) {
#pragma unroll
    for (int k = 0; k < kAsyncV; ++k) copy_element_async(dst + k * kStride, src + k * kThreads, true);
  } else {
    const int64_t left_in_row = a.L - at.first - t;
#pragma unroll
    for (int k = 0; k < kAsyncV; ++k) {
      const bool valid = k * kThreads < left_in_row;
      copy_element_async(dst + k * kStride, valid ? src + k * kThreads : row, valid);
    }
  }
  if (t < a.K - 1) {  // halo cell t: left of the body for t < left, right of it after
    const int q = t < a.left ? t : kAsyncTile + t;
    const int64_t g = at.first - a.left + q;
    const bool valid = g >= 0 && g < a.L;
    copy_element_async(window + q + q / kAsyncV, valid ? row + g : row, valid);
  }
  if (t < a.K) copy_element_async(buf + t, w + at.c * a.K + t, true);
  if (t == kThreads - 1) {
    if (a.has_bias)
      copy_element_async(buf + kAheadMaxTaps, bias + at.c, true);
    else
      buf[kAheadMaxTaps] = scalar_t(0);
  }
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <typename scalar_t, int kMinBlocks, bool kStaged>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    gpureduce_conv1d_rows_async(AsyncArgs a, const scalar_t* __restrict__ in, const scalar_t* __restrict__ w,
                                const scalar_t* __restrict__ bias, scalar_t* __restrict__ out) {
  static_assert(std::is_same_v<scalar_t, acc_of<scalar_t>>, "the window holds the input's own type");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  scalar_t* const buffers = reinterpret_cast<scalar_t*>(smem_raw);
  scalar_t* const staging = buffers + 2 * kAsyncBufferWords;
  const uint32_t total = static_cast<uint32_t>(a.total);  // below 2^31: work + gridDim.x cannot wrap
  uint32_t work = blockIdx.x;
  if (work >= total) return;
  TilePlace at = place_of<kAsyncTile>(a, work);
  copy_tile_async<scalar_t>(a, at, in, w, bias, buffers);
  const int base = threadIdx.x * kAsyncV;
  for (int k = 0;; ++k) {
    const scalar_t* const buf = buffers + (k & 1) * kAsyncBufferWords;
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    __syncthreads();  // this tile's window is in, and every thread is done with the other buffer
    const uint32_t next = work + gridDim.x;
    TilePlace next_at{};
    if (next < total) {
      next_at = place_of<kAsyncTile>(a, next);
      copy_tile_async<scalar_t>(a, next_at, in, w, bias, buffers + ((k + 1) & 1) * kAsyncBufferWords);
    }
    const scalar_t* const mask = buf;
    const scalar_t* const window = buf + kAsyncMaskWords;
    const scalar_t b = buf[kAheadMaxTaps];
    scalar_t* const tile_dst = out + at.r * a.out_len + at.first;
    scalar_t* const dst = tile_dst + base;
    const int64_t left_in_row = a.out_len - at.first - base;  // of the thread's outputs, those that exist
    const bool staged = kStaged && reinterpret_cast<uintptr_t>(tile_dst) % 16 != 0;  // the same for the block
    if (left_in_row > 0) {
      alignas(16) scalar_t acc[kAsyncV];
#pragma unroll
      for (int e = 0; e < kAsyncV; ++e) acc[e] = b;
      add_taps_by_eight<kAsyncV>(window, mask, base, a.K, acc);
      if (staged) {
#pragma unroll
        for (int q = 0; q < int(sizeof(acc)) / 16; ++q)
          reinterpret_cast<uint4*>(staging + base)[q] = reinterpret_cast<const uint4*>(acc)[q];
      } else {
        store_outputs<kAsyncV>(dst, acc, left_in_row, reinterpret_cast<uintptr_t>(dst) % 16 == 0);
      }
    }
    if (staged) {
      __syncthreads();
      store_staged_tile(tile_dst, staging, left_in_row + base < kAsyncTile ? int(left_in_row + base) : kAsyncTile);
    }
    if (next >= total) break;
    work = next;
    at = next_at;
  }
}

// Short masks over 2-byte rows on 16-byte boundaries, with no shared window
// and no barrier: a warp streams a run of chunks, a chunk 32 * kV
// consecutive outputs of one row, each thread kV = 16 of them (32 bytes of
// input, two 16-byte loads). A thread's inputs are its own kV and the
// `left` before them and `right` after them (left + right = K - 1 <= 7),
// which are the neighbouring threads' last and first inputs: they come by
// shuffles, and at the chunk's two ends from the chunk before (kept from
// the previous step of the run) and the chunk after (loaded a step ahead,
// which keeps loads in flight during the arithmetic). Which of a thread's
// inputs tap j of output e reads, e + j - left, is a constant of the
// unrolled code only with `left` a constant: a kernel for each left, 0 to
// kStreamMaxTaps - 1. The taps go in order j = 0, 1, ..., K - 1 after the
// bias, as in the other kernels: the same sums, bit for bit (compared on
// the H200 over 36 shapes).
//
// On the H200, in one run against the tile-ahead kernel (NOTES.md, sessions
// 95-96): bfloat16 depthwise [8, 1024, 16384] K = 3/4/7 at 85-87% of the
// copy roof against 65-66%, float16 [2, 2048, 16384] K = 4 at 83% against
// 65%, once a thread's two 16-byte stores went out back to back (store
// each pass on its own, it had run at 65-68%: ncu showed L2 88% busy with
// three times the output's sectors written, DRAM 57%). 2-byte rows shorter than
// the tile-ahead kernel's 4096 outputs, which went to the one-tile kernel,
// also gain ([32, 1536, 2048] bfloat16's input gradient 2742 GB/s against
// 2037, before the paired stores). float32 lost 3-14% in this kernel (8
// outputs a thread, session 95) against the tile-ahead kernel's 90-94%,
// and stays there.
constexpr int kStreamMaxTaps = 8;

template <typename scalar_t>
struct StreamPolicy {
  static_assert(sizeof(scalar_t) == 2, "16 2-byte inputs a thread");
  static constexpr int kV = 16;  // a thread's outputs: 8 words of input
  static constexpr int kPerWord = 2;
  // Blocks an SM. Masks with no inputs past a thread's own (right = 0:
  // causal ones, K = 1) run at 3 blocks, 68-71 registers a thread and none
  // spilled; at 4 blocks (64 registers) every instance spills 4-16 bytes
  // (SASS, sm_90, CUDA 13.0). On the H200, in one run, 3 blocks took
  // bfloat16 [8, 1024, 16384] K = 7 causal from 152 us to 141 (84% of the
  // copy roof to 90%), K = 3 causal 149 to 143, float16 [2, 2048, 16384] K
  // = 4 causal 77.7 to 72.4. Masks with inputs past a thread's (right > 0)
  // stay at 4 blocks: at 3 "same" masks were 2-6% slower (K = 7 151 us
  // against 143, K = 5 147 against 145). My reading, not profiled: each of
  // their steps waits on lane 0's loads of the next chunk (lane 31's inputs
  // past its own), which 24 warps an SM hide less well than 32. Loading
  // lane 31's inputs past the chunk itself a step ahead, so that no step
  // waited, was slower still at 3 blocks (K = 5 "same" 155 us). NOTES.md,
  // session 99.
  static constexpr int kMinBlocksNoRight = 3;
  static constexpr int kMinBlocks = 4;
};

struct StreamArgs : RowGeometry {
  int64_t chunks;  // a row's chunks of 32 * kV outputs
  int64_t total;   // rows * chunks
  int64_t warps;   // the warps launched, each a run of total / warps chunks (in row order)
  FastDivmod chunks_div, channels_div;
};

// Inputs q to q + kV - 1 of `row` as 8 words (zeros outside [0, L)).
template <typename scalar_t>
__device__ __forceinline__ void load_words(const scalar_t* __restrict__ row, int64_t q, int64_t L,
                                           uint32_t (&w)[8]) {
  constexpr int kV = StreamPolicy<scalar_t>::kV;
  constexpr int kPer = StreamPolicy<scalar_t>::kPerWord;
  if (q >= 0 && q + kV <= L) {
    const uint4* p = reinterpret_cast<const uint4*>(row + q);
    const uint4 lo = p[0], hi = p[1];
    w[0] = lo.x, w[1] = lo.y, w[2] = lo.z, w[3] = lo.w, w[4] = hi.x, w[5] = hi.y, w[6] = hi.z, w[7] = hi.w;
  } else {
    const uint16_t* b = reinterpret_cast<const uint16_t*>(row);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      uint32_t word = 0;
#pragma unroll
      for (int h = 0; h < kPer; ++h) {
        const int64_t t = q + k * kPer + h;
        if (t >= 0 && t < L) word |= uint32_t(b[t]) << (16 * h);
      }
      w[k] = word;
    }
  }
}

// Element h (0 or 1) of a word, in float (exact).
template <typename scalar_t>
__device__ __forceinline__ float word_element(uint32_t w, int h) {
  if constexpr (std::is_same_v<scalar_t, c10::BFloat16>) {
    return __uint_as_float(h == 0 ? w << 16 : w & 0xffff0000u);
  } else {
    static_assert(std::is_same_v<scalar_t, c10::Half>);
    return __half2float(__ushort_as_half(static_cast<unsigned short>(h == 0 ? w & 0xffffu : w >> 16)));
  }
}

template <typename scalar_t, int kLeft, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    gpureduce_conv1d_rows_stream(StreamArgs a, const scalar_t* __restrict__ in, const scalar_t* __restrict__ w,
                                 const scalar_t* __restrict__ bias, scalar_t* __restrict__ out) {
  constexpr int kV = StreamPolicy<scalar_t>::kV;
  constexpr int kPer = StreamPolicy<scalar_t>::kPerWord;
  constexpr int kChunk = 32 * kV;
  constexpr int kRight = kStreamMaxTaps - 1 - kLeft;       // the most inputs a thread reads past its kV
  constexpr int kLeftWords = (kLeft + kPer - 1) / kPer;    // words of the thread before it reads
  constexpr int kRightWords = (kRight + kPer - 1) / kPer;  // and of the thread after it, at most
  // Each warp's row's mask, zeros past K; 16-byte aligned, so that a pass
  // reads its taps as 16-byte shared loads (SASS: LDS.128).
  __shared__ __align__(16) float taps[kThreads / 32][kStreamMaxTaps];
  const int lane = threadIdx.x & 31;
  float* const mask = taps[threadIdx.x >> 5];
  const int64_t warp = int64_t(blockIdx.x) * (kThreads / 32) + (threadIdx.x >> 5);
  if (warp >= a.warps) return;
  int64_t chunk = a.total * warp / a.warps;
  const int64_t end = a.total * (warp + 1) / a.warps;
  int64_t r = static_cast<int64_t>(a.chunks_div.div(static_cast<uint64_t>(chunk)));
  int64_t c = chunk - r * a.chunks;
  const int right = a.K - 1 - kLeft;  // the inputs past its kV a thread reads for this mask
  float b = 0.f;
  // Row r's mask and bias (every lane has read the last row's first).
  const auto start_row = [&]() {
    const int64_t ch =
        a.per_channel ? r - static_cast<int64_t>(a.channels_div.div(static_cast<uint64_t>(r))) * a.channels : 0;
    __syncwarp();
    if (lane < kStreamMaxTaps) mask[lane] = lane < a.K ? static_cast<float>(w[ch * a.K + lane]) : 0.f;
    __syncwarp();
    b = a.has_bias ? static_cast<float>(bias[ch]) : 0.f;
  };
  start_row();
  const scalar_t* row = in + r * a.L;
  uint32_t cur[8], next[8];
  load_words(row, c * kChunk + lane * kV, a.L, cur);
  // Lane 31's inputs of the chunk before, which lane 0 reads (zeros before
  // a row's start).
  uint32_t before[kLeftWords > 0 ? kLeftWords : 1];
  if constexpr (kLeftWords > 0) {
    uint32_t t[8] = {};
    if (lane == 31 && c > 0) load_words(row, c * kChunk - kV, a.L, t);
#pragma unroll
    for (int k = 0; k < kLeftWords; ++k) before[k] = t[8 - kLeftWords + k];
  }
  for (;;) {
    const bool more = chunk + 1 < end;
    const int64_t next_r = c + 1 == a.chunks ? r + 1 : r;
    const int64_t next_c = c + 1 == a.chunks ? 0 : c + 1;
    if (more) load_words(in + next_r * a.L, next_c * kChunk + lane * kV, a.L, next);
    // The first words of the thread after, lane 0's of the next chunk for
    // lane 31: the step ahead's, or from memory past the run or the row.
    uint32_t after[kRightWords > 0 ? kRightWords : 1];
    if constexpr (kRightWords == 0) after[0] = 0;  // never read (no input past kV), but set
    if constexpr (kRightWords > 0) {
      if (right > 0) {
        uint32_t edge[8];
        if (more && next_c != 0) {
#pragma unroll
          for (int k = 0; k < 8; ++k) edge[k] = next[k];
        } else {
#pragma unroll
          for (int k = 0; k < 8; ++k) edge[k] = 0;
          if (lane == 0) load_words(row, (c + 1) * kChunk, a.L, edge);
        }
#pragma unroll
        for (int k = 0; k < kRightWords; ++k)
          if (k * kPer < right) after[k] = __shfl_sync(0xffffffffu, lane == 0 ? edge[k] : cur[k], (lane + 1) & 31);
      }
    }
    uint32_t prev[kLeftWords > 0 ? kLeftWords : 1];
    if constexpr (kLeftWords == 0) prev[0] = 0;  // never read (no input before the thread's), but set
    if constexpr (kLeftWords > 0) {
#pragma unroll
      for (int k = 0; k < kLeftWords; ++k) {
        prev[k] = __shfl_sync(0xffffffffu, lane == 31 ? before[k] : cur[8 - kLeftWords + k], (lane + 31) & 31);
        before[k] = cur[8 - kLeftWords + k];
      }
    }
    // Input q + m of the row, m from -kLeft to kV + kRight - 1 (a constant).
    const auto input = [&](int m) -> float {
      if (m < 0) return word_element<scalar_t>(prev[(kV + m) / kPer - (8 - kLeftWords)], (kV + m) % kPer);
      if (m >= kV) return word_element<scalar_t>(after[(m - kV) / kPer], (m - kV) % kPer);
      return word_element<scalar_t>(cur[m / kPer], m % kPer);
    };
    const int64_t q = c * kChunk + lane * kV;
    scalar_t* const dst = out + r * a.out_len + q;
    const int64_t outputs = a.out_len - q;  // of the thread's kV, those that exist
    // Both passes' sums leave together, as back-to-back 16-byte stores: a
    // store each pass, 32 bytes apart across the warp, wrote three times
    // the output's L2 sectors (ncu: 25.6 million for 8.4 million; L2 88%
    // busy, DRAM 57%); stored together, 13.1 million, and bfloat16
    // depthwise went from 65-68% of the copy to 85-87% (NOTES.md, session
    // 96).
    alignas(16) scalar_t vals[kV];
#pragma unroll
    for (int part = 0; part < kV; part += 8) {
      float acc[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[e] = b;
#pragma unroll
      for (int j = 0; j < kStreamMaxTaps; ++j) {
        if (j >= a.K) break;
        const float t = mask[j];
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[e] += t * input(part + e + j - kLeft);
      }
#pragma unroll
      for (int e = 0; e < 8; ++e) vals[part + e] = static_cast<scalar_t>(acc[e]);
    }
    store_values<kV>(dst, vals, outputs, reinterpret_cast<uintptr_t>(dst) % 16 == 0);
    if (!more) break;
#pragma unroll
    for (int k = 0; k < 8; ++k) cur[k] = next[k];
    ++chunk;
    c = next_c;
    if (next_r != r) {
      r = next_r;
      row = in + r * a.L;
      start_row();
      if constexpr (kLeftWords > 0) {
#pragma unroll
        for (int k = 0; k < kLeftWords; ++k) before[k] = 0;
      }
    }
  }
}

// The book's kernels: blocks of kBookThreads outputs of one row.
constexpr int kBookThreads = 256;
// The taps a kernel parameter carries (constant, tiled_halo, tiled_l2): C *
// K of them for a mask per channel. 8 KB in float64, within the 32 KB of
// parameters a launch may pass (CUDA 12.1 and later, sm_70 and later).
constexpr int kConstantTaps = 1024;

template <typename acc_t>
struct ConstantMask {
  acc_t w[kConstantTaps];
};

using BookArgs = RowGeometry;

// The row and output of this thread (blocks along x cover a row's outputs,
// along y the rows, z the rows past 65535).
__device__ __forceinline__ int64_t book_row() {
  return static_cast<int64_t>(blockIdx.z) * gridDim.y + blockIdx.y;
}

template <typename scalar_t, typename acc_t>
__device__ __forceinline__ acc_t book_bias(const BookArgs& a, const scalar_t* bias, int64_t c) {
  return a.has_bias ? static_cast<acc_t>(bias[a.per_channel ? c : 0]) : acc_t(0);
}

// Step 1: everything from global memory.
template <typename scalar_t>
__global__ void __launch_bounds__(kBookThreads)
    conv1d_basic(BookArgs a, const scalar_t* __restrict__ in, const scalar_t* __restrict__ w,
                 const scalar_t* __restrict__ bias, scalar_t* __restrict__ out) {
  using acc_t = acc_of<scalar_t>;
  const int64_t r = book_row();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kBookThreads + threadIdx.x;
  if (r >= a.rows || i >= a.out_len) return;
  const int64_t c = a.per_channel ? r % a.channels : 0;
  const scalar_t* row = in + r * a.L;
  acc_t acc = book_bias<scalar_t, acc_t>(a, bias, c);
  for (int j = 0; j < a.K; ++j) {
    const int64_t t = i - a.left + j;
    if (t >= 0 && t < a.L) acc += static_cast<acc_t>(w[c * a.K + j]) * static_cast<acc_t>(row[t]);
  }
  out[r * a.out_len + i] = static_cast<scalar_t>(acc);
}

// Step 2: the taps from constant memory (the kernel parameter).
template <typename scalar_t>
__global__ void __launch_bounds__(kBookThreads)
    conv1d_constant(BookArgs a, const __grid_constant__ ConstantMask<acc_of<scalar_t>> mask,
                    const scalar_t* __restrict__ in, const scalar_t* __restrict__ bias, scalar_t* __restrict__ out) {
  using acc_t = acc_of<scalar_t>;
  const int64_t r = book_row();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kBookThreads + threadIdx.x;
  if (r >= a.rows || i >= a.out_len) return;
  const int64_t c = a.per_channel ? r % a.channels : 0;
  const acc_t* wr = mask.w + c * a.K;
  const scalar_t* row = in + r * a.L;
  acc_t acc = book_bias<scalar_t, acc_t>(a, bias, c);
  for (int j = 0; j < a.K; ++j) {
    const int64_t t = i - a.left + j;
    if (t >= 0 && t < a.L) acc += wr[j] * static_cast<acc_t>(row[t]);
  }
  out[r * a.out_len + i] = static_cast<scalar_t>(acc);
}

// Step 3: the tile and its halo in shared memory (kBookThreads + K - 1
// inputs, zeros for the ghost cells), then every input from there.
template <typename scalar_t>
__global__ void __launch_bounds__(kBookThreads)
    conv1d_tiled_halo(BookArgs a, const __grid_constant__ ConstantMask<acc_of<scalar_t>> mask,
                      const scalar_t* __restrict__ in, const scalar_t* __restrict__ bias,
                      scalar_t* __restrict__ out) {
  using acc_t = acc_of<scalar_t>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  acc_t* tile = reinterpret_cast<acc_t*>(smem_raw);
  const int64_t r = book_row();
  if (r >= a.rows) return;  // the whole block alike: no barrier is skipped by part of it
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kBookThreads;
  const scalar_t* row = in + r * a.L;
  for (int k = threadIdx.x; k < kBookThreads + a.K - 1; k += kBookThreads) {
    const int64_t t = first - a.left + k;
    tile[k] = t >= 0 && t < a.L ? static_cast<acc_t>(row[t]) : acc_t(0);
  }
  __syncthreads();
  const int64_t i = first + threadIdx.x;
  if (i >= a.out_len) return;
  const int64_t c = a.per_channel ? r % a.channels : 0;
  const acc_t* wr = mask.w + c * a.K;
  acc_t acc = book_bias<scalar_t, acc_t>(a, bias, c);
  for (int j = 0; j < a.K; ++j) acc += wr[j] * tile[threadIdx.x + j];
  out[r * a.out_len + i] = static_cast<scalar_t>(acc);
}

// Step 4: only the tile (the inputs at the block's own output indices) in
// shared memory; inputs outside it from global memory (L2).
template <typename scalar_t>
__global__ void __launch_bounds__(kBookThreads)
    conv1d_tiled_l2(BookArgs a, const __grid_constant__ ConstantMask<acc_of<scalar_t>> mask,
                    const scalar_t* __restrict__ in, const scalar_t* __restrict__ bias, scalar_t* __restrict__ out) {
  using acc_t = acc_of<scalar_t>;
  __shared__ acc_t tile[kBookThreads];
  const int64_t r = book_row();
  if (r >= a.rows) return;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kBookThreads;
  const scalar_t* row = in + r * a.L;
  const int64_t mine = first + threadIdx.x;
  tile[threadIdx.x] = mine < a.L ? static_cast<acc_t>(row[mine]) : acc_t(0);
  __syncthreads();
  const int64_t i = first + threadIdx.x;
  if (i >= a.out_len) return;
  const int64_t c = a.per_channel ? r % a.channels : 0;
  const acc_t* wr = mask.w + c * a.K;
  acc_t acc = book_bias<scalar_t, acc_t>(a, bias, c);
  for (int j = 0; j < a.K; ++j) {
    const int64_t t = i - a.left + j;
    if (t >= first && t < first + kBookThreads && t < a.L) {
      acc += wr[j] * tile[t - first];
    } else if (t >= 0 && t < a.L) {
      acc += wr[j] * static_cast<acc_t>(row[t]);
    }
  }
  out[r * a.out_len + i] = static_cast<scalar_t>(acc);
}

at::Tensor classic_conv1d_cuda(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                               std::string_view padding, std::string_view kernel) {
  TORCH_CHECK(is_book_kernel(kernel), "gpureduce.conv1d: unknown kernel '", std::string(kernel),
              "'; expected one of 'basic', 'constant', 'tiled_halo', 'tiled_l2'");
  TORCH_CHECK(input.dim() >= 1 && weight.dim() >= 1, "gpureduce.conv1d: expected an input of shape [L], [B, L] or ",
              "[B, C, L] and a weight of shape [K] or [C, K], got ", shape_text(input.sym_sizes()), " and ",
              shape_text(weight.sym_sizes()));
  const Padding p = padding_for(padding, input.sym_size(-1), weight.sym_size(-1));
  const int64_t left = p.left.expect_int(), out_len = p.out_len.expect_int();
  const c10::cuda::CUDAGuard guard(input.device());
  const Conv1dOperands o = prepare_operands(input, weight, bias, left, out_len);
  TORCH_CHECK(kernel == "basic" || weight.numel() <= kConstantTaps, "gpureduce.conv1d: kernel '", std::string(kernel),
              "' keeps the mask in constant memory, at most ", std::to_string(kConstantTaps),
              " taps (C * K for a mask per channel); got ", std::to_string(weight.numel()));
  if (o.out.numel() == 0) return o.out;
  const BookArgs a = geometry_of(o);
  const int64_t x_blocks = (out_len + kBookThreads - 1) / kBookThreads;
  const int64_t z = (a.rows + 65534) / 65535;
  TORCH_CHECK(x_blocks < (int64_t(1) << 31) && z <= 65535, "gpureduce.conv1d: too large for the book's kernels");
  const dim3 grid(static_cast<unsigned>(x_blocks), static_cast<unsigned>(std::min<int64_t>(a.rows, 65535)),
                  static_cast<unsigned>(z));
  const auto stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, o.input.scalar_type(), "gpureduce_classic_conv1d", [&] {
    using acc_t = acc_of<scalar_t>;
    const scalar_t* bp = o.bias.defined() ? o.bias.const_data_ptr<scalar_t>() : nullptr;
    if (kernel == "basic") {
      conv1d_basic<scalar_t><<<grid, kBookThreads, 0, stream>>>(a, o.input.const_data_ptr<scalar_t>(),
                                                                 o.weight.const_data_ptr<scalar_t>(), bp,
                                                                 o.out.mutable_data_ptr<scalar_t>());
    } else {
      // The taps, converted to the accumulator type, into the parameter.
      ConstantMask<acc_t> mask{};
      const at::Tensor taps = o.weight.to(at::kCPU, c10::CppTypeToScalarType<acc_t>::value).contiguous();
      std::copy(taps.const_data_ptr<acc_t>(), taps.const_data_ptr<acc_t>() + taps.numel(), mask.w);
      if (kernel == "constant") {
        conv1d_constant<scalar_t><<<grid, kBookThreads, 0, stream>>>(a, mask, o.input.const_data_ptr<scalar_t>(), bp,
                                                                      o.out.mutable_data_ptr<scalar_t>());
      } else if (kernel == "tiled_halo") {
        const size_t smem = sizeof(acc_t) * (size_t(kBookThreads) + size_t(a.K) - 1);
        conv1d_tiled_halo<scalar_t><<<grid, kBookThreads, smem, stream>>>(
            a, mask, o.input.const_data_ptr<scalar_t>(), bp, o.out.mutable_data_ptr<scalar_t>());
      } else {
        conv1d_tiled_l2<scalar_t><<<grid, kBookThreads, 0, stream>>>(a, mask, o.input.const_data_ptr<scalar_t>(), bp,
                                                                      o.out.mutable_data_ptr<scalar_t>());
      }
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return o.out;
}

// The arguments of the kernels that loop over tiles of `tile` outputs
// (tile-ahead: AheadArgs, cp.async: AsyncArgs, whose divisors are 32-bit).
template <typename Args>
Args tile_args(const Conv1dOperands& o, int64_t tile) {
  Args a{};
  static_cast<RowGeometry&>(a) = geometry_of(o);
  a.tiles = (o.out_len + tile - 1) / tile;
  a.total = a.rows * a.tiles;
  using Divmod = decltype(a.tiles_div);
  using Word = decltype(a.tiles_div.divisor);
  a.tiles_div = Divmod(static_cast<Word>(a.tiles));
  a.channels_div = Divmod(static_cast<Word>(std::max<int64_t>(1, a.channels)));
  return a;
}

// The tile-ahead kernel over o's rows: a resident wave of blocks (or
// fewer, one a tile), each looping over tiles.
template <typename scalar_t, bool kStaged, bool kRuns>
void launch_rows_ahead(const Conv1dOperands& o, cudaStream_t stream) {
  constexpr int kV = AheadPolicy<scalar_t>::kV, kMinBlocks = AheadPolicy<scalar_t>::kMinBlocks;
  AheadArgs a = tile_args<AheadArgs>(o, kThreads * kV);
  static cuda::ResidentWave wave;
  constexpr bool kTwoWindows = !kStaged && kMinBlocks <= 2;  // as measured: float64's two blocks an SM
  const auto kernel = gpureduce_conv1d_rows_ahead<scalar_t, kV, kMinBlocks, kStaged, kTwoWindows, kRuns>;
  const int64_t blocks = std::min<int64_t>(a.total, wave.blocks(kernel, kThreads));
  a.run_tiles = a.total / blocks;
  a.run_extra = a.total - a.run_tiles * blocks;
  kernel<<<static_cast<unsigned>(blocks), kThreads, ahead_smem_bytes<scalar_t, kV, kStaged, kTwoWindows>(a.K),
           stream>>>(
      a, o.input.const_data_ptr<scalar_t>(), o.weight.const_data_ptr<scalar_t>(),
      o.bias.defined() ? o.bias.const_data_ptr<scalar_t>() : nullptr, o.out.mutable_data_ptr<scalar_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Its instance for o: outputs staged where their rows are off 16-byte
// boundaries, and a block's tiles in the order AheadPolicy picks (only the
// orders a type can take are compiled).
template <typename scalar_t, bool kRuns>
void launch_rows_ahead_in_order(const Conv1dOperands& o, cudaStream_t stream, bool out_on_16) {
  out_on_16 ? launch_rows_ahead<scalar_t, false, kRuns>(o, stream)
            : launch_rows_ahead<scalar_t, true, kRuns>(o, stream);
}

template <typename scalar_t>
void launch_rows_ahead_as_measured(const Conv1dOperands& o, cudaStream_t stream, bool out_on_16) {
  using Policy = AheadPolicy<scalar_t>;
  if constexpr (Policy::kRunsAlways || Policy::kRunsNever)
    launch_rows_ahead_in_order<scalar_t, Policy::kRunsAlways>(o, stream, out_on_16);
  else
    Policy::runs(o.K, o.rows, o.out_len, int64_t(sm_count()) * Policy::kMinBlocks)
        ? launch_rows_ahead_in_order<scalar_t, true>(o, stream, out_on_16)
        : launch_rows_ahead_in_order<scalar_t, false>(o, stream, out_on_16);
}

// The cp.async tile kernel over o's rows: a resident wave of blocks (or
// fewer, one a tile), each looping over tiles. For float64 its two buffers
// and the staging buffer take more than the 48 KB of shared memory a
// launch gets without opting in; it opts in, once per device.
template <typename scalar_t, int kMinBlocks, bool kStaged>
void launch_rows_async(const Conv1dOperands& o, cudaStream_t stream) {
  const AsyncArgs a = tile_args<AsyncArgs>(o, kAsyncTile);
  const auto kernel = gpureduce_conv1d_rows_async<scalar_t, kMinBlocks, kStaged>;
  constexpr size_t smem = async_smem_bytes<scalar_t, kStaged>();
  static PerDevice resident;
  const int per_sm = resident.get([&](int) {
    if constexpr (smem > 48 * 1024)
      C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    // as measured: the carveout that holds the most shared memory
    C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared));
    return static_cast<int>(std::max<int64_t>(1, cuda::max_resident_blocks(kernel, kThreads, smem)));
  });
  const int64_t blocks = std::min<int64_t>(a.total, int64_t(sm_count()) * per_sm);
  kernel<<<static_cast<unsigned>(blocks), kThreads, smem, stream>>>(
      a, o.input.const_data_ptr<scalar_t>(), o.weight.const_data_ptr<scalar_t>(),
      o.bias.defined() ? o.bias.const_data_ptr<scalar_t>() : nullptr, o.out.mutable_data_ptr<scalar_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// The stream kernel over o's rows: a resident wave of warps (or one a
// chunk, if fewer), each a run of consecutive chunks.
template <typename scalar_t, int kLeft, int kMinBlocks>
void launch_rows_stream_blocks(const StreamArgs& a, const Conv1dOperands& o, cudaStream_t stream) {
  static cuda::ResidentWave wave;
  const auto kernel = gpureduce_conv1d_rows_stream<scalar_t, kLeft, kMinBlocks>;
  StreamArgs args = a;
  args.warps = std::min<int64_t>(a.total, wave.blocks(kernel, kThreads) * (kThreads / 32));
  const int64_t blocks = (args.warps + kThreads / 32 - 1) / (kThreads / 32);
  kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      args, o.input.const_data_ptr<scalar_t>(), o.weight.const_data_ptr<scalar_t>(),
      o.bias.defined() ? o.bias.const_data_ptr<scalar_t>() : nullptr, o.out.mutable_data_ptr<scalar_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename scalar_t, int kLeft>
void launch_rows_stream_left(const StreamArgs& a, const Conv1dOperands& o, cudaStream_t stream) {
  using Policy = StreamPolicy<scalar_t>;
  if (o.K - 1 - kLeft == 0)
    launch_rows_stream_blocks<scalar_t, kLeft, Policy::kMinBlocksNoRight>(a, o, stream);
  else
    launch_rows_stream_blocks<scalar_t, kLeft, Policy::kMinBlocks>(a, o, stream);
}

template <typename scalar_t, int... kLefts>
void launch_rows_stream(const Conv1dOperands& o, cudaStream_t stream, std::integer_sequence<int, kLefts...>) {
  StreamArgs a{};
  static_cast<RowGeometry&>(a) = geometry_of(o);
  a.chunks = (o.out_len + 32 * StreamPolicy<scalar_t>::kV - 1) / (32 * StreamPolicy<scalar_t>::kV);
  a.total = a.rows * a.chunks;
  a.chunks_div = FastDivmod(static_cast<uint64_t>(a.chunks));
  a.channels_div = FastDivmod(static_cast<uint64_t>(std::max<int64_t>(1, a.channels)));
  ((o.left == kLefts ? launch_rows_stream_left<scalar_t, kLefts>(a, o, stream) : void()), ...);
}

at::Tensor conv1d_padded_cuda(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                              int64_t left, int64_t out_len) {
  const c10::cuda::CUDAGuard guard(input.device());
  const Conv1dOperands o = prepare_operands(input, weight, bias, left, out_len);
  if (o.out.numel() == 0) return o.out;
  const auto stream = c10::cuda::getCurrentCUDAStream();
  // Tiles loaded a tile ahead, but where that lost in the A/B on the H200
  // (event medians, GB/s of input plus output; NOTES.md, session 87). It
  // won: float32 [2^26] K = 3 3274 against 2573 for a block a tile, K = 31
  // 1567 against 1525, depthwise [8, 512, 16384] K = 3 3193 against 2435;
  // bfloat16 [8, 1024, 16384] K = 4 2185 against 1661. It lost: rows off
  // 16-byte boundaries (its element loads a thread's 8 apart: float32 L =
  // 16383 1267 against 1410, bfloat16 926 against 1094), a 2-byte row
  // shorter than its tile of 4096 outputs ([32, 1536, 2048] bfloat16 1019
  // against 1407, half its threads idle), and a long mask (K = 300, 242
  // against 267; the one-tile kernel's 40 registers a thread against 48 let
  // an SM hold 6 blocks against 5). The boundary between K = 31 and 300 is
  // not measured. Since session 97, float32 and float64 rows off 16-byte
  // boundaries go to the cp.async tile kernel instead (1.0-2.0x).
  const size_t elem = o.input.element_size();
  const bool aligned = reinterpret_cast<uintptr_t>(o.input.const_data_ptr()) % 16 == 0 && (o.L * elem) % 16 == 0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, o.input.scalar_type(), "gpureduce_conv1d_cuda", [&] {
    using acc_t = acc_of<scalar_t>;
    const scalar_t* in = o.input.const_data_ptr<scalar_t>();
    const scalar_t* bp = o.bias.defined() ? o.bias.const_data_ptr<scalar_t>() : nullptr;
    scalar_t* out = o.out.mutable_data_ptr<scalar_t>();
    if constexpr (sizeof(scalar_t) == 2) {
      // The stream kernel, for 2-byte input and output rows on 16-byte
      // boundaries and masks of up to 8 taps (NOTES.md, session 95). It
      // stores output rows off them element by element, where it ran at
      // half the tile-ahead kernel's speed ("valid" float16 [58, 37, 3088],
      // K = 8: 53 us against 27); they go to the tile-ahead kernel, which
      // stages such tiles (kStaged).
      if (aligned && (o.out_len * elem) % 16 == 0 && o.K <= kStreamMaxTaps && o.left >= 0 &&
          o.left < kStreamMaxTaps) {
        launch_rows_stream<scalar_t>(o, stream, std::make_integer_sequence<int, kStreamMaxTaps>{});
        return;
      }
    }
    const bool out_on_16 = reinterpret_cast<uintptr_t>(out) % 16 == 0 && (o.out_len * elem) % 16 == 0;
    if constexpr (sizeof(scalar_t) >= 4) {
      // Input rows off 16-byte boundaries: the cp.async tile kernel
      // (gpureduce_conv1d_rows_async, which says what it measured). It
      // counts tiles in 32 bits: only billions of short rows (tens of GB)
      // have more, and go to the one-tile kernel.
      const bool tiles_in_31_bits = o.rows * ((o.out_len + kAsyncTile - 1) / kAsyncTile) < (int64_t(1) << 31);
      if (!aligned && o.K <= kAheadMaxTaps && tiles_in_31_bits) {
        constexpr int kMinBlocks = AheadPolicy<scalar_t>::kMinBlocks;
        out_on_16 ? launch_rows_async<scalar_t, kMinBlocks, false>(o, stream)
                  : launch_rows_async<scalar_t, kMinBlocks, true>(o, stream);
        return;
      }
    }
    if (!aligned || o.K > kAheadMaxTaps || (elem == 2 && o.out_len < kThreads * AheadPolicy<scalar_t>::kV)) {
      RowsArgs a{geometry_of(o)};
      a.tiles = (o.out_len + kTile - 1) / kTile;
      a.total = a.rows * a.tiles;
      const int64_t blocks = std::min<int64_t>(a.total, int64_t(1) << 30);
      const size_t smem = sizeof(acc_t) * (size_t(a.K) + size_t(padded(kTile + a.K - 1 + kWindowSlack)) + 1);
      gpureduce_conv1d_rows<scalar_t><<<static_cast<unsigned>(blocks), kThreads, smem, stream>>>(
          a, in, o.weight.const_data_ptr<scalar_t>(), bp, out);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
    launch_rows_ahead_as_measured<scalar_t>(o, stream, out_on_16);
  });
  return o.out;
}

// The mask's gradient (_conv1d_weight_grad): grad_w[c][j] = sum over the
// rows r of channel c (all rows, for one mask) and outputs i of g[r][i] *
// x[r][i - left + j]. A channel's rows, cut into tiles of kGradTile outputs,
// are split into runs of split_tiles tiles, a block a run. A block stores a
// tile's gradient and its window of inputs (zeros outside the row) into
// shared memory from registers, which then load the next tile while the
// block computes; a thread holds kGradPerThread consecutive gradients in
// registers and slides their inputs through registers tap by tap, adding
// each tap's kGradPerThread products into that tap's sum. Masks of up to
// kTaps taps (4, 8 or 32) keep every tap's sum in registers over all the
// block's tiles and reduce them once; longer ones go 32 taps at a time,
// reduced into shared memory after each tile. On the H200 this is 1.8-5x
// F.conv1d's backward over conv1d_bench's depthwise cases (NOTES.md,
// session 93); loading each tile only after the previous one's arithmetic
// had made it 1.3-2.4x. The block's K sums are the channel's
// result where a channel is one run; otherwise they go to a workspace, and
// a second kernel adds each channel's runs in order. Every order is fixed by
// the shapes (the split too): bitwise reproducible, with no atomics.
constexpr int kGradThreads = 256;
constexpr int kGradWarps = kGradThreads / 32;
constexpr int kGradPerThread = 8;
constexpr int kGradTile = kGradThreads * kGradPerThread;
// The constant shared-memory offsets need a thread's first output, each
// group of taps and the loads' stride to be multiples of 8 (padded's period).
static_assert(kGradPerThread % 8 == 0 && kGradThreads % 8 == 0);
// Blocks a launch aims at: several waves of resident blocks on an H200 (132
// SMs, 2 to 5 of these blocks an SM, as the instance's registers allow). A
// constant, not the SM count, so that the split, and so the bits, are the
// same on every GPU.
constexpr int64_t kGradTargetBlocks = 2048;

struct WeightGradArgs {
  int64_t rows, L, out_len, channels;
  int K, left;
  bool per_channel;
  int64_t row_tiles, group_tiles, split_tiles, splits;
};

// The warp's sums of N values a lane (N a power of 2 up to 32), lane l
// ending with the sum of value l % N: each step halves the values a lane
// holds, swapping half with the partner lane (31 shuffles for 32 values
// where 32 separate reductions take 160).
//
// One step per power of 2 down from N / 2, each a template instance so that
// every index into v is a constant and v stays in registers (a loop with
// h /= 2 was not unrolled for N = 32, which put v in local memory).
template <int H, int N, typename T>
__device__ __forceinline__ void transpose_halves(T (&v)[N]) {
  const bool upper = (threadIdx.x & H) != 0;
#pragma unroll
  for (int i = 0; i < H; ++i) {
    const T send = upper ? v[i] : v[i + H];
    const T keep = upper ? v[i + H] : v[i];
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, H);
  }
  if constexpr (H > 1) transpose_halves<H / 2>(v);
}

template <int N, typename T>
__device__ __forceinline__ T warp_sums_transposed(T (&v)[N]) {
  if constexpr (N > 1) transpose_halves<N / 2>(v);
#pragma unroll
  for (int off = N; off < 32; off *= 2) v[0] += __shfl_xor_sync(0xffffffffu, v[0], off);
  return v[0];
}

// Adds the block's sums of the threads' N values into total[0, n), warps in
// order; the values are consumed.
template <int N, typename acc_t>
__device__ __forceinline__ void block_add_sums(acc_t (&v)[N], acc_t* warp_sums, acc_t* total, int n) {
  const acc_t s = warp_sums_transposed<N>(v);
  const int lane = threadIdx.x & 31;
  if (lane < N) warp_sums[(threadIdx.x >> 5) * N + lane] = s;
  __syncthreads();
  if (int(threadIdx.x) < n) {
    acc_t t = total[threadIdx.x];
#pragma unroll
    for (int w = 0; w < kGradWarps; ++w) t += warp_sums[w * N + threadIdx.x];
    total[threadIdx.x] = t;
  }
  __syncthreads();
}

template <typename acc_t, int kTaps>
constexpr size_t weight_grad_smem_bytes(int K) {
  return sizeof(acc_t) * (size_t(padded(kGradTile)) + size_t(padded(kGradTile + K - 1)) + kGradWarps * kTaps + K);
}

template <typename scalar_t, int kTaps>
__global__ void __launch_bounds__(kGradThreads)
    gpureduce_conv1d_weight_grad(WeightGradArgs a, const scalar_t* __restrict__ g, const scalar_t* __restrict__ in,
                                 acc_of<scalar_t>* __restrict__ runs, scalar_t* __restrict__ out) {
  using acc_t = acc_of<scalar_t>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  acc_t* gs = reinterpret_cast<acc_t*>(smem_raw);  // padded(kGradTile) words
  acc_t* xs = gs + padded(kGradTile);               // padded(kGradTile + K - 1) words
  acc_t* warp_sums = xs + padded(kGradTile + a.K - 1);
  acc_t* total = warp_sums + kGradWarps * kTaps;  // K
  const int64_t c = blockIdx.x / a.splits;
  const int64_t split = blockIdx.x - c * a.splits;
  for (int j = threadIdx.x; j < a.K; j += kGradThreads) total[j] = acc_t(0);
  const bool whole_mask = a.K <= kTaps;  // every tap's sum in registers over all tiles
  static_assert(kTaps % 8 == 0 || kTaps == 4, "a group of taps starts on a multiple of 8 or holds the whole mask");
  const int window_len = kGradTile + a.K - 1;
  const int base = threadIdx.x * kGradPerThread;
  acc_t acc[kTaps];
#pragma unroll
  for (int j = 0; j < kTaps; ++j) acc[j] = acc_t(0);
  const int64_t t_first = split * a.split_tiles;
  const int64_t t_end = std::min(a.group_tiles, (split + 1) * a.split_tiles);
  // A thread's share of a tile, loaded into registers while the block works
  // on the previous tile: its kGradPerThread gradients and the first
  // kGradTile inputs of the window, kGradThreads apart (coalesced), so that
  // 2 * kGradPerThread loads are in flight a thread during the arithmetic.
  // The window's last K - 1 inputs go straight to shared memory.
  scalar_t g_next[kGradPerThread], x_next[kGradPerThread];
  // The tile to load next: the channel's q-th row, from output `first` on;
  // one division for the block's first tile, then steps along the rows.
  int64_t q = t_first / a.row_tiles;
  int64_t first = (t_first - q * a.row_tiles) * kGradTile;
  // Bounds in 32 bits, relative to the thread's first output i0, and
  // constant offsets from two pointers: the element checks are one compare
  // each. (Each element's own 64-bit index and compares cost about 330
  // instructions a tile beside the 8-tap loop's 182.)
  auto load_tile = [&]() {
    const int64_t r = a.per_channel ? q * a.channels + c : q;
    const int64_t i0 = first + threadIdx.x;
    const scalar_t* gp = g + r * a.out_len + i0;
    const scalar_t* xp = in + r * a.L + (i0 - a.left);  // only read at offsets inside the row
    const int g_end = static_cast<int>(std::min<int64_t>(a.out_len - i0, kGradTile));
    const int x_begin = static_cast<int>(std::clamp<int64_t>(a.left - i0, 0, kGradTile));
    const int x_end = static_cast<int>(std::clamp<int64_t>(a.L + a.left - i0, 0, kGradTile));
#pragma unroll
    for (int e = 0; e < kGradPerThread; ++e) {
      const int off = e * kGradThreads;
      g_next[e] = off < g_end ? gp[off] : scalar_t(0);
      x_next[e] = off >= x_begin && off < x_end ? xp[off] : scalar_t(0);
    }
  };
  if (t_first < t_end) load_tile();
  acc_t* gs_t = gs + padded(threadIdx.x);  // padded(tid + e * kGradThreads) = padded(tid) + padded(e * kGradThreads)
  acc_t* xs_t = xs + padded(threadIdx.x);
  for (int64_t t = t_first; t < t_end; ++t) {
#pragma unroll
    for (int e = 0; e < kGradPerThread; ++e) {
      gs_t[padded(e * kGradThreads)] = static_cast<acc_t>(g_next[e]);
      xs_t[padded(e * kGradThreads)] = static_cast<acc_t>(x_next[e]);
    }
    const scalar_t* xrow = in + (a.per_channel ? q * a.channels + c : q) * a.L;
    for (int k = kGradTile + threadIdx.x; k < window_len; k += kGradThreads) {
      const int64_t x = first - a.left + k;
      xs[padded(k)] = x >= 0 && x < a.L ? static_cast<acc_t>(xrow[x]) : acc_t(0);
    }
    __syncthreads();
    first += kGradTile;
    if (first >= a.out_len) {
      first = 0;
      ++q;
    }
    if (t + 1 < t_end) load_tile();
    acc_t gv[kGradPerThread];
#pragma unroll
    for (int e = 0; e < kGradPerThread; ++e) gv[e] = gs[padded(base + e)];
    for (int j0 = 0; j0 < a.K; j0 += kTaps) {
      // base and j0 are multiples of 8 (j0 is 0 for kTaps = 4, whose masks
      // are whole), so padded(base + j0 + m) is
      // padded(base + j0) + padded(m): constant offsets from one address.
      const acc_t* xw = xs + padded(base + j0);
      const int w_left = window_len - base - j0;  // inputs of xw in the window
      acc_t v[kGradPerThread];
#pragma unroll
      for (int e = 0; e < kGradPerThread; ++e) v[e] = xw[padded(e)];  // e < w_left
      // All kTaps taps, with no branch on K: a tap at or past K adds into a
      // sum that is never read (its inputs past the window read as zeros),
      // and the unrolled loop's shifts of v become renamed registers (with
      // a branch a tap, the 32-tap loop spent 436 moves on 256 FMAs).
#pragma unroll
      for (int jj = 0; jj < kTaps; ++jj) {
        acc_t sum = acc[jj];
#pragma unroll
        for (int e = 0; e < kGradPerThread; ++e) sum += gv[e] * v[e];
        acc[jj] = sum;
        if (jj + 1 < kTaps) {
#pragma unroll
          for (int e = 0; e + 1 < kGradPerThread; ++e) v[e] = v[e + 1];
          const int m = jj + kGradPerThread;
          v[kGradPerThread - 1] = m < w_left ? xw[padded(m)] : acc_t(0);
        }
      }
      if (!whole_mask) {
        block_add_sums<kTaps>(acc, warp_sums, total + j0, std::min(kTaps, a.K - j0));
#pragma unroll
        for (int j = 0; j < kTaps; ++j) acc[j] = acc_t(0);
      }
    }
    __syncthreads();  // the tile is read before the next one is stored
  }
  if (whole_mask) block_add_sums<kTaps>(acc, warp_sums, total, a.K);
  for (int j = threadIdx.x; j < a.K; j += kGradThreads) {
    if (a.splits == 1)
      out[c * a.K + j] = static_cast<scalar_t>(total[j]);
    else
      runs[(c * a.splits + split) * a.K + j] = total[j];
  }
}

// A thread a (channel, tap): the channel's runs added in order.
template <typename scalar_t>
__global__ void gpureduce_conv1d_weight_grad_runs(const acc_of<scalar_t>* __restrict__ runs, int64_t splits,
                                                  int64_t n, int K, scalar_t* __restrict__ out) {
  using acc_t = acc_of<scalar_t>;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t c = i / K;
  const int64_t j = i - c * K;
  acc_t sum(0);
  for (int64_t s = 0; s < splits; ++s) sum += runs[(c * splits + s) * K + j];
  out[i] = static_cast<scalar_t>(sum);
}

template <typename scalar_t, int kTaps>
void launch_weight_grad(const WeightGradArgs& a, const WeightGradOperands& o, at::Tensor& runs, cudaStream_t stream) {
  using acc_t = acc_of<scalar_t>;
  const auto kernel = gpureduce_conv1d_weight_grad<scalar_t, kTaps>;
  const size_t smem = weight_grad_smem_bytes<acc_t, kTaps>(a.K);
  if (smem > 48 * 1024) {  // float64 masks of several hundred taps
    C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  }
  const int64_t blocks = a.channels * a.splits;
  kernel<<<static_cast<unsigned>(blocks), kGradThreads, smem, stream>>>(
      a, o.grad.const_data_ptr<scalar_t>(), o.input.const_data_ptr<scalar_t>(),
      runs.defined() ? runs.mutable_data_ptr<acc_t>() : nullptr, o.out.mutable_data_ptr<scalar_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

at::Tensor conv1d_weight_grad_cuda(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& weight,
                                   int64_t left) {
  const c10::cuda::CUDAGuard guard(input.device());
  const WeightGradOperands o = prepare_weight_grad(grad, input, weight, left);
  if (o.out.numel() == 0) return o.out;
  const auto stream = c10::cuda::getCurrentCUDAStream();
  WeightGradArgs a{};
  a.rows = o.rows;
  a.L = o.L;
  a.out_len = o.out_len;
  a.channels = o.per_channel ? o.channels : 1;
  a.K = static_cast<int>(o.K);
  a.left = static_cast<int>(o.left);
  a.per_channel = o.per_channel;
  a.row_tiles = (o.out_len + kGradTile - 1) / kGradTile;
  a.group_tiles = (o.rows / a.channels) * a.row_tiles;
  // Runs of whole tiles, enough of them for kGradTargetBlocks in all (a
  // channel with no tiles still takes one block, which writes its zeros).
  const int64_t want = std::max<int64_t>(1, (kGradTargetBlocks + a.channels - 1) / a.channels);
  a.split_tiles = std::max<int64_t>(1, (a.group_tiles + want - 1) / want);
  a.splits = std::max<int64_t>(1, (a.group_tiles + a.split_tiles - 1) / a.split_tiles);
  TORCH_CHECK(a.channels * a.splits < (int64_t(1) << 31), "gpureduce._conv1d_weight_grad: too many channels (",
              std::to_string(a.channels), ")");
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, o.input.scalar_type(), "gpureduce_conv1d_weight_grad", [&] {
    using acc_t = acc_of<scalar_t>;
    at::Tensor runs;
    if (a.splits > 1)
      runs = at::empty({a.channels * a.splits * a.K},
                       o.input.options().dtype(c10::CppTypeToScalarType<acc_t>::value));
    // The tap loop runs all kTaps taps (no branch on K), so short masks
    // take the smallest instance that holds them.
    if (a.K <= 4)
      launch_weight_grad<scalar_t, 4>(a, o, runs, stream);
    else if (a.K <= 8)
      launch_weight_grad<scalar_t, 8>(a, o, runs, stream);
    else
      launch_weight_grad<scalar_t, 32>(a, o, runs, stream);
    if (a.splits > 1) {
      const int64_t n = a.channels * a.K;
      gpureduce_conv1d_weight_grad_runs<scalar_t><<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(
          runs.const_data_ptr<acc_t>(), a.splits, n, a.K, o.out.mutable_data_ptr<scalar_t>());
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
  });
  return o.out;
}

}  // namespace
}  // namespace conv
}  // namespace gpureduce

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) {
  m.impl("_conv1d_weight_grad", &gpureduce::conv::conv1d_weight_grad_cuda);
  m.impl("_conv1d_padded", &gpureduce::conv::conv1d_padded_cuda);
  m.impl("classic_conv1d", &gpureduce::conv::classic_conv1d_cuda);
}
