// gpureduce::fsum on CUDA: the exact sum rounded once, the same bits as the
// CPU kernel (fsum.cpp), at close to memory speed on ordinary data.
//
// A block takes a chunk of a row (the reduced elements of one output) and
// keeps its exact sum in a superaccumulator in shared memory
// (superaccumulator.h's digits, added to with 64-bit atomics: integer adds,
// so their order does not matter). Adding every element there would cost
// three atomics each; instead each warp works a tile at a time (the next
// tiles' loads already in flight: in registers, or for the 16-bit types
// in shared memory by cp.async), with double additions only:
//
//  1. every lane holds its elements of the tile (16, or 32 of the 16-bit
//     types), loaded as 16-byte vectors, and the warp takes their largest
//     magnitude, below 2^(E + 1); let m = E + log2(lane elements);
//  2. if every nonzero element of the tile is a multiple of 2^(m - 52)
//     (float32: none more than 25 exponents below the largest; ordinary
//     data), a lane's elements add up exactly as they are, below 2^53
//     units: one addition an element;
//  3. otherwise each element x is split against the window constant
//     c = 1.5 * 2^m: hi = (x + c) - c is x rounded to a multiple of
//     2^(m - 52), and x - hi is exact. A lane's his add up exactly.
//     float64 takes a second window at once on the rests, 49 exponents
//     lower;
//  4. each window's sum, an integer number of units, is converted to
//     int64 and kept by the lane while the tiles' m stays the same; when
//     it changes, the sums are added across the warp and lane 0 adds them
//     to the block's digits (a few atomics);
//  5. elements with bits still left (float32 values 2^-24 below the tile's
//     largest, float64 ones 2^-43 below it: rare in ordinary data) go on
//     through further windows one by one; inf and nan set flags, and a
//     float64 from 2^1018 up (where a window's constant would overflow)
//     goes straight to the digits.
//
// Per element that is a conversion and one double addition (whole tiles),
// or four or five, and a little integer work for the tile's range.
// A row in one chunk is rounded by the block; a row in several chunks adds
// each chunk's digits (after one carry step) into the row's total by
// atomics, and the block of its last chunk rounds that. A warp rounds: it
// carries the digits in parallel, and writes the output in its type.
// Nothing depends on the launch: the result is the rounded exact sum.
#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "../cuda/launch.h"
#include "fsum.h"
#include "superaccumulator.h"

namespace gpureduce {
namespace fsum {
namespace {

constexpr int kTotalWords = 70;  // a row's total of several chunks: 68 digits, the flags, a ticket
constexpr int kMaxThreads = 256;
constexpr int64_t kMaxChunk = int64_t(1) << 28;  // elements: a digit's atomics stay below 2^62
constexpr unsigned kFull = 0xffffffffu;

enum : unsigned { kNan = 1, kPosInf = 2, kNegInf = 4, kNotNegZero = 8 };

// a * 2^k, exact where the result is an integer below 2^63 (k up to 1074:
// two steps past double's largest power of two).
__device__ __forceinline__ double times_pow2(double a, int k) {
  const auto pow2 = [](int e) { return __longlong_as_double(static_cast<long long>(e + 1023) << 52); };
  if (k > 1000) {
    a *= pow2(k - 1000);
    k = 1000;
  }
  return a * pow2(k);
}

// Adds v * 2^(offset + kBase) to the block's digits (offset >= 0; the
// callers' values end below digit 67).
__device__ void add_scaled(unsigned long long* digits, long long v, int offset) {
  if (v == 0) return;
  const bool neg = v < 0;
  const unsigned long long m = neg ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
  const int i = offset >> 5, s = offset & 31;
  const unsigned long long lo = (m & 0xffffffffull) << s;
  const unsigned long long hi = ((m >> 32) << s) + (lo >> 32);
  const unsigned long long part[3] = {lo & 0xffffffffull, hi & 0xffffffffull, hi >> 32};
#pragma unroll
  for (int k = 0; k < 3; ++k)
    if (part[k]) atomicAdd(&digits[i + k], neg ? 0ull - part[k] : part[k]);
}

// A finite double straight into the digits (superaccumulator.h's add()).
__device__ void add_element(unsigned long long* digits, double x) {
  const unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(x));
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  long long m = static_cast<long long>(bits & ((1ull << 52) - 1));
  if (biased) m |= 1ll << 52;
  add_scaled(digits, (bits >> 63) ? -m : m, biased ? biased - 1 : 0);
}

__device__ __forceinline__ long long warp_sum(long long v) {
#pragma unroll
  for (int k = 16; k > 0; k >>= 1) v += __shfl_xor_sync(kFull, v, k);
  return v;
}

// How a type's elements enter the windows (add_tile). A window is the
// constant c = 1.5 * 2^m: for |x| < 2^(m - 3), hi = (x + c) - c is x
// rounded to a multiple of the window's unit 2^(m - 52), and x - hi is
// exact (the rounding error of x + c). A lane adds n = 2^kLogLane his of a
// tile, each below 2^(m + 1 - kLogLane) when m is kLogLane above the
// tile's largest exponent, so its sum stays a multiple of the unit below
// 2^53 units: every addition is exact. The next window takes what is left,
// below the unit: kLogLane - 53 exponents lower.
template <typename scalar_t>
struct Input {
  // 16- and 32-bit types, through float32.
  static constexpr int kVector = 16 / sizeof(scalar_t);
  // A lane's elements of a tile: four 16-byte vectors (eight of float32
  // held twice, with the next tile's loads in flight, spilled registers).
  static constexpr int kLaneElements = sizeof(scalar_t) == 2 ? 32 : 16;
  static constexpr int kLogLane = sizeof(scalar_t) == 2 ? 5 : 4;
  static constexpr int kInlineWindows = 1;  // 24 bits fit one window 48 or 49 exponents deep
  static constexpr int kBias = 127, kKeyShift = 23;
  // A value of exponent e is a multiple of 2^(e + 1 - kPrecision) (the
  // 16-bit types' subnormals of coarser ones). When no nonzero element of
  // a tile is more than kWholeSpan exponents below its largest, every
  // element is a multiple of the first window's unit: the window would
  // take each whole, so the tile is summed as it is (see add_tile).
  static constexpr int kPrecision = sizeof(scalar_t) == 4 ? 24 : std::is_same_v<scalar_t, c10::BFloat16> ? 8 : 11;
  static constexpr int kWholeSpan = 52 - (kPrecision - 1) - kLogLane;
  static constexpr unsigned kSpecialExponent = 255;  // inf and nan
  static constexpr int kMinWindow = -149 + 52;  // a unit of 2^-149: the window takes the rest whole
  static constexpr int kMaxWindow = 127 + kLogLane;
  static __device__ __forceinline__ double value(scalar_t raw) { return static_cast<double>(static_cast<float>(raw)); }
  // The magnitude's bits, as an unsigned whose order is the magnitude's:
  // the largest in a tile gives its exponent.
  static __device__ __forceinline__ unsigned key(scalar_t raw) {
    return __float_as_uint(static_cast<float>(raw)) & 0x7fffffffu;
  }
  // The flag of inf or nan, 0 for a finite element.
  static __device__ __forceinline__ unsigned special(scalar_t raw) {
    const unsigned bits = __float_as_uint(static_cast<float>(raw));
    return (bits << 1) < 0xff000000u ? 0 : (bits << 1) > 0xff000000u ? kNan : (bits >> 31) ? kNegInf : kPosInf;
  }
};

template <>
struct Input<double> {
  static constexpr int kVector = 2;
  static constexpr int kLaneElements = 16;
  static constexpr int kLogLane = 4;
  static constexpr int kInlineWindows = 2;  // 53 bits: two windows, 49 exponents apart
  static constexpr int kBias = 1023, kKeyShift = 20;
  static constexpr int kWholeSpan = -1;  // no window takes a float64 whole
  static constexpr int kMinWindow = -1074 + 52;
  static constexpr int kMaxWindow = 1017 + kLogLane;
  // inf, nan, and values of 2^1018 and above, whose window's constant would
  // pass double's range: those go to the digits one by one.
  static constexpr unsigned kSpecialExponent = 2041;
  static __device__ __forceinline__ double value(double v) { return v; }
  // The high word without the sign, its lowest bit also set when the low
  // word has any (a subnormal's bits may all be there).
  static __device__ __forceinline__ unsigned key(double v) {
    return (static_cast<unsigned>(__double2hiint(v)) & 0x7fffffffu) | (__double2loint(v) != 0);
  }
  static __device__ __forceinline__ unsigned special(double v) {
    const unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(v));
    const unsigned long long inf = 0x7ffull << 53;
    return (bits << 1) < inf ? 0 : (bits << 1) > inf ? kNan : (bits >> 63) ? kNegInf : kPosInf;
  }
};

template <typename scalar_t>
struct alignas(16) Vector {
  scalar_t v[Input<scalar_t>::kVector];
};

template <typename scalar_t>
constexpr int kTileVectors = Input<scalar_t>::kLaneElements / Input<scalar_t>::kVector;
template <typename scalar_t>
using Tile = Vector<scalar_t>[kTileVectors<scalar_t>];

// The first element of a lane's vector r of tile t: the warp's vectors
// side by side (coalesced), r after r.
template <typename scalar_t>
__device__ __forceinline__ int64_t vector_start(int64_t t, int r, int lane) {
  return t * (int64_t(32) * Input<scalar_t>::kLaneElements) + (int64_t(r) * 32 + lane) * Input<scalar_t>::kVector;
}

// A lane's part of tile `t` of the row at `row` (length elements): 16-byte
// vectors where the row allows, else elements, -0.0 past the end (it adds
// nothing and keeps a -0.0 sum).
template <typename scalar_t, bool kAligned>
__device__ __forceinline__ void load_tile(Tile<scalar_t>& vec, const scalar_t* __restrict__ row, int64_t length,
                                          int64_t t, int lane) {
  constexpr int V = Input<scalar_t>::kVector;
#pragma unroll
  for (int r = 0; r < kTileVectors<scalar_t>; ++r) {
    const int64_t first = vector_start<scalar_t>(t, r, lane);
    if (kAligned && first + V <= length) {
      vec[r] = *reinterpret_cast<const Vector<scalar_t>*>(row + first);
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) vec[r].v[j] = first + j < length ? row[first + j] : static_cast<scalar_t>(-0.0f);
    }
  }
}

// Bytes of shared memory a warp stages its tiles in: 4 tiles.
constexpr int kStageBytes = 8192;
// The 16- and 32-bit types stage their tiles through shared memory, filled
// by cp.async (float32 at 2^28: 4160 GB/s against 4000 in registers,
// bfloat16 2700 against 1550); float64 keeps them in registers (staged or
// copied in bulk, equal: NOTES.md, session 91). Rows not on 16-byte
// boundaries load element by element, in registers.
template <typename scalar_t, bool kAligned>
constexpr bool kStaged = kAligned && sizeof(scalar_t) <= 4;
template <typename scalar_t>
constexpr int kStages = kStageBytes / (32 * Input<scalar_t>::kLaneElements * int(sizeof(scalar_t)));

// Issues the copies of a lane's part of tile `t` of an aligned row into
// `slot` (the same layout as load_tile's registers): each lane later reads
// only what it copied itself, so no warp barrier is needed. Vectors past
// the row's end are -0.0.
template <typename scalar_t>
__device__ __forceinline__ void stage_tile(Vector<scalar_t>* slot, const scalar_t* __restrict__ row, int64_t length,
                                           int64_t t, int lane) {
  constexpr int V = Input<scalar_t>::kVector;
#pragma unroll
  for (int r = 0; r < kTileVectors<scalar_t>; ++r) {
    const int64_t first = vector_start<scalar_t>(t, r, lane);
    Vector<scalar_t>* dst = slot + r * 32 + lane;
    if (first + V <= length) {
      __pipeline_memcpy_async(dst, row + first, 16);
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) dst->v[j] = static_cast<scalar_t>(-0.0f);
    }
  }
}

// The window of exponent m: the constant 1.5 * 2^m (m in [-1022, 1021]).
__device__ __forceinline__ double window_constant(int m) {
  return __longlong_as_double((static_cast<long long>(m + 1023) << 52) | (1ll << 51));
}

// Window k of a tile whose first window is m1: kLogLane - 53 exponents a
// step, down to the one whose unit is the type's smallest.
template <typename scalar_t>
__device__ __forceinline__ int window_of(int m1, int k) {
  return max(m1 - k * (53 - Input<scalar_t>::kLogLane), Input<scalar_t>::kMinWindow);
}

// hi = x rounded to the window's unit; x keeps the exact rest. The
// intrinsics keep the compiler from folding (x + c) - c.
__device__ __forceinline__ double take_window(double& x, double c) {
  const double hi = __dadd_rn(__dadd_rn(x, c), -c);
  x = __dadd_rn(x, -hi);
  return hi;
}

// A warp's window sums (each lane's an exact multiple of the unit
// 2^(m - 52), below 2^53 units) into the block's digits.
__device__ __forceinline__ void flush_window(unsigned long long* digits, double sum, int m, int lane) {
  if (!__any_sync(kFull, sum != 0.0)) return;
  const long long units = warp_sum(__double2ll_rn(times_pow2(sum, 52 - m)));
  if (lane == 0) add_scaled(digits, units, m - 52 - kBase);
}

// A lane's sums of its inline windows, in units, over the warp's tiles
// since the first window last changed: consecutive tiles of ordinary data
// mostly share their largest exponent, so the warp sums and the shared
// atomics are paid when it changes, not every tile. At most kTiles tiles
// (below 2^53 units each) keep a lane's sums below 2^62; the warp adds
// their low and high 32 bits apart, so that 32 lanes cannot overflow.
template <typename scalar_t>
struct WindowCarry {
  static constexpr int kInline = Input<scalar_t>::kInlineWindows, kTiles = 512;
  long long units[kInline] = {};
  int m1 = 0, tiles = 0;  // m1 and tiles are the same in every lane

  __device__ __forceinline__ void flush(unsigned long long* digits, int lane) {
    if (tiles == 0) return;
#pragma unroll
    for (int k = 0; k < kInline; ++k) {
      if (__any_sync(kFull, units[k] != 0)) {
        const long long low = warp_sum(units[k] & 0xffffffffll), high = warp_sum(units[k] >> 32);
        if (lane == 0) {
          const int offset = window_of<scalar_t>(m1, k) - 52 - kBase;
          add_scaled(digits, low, offset);
          add_scaled(digits, high, offset + 32);
        }
      }
      units[k] = 0;
    }
    tiles = 0;
  }

  // Adds a tile's window sums `sum` (windows from m), `windows` of them.
  __device__ __forceinline__ void add(unsigned long long* digits, const double* sum, int windows, int m, int lane) {
    if (m != m1 || tiles == kTiles) {
      flush(digits, lane);
      m1 = m;
    }
#pragma unroll
    for (int k = 0; k < kInline; ++k)
      if (k < windows) units[k] += __double2ll_rn(times_pow2(sum[k], 52 - window_of<scalar_t>(m, k)));
    ++tiles;
  }
};

// A lane's view of its elements of a tile: `summary`, whose maximum over
// the warp gives the tile's largest exponent (bits 16 up) and whether any
// element is not zero (bit 15); and for types with whole tiles, `low`, the
// smallest nonzero magnitude's key minus one (~0u where a lane has none).
struct LaneRange {
  unsigned summary, low;
};

template <typename scalar_t>
__device__ __forceinline__ LaneRange lane_range(const Tile<scalar_t>& vec) {
  using In = Input<scalar_t>;
  unsigned key = 0, low = ~0u;  // zeros wrap to ~0u in low
#pragma unroll
  for (int r = 0; r < kTileVectors<scalar_t>; ++r)
#pragma unroll
    for (int j = 0; j < In::kVector; ++j) {
      const unsigned k = In::key(vec[r].v[j]);
      key = max(key, k);
      if constexpr (In::kWholeSpan >= 0) low = min(low, k - 1u);
    }
  return {((key >> In::kKeyShift) << 16) | (key != 0 ? 1u << 15 : 0u), low};
}

// Adds a warp's tile to the block's digits: the tile's largest magnitude
// sets the first window; a tile whose elements are all multiples of its
// unit is summed as it is; otherwise every element goes through the type's
// inline windows without a branch, and elements with bits still left
// (ordinary data hardly ever has them: float32 values 2^-24 below the
// tile's largest) go on through further windows one by one. Inf and nan
// set flags, and float64 values from 2^1018 up go straight to the digits.
template <typename scalar_t>
__device__ __forceinline__ void add_tile(Tile<scalar_t>& vec, int lane, unsigned long long* digits, unsigned& flags,
                                         WindowCarry<scalar_t>& carry) {
  using In = Input<scalar_t>;
  constexpr int V = In::kVector, R = kTileVectors<scalar_t>, kInline = In::kInlineWindows;
  constexpr int kMaxWindows = (In::kMaxWindow - In::kMinWindow + 52 - In::kLogLane) / (53 - In::kLogLane) + 1;
  LaneRange range = lane_range<scalar_t>(vec);
  unsigned summary = __reduce_max_sync(kFull, range.summary);
  if ((summary >> 16) >= In::kSpecialExponent) {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const scalar_t x = vec[r].v[j];
        if ((In::key(x) >> In::kKeyShift) < In::kSpecialExponent) continue;
        if (const unsigned s = In::special(x)) {
          flags |= s;
        } else {
          add_element(digits, In::value(x));
          flags |= kNotNegZero;
        }
        vec[r].v[j] = static_cast<scalar_t>(0.0f);
      }
    range = lane_range<scalar_t>(vec);
    summary = __reduce_max_sync(kFull, range.summary);
  }
  if (!(summary & (1u << 15))) {  // zeros only: the sum is -0.0 unless one is +0.0
    bool positive_zero = false;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < V; ++j) positive_zero |= __double_as_longlong(In::value(vec[r].v[j])) == 0;
    if (__any_sync(kFull, positive_zero)) flags |= kNotNegZero;
    return;
  }
  flags |= kNotNegZero;
  const int top_exponent = max(static_cast<int>(summary >> 16), 1);
  const int m1 = max(top_exponent - In::kBias + In::kLogLane, In::kMinWindow);
  if constexpr (In::kWholeSpan >= 0) {
    // Every element a multiple of the first window's unit 2^(m1 - 52)
    // (none more than kWholeSpan exponents below the largest): a lane's
    // elements add up exactly as they are, below 2^(m1 + 1), so one
    // addition an element instead of the window's four. Four chains, each
    // exact on its own, to keep the FPU's latency off the critical path.
    const bool lane_whole = range.low == ~0u ||
                            top_exponent - max(static_cast<int>((range.low + 1) >> In::kKeyShift), 1) <= In::kWholeSpan;
    if (__all_sync(kFull, lane_whole)) {
      double part[4] = {0.0, 0.0, 0.0, 0.0};
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < V; ++j) part[(r * V + j) % 4] += In::value(vec[r].v[j]);
      const double sum = (part[0] + part[1]) + (part[2] + part[3]);
      carry.add(digits, &sum, 1, m1, lane);
      return;
    }
  }
  double c[kInline], sum[kInline];
#pragma unroll
  for (int k = 0; k < kInline; ++k) {
    c[k] = window_constant(window_of<scalar_t>(m1, k));
    sum[k] = 0.0;
  }
  double left = 0.0;  // the rests' magnitudes: zero when the inline windows took everything
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < V; ++j) {
      double x = In::value(vec[r].v[j]);
#pragma unroll
      for (int k = 0; k < kInline; ++k) sum[k] += take_window(x, c[k]);
      left += fabs(x);  // a sum of magnitudes is zero only if each is
    }
  carry.add(digits, sum, kInline, m1, lane);
  if (!__any_sync(kFull, left != 0.0)) return;
  // The rests, element by element, through the windows below; their sums
  // in a small array (local memory: this path is rare).
  double more[kMaxWindows - kInline];
#pragma unroll 1
  for (int k = 0; k < kMaxWindows - kInline; ++k) more[k] = 0.0;
  int used = kInline;
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < V; ++j) {
      double x = In::value(vec[r].v[j]);
#pragma unroll
      for (int k = 0; k < kInline; ++k) take_window(x, c[k]);
      int k = kInline;
      // Ends: the last window's unit is the type's smallest, and takes
      // the whole rest.
#pragma unroll 1
      for (; x != 0.0 && k < kMaxWindows; ++k) more[k - kInline] += take_window(x, window_constant(window_of<scalar_t>(m1, k)));
      used = max(used, k);
    }
  used = __reduce_max_sync(kFull, used);
#pragma unroll 1
  for (int k = kInline; k < used; ++k) flush_window(digits, more[k - kInline], window_of<scalar_t>(m1, k), lane);
}

// Carries a block's digits up, by one warp: lane l holds digits l, l + 32
// and l + 64 (those from kDigits on stay zero). Every pass moves each
// digit's carry (its bits from 32 up, signed) to the next one at once, and
// passes repeat while any carry is left: after the first, carries are
// -1, 0 or 1, so there are few more unless a run of digits all ones (or
// zeros) passes one along. The top digit keeps its sign.
__device__ void carry_digits(long long (&v)[3], int lane) {
  for (;;) {
    long long c[3];
#pragma unroll
    for (int w = 0; w < 3; ++w) {
      const bool below_top = lane + 32 * w < kDigits - 1;
      c[w] = below_top ? v[w] >> 32 : 0;  // floor
      if (below_top) v[w] &= 0xffffffffll;
    }
    if (!__any_sync(kFull, (c[0] | c[1] | c[2]) != 0)) return;
#pragma unroll
    for (int w = 0; w < 3; ++w) {
      const long long from_below = __shfl_up_sync(kFull, c[w], 1);
      const long long from_last = w > 0 ? __shfl_sync(kFull, c[w - 1], 31) : 0;
      v[w] += lane > 0 ? from_below : from_last;
    }
  }
}

// A row's sum from a block's digits (shared memory, as int64: their sum is
// exact whatever each one's sign and size) and its flags, rounded once to
// the output format by one warp: the carries move in parallel, and lane 0
// rounds from the few digits at the top (round_magnitude). The value is
// exact in the output type, so it is stored cast (through float for the
// 16-bit types): the output is written here, with no copy kernel after.
struct ResultSink {
  void* data;
  at::ScalarType type;
  Format format;

  __device__ void store(int64_t row, int64_t* digits, unsigned flags, int64_t length, int lane) const {
    double v;
    if (flags & (kNan | kPosInf | kNegInf)) {
      v = special_sum(flags & kNan, flags & kPosInf, flags & kNegInf);
    } else {
      long long d[3];
#pragma unroll
      for (int w = 0; w < 3; ++w) d[w] = lane + 32 * w < kDigits ? digits[lane + 32 * w] : 0;
      carry_digits(d, lane);
      const bool negative = __shfl_sync(kFull, d[2], kDigits - 1 - 64) < 0;
      if (negative) {
#pragma unroll
        for (int w = 0; w < 3; ++w) d[w] = -d[w];
        carry_digits(d, lane);
      }
      int highest = -1;
#pragma unroll
      for (int w = 0; w < 3; ++w)
        if (const unsigned nonzero = __ballot_sync(kFull, d[w] != 0)) highest = 32 * w + 31 - __clz(nonzero);
      if (highest < 0) {
        v = zero_sum(length > 0, flags & kNotNegZero);
      } else {
#pragma unroll
        for (int w = 0; w < 3; ++w)
          if (lane + 32 * w < kDigits) digits[lane + 32 * w] = d[w];
        __syncwarp();
        v = lane == 0 ? round_magnitude(digits, highest, negative, format.precision, format.min_exp) : 0.0;
      }
    }
    if (lane != 0) return;
    switch (type) {
      case at::kDouble: static_cast<double*>(data)[row] = v; break;
      case at::kFloat: static_cast<float*>(data)[row] = static_cast<float>(v); break;
      case at::kHalf: static_cast<c10::Half*>(data)[row] = c10::Half(static_cast<float>(v)); break;
      default: static_cast<c10::BFloat16*>(data)[row] = c10::BFloat16(static_cast<float>(v)); break;
    }
  }
};

// Two blocks an SM (up to 128 registers). Three (80 registers) lost 11%
// at 2^28 float32 elements and 57% for float64, which spills, though rows
// of 2^12-2^20 float32 gained (NOTES.md, session 89, call 3).
//
// A row in several chunks: each chunk's block adds its digits (after one
// carry step, so each is below 2^33) into the row's total in global memory
// (`totals`: 68 digits, the flags, a ticket; zeroed), by atomics, and the
// block that takes the row's last ticket rounds the total. A separate
// merge kernel cost 11-15 us a call (NOTES.md, session 91).
template <typename scalar_t, bool kAligned>
__global__ void __launch_bounds__(kMaxThreads, 2)
    fsum_chunks_kernel(const scalar_t* __restrict__ x, int64_t rows, int64_t length, int64_t chunk_tiles,
                       int64_t chunks, unsigned long long* __restrict__ totals, ResultSink sink) {
  __shared__ unsigned long long digits[kDigits];
  __shared__ unsigned block_flags;
  __shared__ bool last_chunk;
  constexpr int64_t kTile = int64_t(32) * Input<scalar_t>::kLaneElements;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int64_t row_tiles = (length + kTile - 1) / kTile;
  for (int64_t job = blockIdx.x; job < rows * chunks; job += gridDim.x) {
    for (int k = threadIdx.x; k < kDigits; k += blockDim.x) digits[k] = 0;
    if (threadIdx.x == 0) block_flags = 0;
    __syncthreads();
    const int64_t row = job / chunks, chunk = job % chunks;
    const int64_t end = min(row_tiles, (chunk + 1) * chunk_tiles);
    unsigned flags = 0;
    WindowCarry<scalar_t> carry;
    const scalar_t* row_start = x + row * length;
    int64_t t = chunk * chunk_tiles + warp;
    if constexpr (kStaged<scalar_t, kAligned>) {
      // A ring of kStages tiles a warp in shared memory, filled by
      // cp.async: while a tile is added, the next kStages are in flight.
      extern __shared__ __align__(16) unsigned char staged[];
      constexpr int S = kStages<scalar_t>, kSlot = 32 * kTileVectors<scalar_t>;
      Vector<scalar_t>* ring = reinterpret_cast<Vector<scalar_t>*>(staged) + warp * S * kSlot;
#pragma unroll
      for (int s = 0; s < S; ++s) {
        if (t + s * warps < end) stage_tile<scalar_t>(ring + s * kSlot, row_start, length, t + s * warps, lane);
        __pipeline_commit();
      }
      for (int i = 0; t < end; t += warps, i = i + 1 == S ? 0 : i + 1) {
        __pipeline_wait_prior(S - 1);
        Tile<scalar_t> tile;
#pragma unroll
        for (int r = 0; r < kTileVectors<scalar_t>; ++r) tile[r] = ring[i * kSlot + r * 32 + lane];
        if (t + S * warps < end) stage_tile<scalar_t>(ring + i * kSlot, row_start, length, t + S * warps, lane);
        __pipeline_commit();
        add_tile<scalar_t>(tile, lane, digits, flags, carry);
      }
      __pipeline_wait_prior(0);
    } else if (t < end) {
      // The next tile's loads are issued before this one is added, so
      // that a warp keeps its loads in flight while it computes.
      Tile<scalar_t> tile;
      load_tile<scalar_t, kAligned>(tile, row_start, length, t, lane);
      for (; t < end; t += warps) {
        Tile<scalar_t> next;
        const bool more = t + warps < end;
        if (more) load_tile<scalar_t, kAligned>(next, row_start, length, t + warps, lane);
        add_tile<scalar_t>(tile, lane, digits, flags, carry);
        if (more) {
#pragma unroll
          for (int r = 0; r < kTileVectors<scalar_t>; ++r) tile[r] = next[r];
        }
      }
    }
    carry.flush(digits, lane);
    flags = __reduce_or_sync(kFull, flags);
    if (lane == 0 && flags) atomicOr(&block_flags, flags);
    __syncthreads();
    if (chunks > 1) {
      // One carry step, all digits at once: each keeps its low 32 bits plus
      // the carry from below (the top one all of itself), so that the
      // row's total adds numbers below 2^33, far from overflow.
      unsigned long long* total = totals + row * kTotalWords;
      for (int k = threadIdx.x; k < kDigits; k += blockDim.x) {
        const long long v = static_cast<long long>(digits[k]);
        const long long carried = k > 0 ? static_cast<long long>(digits[k - 1]) >> 32 : 0;
        const long long part = (k == kDigits - 1 ? v : (v & 0xffffffffll)) + carried;
        if (part) atomicAdd(&total[k], static_cast<unsigned long long>(part));
      }
      if (threadIdx.x == 0 && block_flags) atomicOr(&total[kDigits], static_cast<unsigned long long>(block_flags));
      __threadfence();  // this chunk's additions before its ticket
      __syncthreads();
      if (threadIdx.x == 0) last_chunk = atomicAdd(&total[kDigits + 1], 1ull) == static_cast<unsigned long long>(chunks - 1);
      __syncthreads();
      if (last_chunk) {
        __threadfence();
        // Every chunk's additions are in: the total, read from L2 (the
        // atomics' home), into this block's digits, and rounded.
        const long long* done = reinterpret_cast<const long long*>(total);
        for (int k = threadIdx.x; k < kDigits; k += blockDim.x) digits[k] = static_cast<unsigned long long>(__ldcg(done + k));
        if (threadIdx.x == 0) block_flags = static_cast<unsigned>(__ldcg(done + kDigits));
        __syncthreads();
        if (warp == 0) sink.store(row, reinterpret_cast<int64_t*>(digits), block_flags, length, lane);
      }
    } else if (warp == 0) {
      sink.store(row, reinterpret_cast<int64_t*>(digits), block_flags, length, lane);
    }
    __syncthreads();  // the digits are cleared for the next job
  }
}

at::Tensor fsum_cuda(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype) {
  const c10::cuda::CUDAGuard guard(self.device());
  const FsumRows r = fsum_rows(self, dim, keepdim, dtype);
  at::Tensor out = at::empty(r.out_sizes, self.options().dtype(r.out_type));
  if (r.count == 0) return out;
  const ResultSink sink{out.mutable_data_ptr(), r.out_type, r.format};
  const auto stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, r.rows.scalar_type(), "fsum_cuda", [&] {
    constexpr int64_t V = Input<scalar_t>::kVector, kTile = 32 * Input<scalar_t>::kLaneElements;
    const int64_t tiles = (r.length + kTile - 1) / kTile;
    const int warps = static_cast<int>(std::clamp<int64_t>(tiles, 1, kMaxThreads / 32));
    const scalar_t* x = r.rows.const_data_ptr<scalar_t>();
    const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0 && r.length % V == 0;
    const bool staged = aligned && kStaged<scalar_t, true>;
    const auto kernel = aligned ? fsum_chunks_kernel<scalar_t, true> : fsum_chunks_kernel<scalar_t, false>;
    const size_t stage_bytes = staged ? size_t(kStageBytes) * warps : 0;
    if (staged) {
      static PerDevice stage_limit_set;  // the kernel's shared memory limit, raised once a device
      stage_limit_set.get([&](int) {
        C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            kStageBytes * (kMaxThreads / 32)));
        return 1;
      });
    }
    // Enough chunks for a wave of blocks, none over kMaxChunk.
    const int64_t wave = int64_t(sm_count()) * cuda::max_resident_blocks(kernel, 32 * warps, stage_bytes);
    int64_t chunks = std::max<int64_t>((wave + r.count - 1) / r.count, (r.length + kMaxChunk - 1) / kMaxChunk);
    chunks = std::clamp<int64_t>(chunks, 1, std::max<int64_t>(1, (tiles + warps - 1) / warps));
    const int64_t chunk_tiles = std::max<int64_t>(1, (tiles + chunks - 1) / chunks);
    chunks = std::max<int64_t>(1, (tiles + chunk_tiles - 1) / chunk_tiles);
    const int64_t jobs = r.count * chunks;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(jobs, int64_t(1) << 30));
    at::Tensor totals;
    if (chunks > 1) totals = at::zeros({r.count * kTotalWords}, self.options().dtype(at::kLong));
    auto* totals_ptr = chunks > 1 ? reinterpret_cast<unsigned long long*>(totals.mutable_data_ptr<int64_t>()) : nullptr;
    kernel<<<blocks, 32 * warps, stage_bytes, stream>>>(x, r.count, r.length, chunk_tiles, chunks, totals_ptr, sink);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

}  // namespace
}  // namespace fsum
}  // namespace gpureduce

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) { m.impl("fsum.dim_IntList", &gpureduce::fsum::fsum_cuda); }
