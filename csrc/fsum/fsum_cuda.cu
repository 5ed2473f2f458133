// gpureduce::fsum on CUDA: the exact sum rounded once, the same bits as the
// CPU kernel (fsum.cpp), at close to memory speed on ordinary data.
//
// A block takes a chunk of a row (the reduced elements of one output) and
// keeps its exact sum in a superaccumulator in shared memory
// (superaccumulator.h's digits, added to with 64-bit atomics: integer adds,
// so their order does not matter). Adding every element there would cost
// three atomics each; instead each warp works a tile at a time:
//
//  1. every lane loads its 32 elements of the tile (16 for float64) as
//     16-byte vectors, and the warp takes the largest exponent among their
//     finite elements, A;
//  2. an element whose exponent is within W of A is added to a double
//     accumulator of that window, one within the next W + 1 to a second:
//     every value in a window is a multiple of the window's unit (its
//     lowest exponent's ulp) and below 2^(W + p) units (p: the input's
//     significant bits), and a lane adds at most 32 of them, so W is
//     chosen for the lane's sum to stay below 2^53 units: every addition is
//     exact. A float64 element is first split into its high and low 26-bit
//     halves (both exact), each with accumulators of its own;
//  3. at the tile's end each accumulator, an integer number of its window's
//     units, is converted to int64, summed across the warp, and lane 0 adds
//     it to the block's digits (three atomics per window);
//  4. an element further below A (rare: 2^-49 of the tile's largest for
//     the 16- and 32-bit types, 2^-45 for float64), and a float64 above
//     2^1017 (where a double accumulator could overflow), goes straight to
//     the digits; inf and nan set flags.
//
// A row in one chunk is rounded by the block; a row in several chunks
// writes each chunk's digits (after one carry step) and the merge kernel
// adds them.
// Nothing depends on the launch: the result is the rounded exact sum.
#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "../cuda/launch.h"
#include "fsum.h"
#include "superaccumulator.h"

namespace gpureduce {
namespace fsum {
namespace {

constexpr int kPartialWords = 70;   // a chunk's partial: 68 digits, the flags, padding
constexpr int kMaxThreads = 256;
constexpr int64_t kMaxChunk = int64_t(1) << 28;  // elements: a digit's atomics stay below 2^62
constexpr unsigned kFull = 0xffffffffu;

enum : unsigned { kNan = 1, kPosInf = 2, kNegInf = 4, kNotNegZero = 8 };
constexpr int kRare = -4096;  // the exponent given to elements kept out of the windows

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

// How a type's elements enter the windows. Exponents are biased, with
// subnormals and zeros at 1 (the same unit as the smallest normals).
template <typename scalar_t>
struct Input {
  // 16- and 32-bit types, as float32: one part, p = 24.
  static constexpr int kVector = 16 / sizeof(scalar_t);
  static constexpr int kLaneElements = 32;  // per tile
  static constexpr int kParts = 1;
  static constexpr int kWindow = 24;  // 2^(W + 24) * 32 <= 2^53
  // log2 of the ulp of exponent e is e - 150
  static __device__ __forceinline__ int ulp_bias(int) { return 150; }
  // The exponent; kRare for inf and nan, which then take the rare path.
  static __device__ __forceinline__ int exponent(scalar_t raw) {
    const int biased = (__float_as_uint(static_cast<float>(raw)) >> 23) & 0xff;
    return biased == 0xff ? kRare : max(biased, 1);
  }
  struct Element {
    double part[1];
    int exponent;
    unsigned not_neg_zero;  // nonzero unless the element is -0.0
    bool nonzero;           // neither zero
  };
  static __device__ __forceinline__ Element split(scalar_t raw) {
    const float v = static_cast<float>(raw);
    const unsigned bits = __float_as_uint(v);
    Element e;
    e.exponent = exponent(raw);
    e.not_neg_zero = bits ^ 0x80000000u;
    e.nonzero = (bits << 1) != 0;
    e.part[0] = static_cast<double>(v);
    return e;
  }
  // The flag of inf or nan, 0 for a finite element.
  static __device__ __forceinline__ unsigned special(scalar_t raw) {
    const unsigned bits = __float_as_uint(static_cast<float>(raw));
    return (bits << 1) < 0xff000000u ? 0 : (bits << 1) > 0xff000000u ? kNan : (bits >> 31) ? kNegInf : kPosInf;
  }
};

template <>
struct Input<double> {
  // Two parts: the high 27 significant bits and the low 26 (p = 27 and 26
  // over units 2^26 and 1 ulp of the window's lowest exponent).
  static constexpr int kVector = 2;
  static constexpr int kLaneElements = 16;
  static constexpr int kParts = 2;
  static constexpr int kWindow = 22;  // 2^(W + 27) * 16 <= 2^53
  static __device__ __forceinline__ int ulp_bias(int part) { return part == 0 ? 1049 : 1075; }
  // kRare for inf, nan, and the largest exponents, where 16 elements could
  // overflow a double accumulator (above 2^1017: those go to the digits).
  static __device__ __forceinline__ int exponent(double v) {
    const int biased = (__double2hiint(v) >> 20) & 0x7ff;
    return biased > 2041 ? kRare : max(biased, 1);
  }
  struct Element {
    double part[2];
    int exponent;
    unsigned not_neg_zero;
    bool nonzero;
  };
  static __device__ __forceinline__ Element split(double v) {
    const unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(v));
    Element e;
    e.exponent = exponent(v);
    e.not_neg_zero = (static_cast<unsigned>(bits >> 32) ^ 0x80000000u) | static_cast<unsigned>(bits);
    e.nonzero = (bits << 1) != 0;
    const double high = __longlong_as_double(static_cast<long long>(bits & ~((1ull << 26) - 1)));
    e.part[0] = high;
    e.part[1] = v - high;  // exact: the bits the mask cleared
    return e;
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

// Adds one tile of a warp: tile `t` of the row at `row` (length elements).
template <typename scalar_t, bool kAligned>
__device__ __forceinline__ void add_tile(const scalar_t* __restrict__ row, int64_t length, int64_t t, int lane,
                                         unsigned long long* digits, unsigned& flags) {
  using In = Input<scalar_t>;
  constexpr int V = In::kVector, P = In::kParts, W = In::kWindow, kTileVectors = In::kLaneElements / V;
  Vector<scalar_t> vec[kTileVectors];
  const int64_t tile_start = t * (int64_t(32) * In::kLaneElements);
#pragma unroll
  for (int r = 0; r < kTileVectors; ++r) {
    const int64_t first = tile_start + (int64_t(r) * 32 + lane) * V;
    if (kAligned && first + V <= length) {
      vec[r] = *reinterpret_cast<const Vector<scalar_t>*>(row + first);
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j)  // -0.0 past the end adds nothing and keeps a -0.0 sum
        vec[r].v[j] = first + j < length ? row[first + j] : static_cast<scalar_t>(-0.0f);
    }
  }
  int top = 0;
#pragma unroll
  for (int r = 0; r < kTileVectors; ++r)
#pragma unroll
    for (int j = 0; j < V; ++j) top = max(top, In::exponent(vec[r].v[j]));
  const int anchor = __reduce_max_sync(kFull, top);
  double acc[2][P];
#pragma unroll
  for (int w = 0; w < 2; ++w)
#pragma unroll
    for (int q = 0; q < P; ++q) acc[w][q] = 0.0;
  // Every element into its window, without branches; those below both
  // windows (and inf, nan) only mark the lane, which then goes over its
  // elements again.
  unsigned not_neg_zero = 0;
  bool rare = false;
#pragma unroll
  for (int r = 0; r < kTileVectors; ++r) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const auto e = In::split(vec[r].v[j]);
      not_neg_zero |= e.not_neg_zero;
      const int below = anchor - e.exponent;
      const bool first = below <= W, second = !first && below <= 2 * W + 1;
#pragma unroll
      for (int q = 0; q < P; ++q) {
        acc[0][q] += first ? e.part[q] : 0.0;
        acc[1][q] += second ? e.part[q] : 0.0;
      }
      rare |= below > 2 * W + 1 && e.nonzero;
    }
  }
  if (rare) {
#pragma unroll 1
    for (int r = 0; r < kTileVectors; ++r) {
#pragma unroll 1
      for (int j = 0; j < V; ++j) {
        const auto e = In::split(vec[r].v[j]);
        if (anchor - e.exponent <= 2 * W + 1 || !e.nonzero) continue;
        if (const unsigned special = In::special(vec[r].v[j])) {
          flags |= special;
        } else {
#pragma unroll
          for (int q = 0; q < P; ++q)
            if (e.part[q] != 0.0) add_element(digits, e.part[q]);
        }
      }
    }
  }
  if (not_neg_zero) flags |= kNotNegZero;
#pragma unroll
  for (int w = 0; w < 2; ++w) {
    // The window's lowest exponent (at least 1: no element is below it).
    const int lowest = max(anchor - W - w * (W + 1), 1);
#pragma unroll
    for (int q = 0; q < P; ++q) {
      if (!__any_sync(kFull, acc[w][q] != 0.0)) continue;
      const int unit = lowest - In::ulp_bias(q);  // log2 of the window's unit
      const long long units = warp_sum(__double2ll_rn(times_pow2(acc[w][q], -unit)));
      if (lane == 0) add_scaled(digits, units, unit - kBase);
    }
  }
}

__device__ void set_flags(SuperAccumulator& acc, unsigned flags, int64_t length) {
  acc.pending = 1;
  acc.nan = flags & kNan;
  acc.pos_inf = flags & kPosInf;
  acc.neg_inf = flags & kNegInf;
  acc.any_not_neg_zero = flags & kNotNegZero;
  acc.any_term = length > 0;
}

// Two blocks an SM (128 registers): of 2, 3 and 4, none was fastest on
// every case (NOTES.md, session 88, call 2).
template <typename scalar_t, bool kAligned>
__global__ void __launch_bounds__(kMaxThreads, 2)
    fsum_chunks_kernel(const scalar_t* __restrict__ x, int64_t rows, int64_t length, int64_t chunk_tiles,
                       int64_t chunks, long long* __restrict__ partials, double* __restrict__ results, int precision,
                       int min_exp) {
  __shared__ unsigned long long digits[kDigits];
  __shared__ unsigned block_flags;
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
    for (int64_t t = chunk * chunk_tiles + warp; t < end; t += warps)
      add_tile<scalar_t, kAligned>(x + row * length, length, t, lane, digits, flags);
    flags = __reduce_or_sync(kFull, flags);
    if (lane == 0 && flags) atomicOr(&block_flags, flags);
    __syncthreads();
    if (chunks > 1) {
      // One carry step, all digits at once: each keeps its low 32 bits
      // plus the carry from below (the top one all of itself), so that
      // the merge adds numbers below 2^33.
      long long* out = partials + job * kPartialWords;
      for (int k = threadIdx.x; k <= kDigits; k += blockDim.x) {
        if (k == kDigits) {
          out[k] = block_flags;
          continue;
        }
        const long long v = static_cast<long long>(digits[k]);
        const long long carry = k > 0 ? static_cast<long long>(digits[k - 1]) >> 32 : 0;
        out[k] = (k == kDigits - 1 ? v : (v & 0xffffffffll)) + carry;
      }
    } else if (threadIdx.x == 0) {
      SuperAccumulator acc;
      FSUM_DIGIT_LOOP
      for (int k = 0; k < kDigits; ++k) acc.digit[k] = static_cast<int64_t>(digits[k]);
      set_flags(acc, block_flags, length);
      results[row] = acc.round_to(precision, min_exp);
    }
    __syncthreads();  // the digits are cleared for the next job
  }
}

// Adds each row's chunk partials (digits below 2^33: the sums stay far
// from overflow) and rounds: each warp adds every kMergeWarps-th partial
// (a lane three of its words), then the warps' sums are added.
constexpr int kMergeWarps = 16;
__global__ void __launch_bounds__(kMergeWarps * 32)
    fsum_merge_kernel(const long long* __restrict__ partials, int64_t rows, int64_t chunks, int64_t length,
                      double* __restrict__ results, int precision, int min_exp) {
  constexpr int kWords = 3 * 32;  // >= kDigits + 1
  __shared__ long long sums[kMergeWarps][kWords];
  __shared__ long long total[kDigits + 1];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    long long s[3] = {0, 0, 0};
#pragma unroll 4
    for (int64_t c = warp; c < chunks; c += kMergeWarps) {
      const long long* p = partials + (row * chunks + c) * kPartialWords;
#pragma unroll
      for (int w = 0; w < 3; ++w) {
        const int k = lane + 32 * w;
        if (k < kDigits) s[w] += p[k];
        else if (k == kDigits) s[w] |= p[k];
      }
    }
#pragma unroll
    for (int w = 0; w < 3; ++w) sums[warp][lane + 32 * w] = s[w];
    __syncthreads();
    if (threadIdx.x <= kDigits) {
      long long t = 0;
      for (int g = 0; g < kMergeWarps; ++g) t = threadIdx.x < kDigits ? t + sums[g][threadIdx.x] : (t | sums[g][threadIdx.x]);
      total[threadIdx.x] = t;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      SuperAccumulator acc;
      FSUM_DIGIT_LOOP
      for (int k = 0; k < kDigits; ++k) acc.digit[k] = total[k];
      set_flags(acc, static_cast<unsigned>(total[kDigits]), length);
      results[row] = acc.round_to(precision, min_exp);
    }
    __syncthreads();
  }
}

at::Tensor fsum_cuda(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype) {
  const c10::cuda::CUDAGuard guard(self.device());
  const FsumRows r = fsum_rows(self, dim, keepdim, dtype);
  at::Tensor out = at::empty(r.out_sizes, self.options().dtype(r.out_type));
  if (r.count == 0) return out;
  // The rounded results are exact in the output type: a double result is
  // the output itself, others are cast after.
  at::Tensor results = r.out_type == at::kDouble ? out.view({r.count})
                                                 : at::empty({r.count}, self.options().dtype(at::kDouble));
  const auto stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, r.rows.scalar_type(), "fsum_cuda", [&] {
    constexpr int64_t V = Input<scalar_t>::kVector, kTile = 32 * Input<scalar_t>::kLaneElements;
    const int64_t tiles = (r.length + kTile - 1) / kTile;
    const int warps = static_cast<int>(std::clamp<int64_t>(tiles, 1, kMaxThreads / 32));
    const scalar_t* x = r.rows.const_data_ptr<scalar_t>();
    const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0 && r.length % V == 0;
    auto kernel = aligned ? fsum_chunks_kernel<scalar_t, true> : fsum_chunks_kernel<scalar_t, false>;
    // Enough chunks for a wave of blocks, none over kMaxChunk.
    static cuda::ResidentWave resident;
    const int64_t wave = resident.blocks(kernel, 32 * warps);
    int64_t chunks = std::max<int64_t>((wave + r.count - 1) / r.count, (r.length + kMaxChunk - 1) / kMaxChunk);
    chunks = std::clamp<int64_t>(chunks, 1, std::max<int64_t>(1, (tiles + warps - 1) / warps));
    const int64_t chunk_tiles = std::max<int64_t>(1, (tiles + chunks - 1) / chunks);
    chunks = std::max<int64_t>(1, (tiles + chunk_tiles - 1) / chunk_tiles);
    const int64_t jobs = r.count * chunks;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(jobs, int64_t(1) << 30));
    at::Tensor partials;
    if (chunks > 1) partials = at::empty({jobs * kPartialWords}, self.options().dtype(at::kLong));
    long long* partial_ptr = chunks > 1 ? reinterpret_cast<long long*>(partials.mutable_data_ptr<int64_t>()) : nullptr;
    kernel<<<blocks, 32 * warps, 0, stream>>>(x, r.count, r.length, chunk_tiles, chunks, partial_ptr,
                                              results.mutable_data_ptr<double>(), r.format.precision,
                                              r.format.min_exp);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    if (chunks > 1) {
      fsum_merge_kernel<<<static_cast<unsigned>(std::min<int64_t>(r.count, int64_t(1) << 30)), kMergeWarps * 32, 0,
                          stream>>>(
          partial_ptr, r.count, chunks, r.length, results.mutable_data_ptr<double>(), r.format.precision,
          r.format.min_exp);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
  });
  if (r.out_type != at::kDouble) out.view({r.count}).copy_(results);
  return out;
}

}  // namespace
}  // namespace fsum
}  // namespace gpureduce

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) { m.impl("fsum.dim_IntList", &gpureduce::fsum::fsum_cuda); }
