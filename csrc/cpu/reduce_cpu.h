// The CPU half of the reduction engine, for any op functor: multi-threaded
// with at::parallel_for. Inputs are folded a 32-byte vector of accumulators
// at a time (Lanes), rows in leaves of 4096 elements and columns in leaves
// of 16 rows, and the leaves are combined pairwise, so rounding error grows
// like log n. Chunking depends
// only on the shape, never on the thread count or the instruction set, so
// results are bitwise reproducible. run_pass_cpu<Family, G> is instantiated
// once per op and dtype group, each in a file of its own (a file holding an
// op's every group took a minute to compile on 2 cores), for one
// instruction set (cpu/isa.h), in namespace GPUREDUCE_CPU_NS: `cpu_avx2`
// for AVX2, FMA and F16C on x86-64 (instances/<op>_<group>_avx2.cpp,
// engine_avx2.h), `cpu` for the baseline build elsewhere
// (instances/<op>_<group>.cpp, engine_baseline.h).
#pragma once

#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#if defined(GPUREDUCE_CPU_AVX2)
#include <immintrin.h>
#endif

#include "../engine/reduce_dtypes.h"
#include "../engine/reduce_family.h"
#include "../engine/reduce_ops.h"
#include "../engine/reduce_plan.h"

#ifndef GPUREDUCE_CPU_NS
#define GPUREDUCE_CPU_NS cpu
#endif

// Forced inlining and unrolling keep a leaf's or a tile's accumulators in
// registers: the engine's speed.
#define GPUREDUCE_CPU_PRAGMA(x) _Pragma(#x)
#define GPUREDUCE_CPU_INLINE __attribute__((always_inline))
#define GPUREDUCE_CPU_UNROLL(n) GPUREDUCE_CPU_PRAGMA(GCC unroll n)

namespace gpureduce {
namespace GPUREDUCE_CPU_NS {

// Elements per leaf of a row. Each leaf ends in a fold of its chains and a
// push onto the pairwise stack (in memory: a vector per level): with leaves
// of 1024, rows of 2048 to 8192 float32 took 1.06-1.09x torch.sum's time on
// one thread where rows of 1024 took 0.96x ([550, 2048] 56.6 us, [1100,
// 1024] 50.5, torch.sum 51.7 and 52.7; 2026-11-30); with leaves of 4096,
// [550, 2048] 0.97x and [275, 4096] 0.98x, rows of two leaves or more
// ([137, 8192]) 1.05x. Each of a leaf's 32 float lanes (16 double) adds up
// 128 (256) of its inputs in turn.
constexpr int64_t kLeaf = 4096;
constexpr int64_t kLeavesPerTask = 8;    // leaves per parallel task (32K elements)
// Elements a run of short rows gives each of its scalar chains (run_rows'
// scalar_rows), as many as when row leaves were 1024 elements: the short
// rows' measurements were made with that.
constexpr int64_t kScalarChainElements = 32;
constexpr int64_t kColLeafRows = 16;     // rows summed directly in a column leaf
constexpr int64_t kRowsPerTask = 4096;   // rows per parallel column task
// A columns pass of one tile (one output, its columns in a single tile)
// is split along its rows into up to kSplitTileMaxTasks (a power of two)
// tasks of at least kSplitTileTaskElements elements (a quarter of that for
// strided columns, whose element loads cost about 4x as much): as one task
// it ran on one thread however long its columns (run_columns).
constexpr int64_t kSplitTileTaskElements = 65536;
constexpr int64_t kSplitTileMaxTasks = 4;
// Columns of one output and several tiles are split along their rows only
// into tasks of at least this many rows, 2-byte ones of the second
// (run_columns: shorter tasks lost).
constexpr int64_t kSplitColumnsMinRows = 256;
constexpr int64_t kSplitNarrowColumnsMinRows = 1024;

template <class Op, typename acc_t>
acc_t pairwise_combine(const acc_t* v, int64_t n) {
  if (n == 0) return Op::identity();
  if (n == 1) return v[0];
  const int64_t h = n / 2;
  return Op::combine(pairwise_combine<Op>(v, h), pairwise_combine<Op>(v + h, n - h));
}

// `a` combined with itself into `k` copies (k >= 1), by doubling: log2(k)
// combines in a fixed order, for the k identical rows of an expanded input
// (run_rows).
template <class Op, typename acc_t>
acc_t repeated(acc_t a, int64_t k) {
  acc_t result = a;
  for (--k; k > 0; k >>= 1) {
    if (k & 1) result = Op::combine(result, a);
    if (k > 1) a = Op::combine(a, a);
  }
  return result;
}

// A leaf folds in raw inputs with Op::reduce. (A pass that reads another
// pass's partials runs the kernels of a family whose reduce of a partial is
// combine: PartialsKernelsFor in reduce_family.h.)
template <class Op, typename acc_t, typename in_t>
acc_t fold(acc_t acc, in_t x) {
  return Op::reduce(acc, x);
}

// One element widened to what the op folds: 16-bit floats to float (c10's
// conversions are calls the compiler cannot vectorise), the rest as they are.
template <typename in_t>
inline auto widen_one(in_t x) {
  if constexpr (std::is_same_v<in_t, c10::BFloat16>) {
    const uint32_t w = static_cast<uint32_t>(x.x) << 16;
    float f;
    std::memcpy(&f, &w, sizeof(float));
    return f;
  } else if constexpr (std::is_same_v<in_t, c10::Half>) {
#if defined(GPUREDUCE_CPU_AVX2)
    return _cvtsh_ss(x.x);
#else
    return static_cast<float>(x);
#endif
  } else {
    return x;
  }
}

#if defined(GPUREDUCE_CPU_AVX2)
// 32 bytes of lanes of the integer type acc_t, each an integer of the
// narrower type S at p, sign- or zero-extended as S is: one load and one
// vpmovsx/vpmovzx. (gcc built the generic vector conversion from a byte at
// a time, shifts and inserts: uint8 rows of 1070 read at 0.38 ns an
// element on one thread, 1.6x torch.sum's time.)
template <typename acc_t, typename S>
__m256i widen_ints(const S* p) {
  constexpr bool kSigned = std::is_signed_v<S>;
  if constexpr (sizeof(acc_t) == 4) {  // 8 lanes
    if constexpr (sizeof(S) == 1) {
      const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
      return kSigned ? _mm256_cvtepi8_epi32(x) : _mm256_cvtepu8_epi32(x);
    } else {
      static_assert(sizeof(S) == 2, "narrower than the 4-byte lanes");
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      return kSigned ? _mm256_cvtepi16_epi32(x) : _mm256_cvtepu16_epi32(x);
    }
  } else {
    static_assert(sizeof(acc_t) == 8, "4- or 8-byte lanes");  // 4 lanes
    if constexpr (sizeof(S) == 1) {
      int32_t bytes;
      std::memcpy(&bytes, p, sizeof(bytes));
      const __m128i x = _mm_cvtsi32_si128(bytes);
      return kSigned ? _mm256_cvtepi8_epi64(x) : _mm256_cvtepu8_epi64(x);
    } else if constexpr (sizeof(S) == 2) {
      const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
      return kSigned ? _mm256_cvtepi16_epi64(x) : _mm256_cvtepu16_epi64(x);
    } else {
      static_assert(sizeof(S) == 4, "narrower than the 8-byte lanes");
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      return kSigned ? _mm256_cvtepi32_epi64(x) : _mm256_cvtepu32_epi64(x);
    }
  }
}
#endif

// ---------------------------------------------------------------------------
// Lanes: the kernels fold kLaneWidth inputs at a time into one 32-byte
// vector of accumulators (an AVX2 register; two SSE ones in the baseline
// build), lane k taking every kLaneWidth-th input, and fold the lanes into
// one value only at the end of a row or a task. Arrays of scalar lanes, left
// to the vectoriser, became scalar shuffles at every leaf's end: [9766, 279]
// float32 over dim 1 spent half its time there (perf, 2026-11-24).
constexpr int kVecBytes = 32;

template <typename T, int kBytes>
struct VecOf {
  typedef T type __attribute__((vector_size(kBytes)));
};

// How an input is stored in memory, for loads into vectors.
template <typename in_t>
using StorageOf = std::conditional_t<std::is_same_v<in_t, bool>, uint8_t, in_t>;

template <class Op, typename acc_t>
constexpr bool kNativeLanes = Op::kCombinesLanes && std::is_arithmetic_v<acc_t>;

#if defined(GPUREDUCE_CPU_AVX2)
// Inputs 0, s, ..., 7 s of p (s = 2 or 3) as 8 float lanes, from vectors
// of the dense span they lie in: the last one loaded back from the span's
// end, so that no load reads past the last input (maybe the input's own
// last element), then the inputs picked by shuffles. (Masked loads to the
// span's end made rows of 9 at a stride of 2 slower than element loads.)
GPUREDUCE_CPU_INLINE inline __m256 pick_floats(const float* p, int64_t s) {
  const __m256 a = _mm256_loadu_ps(p);
  if (s == 2) {
    const __m256 b = _mm256_loadu_ps(p + 7);  // inputs 7 to 14
    // [0 2 8 10 | 4 6 12 14], then the 64-bit pieces in order.
    const __m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), _MM_SHUFFLE(3, 1, 2, 0)));
  }
  const __m256 b = _mm256_loadu_ps(p + 8);
  const __m256 c = _mm256_loadu_ps(p + 14);  // inputs 14 to 21
  // Inputs 0 3 6 of a, 9 12 15 of b, 18 21 of c.
  const __m256 from_a = _mm256_permutevar8x32_ps(a, _mm256_setr_epi32(0, 3, 6, 0, 0, 0, 0, 0));
  const __m256 from_b = _mm256_permutevar8x32_ps(b, _mm256_setr_epi32(0, 0, 0, 1, 4, 7, 0, 0));
  const __m256 from_c = _mm256_permutevar8x32_ps(c, _mm256_setr_epi32(0, 0, 0, 0, 0, 0, 4, 7));
  return _mm256_blend_ps(_mm256_blend_ps(from_a, from_b, 0x38), from_c, 0xC0);
}

// Inputs 0, s, 2 s, 3 s of p (s = 2 or 3) as 4 double lanes, as
// pick_floats: two loads of the span, the second ending at input 3 s.
GPUREDUCE_CPU_INLINE inline __m256d pick_doubles(const double* p, int64_t s) {
  const __m256d a = _mm256_loadu_pd(p);
  if (s == 2) {
    const __m256d b = _mm256_loadu_pd(p + 3);  // inputs 3 to 6
    // [0 4 2 6], then lanes 1 and 2 swapped.
    return _mm256_permute4x64_pd(_mm256_blend_pd(a, b, 0xA), _MM_SHUFFLE(3, 1, 2, 0));
  }
  const __m256d b = _mm256_loadu_pd(p + 6);  // inputs 6 to 9
  // [0 6 3 9], then lanes 1 and 2 swapped.
  return _mm256_permute4x64_pd(_mm256_shuffle_pd(a, b, 0xC), _MM_SHUFFLE(3, 1, 2, 0));
}
#endif

template <class Op, typename acc_t, bool kNative = kNativeLanes<Op, acc_t>>
struct Lanes;

// Ops that combine lanes element-wise, over plain numbers: GCC vectors.
template <class Op, typename acc_t>
struct Lanes<Op, acc_t, true> {
  using op = Op;
  static constexpr int kWidth = kVecBytes / static_cast<int>(sizeof(acc_t));
  using acc = acc_t;
  using vec = typename VecOf<acc_t, kVecBytes>::type;

  static vec identity() {
    vec v;
    for (int k = 0; k < kWidth; ++k) v[k] = Op::template identity_as<acc_t>();
    return v;
  }
  static vec combine(vec a, vec b) { return Op::template combine_lanes<vec>(a, b); }

  // kWidth consecutive inputs as accumulators.
  template <typename in_t>
  static vec load(const in_t* p) {
    if constexpr (std::is_same_v<in_t, acc_t>) {
      vec v;
      std::memcpy(&v, p, sizeof(vec));
      return v;
    } else if constexpr (std::is_same_v<in_t, c10::BFloat16>) {
      // bfloat16 is the high half of a float. (gcc widened the generic
      // form below in two halves: 6 instructions per 8 inputs, not 2.)
#if defined(GPUREDUCE_CPU_AVX2)
      if constexpr (kWidth == 8) {
        const __m256i w = _mm256_slli_epi32(
            _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16);
        vec v;
        std::memcpy(&v, &w, sizeof(v));
        return v;
      } else {
        static_assert(kWidth == 4, "float or double accumulators");
        using f32v = typename VecOf<float, 16>::type;
        const __m128i w = _mm_slli_epi32(_mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))), 16);
        f32v f;
        std::memcpy(&f, &w, sizeof(f));
        return __builtin_convertvector(f, vec);
      }
#endif
      using u16v = typename VecOf<uint16_t, kWidth * 2>::type;
      using u32v = typename VecOf<uint32_t, kWidth * 4>::type;
      using f32v = typename VecOf<float, kWidth * 4>::type;
      u16v h;
      std::memcpy(&h, p, sizeof(h));
      const u32v w = __builtin_convertvector(h, u32v) << 16;
      f32v f;
      std::memcpy(&f, &w, sizeof(f));
      return __builtin_convertvector(f, vec);
    } else if constexpr (std::is_same_v<in_t, c10::Half>) {
      using f32v = typename VecOf<float, kWidth * 4>::type;
      f32v f;
#if defined(GPUREDUCE_CPU_AVX2)
      if constexpr (kWidth == 8) {
        const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        std::memcpy(&f, &x, sizeof(f));
      } else {
        static_assert(kWidth == 4, "float or double accumulators");
        const __m128 x = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
        std::memcpy(&f, &x, sizeof(f));
      }
#else
      for (int k = 0; k < kWidth; ++k) f[k] = static_cast<float>(p[k]);
#endif
      return __builtin_convertvector(f, vec);
    } else {
      using S = StorageOf<in_t>;
#if defined(GPUREDUCE_CPU_AVX2)
      if constexpr (std::is_integral_v<S> && std::is_integral_v<acc_t> && sizeof(S) < sizeof(acc_t)) {
        const __m256i w = widen_ints<acc_t>(reinterpret_cast<const S*>(p));
        vec v;
        std::memcpy(&v, &w, sizeof(v));
        return v;
      } else if constexpr (std::is_integral_v<S> && sizeof(S) < 4 && std::is_same_v<acc_t, float>) {
        // Bytes and 16-bit integers into float lanes (sum's and mean's
        // dtype=float32): extended to int32, then converted, exactly. The
        // generic conversion below went a byte at a time here too: sums of
        // uint8 and int8 into float32 took 3.6-4.7x torch.sum's time.
        const __m256 f = _mm256_cvtepi32_ps(widen_ints<int32_t>(reinterpret_cast<const S*>(p)));
        vec v;
        std::memcpy(&v, &f, sizeof(v));
        return v;
      }
#endif
      using iv = typename VecOf<S, kWidth * static_cast<int>(sizeof(S))>::type;
      iv x;
      std::memcpy(&x, p, sizeof(x));
      return __builtin_convertvector(x, vec);
    }
  }
  // Inputs (a vector of them, or one) as the partials they contribute
  // (Op::as_partial).
  template <typename T>
  static T partial(T v) {
    return Op::as_partial(v);
  }
  template <typename in_t>
  static vec fold(vec acc, const in_t* p, int64_t stride) {
    if (stride == 1) return combine(acc, partial(load(p)));
    vec v;
    if (stride == 0) {  // a small expanded input, read as it is: one element in every lane
      const acc_t x = static_cast<acc_t>(widen_one(*p));
      for (int k = 0; k < kWidth; ++k) v[k] = x;
      return combine(acc, partial(v));
    }
#if defined(GPUREDUCE_CPU_AVX2)
    // 16-bit floats into float lanes: their bits gathered into one vector,
    // then widened together as a dense load widens them. Element by element
    // (a load, a conversion and an insert each), [38728, 1056][:, ::2]
    // float16 over dim 1 took 1.2-1.6x torch.sum's time. A/B on this
    // project's 2-core machine, 2 threads, two runs a side, processes
    // alternating (NOTES.md, session 70): that case 1.20-1.26x -> 0.48-0.84x,
    // [3000, 999][:, ::3] float16 1.06-1.09x -> 0.48-0.51x, [200, 300,
    // 64][..., ::4] float16 over dim 1 (columns) 0.85-0.92x -> 0.40-0.41x,
    // bfloat16 rows 0.92-1.05x -> 0.92-0.95x. The same values, so the same
    // bits.
    if constexpr ((std::is_same_v<in_t, c10::Half> || std::is_same_v<in_t, c10::BFloat16>) &&
                  std::is_same_v<acc_t, float>) {
      const auto* b = reinterpret_cast<const uint16_t*>(p);
      __m128i h = _mm_cvtsi32_si128(b[0]);
      h = _mm_insert_epi16(h, b[stride], 1);
      h = _mm_insert_epi16(h, b[2 * stride], 2);
      h = _mm_insert_epi16(h, b[3 * stride], 3);
      h = _mm_insert_epi16(h, b[4 * stride], 4);
      h = _mm_insert_epi16(h, b[5 * stride], 5);
      h = _mm_insert_epi16(h, b[6 * stride], 6);
      h = _mm_insert_epi16(h, b[7 * stride], 7);
      if constexpr (std::is_same_v<in_t, c10::Half>) {
        const __m256 f = _mm256_cvtph_ps(h);
        std::memcpy(&v, &f, sizeof(v));
      } else {
        const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
        std::memcpy(&v, &w, sizeof(v));
      }
      return combine(acc, partial(v));
    }
#endif
    for (int k = 0; k < kWidth; ++k) v[k] = static_cast<acc_t>(widen_one(p[k * stride]));
    return combine(acc, partial(v));
  }
#if defined(GPUREDUCE_CPU_AVX2)
  // Whether fold_picked takes inputs of type in_t: the lanes' own type, of
  // 4 or 8 bytes.
  template <typename in_t>
  static constexpr bool kPicks = std::is_same_v<in_t, acc_t> && (sizeof(acc_t) == 4 || sizeof(acc_t) == 8);
  // fold of inputs of the lanes' own type at a stride of 2 or 3, from the
  // vectors of their dense span (pick_floats, pick_doubles): the same
  // inputs in the same lanes, so the same bits.
  static vec fold_picked(vec acc, const acc_t* p, int64_t stride) { return combine(acc, partial(picked(p, stride))); }
  // The last r (< kWidth) of the kWidth inputs at p, at a stride of 2 or 3,
  // in the top r lanes (as fold_last takes dense ones).
  static vec fold_picked_last(vec acc, const acc_t* p, int64_t stride, int64_t r) {
    return combine(acc, top_lanes(partial(picked(p, stride)), r));
  }
  static vec picked(const acc_t* p, int64_t stride) {
    vec v;
    if constexpr (sizeof(acc_t) == 4) {
      const __m256 x = pick_floats(reinterpret_cast<const float*>(p), stride);
      std::memcpy(&v, &x, sizeof(v));
    } else {
      static_assert(sizeof(acc_t) == 8, "lanes of 4 or 8 bytes");
      const __m256d x = pick_doubles(reinterpret_cast<const double*>(p), stride);
      std::memcpy(&v, &x, sizeof(v));
    }
    return v;
  }
#endif
  // v in its top r (< kWidth) lanes, the identity in the others.
  static vec top_lanes(vec v, int64_t r) {
    using lane_index_t =
        std::conditional_t<sizeof(acc_t) == 8, int64_t,
                           std::conditional_t<sizeof(acc_t) == 4, int32_t,
                                              std::conditional_t<sizeof(acc_t) == 2, int16_t, int8_t>>>;
    using mask_t = typename VecOf<lane_index_t, kVecBytes>::type;
    static_assert(sizeof(mask_t) == sizeof(vec), "lanes of 1, 2, 4 or 8 bytes");
    mask_t lane;
    for (int k = 0; k < kWidth; ++k) lane[k] = k;
    return lane >= static_cast<lane_index_t>(kWidth - r) ? v : identity();
  }
  // The last r (< kWidth) of the kWidth dense inputs at p, in the top r
  // lanes: one load that overlaps inputs already folded, whose lanes take
  // the identity instead. Filling a vector element by element was turned
  // into a memcpy call and a stalled reload (perf: half the time of rows of
  // 34 int64).
  template <typename in_t>
  static vec fold_last(vec acc, const in_t* p, int64_t r) {
    return combine(acc, top_lanes(partial(load(p)), r));
  }
  // r (< kWidth) inputs of a row at `stride`, folded one by one into lane 0.
  template <typename in_t>
  static vec fold_few(vec acc, const in_t* p, int64_t r, int64_t stride) {
    acc_t rest = Op::template identity_as<acc_t>();
    for (int64_t k = 0; k < r; ++k)
      rest = static_cast<acc_t>(Op::combine(rest, partial(static_cast<acc_t>(widen_one(p[k * stride])))));
    acc[0] = Op::combine(acc[0], rest);
    return acc;
  }
  // r (< kWidth) columns at `stride`, column k into lane k.
  template <typename in_t>
  static vec fold_lanes(vec acc, const in_t* p, int64_t r, int64_t stride) {
    for (int64_t k = 0; k < r; ++k)
      acc[k] = Op::combine(acc[k], partial(static_cast<acc_t>(widen_one(p[k * stride]))));
    return acc;
  }

  // The lanes folded into one value, halves first (lane k with k + w).
  template <int kBytes = kVecBytes>
  static acc_t total(typename VecOf<acc_t, kBytes>::type v) {
    if constexpr (kBytes == 2 * static_cast<int>(sizeof(acc_t))) {
      return Op::combine(v[0], v[1]);
    } else {
      using half = typename VecOf<acc_t, kBytes / 2>::type;
      half lo, hi;
      std::memcpy(&lo, &v, sizeof(half));
      std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof(half), sizeof(half));
      return total<kBytes / 2>(Op::template combine_lanes<half>(lo, hi));
    }
  }
  // The totals of four vectors of four lanes at once, each folded as
  // total() folds it (lanes 0 and 2, 1 and 3, then those two): lanes 0, 1,
  // 2, 3 of the result hold the totals of v[0], v[2], v[1], v[3]. Three
  // combines, four swaps of 128-bit halves and two in-lane unpacks for four
  // rows, against two combines, an extract and a shuffle each.
  static vec totals4(const vec (&v)[4])
    requires(kWidth == 4)
  {
    const vec s01 = combine(__builtin_shufflevector(v[0], v[1], 0, 1, 4, 5), __builtin_shufflevector(v[0], v[1], 2, 3, 6, 7));
    const vec s23 = combine(__builtin_shufflevector(v[2], v[3], 0, 1, 4, 5), __builtin_shufflevector(v[2], v[3], 2, 3, 6, 7));
    return combine(__builtin_shufflevector(s01, s23, 0, 4, 2, 6), __builtin_shufflevector(s01, s23, 1, 5, 3, 7));
  }
  static acc_t lane(vec v, int k) { return v[k]; }
  // Lanes [first, first + n) to dst.
  static void store(vec v, acc_t* dst, int first, int64_t n) {
    for (int64_t k = 0; k < n; ++k) dst[k] = v[first + k];
  }
};

// Whether rows one leaf each may take their totals four at a time
// (Lanes::totals4): lanes of plain numbers, four to a vector; rows of up to
// kTotalsOfFourMaxVectors vectors of 8-byte inputs (run_repeated_rows).
constexpr int64_t kTotalsOfFourMaxVectors = 8;
template <class L>
constexpr bool kTotalsOfFour = kNativeLanes<typename L::op, typename L::acc> && L::kWidth == 4;

// Any other op or accumulator (complex numbers): arrays of scalars, each
// lane folded with the op's own reduce and combine.
template <class Op, typename acc_t>
struct Lanes<Op, acc_t, false> {
  using op = Op;
  static constexpr int kWidth = sizeof(acc_t) >= kVecBytes ? 1 : kVecBytes / static_cast<int>(sizeof(acc_t));
  using acc = acc_t;
  struct vec {
    acc_t v[kWidth];
  };

  static vec identity() {
    vec r;
    for (int k = 0; k < kWidth; ++k) r.v[k] = Op::identity();
    return r;
  }
  static vec combine(vec a, vec b) {
    for (int k = 0; k < kWidth; ++k) a.v[k] = Op::combine(a.v[k], b.v[k]);
    return a;
  }
  template <typename in_t>
  static vec fold(vec acc, const in_t* p, int64_t stride) {
    for (int k = 0; k < kWidth; ++k) acc.v[k] = GPUREDUCE_CPU_NS::fold<Op>(acc.v[k], p[k * stride]);
    return acc;
  }
  template <typename in_t>
  static vec fold_last(vec acc, const in_t* p, int64_t r) {
    for (int64_t k = kWidth - r; k < kWidth; ++k) acc.v[k] = GPUREDUCE_CPU_NS::fold<Op>(acc.v[k], p[k]);
    return acc;
  }
  template <typename in_t>
  static vec fold_lanes(vec acc, const in_t* p, int64_t r, int64_t stride) {
    for (int64_t k = 0; k < r; ++k) acc.v[k] = GPUREDUCE_CPU_NS::fold<Op>(acc.v[k], p[k * stride]);
    return acc;
  }
  template <typename in_t>
  static vec fold_few(vec acc, const in_t* p, int64_t r, int64_t stride) {
    return fold_lanes(acc, p, r, stride);
  }
  static acc_t total(vec a) {
    for (int w = kWidth / 2; w >= 1; w /= 2) {
      for (int k = 0; k < w; ++k) a.v[k] = Op::combine(a.v[k], a.v[k + w]);
    }
    return a.v[0];
  }
  static acc_t lane(vec a, int k) { return a.v[k]; }
  static void store(vec a, acc_t* dst, int first, int64_t n) {
    for (int64_t k = 0; k < n; ++k) dst[k] = a.v[first + k];
  }
  // a in lane 0, the identity in the others.
  static vec with_first(acc_t a) {
    vec v = identity();
    v.v[0] = a;
    return v;
  }
};

// Whether Op adds complex accumulators part by part: sum (and mean's sum).
template <class Op>
constexpr bool kAddsComplexParts = false;
template <typename T>
constexpr bool kAddsComplexParts<SumOp<c10::complex<T>>> = true;

// Complex sums: the real and imaginary parts of the kWidth lanes side by
// side in one vector of their type (lane k's at 2k and 2k + 1), added as
// the parts they are, where the arrays of complex scalars above went a
// part at a time. Each lane's adds are those of the arrays, in the same
// order (a lane a fold leaves alone has zeros added, which changes no sum
// that began at the identity), so the same bits. No dense `load`: the
// narrow columns keep their scalar folds (narrow_output_block).
template <class Op, typename T>
  requires(kAddsComplexParts<Op>)
struct Lanes<Op, c10::complex<T>, false> {
  using op = Op;
  using acc = c10::complex<T>;
  static constexpr int kWidth = kVecBytes / static_cast<int>(sizeof(acc));
  using vec = typename VecOf<T, kVecBytes>::type;

  static vec identity() { return vec{}; }
  static vec combine(vec a, vec b) { return a + b; }
  // Inputs k = 0 .. kWidth - 1 at `stride`, those with first <= k < end,
  // as parts (zeros in the other lanes).
  template <typename in_t>
  GPUREDUCE_CPU_INLINE static vec parts(const in_t* p, int64_t stride, int64_t first, int64_t end) {
    if constexpr (std::is_same_v<in_t, acc>) {
      if (stride == 1 && first == 0 && end == kWidth) {
        vec v;
        std::memcpy(&v, p, sizeof(vec));
        return v;
      }
    }
    vec v{};
    for (int64_t k = first; k < end; ++k) {
      const acc x = static_cast<acc>(widen_one(p[k * stride]));
      v[2 * k] = x.real();
      v[2 * k + 1] = x.imag();
    }
    return v;
  }
  template <typename in_t>
  static vec fold(vec a, const in_t* p, int64_t stride) {
    return combine(a, parts(p, stride, 0, kWidth));
  }
  // The last r of the kWidth dense inputs at p, in the top r lanes: one
  // load, the lanes below them masked to zeros. Part by part, rows of 3
  // complex128 or 5 complex64 (one vector and such a tail) took 2.2-2.9x
  // torch.sum's time.
  template <typename in_t>
  static vec fold_last(vec a, const in_t* p, int64_t r) {
    using part_index_t = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
    using mask_t = typename VecOf<part_index_t, kVecBytes>::type;
    static_assert(sizeof(mask_t) == sizeof(vec), "a part index for each part");
    mask_t part;
    for (int j = 0; j < 2 * kWidth; ++j) part[j] = j;
    const vec v = parts(p, 1, 0, kWidth);
    return combine(a, part >= static_cast<part_index_t>(2 * (kWidth - r)) ? v : identity());
  }
  // r (< kWidth) inputs at `stride`, input k into lane k.
  template <typename in_t>
  static vec fold_lanes(vec a, const in_t* p, int64_t r, int64_t stride) {
    return combine(a, parts(p, stride, 0, r));
  }
  template <typename in_t>
  static vec fold_few(vec a, const in_t* p, int64_t r, int64_t stride) {
    return fold_lanes(a, p, r, stride);
  }
  // The lanes folded into one value, halves first (lane k with k + w).
  template <int kBytes = kVecBytes>
  static acc total(typename VecOf<T, kBytes>::type v) {
    if constexpr (kBytes == static_cast<int>(sizeof(acc))) {
      return acc(v[0], v[1]);
    } else {
      using half = typename VecOf<T, kBytes / 2>::type;
      half lo, hi;
      std::memcpy(&lo, &v, sizeof(half));
      std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof(half), sizeof(half));
      return total<kBytes / 2>(lo + hi);
    }
  }
  static acc lane(vec v, int k) { return acc(v[2 * k], v[2 * k + 1]); }
  static void store(vec v, acc* dst, int first, int64_t n) {
    for (int64_t k = 0; k < n; ++k) dst[k] = lane(v, first + static_cast<int>(k));
  }
  // a in lane 0, the identity in the others.
  static vec with_first(acc a) {
    vec v{};
    v[0] = a.real();
    v[1] = a.imag();
    return v;
  }
};

// Lanes that are vectors of plain numbers (native, or complex parts): the
// dense walks that prefetch ahead of themselves take them, not arrays of
// scalars (complex64 rows lost with those prefetches, session 72).
template <class Op, typename acc_t>
constexpr bool kVectorLanes = kNativeLanes<Op, acc_t> || kAddsComplexParts<Op>;

// Ops whose states fold side by side in vectors of the op's own
// (Op::kCpuStateLanes: logsumexp, its maxes and sums as two vectors of
// Op::LaneValues, eight floats or four doubles, and one vector exp a row of
// columns). A lane an input short of a vector (a tile's edges, a row's last
// few) is padded with Op::block_pad(), an input that changes no result.
// Always inlined: out of line, a fold a row of a tile (its two vectors
// through memory) took float32 columns from 0.71x of torch.logsumexp's
// time to 2.8x ([1000, 100] over dim 0).
template <class Op, typename acc_t>
  requires(Op::kCpuStateLanes)
struct Lanes<Op, acc_t, false> {
  using op = Op;
  using values = typename Op::LaneValues;
  using value_t = std::remove_cvref_t<decltype(values{}[0])>;
  static constexpr int kWidth = static_cast<int>(sizeof(values) / sizeof(value_t));
  using acc = acc_t;
  using vec = typename Op::StateLanes;

  GPUREDUCE_CPU_INLINE static vec identity() { return Op::lanes_identity(); }
  GPUREDUCE_CPU_INLINE static vec combine(vec a, vec b) { return Op::lanes_combine(a, b); }
  GPUREDUCE_CPU_INLINE static vec with_first(acc_t a) { return Op::lanes_with_first(a); }
  // Dense lanes widened to float as the native lanes load them (F16C for
  // float16, a shift for bfloat16): an element at a time, [2000, 2000]
  // float16 transposed over its strided dim took 1.37x torch.logsumexp's
  // time.
  using NativeLoads = Lanes<MaxOp<value_t>, value_t, true>;
  static_assert(NativeLoads::kWidth == kWidth, "a vector's lanes");

  template <typename in_t>
  GPUREDUCE_CPU_INLINE static vec fold(vec acc, const in_t* p, int64_t stride) {
    if constexpr (std::is_same_v<in_t, value_t> ||
                  (std::is_same_v<value_t, float> &&
                   (std::is_same_v<in_t, c10::Half> || std::is_same_v<in_t, c10::BFloat16>))) {
      if (stride == 1) {
        const typename NativeLoads::vec w = NativeLoads::load(p);
        values x;
        std::memcpy(&x, &w, sizeof(x));
        return Op::lanes_fold(acc, x);
      }
    }
    values x;
    GPUREDUCE_CPU_UNROLL(8)
    for (int k = 0; k < kWidth; ++k) x[k] = static_cast<value_t>(widen_one(p[k * stride]));
    return Op::lanes_fold(acc, x);
  }
  // Lanes kWidth - r .. kWidth - 1 from p[kWidth - r ..].
  template <typename in_t>
  GPUREDUCE_CPU_INLINE static vec fold_last(vec acc, const in_t* p, int64_t r) {
    values x;
    GPUREDUCE_CPU_UNROLL(8)
    for (int k = 0; k < kWidth; ++k) x[k] = k >= kWidth - r ? static_cast<value_t>(widen_one(p[k])) : Op::block_pad();
    return Op::lanes_fold(acc, x);
  }
  // Lanes 0 .. r - 1 from p, p + stride, ...
  template <typename in_t>
  GPUREDUCE_CPU_INLINE static vec fold_lanes(vec acc, const in_t* p, int64_t r, int64_t stride) {
    values x;
    GPUREDUCE_CPU_UNROLL(8)
    for (int k = 0; k < kWidth; ++k) x[k] = k < r ? static_cast<value_t>(widen_one(p[k * stride])) : Op::block_pad();
    return Op::lanes_fold(acc, x);
  }
  template <typename in_t>
  GPUREDUCE_CPU_INLINE static vec fold_few(vec acc, const in_t* p, int64_t r, int64_t stride) {
    return fold_lanes(acc, p, r, stride);
  }
  // The lanes in a fixed tree: (0 + 4) + (2 + 6), (1 + 5) + (3 + 7).
  static acc_t total(vec a) {
    acc_t s[kWidth];
    GPUREDUCE_CPU_UNROLL(8)
    for (int k = 0; k < kWidth; ++k) s[k] = Op::lanes_state(a, k);
    for (int w = kWidth / 2; w >= 1; w /= 2) {
      for (int k = 0; k < w; ++k) s[k] = Op::combine(s[k], s[k + w]);
    }
    return s[0];
  }
  static acc_t lane(vec a, int k) { return Op::lanes_state(a, k); }
  static void store(vec a, acc_t* dst, int first, int64_t n) {
    for (int64_t k = 0; k < n; ++k) dst[k] = Op::lanes_state(a, static_cast<int>(first + k));
  }
};

// Vectors a row leaf keeps in flight: an add takes 3 cycles on two pipes, so
// one chain of adds would leave the loads waiting. leaf_lanes takes the
// op's own count (OpBase::kCpuChains, this by default; amax and amin 8);
// the scalar rows and the narrower walks keep this one.
constexpr int kChains = 4;

template <class L, typename in_t>
GPUREDUCE_CPU_INLINE inline typename L::vec leaf_lanes(const in_t* p, int64_t n, int64_t stride);

// Whether a leaf folds inputs of in_t into lanes of a narrower type than
// the accumulator's, widened at its end (the op's leaf_walk_type: sum of
// 1- and 2-byte integers, int32, twice the lanes of int64, which a leaf of
// kLeaf inputs cannot overflow; amax and amin of them, their own type).
template <class L, typename in_t>
constexpr bool kWalksNarrower = [] {
  if constexpr (!kNativeLanes<typename L::op, typename L::acc>) {
    return false;
  } else {
    return !std::is_same_v<typename L::op::template leaf_walk_type<in_t>, typename L::acc>;
  }
}();

// Elements per leaf of a row: kLeaf, or 8192 where the leaf walks narrower
// lanes (kWalksNarrower: 1- and 2-byte integers of sum, amax and amin).
// Their folds are exact, so the leaf's length changes no bit, and each leaf
// ends in a widening of its lanes and a push onto the pairwise stack: with
// leaves of 1024, 10^7 int8 took 30 ns a leaf on two threads for loads of a
// few (amax 307 us, torch 116). A leaf of 8192 of them sums at most 1024 to
// an int32 lane.
template <class L, typename in_t>
constexpr int64_t kRowLeaf = kWalksNarrower<L, in_t> ? 8192 : kLeaf;

// A leaf walked in the op's narrower lanes (kWalksNarrower), widened to L's:
// the walk's vector cut into R pieces of L::kWidth lanes, each widened, then
// combined in order.
template <class L, typename in_t>
GPUREDUCE_CPU_INLINE inline typename L::vec leaf_lanes_walked(const in_t* p, int64_t n, int64_t stride) {
  using walk_t = typename L::op::template leaf_walk_type<in_t>;
  using LW = Lanes<typename L::op, walk_t>;
  constexpr int R = LW::kWidth / L::kWidth;
  static_assert(R == 2 || R == 4, "walk lanes of a half or a quarter of the accumulator's width");
  static_assert(sizeof(in_t) > 2 || kRowLeaf<L, in_t> / LW::kWidth * 65536 < (int64_t(1) << 31),
                "a leaf's sum of inputs of up to 2 bytes cannot overflow a lane");
  using piece = typename VecOf<walk_t, kVecBytes / R>::type;
  const typename LW::vec w = leaf_lanes<LW>(p, n, stride);
  piece part;
  std::memcpy(&part, &w, sizeof(piece));
  typename L::vec v = __builtin_convertvector(part, typename L::vec);
  GPUREDUCE_CPU_UNROLL(4)
  for (int r = 1; r < R; ++r) {
    std::memcpy(&part, reinterpret_cast<const char*>(&w) + r * sizeof(piece), sizeof(piece));
    v = L::combine(v, __builtin_convertvector(part, typename L::vec));
  }
  return v;
}

// How far ahead a dense leaf prefetches its inputs. The hardware
// prefetchers do not cross a 4 KB page, so a stream read at memory speed
// probably waits at each page's start; a line requested 4 KB ahead (2 KB
// for 16-bit inputs, which a leaf reads at half the bytes a cycle) is on
// its way by then (the mechanism is a guess; the timings are measured). On
// this 2-core machine, 2 threads, ours over torch.sum's time, this build
// against the one before in alternate processes, three runs of two
// (NOTES.md, session 68): [88, 77, 4096] float32 over dim 2
// 0.99 -> 0.84, 2.7e7 float32 whole 1.00 -> 0.90, [3388, 8192] float64 over
// dim 1 1.03 -> 0.88, [6000, 8192] float16 0.89 -> 0.69, amax of 2e7
// float32 1.13 -> 0.93. Chosen by a probe switch: 8 KB ahead gained less
// for float64, and 4 KB lost for bfloat16 rows ([3000, 5000] 0.92 -> 1.02,
// 0.89 at 2 KB). Leaves shorter than kLeafPrefetchMinAheads distances lost
// (rows of 2000 float32: [6000, 2000] 0.95 -> 1.01, [3000, 4000][:, :2000]
// 0.94 -> 1.03), their pages mostly begun by the hardware on its own; so
// did complex64 (5e6 whole, 0.99 -> 1.13), whose lanes are arrays of
// scalars (Lanes<Op, acc_t, false>). Neither prefetches now.
template <typename in_t>
constexpr int64_t kLeafPrefetchBytes = sizeof(in_t) <= 2 ? 2048 : 4096;
constexpr int64_t kLeafPrefetchMinAheads = 4;
// Strided leaves read from their dense spans from this many inputs
// (fold_into_chains).
constexpr int64_t kPickedMinLeaf = 64;
// Dense rows of at most this many bytes, one leaf and one output each, are
// read as one stream with prefetches across rows (run_repeated_rows).
constexpr int64_t kStreamPrefetchMaxRowBytes = 2048;

// A task's items b .. e - 1 of `step` elements each from x, one dense
// stream (short rows, or the rows of small columns outputs), whose lines
// are requested kLeafPrefetchBytes ahead of the item being read.
template <typename in_t>
class StreamPrefetch {
 public:
  StreamPrefetch(const in_t* x, int64_t step, int64_t b, int64_t e)
      : x_(x), step_(step), stop_(reinterpret_cast<uintptr_t>(x + e * step)),
        ahead_((reinterpret_cast<uintptr_t>(x + b * step) + kLeafPrefetchBytes<in_t>) & ~uintptr_t(63)) {}
  // Requests the lines up to kLeafPrefetchBytes past item o's end.
  GPUREDUCE_CPU_INLINE void through(int64_t o) {
    const uintptr_t until = std::min(reinterpret_cast<uintptr_t>(x_ + (o + 1) * step_) + kLeafPrefetchBytes<in_t>, stop_);
    for (; ahead_ < until; ahead_ += 64) __builtin_prefetch(reinterpret_cast<const void*>(ahead_));
  }

 private:
  const in_t* x_;
  int64_t step_;
  uintptr_t stop_, ahead_;
};

// A leaf of at most kLeaf elements of a row, into one vector of lanes: blocks
// of kChains vectors, then the rest.
// Inlined: a call per leaf (stack realignment for the vectors, vzeroupper)
// was a tenth of the time of rows of 34 int64.
// Leaves of at least this many inputs (any stride) go through leaf_blocks:
// for logsumexp a block of vector exps, where reduce takes an exp an input
// (rows of 10 float32: 124 -> 31 us for 1000 of them, session 40).
constexpr int64_t kMinBlockLeaf = 4;

// B inputs at `stride` widened into x. Dense float16 eight at a time with
// F16C: converted one by one (_cvtsh_ss), each a scalar store that the
// block's vector loads could not forward from, float16 logsumexp rows took
// 1.4-1.8x the time of bfloat16 ones, whose shifts the compiler vectorises
// (2 threads, [1208080] 525 against 306 us). The same conversions: the
// same bits.
template <int B, typename in_t, typename value_t>
GPUREDUCE_CPU_INLINE inline void widen_block(const in_t* p, int64_t stride, value_t (&x)[B]) {
#if defined(GPUREDUCE_CPU_AVX2)
  if constexpr (std::is_same_v<in_t, c10::Half> && std::is_same_v<value_t, float> && B % 8 == 0) {
    if (stride == 1) {
      GPUREDUCE_CPU_UNROLL(8)
      for (int k = 0; k < B; k += 8) {
        const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k)));
        std::memcpy(x + k, &v, sizeof(v));
      }
      return;
    }
  }
#endif
  for (int k = 0; k < B; ++k) x[k] = widen_one(p[k * stride]);
}

// What an op's reduce_block takes for inputs widened to W: W itself, or
// for integer inputs (logsumexp's) the op's own float type, that of its pad.
template <class Op, typename W>
struct BlockValueOf {
  using type = W;
};
template <class Op, typename W>
  requires std::is_integral_v<W>
struct BlockValueOf<Op, W> {
  using type = decltype(Op::block_pad());
};

// A leaf of an op that folds blocks (Op::kCpuBlock): blocks of
// inputs widened to the op's value type and folded by reduce_block, the
// rest in short blocks of Op::kCpuShortBlock padded with Op::block_pad()
// (an input that changes no result: logsumexp's -inf) or, for an op that
// pads none (kPadsLastBlock false: var), handed over with its count, all
// into the first lane. A row of
// 100 float32 with its last 36 folded one at a time took 1.4x torch's time.
template <class L, typename in_t>
GPUREDUCE_CPU_INLINE inline typename L::vec leaf_blocks(const in_t* p, int64_t n, int64_t stride) {
  using Op = typename L::op;
  constexpr int B = Op::kCpuBlock;
  using value_t = typename BlockValueOf<Op, decltype(widen_one(p[0]))>::type;
  typename L::acc acc = Op::identity();
  value_t x[B];
  int64_t i = 0;
  if constexpr (std::is_same_v<in_t, value_t>) {
    // Dense inputs of the value type itself: read where they are (copied
    // into x first, a block's 16-byte stores were read back in 32-byte
    // vectors: no store forwarding).
    if (stride == 1) {
      for (; i + B <= n; i += B) acc = Op::combine(acc, Op::reduce_block(p + i));
    }
  }
  for (; i + B <= n; i += B) {
    widen_block<B>(p + i * stride, stride, x);
    acc = Op::combine(acc, Op::reduce_block(x));
  }
  if (i < n) {
    if constexpr (Op::kPadsLastBlock) {
      // The rest in one block, padded, put together in registers: of
      // kCpuShortBlock inputs where it fits, else of B. Written to the
      // block's buffer an input at a time and read back as vectors (store
      // forwarding fails for a vector load over scalar stores), the rest
      // padded to B took rows of 10 float32 2.1x torch.logsumexp's time and
      // rows of 17-20 2x; walked an exp at a time by reduce, rows of 10
      // 4.3x; in short blocks only, rows of 40 1.2x ([1000, n], one thread;
      // NOTES.md, session 40).
      const int64_t q = n - i;
      const auto in = [&](int64_t k) {
        return k < q ? static_cast<float>(widen_one(p[(i + k) * stride])) : Op::block_pad();
      };
      const auto block = [&](auto vectors) {
        constexpr int K = decltype(vectors)::value;
        Float8 v[K];
        GPUREDUCE_CPU_UNROLL(8)
        for (int j = 0; j < K; ++j) {
          const int64_t k = 8 * j;
          v[j] = Float8{in(k), in(k + 1), in(k + 2), in(k + 3), in(k + 4), in(k + 5), in(k + 6), in(k + 7)};
        }
        acc = Op::combine(acc, Op::reduce_lanes(v));
      };
      if (q <= Op::kCpuShortBlock) {
        block(std::integral_constant<int, Op::kCpuShortBlock / 8>{});
      } else {
        block(std::integral_constant<int, B / 8>{});
      }
    } else {
      const int64_t r = n - i;
      for (int64_t k = 0; k < r; ++k) x[k] = widen_one(p[(i + k) * stride]);
      acc = Op::combine(acc, Op::reduce_block(x, static_cast<int>(r)));
    }
  }
  return L::with_first(acc);
}

// n inputs at `stride` folded into the C chains a: blocks of C vectors,
// then whole vectors into the first chains (indices known at compile time,
// so that the chains stay in registers), the last few into the last chain.
template <class L, int C, typename in_t>
GPUREDUCE_CPU_INLINE inline void fold_into_chains(typename L::vec (&a)[C], const in_t* p, int64_t n, int64_t stride) {
  constexpr int W = L::kWidth;
  int64_t i = 0;
  if (stride == 1) {
    // Long dense leaves prefetch their own inputs kLeafPrefetchBytes ahead
    // while they read, within the leaf (past its end may lie bytes that no
    // one reads: a slice's gaps).
    if constexpr (kVectorLanes<typename L::op, typename L::acc>) {
      constexpr int64_t kBlockBytes = C * W * int64_t(sizeof(in_t));
      constexpr int64_t kAhead = kLeafPrefetchBytes<in_t> / int64_t(sizeof(in_t));
      if (n >= kLeafPrefetchMinAheads * kAhead) {
        for (; i + C * W + kAhead <= n; i += C * W) {
          const char* ahead = reinterpret_cast<const char*>(p + i + kAhead);
          GPUREDUCE_CPU_UNROLL(8)
          for (int64_t b = 0; b < kBlockBytes; b += 64) __builtin_prefetch(ahead + b);
          GPUREDUCE_CPU_UNROLL(8)
          for (int c = 0; c < C; ++c) a[c] = L::fold(a[c], p + i + c * W, 1);
        }
      }
    }
    for (; i + C * W <= n; i += C * W) {
      GPUREDUCE_CPU_UNROLL(8)
      for (int c = 0; c < C; ++c) a[c] = L::fold(a[c], p + i + c * W, 1);
    }
  } else {
#if defined(GPUREDUCE_CPU_AVX2)
    // Leaves of at least kPickedMinLeaf 4-byte inputs 2 or 3 apart, in
    // lanes of their own type: each vector from its dense span
    // (Lanes::fold_picked) rather than element by element. A/B of two
    // builds on this project's machine, 2 threads (NOTES.md, session 76):
    // [22, 2479][:, ::2] float32 over dim 1 1.08x -> 0.55x of torch.sum,
    // [:, ::3] 1.06x -> 0.79x, [346, 200][:, ::2] 1.03x -> 0.69x; shorter
    // rows lost (rows of 9 at a stride of 2, [83454, 18][:, ::2] over dim
    // 1, 0.94x -> 1.04-1.12x; of 37, 0.73x -> 0.80x).
    if constexpr (kVectorLanes<typename L::op, typename L::acc> && std::is_same_v<in_t, typename L::acc> &&
                  sizeof(in_t) == 4 && W == 8) {
      if ((stride == 2 || stride == 3) && n >= kPickedMinLeaf) {
        for (; i + C * W <= n; i += C * W) {
          GPUREDUCE_CPU_UNROLL(8)
          for (int c = 0; c < C; ++c) a[c] = L::fold_picked(a[c], p + (i + c * W) * stride, stride);
        }
      }
    }
#endif
    for (; i + C * W <= n; i += C * W) {
      GPUREDUCE_CPU_UNROLL(8)
      for (int c = 0; c < C; ++c) a[c] = L::fold(a[c], p + (i + c * W) * stride, stride);
    }
  }
  GPUREDUCE_CPU_UNROLL(8)
  for (int c = 0; c < C - 1; ++c) {
    if (i + W <= n) {
      a[c] = L::fold(a[c], p + i * stride, stride);
      i += W;
    }
  }
  if (i < n) {
    a[C - 1] = stride == 1 && n >= W ? L::fold_last(a[C - 1], p + n - W, n - i)
                                     : L::fold_few(a[C - 1], p + i * stride, n - i, stride);
  }
}

// The C chains combined into one vector, halves first.
template <class L, int C>
GPUREDUCE_CPU_INLINE inline typename L::vec combine_chains(typename L::vec (&a)[C]) {
  GPUREDUCE_CPU_UNROLL(8)
  for (int w = C / 2; w >= 1; w /= 2) {
    GPUREDUCE_CPU_UNROLL(8)
    for (int c = 0; c < w; ++c) a[c] = L::combine(a[c], a[c + w]);
  }
  return a[0];
}

// A leaf folded into C chains of lanes, combined.
template <class L, int C, typename in_t>
GPUREDUCE_CPU_INLINE inline typename L::vec leaf_in_chains(const in_t* p, int64_t n, int64_t stride) {
  typename L::vec a[C];
  GPUREDUCE_CPU_UNROLL(8)
  for (int c = 0; c < C; ++c) a[c] = L::identity();
  fold_into_chains<L>(a, p, n, stride);
  return combine_chains<L>(a);
}

template <class L, typename in_t>
GPUREDUCE_CPU_INLINE inline typename L::vec leaf_lanes(const in_t* p, int64_t n, int64_t stride) {
  if constexpr (L::op::kCpuBlock > 0 && !kNativeLanes<typename L::op, typename L::acc>) {
    // An op that pads no block (var) takes every leaf in blocks, strided
    // and short ones too: its short block is a two-pass state of values in
    // registers, where Welford's update an input left 1.4e-13 of relative
    // error on five float64 inputs near 1e4 (torch's: none).
    if (!L::op::kPadsLastBlock || n >= kMinBlockLeaf) return leaf_blocks<L>(p, n, stride);
  }
  // Narrower lanes only where a leaf fills their chains at least once:
  // a row of 100 int8 compared in lanes of 32 (three vectors and a masked
  // tail) took 3x its time in int32 lanes ([100000, 100] over dim 1).
  if constexpr (kWalksNarrower<L, in_t>) {
    if (n >= kChains * Lanes<typename L::op, typename L::op::template leaf_walk_type<in_t>>::kWidth)
      return leaf_lanes_walked<L>(p, n, stride);
  }
  // An op of more chains than kChains (amax, amin) folds a leaf shorter
  // than one block of them (rows of a few vectors) into kChains: the rest
  // would be set to the identity, kept on the stack and folded in, for
  // nothing. A/B on this project's 2-core machine, 2 threads, alternating
  // processes, two to four runs a side (NOTES.md, session 80): amax of 18
  // passes of such rows 1.10x -> 0.80x of torch.amax's time in geomean
  // ([20000, 16] int64 2.25x -> 1.40x, [20000, 24] 1.48x -> 0.88x, float32
  // [20000, 33] 1.68x -> 1.16x). Their combines are exact: the same results,
  // up to which of -0 and +0, or of two NaNs, a tie returns.
  constexpr int C = L::op::kCpuChains;
  if constexpr (C > kChains) {
    if (n < C * L::kWidth) return leaf_in_chains<L, kChains>(p, n, stride);
  }
  return leaf_in_chains<L, C>(p, n, stride);
}

// Whether a leaf may be a run of rows of `row_len` inputs of in_t, each
// folded into the same chains as leaf_lanes folds one row (run_rows): an
// op whose leaves are its chains of lanes, not blocks (logsumexp, var), and
// rows its leaf would not walk in narrower lanes.
template <class L, typename in_t>
bool rows_share_chains(int64_t row_len) {
  if constexpr (L::op::kCpuBlock > 0 && !kNativeLanes<typename L::op, typename L::acc>) {
    return false;
  } else if constexpr (kWalksNarrower<L, in_t>) {
    return row_len < kChains * Lanes<typename L::op, typename L::op::template leaf_walk_type<in_t>>::kWidth;
  } else {
    return true;
  }
}

// Rows [0, nr) at `row_stride`, of `len` inputs at `stride` each, into
// one vector of lanes: every row folded into one set of chains.
template <class L, typename in_t>
GPUREDUCE_CPU_INLINE inline typename L::vec rows_lanes(const in_t* p, int64_t nr, int64_t row_stride, int64_t len,
                                                       int64_t stride) {
  constexpr int C = L::op::kCpuChains;
  typename L::vec a[C];
  GPUREDUCE_CPU_UNROLL(8)
  for (int c = 0; c < C; ++c) a[c] = L::identity();
  for (int64_t r = 0; r < nr; ++r) fold_into_chains<L>(a, p + r * row_stride, len, stride);
  return combine_chains<L>(a);
}

// Pairwise combination of a stream of vectors, as a binary counter: the
// vector pushed k-th (from 0) is combined with as many stacked ones as k has
// trailing one bits. The shape alone fixes the tree, and the rounding error
// grows like log n, as with a recursive split.
template <class L, int kLevels>
struct PairwiseStack {
  typename L::vec level[kLevels];
  int top = 0;
  int64_t count = 0;

  void push(typename L::vec v) {
    for (int64_t k = count; k & 1; k >>= 1) v = L::combine(level[--top], v);
    level[top++] = v;
    ++count;
  }
  typename L::vec result() const {
    if (top == 0) return L::identity();
    typename L::vec v = level[top - 1];
    for (int i = top - 2; i >= 0; --i) v = L::combine(level[i], v);
    return v;
  }
};

// The value an output gets: the op's projection (of an accumulator to its
// own type, itself, as a pass that writes partials needs: reduce_ops.h),
// after the pass's division (ReducePass::projection, project_output).
template <class Op, typename out_t, typename acc_t>
out_t finish(acc_t a, const Projection& projection) {
#if defined(GPUREDUCE_CPU_AVX2)
  if constexpr (std::is_same_v<out_t, c10::Half> && std::is_same_v<acc_t, float>) {
    // F16C's conversion, rounding to nearest even as c10's does: c10's
    // header is compiled for the baseline, where it converts in software
    // (half the time of [30, 32064] float16 over dim 0 went to it). A
    // float16 projection is the float one rounded (reduce_ops.h).
    return c10::Half(_cvtss_sh(project_output<Op, float>(a, projection), _MM_FROUND_TO_NEAREST_INT),
                     c10::Half::from_bits());
  }
#endif
  return project_output<Op, out_t>(a, projection);
}

// An op's accumulator as one value of a PairwiseStack (or a SideBySide).
template <class Op>
struct Scalar {
  using vec = typename Op::acc_type;
  static vec identity() { return Op::identity(); }
  static vec combine(vec a, vec b) { return Op::combine(a, b); }
};

// Leaves per task of a rows pass: kLeavesPerTask, or fewer (a power of two)
// where a pass of 64K elements or more would otherwise have fewer than 16
// tasks, so that the threads get even shares: the 5 tasks of a [134365]
// int64 full sum went 3 to one thread and 2 to the other, 1.18x torch.sum's
// time on 2 threads. Smaller passes take as few tasks as kLeavesPerTask
// allows, of equal leaves (a row of 33486 float32, 9 leaves, was cut 8 and
// 1). Like the leaves, it depends on the shape alone.
inline int64_t leaves_per_task(int64_t n_out, int64_t n_leaves, int64_t elements) {
  int64_t k = kLeavesPerTask;
  if (elements < 65536) {
    if (n_leaves <= k) return k;
    const int64_t tasks = (n_leaves + k - 1) / k;
    return (n_leaves + tasks - 1) / tasks;
  }
  while (k > 1 && n_out * ((n_leaves + k - 1) / k) < 16) k /= 2;
  return k;
}

// `outer` with its dims reordered by output stride, smallest first, so that
// a run of linear indices is a run of adjacent outputs: a task then writes
// outputs of its own, not every few of a permuted output's, whose cache
// lines the other threads write too.
inline OuterIndexer in_output_order(const OuterIndexer& outer) {
  int order[kMaxDims];
  for (int d = 0; d < outer.ndim; ++d) order[d] = d;
  std::stable_sort(order, order + outer.ndim,
                   [&](int a, int b) { return outer.out_strides[a] < outer.out_strides[b]; });
  OuterIndexer sorted = outer;
  for (int d = 0; d < outer.ndim; ++d) {
    sorted.sizes[d] = outer.sizes[order[d]];
    sorted.in_strides[d] = outer.in_strides[order[d]];
    sorted.out_strides[d] = outer.out_strides[order[d]];
  }
  return sorted;
}

// The order in which a rows pass of one leaf an output takes outputs that
// lie under a general indexer: the input's (the indexer's own, memory
// order), which reads the rows as they lie, unless the threads' shares of
// its outermost dim, which at::parallel_for's runs of outputs split, would
// be under kSharedOutputsMinSpan bytes of outputs wide, or the pass reads
// under kInputOrderMinBytes (in cache, the reads' order matters less than
// the output's runs: [62, 50, 4, 2].permute(2, 0, 1, 3) float32 over dim 3,
// 99 KB, took 0.30x torch.sum's time in the output's order, 0.56x in the
// input's); then the output's. In the input's order two threads wrote
// every few outputs of the same lines of [9, 3, 5, 7, 40].permute(3, 2, 1,
// 0, 4) over dim 4 (shares of 18 bytes: 1.85x torch.sum's time on two
// threads, 0.78x on one), and in the
// output's, rows of a transposed input 1700 bytes apart were each a miss
// ([3331, 25, 17].transpose(0, 1) float32 over dim 2 1.20x, shares of 6.6
// KB; 0.60x in the input's). A/B of the 4 KB rule alone on this
// project's 2-core machine, 2 threads, two runs a side, processes
// alternating (NOTES.md, session 75), 60 permuted inputs summed over their
// contiguous dim: 0.434x -> 0.430x in geomean, [3948, 11,
// 12].permute(1, 0, 2) float64 0.98x -> 0.71x, [20000, 25, 33] float32
// transposed 0.73x -> 0.21x (alone), the same bits; the one loss, that
// 99 KB pass, is why inputs under 1 MB keep the output's order.
constexpr int64_t kSharedOutputsMinSpan = 4096;
constexpr int64_t kInputOrderMinBytes = int64_t(1) << 20;
inline OuterIndexer rows_outputs_order(const OuterIndexer& outer, int64_t out_bytes, int64_t in_bytes) {
  if (outer.ndim == 0 || in_bytes < kInputOrderMinBytes) return in_output_order(outer);
  const int d = outer.ndim - 1;
  const int64_t share = static_cast<int64_t>(outer.sizes[d].divisor) * std::abs(outer.out_strides[d]) * out_bytes /
                        std::max(1, at::get_num_threads());
  return share >= kSharedOutputsMinSpan ? outer : in_output_order(outer);
}

// The offsets of outputs linear, linear + 1, ... of an OuterIndexer, stepped
// one output at a time: a carry from dim to dim where OuterIndexer::offsets
// divides the index by every dim's size.
class OuterCursor {
 public:
  OuterCursor(const OuterIndexer& outer, int64_t linear) : outer_(outer) {
    outer_.offsets(linear, in_off, out_off);
    for (int d = 0; d < outer_.ndim; ++d) {
      const int64_t size = static_cast<int64_t>(outer_.sizes[d].divisor);
      index_[d] = linear % size;
      linear /= size;
    }
  }
  void next() { carry_from(0); }
  // The outputs from this one to the end of its run along dim 0, which lie
  // at in_strides[0] and out_strides[0] from it; and a step past n <=
  // run_left() of them. A caller that loops over the run steps each output
  // by an add rather than by next()'s carry test.
  int64_t run_left() const {
    return outer_.ndim == 0 ? 1 : static_cast<int64_t>(outer_.sizes[0].divisor) - index_[0];
  }
  void skip(int64_t n) {
    if (outer_.ndim == 0) return;
    index_[0] += n - 1;
    in_off += (n - 1) * outer_.in_strides[0];
    out_off += (n - 1) * outer_.out_strides[0];
    carry_from(0);
  }
  int64_t in_off = 0, out_off = 0;

 private:
  void carry_from(int first) {
    for (int d = first; d < outer_.ndim; ++d) {
      in_off += outer_.in_strides[d];
      out_off += outer_.out_strides[d];
      if (++index_[d] < static_cast<int64_t>(outer_.sizes[d].divisor)) return;
      const int64_t size = static_cast<int64_t>(outer_.sizes[d].divisor);
      in_off -= size * outer_.in_strides[d];
      out_off -= size * outer_.out_strides[d];
      index_[d] = 0;
    }
  }
  const OuterIndexer& outer_;
  int64_t index_[kMaxDims] = {};
};

// Rows: each output's rows are cut into leaves; leaves are grouped into tasks
// of a count fixed by the shape, tasks run in parallel, and the sums are
// combined pairwise. Each output is `repeats` copies of its rows' reduction
// (p.n_rows rows of p.row_len), its accumulator combined with itself by
// doubling (run_rows).
template <class Op, typename in_t, typename out_t>
void run_repeated_rows(const ReducePass& p, const in_t* in, out_t* out, int64_t repeats) {
  using acc_t = typename Op::acc_type;
  using L = Lanes<Op, acc_t>;
  const auto output = [&p, repeats](acc_t a) GPUREDUCE_CPU_INLINE {
    return finish<Op, out_t>(repeats > 1 ? repeated<Op>(a, repeats) : a, p.projection);
  };
  // Rows shorter than a vector, several to an output, are not a leaf each
  // (a leaf's lanes to set up and fold for a few elements: rows of 2
  // bfloat16, 1129 to each of 10 outputs, of [1129, 10, 2] transposed and
  // summed over (0, 2), took 1.1-1.2x torch.sum's time): a leaf is then a
  // run of rows, each folded element by element into one of kChains
  // scalar chains in turn, a chain taking about kScalarChainElements.
  const bool scalar_rows = p.row_len < L::kWidth && p.n_rows > 1;
  // Rows of one leaf each that follow one another densely are one stream,
  // which a task reads kLeafPrefetchBytes ahead across its rows (below), as
  // a long leaf reads its own row: rows of up to kStreamPrefetchMaxRowBytes,
  // not lanes of scalars (as in leaf_lanes: complex64 lost there).
  const bool stream_prefetch = kVectorLanes<Op, acc_t> && p.row_len * int64_t(sizeof(in_t)) <= kStreamPrefetchMaxRowBytes;
  constexpr int64_t leaf = kRowLeaf<L, in_t>;
  // Rows of a vector up to half a leaf, several to an output, are not a
  // leaf each either: a leaf is a run of them, up to a leaf's inputs, each
  // row folded into the same chains (rows_lanes). A leaf a row (its chains
  // set up and combined, a push onto the pairwise stack, whose loop's trip
  // count no predictor follows) took 6.6 ns a row of 20 float32: [160, 7,
  // 20] over (0, 2) 7.4 us, torch.sum 6.8.
  const bool row_runs = !scalar_rows && p.n_rows > 1 && 2 * p.row_len <= leaf && rows_share_chains<L, in_t>(p.row_len);
  const int64_t rows_per_leaf =
      row_runs ? leaf / p.row_len : kChains * std::max<int64_t>(1, kScalarChainElements / p.row_len);
  const int64_t leaves_per_row = (p.row_len + leaf - 1) / leaf;
  const int64_t n_leaves =
      scalar_rows || row_runs ? (p.n_rows + rows_per_leaf - 1) / rows_per_leaf : p.n_rows * leaves_per_row;
  const int64_t task_leaves = leaves_per_task(p.n_out, n_leaves, p.n_out * p.n_rows * p.row_len);
  const int64_t tasks_per_out = (n_leaves + task_leaves - 1) / task_leaves;

  // Rows [r0, r0 + nr) of scalar_rows in kChains chains, combined pairwise.
  auto scalar_rows_leaf = [&](const in_t* base, int64_t r0, int64_t nr) {
    acc_t c[kChains];
    GPUREDUCE_CPU_UNROLL(4)
    for (int k = 0; k < kChains; ++k) c[k] = Op::identity();
    const int64_t len = p.row_len, elem = p.elem_stride, step = p.row_stride;
    const in_t* x = base + r0 * step;
    int64_t r = 0;
    for (; r + kChains <= nr; r += kChains) {
      GPUREDUCE_CPU_UNROLL(4)
      for (int k = 0; k < kChains; ++k) {
        for (int64_t j = 0; j < len; ++j) c[k] = fold<Op>(c[k], widen_one(x[k * step + j * elem]));
      }
      x += kChains * step;
    }
    for (; r < nr; ++r, x += step) {
      for (int64_t j = 0; j < len; ++j) c[0] = fold<Op>(c[0], widen_one(x[j * elem]));
    }
    return Op::combine(Op::combine(c[0], c[1]), Op::combine(c[2], c[3]));
  };
  static_assert(kChains == 4, "scalar_rows_leaf combines four chains");

  // Leaves [first, first + count) of one output, combined pairwise.
  auto sum_leaves = [&](const in_t* base, int64_t first, int64_t count) {
    if (scalar_rows) {
      PairwiseStack<Scalar<Op>, 8> stack;  // 2^8 > kLeavesPerTask
      for (int64_t l = first; l < first + count; ++l) {
        const int64_t r0 = l * rows_per_leaf;
        stack.push(scalar_rows_leaf(base, r0, std::min(rows_per_leaf, p.n_rows - r0)));
      }
      return stack.result();
    }
    PairwiseStack<L, 8> stack;  // 2^8 > kLeavesPerTask
    if (row_runs) {
      for (int64_t l = first; l < first + count; ++l) {
        const int64_t r0 = l * rows_per_leaf;
        stack.push(rows_lanes<L>(base + r0 * p.row_stride, std::min(rows_per_leaf, p.n_rows - r0), p.row_stride,
                                 p.row_len, p.elem_stride));
      }
      return L::total(stack.result());
    }
    int64_t row = first / leaves_per_row, start = (first % leaves_per_row) * leaf;
    for (int64_t l = 0; l < count; ++l) {
      const int64_t len = std::min(leaf, p.row_len - start);
      stack.push(leaf_lanes<L>(base + row * p.row_stride + start * p.elem_stride, len, p.elem_stride));
      start += leaf;
      if (start >= p.row_len) {
        start = 0;
        ++row;
      }
    }
    return L::total(stack.result());
  };

  if (p.n_rows == 1 && leaves_per_row == 1) {
    // One leaf per output (rows of up to kLeaf elements, the usual short
    // rows): the leaf straight into the output, without the stack.
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, p.row_len));
    // Rows of up to a vector are folded element by element: lanes cost more
    // to set up and fold together than such a row has elements ([22, 3,
    // 224, 224] channels_last float16 over dim 1 took 1.35x torch.sum's
    // time). They have a loop of their own, with nothing else in it (no
    // prefetch, the Projection tested once, a run of outputs along the
    // indexer's first dim stepped by adds): through the loop below, whose
    // body holds the lanes' code for longer rows and the stream's
    // prefetches, 278037 rows of 3 float32 took 2.0-4.7 ns a row on one
    // thread (from build to build of the same code), 1.4 in this loop. A/B
    // on this project's 2-core machine, 2 threads, two runs a side,
    // processes alternating (NOTES.md, session 75): 60 fresh passes of rows
    // of 2 to 18 elements, one an output, 0.489x -> 0.466x of torch.sum's
    // time in geomean; [278037, 3] float32 0.63x -> 0.37x, [43, 768, 2, 2]
    // uint8 over (2, 3) 1.07x -> 0.69x, [54, 79, 4] int64 over dim 2 1.54x
    // -> 0.68x, amax of [78952, 3] int64 1.05x -> 0.74x. Rows below two
    // vectors lost (amax of [19, 38085, 12] bfloat16 0.79x -> 1.16x).
    // Rows of 8-byte elements into 8-byte lanes of plain numbers (sums,
    // extremes, products) are taken this way up to four vectors, 15
    // elements: a vector's fold and the lanes' total cost more there than a
    // scalar add or compare an element. A/B on this project's 2-core
    // machine, 2 threads, two runs a side, processes alternating (NOTES.md,
    // session 79), amax and sum of int64 and float64 rows of 5 to 16, dense
    // and at a stride of 2, 40 passes with rows up to 16 taken: 0.88x ->
    // 0.52x of torch's time in geomean; [200000, 5] int64 amax 2.24x ->
    // 0.73x, [20000, 13] 1.13x -> 0.50x, float64 sum [20000, 8] 1.12x ->
    // 0.38x; slower, float64 amax of rows of 12 and 13 (0.65x -> 0.73x,
    // 0.62x -> 0.72x) and of 16 (1.85x -> 2.51x, left to the lanes).
    constexpr int64_t kElementRowsMax =
        kNativeLanes<Op, acc_t> && sizeof(in_t) == 8 && sizeof(acc_t) == 8 ? 4 * L::kWidth - 1 : L::kWidth;
    if (p.row_len <= kElementRowsMax) {
      auto each_row = [&](auto finish_row) GPUREDUCE_CPU_INLINE {
        // n outputs from x and y on, at in_step and out_step, their
        // elements at `stride` (a constant 1 where it is 1).
        auto fold_run = [&](const in_t* x, out_t* y, int64_t n, int64_t in_step, int64_t out_step,
                            int64_t stride) GPUREDUCE_CPU_INLINE {
          const int64_t row_len = p.row_len;
          for (int64_t j = 0; j < n; ++j) {
            const in_t* r = x + j * in_step;
            acc_t acc = Op::identity();
            for (int64_t k = 0; k < row_len; ++k) acc = fold<Op>(acc, widen_one(r[k * stride]));
            y[j * out_step] = finish_row(acc);
          }
        };
        auto fold_any_stride = [&](const in_t* x, out_t* y, int64_t n, int64_t in_step,
                                   int64_t out_step) GPUREDUCE_CPU_INLINE {
          if (p.elem_stride == 1) {
            fold_run(x, y, n, in_step, out_step, 1);
          } else {
            fold_run(x, y, n, in_step, out_step, p.elem_stride);
          }
        };
        if (p.outer.ndim == 1) {
          at::parallel_for(0, p.n_out, grain, [&](int64_t b, int64_t e) {
            const int64_t in_step = p.outer.in_strides[0], out_step = p.outer.out_strides[0];
            fold_any_stride(in + b * in_step, out + b * out_step, e - b, in_step, out_step);
          });
          return;
        }
        const OuterIndexer by_output =
            rows_outputs_order(p.outer, sizeof(out_t), p.n_out * p.row_len * int64_t(sizeof(in_t)));
        at::parallel_for(0, p.n_out, grain, [&](int64_t b, int64_t e) {
          const int64_t in_step = by_output.in_strides[0], out_step = by_output.out_strides[0];
          OuterCursor cursor(by_output, b);
          for (int64_t o = b; o < e;) {
            const int64_t n = std::min(e - o, cursor.run_left());
            fold_any_stride(in + cursor.in_off, out + cursor.out_off, n, in_step, out_step);
            cursor.skip(n);
            o += n;
          }
        });
      };
      if (repeats == 1 && p.projection.is_identity()) {
        each_row([](acc_t a) GPUREDUCE_CPU_INLINE { return finish<Op, out_t>(a, Projection{}); });
      } else {
        each_row(output);
      }
      return;
    }
    auto row_total = [](const in_t* x, int64_t row_len, int64_t elem_stride) GPUREDUCE_CPU_INLINE {
      return L::total(leaf_lanes<L>(x, row_len, elem_stride));
    };
    if (p.outer.ndim == 1) {  // outputs at one stride: no general indexer
      at::parallel_for(0, p.n_out, grain, [&](int64_t b, int64_t e) {
        // The geometry in locals of this loop: read through `p` or the
        // closure, which int64 outputs may alias, it was reloaded and the
        // layout tested again after every store (rows of 34 int64 took
        // 1.2x torch.sum's time).
        const int64_t row_len = p.row_len, elem_stride = p.elem_stride;
        const int64_t in_step = p.outer.in_strides[0], out_step = p.outer.out_strides[0];
        const in_t* const x = in;
        out_t* const y = out;
        // A dense stream of rows (stream_prefetch), prefetched
        // kLeafPrefetchBytes ahead across the rows of this task. On this
        // 2-core machine, 2 threads, ours over torch.sum's time, each side
        // alternating in one process (NOTES.md, session 72): rows of 16 to
        // 1000 elements of 44 and 126 MB, 38 passes, 0.04-1.18 -> 0.04-0.99
        // ([1966080, 16] float32 0.92 -> 0.41, int64 [983040, 16] 1.18 ->
        // 0.68, [62914, 1000] bfloat16 1.03 -> 0.51, [688128, 16] float32
        // 0.79 -> 0.60); amax of [1000000, 16] float32 0.93 -> 0.57. Rows
        // of 110 to 267 float32 of 19 to 49 MB, at torch.sum's speed either
        // way, 0.5-2% slower (0.98 -> 0.99). Rows of 3 KB or more
        // lost at 42 MB ([10485, 1000] float32 0.95 -> 1.19, [10240, 2048]
        // bfloat16 1.00 -> 1.37), where the hardware prefetchers follow each
        // row on their own. The same bits.
        if (stream_prefetch && elem_stride == 1 && in_step == row_len) {
          StreamPrefetch<in_t> prefetch(x, in_step, b, e);
          int64_t o = b;
          if constexpr (kTotalsOfFour<L> && sizeof(in_t) == 8) {
            // Rows of up to kTotalsOfFourMaxVectors vectors four at a time,
            // their totals folded together (Lanes::totals4), where a row's
            // total is much of its time. A/B on this project's 2-core
            // machine, 2 threads, alternating processes, two runs a side
            // (NOTES.md, session 80), int64 and float64 sum and amax of
            // [20000, n]: rows of 16-32 int64 1.48x -> 1.31x of torch.sum's
            // time (n = 16), 1.59x -> 1.18x (32), amax 1.70x -> 1.51x (32),
            // float64 amax 0.78x -> 0.62x (16), float64 sums level
            // (0.94-1.25x -> 0.96-1.17x); longer rows lost (float64 amax of
            // 64 1.20x -> 1.37x, int64 of 128 0.64x -> 0.84x). The same
            // bits.
            if (row_len <= kTotalsOfFourMaxVectors * L::kWidth) {
              for (; o + 4 <= e; o += 4) {
                prefetch.through(o + 3);
                typename L::vec v[4];
                GPUREDUCE_CPU_UNROLL(4)
                for (int r = 0; r < 4; ++r) v[r] = leaf_lanes<L>(x + (o + r) * in_step, row_len, 1);
                const typename L::vec t = L::totals4(v);
                y[o * out_step] = output(t[0]);
                y[(o + 1) * out_step] = output(t[2]);
                y[(o + 2) * out_step] = output(t[1]);
                y[(o + 3) * out_step] = output(t[3]);
              }
            }
          }
          for (; o < e; ++o) {
            prefetch.through(o);
            y[o * out_step] = output(row_total(x + o * in_step, row_len, elem_stride));
          }
          return;
        }
        for (int64_t o = b; o < e; ++o)
          y[o * out_step] = output(row_total(x + o * in_step, row_len, elem_stride));
      });
      return;
    }
    // (Through the stack, rows of 4 float16 of a .step view, 565k of them,
    // took 2.1x torch.sum's time.) The outputs' offsets are stepped from
    // the task's first, a carry from dim to dim, rather than divided out of
    // each output's index: with a division per dim and output, the rows of
    // 152 float32 of [25, 60, 2, 152].transpose(0, 3) over dim 0 (3000
    // outputs over three dims) took 1.15x torch.sum's time, the same rows
    // of [3000, 152] over dim 1 0.79x (NOTES.md, session 65). They are
    // taken in the order rows_outputs_order picks.
    const OuterIndexer by_output =
        rows_outputs_order(p.outer, sizeof(out_t), p.n_out * p.row_len * int64_t(sizeof(in_t)));
    at::parallel_for(0, p.n_out, grain, [&](int64_t b, int64_t e) {
      OuterCursor cursor(by_output, b);
      for (int64_t o = b; o < e; ++o, cursor.next())
        out[cursor.out_off] = output(row_total(in + cursor.in_off, p.row_len, p.elem_stride));
    });
    return;
  }
  if (tasks_per_out == 1) {
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, p.n_rows * p.row_len));
    at::parallel_for(0, p.n_out, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        int64_t in_off, out_off;
        p.outer.offsets(o, in_off, out_off);
        out[out_off] = output(sum_leaves(in + in_off, 0, n_leaves));
      }
    });
    return;
  }
  std::vector<acc_t> partial(static_cast<size_t>(p.n_out * tasks_per_out));
  // At least 32K elements to a thread, as in the other paths: with a task
  // to a thread, a .step view of [55, 22, 49] float32 (28 rows of 1078, two
  // tasks) woke the second thread for 3 us of work, 1.05-1.5x torch.sum's
  // time.
  const int64_t task_elements = (p.n_rows * p.row_len + tasks_per_out - 1) / tasks_per_out;
  const int64_t grain = std::max<int64_t>(1, 32768 / task_elements);
  at::parallel_for(0, p.n_out * tasks_per_out, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / tasks_per_out, k = t % tasks_per_out;
      int64_t in_off, out_off;
      p.outer.offsets(o, in_off, out_off);
      const int64_t first = k * task_leaves;
      partial[t] = sum_leaves(in + in_off, first, std::min(task_leaves, n_leaves - first));
    }
  });
  for (int64_t o = 0; o < p.n_out; ++o) {
    int64_t in_off, out_off;
    p.outer.offsets(o, in_off, out_off);
    out[out_off] = output(pairwise_combine<Op>(partial.data() + o * tasks_per_out, tasks_per_out));
  }
}

// A rows pass. Rows of stride 0 (an expanded input's repeats, which the
// planner reads as they are where the input is small: reduce_plan.cpp)
// are one row: it is reduced once and its accumulator combined with
// itself, rather than each copy read again (a float32 [13] expanded to
// [13, 1024] and summed whole read 1024 rows of 13 in 9.4 us, torch.sum
// 3.9; NOTES.md, session 66).
template <class Op, typename in_t, typename out_t>
void run_rows(const ReducePass& p, const in_t* in, out_t* out) {
  if (p.n_rows > 1 && p.row_stride == 0) {
    ReducePass one = p;
    one.n_rows = 1;
    run_repeated_rows<Op>(one, in, out, p.n_rows);
    return;
  }
  run_repeated_rows<Op>(p, in, out, 1);
}

// The offsets of a columns pass's rows r0, r0 + 1, ... in order, with the
// inner reduced dim's index carried along rather than divided out of r for
// each row (a 64-bit division per row of two bfloat16 columns: [100, 11,
// 102, 2] over (0, 2) took 2.1x torch.sum's time).
class ColumnRows {
 public:
  ColumnRows(const ReducePass& p, int64_t r0)
      : n_(p.n_reduce), step_(p.reduce_stride), wrap_(p.reduce_outer_stride - (p.n_reduce - 1) * p.reduce_stride),
        i_(r0 % p.n_reduce), off_(p.column_row_offset(r0)) {}
  int64_t next() {
    const int64_t o = off_;
    if (++i_ == n_) {
      i_ = 0;
      off_ += wrap_;
    } else {
      off_ += step_;
    }
    return o;
  }

 private:
  int64_t n_, step_, wrap_, i_, off_;
};

// Columns are reduced a tile at a time: kColVectors vectors of lanes side by
// side (64 float32 columns, 32 float64 or int64), each down the tile's rows.
constexpr int kColVectors = 8;
template <class L>
constexpr int64_t kColWidth = kColVectors * L::kWidth;

// Sums of K things side by side, as one value of a PairwiseStack: K vectors
// of lanes (a tile of columns) or K scalar accumulators (narrow and stream
// leaves). E gives the element type (vec), its identity and its combine.
template <class E, int K>
struct SideBySide {
  struct vec {
    typename E::vec v[K];
  };
  static vec identity() {
    vec r;
    GPUREDUCE_CPU_UNROLL(8)
    for (int k = 0; k < K; ++k) r.v[k] = E::identity();
    return r;
  }
  static vec combine(vec a, vec b) {
    GPUREDUCE_CPU_UNROLL(8)
    for (int k = 0; k < K; ++k) a.v[k] = E::combine(a.v[k], b.v[k]);
    return a;
  }
};

// Whether a tile's columns of type in_t, where 2 or 3 apart, are read by
// Lanes::fold_picked.
template <class L, typename in_t>
constexpr bool kPicksColumns = [] {
  if constexpr (requires { L::template kPicks<in_t>; }) {
    return L::template kPicks<in_t>;
  } else {
    return false;
  }
}();
// Whether a tile's columns of type in_t at col_stride are read by
// Lanes::fold_picked: 2 or 3 apart, in lanes that pick them.
template <class L, typename in_t>
constexpr bool picks_columns(int64_t col_stride) {
  return kPicksColumns<L, in_t> && (col_stride == 2 || col_stride == 3);
}

// A leaf of nr (<= its kind's leaf rows) rows of a tile of NV vectors of
// columns, the rows taken from `rows`; NV a template argument so that the
// accumulators stay in registers (with a run-time count gcc kept them in
// memory). The tile is at least one vector wide; only its last vector may
// be partly filled: `last` columns (1..W).
template <class L, int NV, typename in_t>
GPUREDUCE_CPU_INLINE inline typename SideBySide<L, NV>::vec column_tile_leaf(
    const in_t* base, int64_t width, int64_t col_stride, ColumnRows& rows, int64_t nr, int64_t prefetch_bytes = 0) {
  constexpr int W = L::kWidth;
  // Tiles of up to four vectors fold successive rows into several sets of
  // accumulators in turn (four sets up to two vectors, two up to four):
  // with one set, each row's adds waited on the last row's (3 cycles a row
  // whatever the width; [2, 11100, 9] float32 over dim 1 took 2.1x
  // torch.sum's time).
  constexpr int kSets = NV <= 2 ? 4 : NV <= 4 ? 2 : 1;
  const int64_t last = width - (NV - 1) * W;
  typename SideBySide<L, NV>::vec a[kSets];
  GPUREDUCE_CPU_UNROLL(4)
  for (int s = 0; s < kSets; ++s) a[s] = SideBySide<L, NV>::identity();
  // The rows, folded by fold_row: one loop for dense columns and one for
  // strided ones, so that the loop tests no layout per row (with one loop
  // for both, [1, 4096, 8] float32 over dim 1 took 2.4x torch.sum's time:
  // four branches a row, for one vector add).
  auto walk_rows = [&](auto fold_row) GPUREDUCE_CPU_INLINE {
    int64_t r = 0;
    for (; r + kSets <= nr; r += kSets) {
      GPUREDUCE_CPU_UNROLL(4)
      for (int s = 0; s < kSets; ++s) fold_row(a[s].v, base + rows.next());
    }
    for (; r < nr; ++r) fold_row(a[0].v, base + rows.next());
  };
  if (col_stride == 1 && last == W) {
    // A full tile's vectors in address order. With the last one's masked
    // load (below), gcc issued it first in each row, and the prefetchers
    // took the rows for descending streams: [65, 16, 8000] float32 over dim
    // 1 ran 1.5x the time of the same loop in address order (2026-11-25).
    if (prefetch_bytes != 0) {
      // Each row's tile `prefetch_bytes` further on (column_leaves_reduce).
      constexpr int kRowBytes = NV * W * static_cast<int>(sizeof(in_t));
      walk_rows([&](typename L::vec(&acc)[NV], const in_t* row) GPUREDUCE_CPU_INLINE {
        // As an address, not a pointer: the last rows' and tiles' prefetches
        // reach past the tensor (a prefetch does not fault).
        const uintptr_t ahead = reinterpret_cast<uintptr_t>(row) + prefetch_bytes;
        GPUREDUCE_CPU_UNROLL(4)
        for (int b = 0; b < kRowBytes; b += 64) __builtin_prefetch(reinterpret_cast<const void*>(ahead + b));
        GPUREDUCE_CPU_UNROLL(8)
        for (int k = 0; k < NV; ++k) acc[k] = L::fold(acc[k], row + k * W, 1);
      });
    } else {
      walk_rows([&](typename L::vec(&acc)[NV], const in_t* row) GPUREDUCE_CPU_INLINE {
        GPUREDUCE_CPU_UNROLL(8)
        for (int k = 0; k < NV; ++k) acc[k] = L::fold(acc[k], row + k * W, 1);
      });
    }
  } else if (col_stride == 1) {
    // The last vector loaded to end at the tile's last column, its lanes
    // before the tile's start masked.
    walk_rows([&](typename L::vec(&acc)[NV], const in_t* row) GPUREDUCE_CPU_INLINE {
      GPUREDUCE_CPU_UNROLL(8)
      for (int k = 0; k < NV - 1; ++k) acc[k] = L::fold(acc[k], row + k * W, 1);
      acc[NV - 1] = L::fold_last(acc[NV - 1], row + width - W, last);
    });
  } else if (picks_columns<L, in_t>(col_stride)) {
    // Columns of the lanes' own 4- or 8-byte type 2 or 3 apart: each
    // vector from its dense span (Lanes::fold_picked), not element by
    // element; a part vector (a tile of two vectors or more) by loads
    // ending at its last column, into its top lanes. A/B on this project's
    // 2-core machine, 2 threads, two runs a side, processes alternating
    // (NOTES.md, session 77), with the planner's rule (superset_columns_span):
    // 48 random strided columns passes 0.438x -> 0.404x of torch's time in
    // geomean, the same bits as element loads; [139, 115][:, ::3] float64
    // over dim 0 1.46x -> 0.91x, float32 1.33x -> 0.78x.
    if constexpr (kPicksColumns<L, in_t>) {
      walk_rows([&](typename L::vec(&acc)[NV], const in_t* row) GPUREDUCE_CPU_INLINE {
        GPUREDUCE_CPU_UNROLL(8)
        for (int k = 0; k < NV - 1; ++k) acc[k] = L::fold_picked(acc[k], row + k * W * col_stride, col_stride);
        if (last == W) {
          acc[NV - 1] = L::fold_picked(acc[NV - 1], row + (NV - 1) * W * col_stride, col_stride);
        } else if constexpr (NV > 1) {
          acc[NV - 1] = L::fold_picked_last(acc[NV - 1], row + (width - W) * col_stride, col_stride, last);
        } else {
          acc[NV - 1] = L::fold_lanes(acc[NV - 1], row, last, col_stride);
        }
      });
    }
  } else {
    walk_rows([&](typename L::vec(&acc)[NV], const in_t* row) GPUREDUCE_CPU_INLINE {
      GPUREDUCE_CPU_UNROLL(8)
      for (int k = 0; k < NV - 1; ++k) acc[k] = L::fold(acc[k], row + k * W * col_stride, col_stride);
      if (last == W) {
        acc[NV - 1] = L::fold(acc[NV - 1], row + (NV - 1) * W * col_stride, col_stride);
      } else {
        acc[NV - 1] = L::fold_lanes(acc[NV - 1], row + (NV - 1) * W * col_stride, last, col_stride);
      }
    });
  }
  // The sets folded pairwise: (0 + 1) + (2 + 3).
  GPUREDUCE_CPU_UNROLL(4)
  for (int w = kSets / 2; w >= 1; w /= 2) {
    GPUREDUCE_CPU_UNROLL(4)
    for (int s = 0; s < w; ++s) a[s] = SideBySide<L, NV>::combine(a[s], a[s + w]);
  }
  return a[0];
}

// A leaf of N columns, fewer than a vector holds: one scalar accumulator
// per column, N a template argument so that they stay in registers. (With a
// run-time width and a guard per column, [3, 32282, 1, 5] float32 over dim 1
// went 74 -> 144 us against torch.sum's 73.)
template <class L, int N, typename in_t>
GPUREDUCE_CPU_INLINE inline typename SideBySide<Scalar<typename L::op>, N>::vec narrow_column_leaf(
    const in_t* base, int64_t col_stride, ColumnRows& rows, int64_t nr) {
  auto acc = SideBySide<Scalar<typename L::op>, N>::identity();
  for (int64_t r = 0; r < nr; ++r) {
    const in_t* row = base + rows.next();
    GPUREDUCE_CPU_UNROLL(8)
    for (int k = 0; k < N; ++k) acc.v[k] = fold<typename L::op>(acc.v[k], row[k * col_stride]);
  }
  return acc;
}

// N columns (fewer than two vectors' lanes, not one vector's) whose rows
// lie end to end (dense, one reduced dim): the leaf's rows are one stream
// of nr * N elements from row r0, read a period of P = lcm(N, W) elements
// (P / W vectors) at a time, so that lane k of vector j always holds column
// (j * W + k) % N; the lanes are folded into their columns at the end, and
// the rows short of a whole period are added one by one. A row at a time,
// [6, 2243, 7] bfloat16 over dim 1 took 1.5x torch.sum's time; [2, 11100,
// 9] float32 (a vector and an overlapping one per row) 1.4-2.1x, in the
// stream 1.05x (session 16).
template <int N, int W>
constexpr int kStreamPeriod = N / std::gcd(N, W) * W;

template <class L, int N, typename in_t>
GPUREDUCE_CPU_INLINE inline typename SideBySide<Scalar<typename L::op>, N>::vec stream_column_leaf(
    const in_t* base, int64_t r0, int64_t nr) {
  constexpr int W = L::kWidth, P = kStreamPeriod<N, W>, NV = P / W, kRowsPerPeriod = P / N;
  using op = typename L::op;
  typename L::vec a[NV];
  GPUREDUCE_CPU_UNROLL(16)
  for (int j = 0; j < NV; ++j) a[j] = L::identity();
  const in_t* s = base + r0 * N;
  const int64_t periods = nr / kRowsPerPeriod;
  for (int64_t q = 0; q < periods; ++q) {
    GPUREDUCE_CPU_UNROLL(16)
    for (int j = 0; j < NV; ++j) a[j] = L::fold(a[j], s + q * P + j * W, 1);
  }
  auto acc = SideBySide<Scalar<op>, N>::identity();
  // The P lanes into their columns, only where a period was read: for
  // leaves of fewer rows (a few rows an output) the fold of identities was
  // most of the time ([132, 2, 15] float32 over dim 1: 18 us against
  // torch.sum's 9, 2026-11-25).
  if (periods > 0) {
    GPUREDUCE_CPU_UNROLL(16)
    for (int j = 0; j < NV; ++j) {
      GPUREDUCE_CPU_UNROLL(8)
      for (int k = 0; k < W; ++k) acc.v[(j * W + k) % N] = op::combine(acc.v[(j * W + k) % N], L::lane(a[j], k));
    }
  }
  for (int64_t r = periods * kRowsPerPeriod; r < nr; ++r) {
    GPUREDUCE_CPU_UNROLL(16)
    for (int c = 0; c < N; ++c) acc.v[c] = fold<op>(acc.v[c], s[r * N + c]);
  }
  return acc;
}

// How the leaves of a tile of columns read their rows.
enum class ColumnLeaf { kTile, kNarrow, kStream };

// Levels of the pairwise stack of a columns task: its leaves number at most
// kRowsPerTask / kColLeafRows.
constexpr int kColStackLevels = 10;
static_assert(kRowsPerTask / kColLeafRows < (int64_t(1) << (kColStackLevels - 1)), "a level per leaf-count bit");

// Reduces rows [r0, r0 + nr) (at most kRowsPerTask) of a tile of `width`
// columns into dst, in leaves of the given kind, K columns (narrow and
// stream leaves) or K vectors of columns (tiles) side by side, K fixed so
// that the accumulators stay in registers. The leaves are fixed runs of
// rows from r0, combined pairwise as they come (PairwiseStack). Recursive
// halving, with a call, a division (the first row's offsets) and a
// combine in memory per leaf, made [1, 2048, 16, 16] float32 over dim 1
// take 1.2x torch.sum's time; with leaves four times as long, 1.0x.
template <class L, ColumnLeaf kLeafKind, int K, typename in_t, typename acc_t>
void column_leaves_reduce(const in_t* base, int64_t width, int64_t col_stride, int64_t r0, int64_t nr,
                          const ReducePass& p, acc_t* dst) {
  // Rows per leaf: a stream leaf's lanes each take as many rows as a
  // column's accumulator does in a full tile; narrower tiles and scalar
  // columns take more rows, so that a leaf holds about as many elements as
  // a full tile's (with 16 rows whatever the width, [2, 11100, 9] float32
  // over dim 1 spent its time between leaves of 144 elements).
  constexpr int64_t leaf_rows = kLeafKind == ColumnLeaf::kStream ? kColLeafRows * (kStreamPeriod<K, L::kWidth> / K)
                                : kLeafKind == ColumnLeaf::kNarrow ? kColLeafRows * kColVectors
                                                                   : kColLeafRows * (kColVectors / K);
  using E = std::conditional_t<kLeafKind == ColumnLeaf::kTile, L, Scalar<typename L::op>>;
  PairwiseStack<SideBySide<E, K>, kColStackLevels> stack;
  // Full tiles of 2-byte inputs (128 bytes a row) whose rows lie a page or
  // more apart prefetch each row's next tile but one while they read it: the
  // hardware prefetchers did not follow hundreds of such rows. A/B on this
  // project's 2-core machine, 2 threads (NOTES.md, session 29): [211,
  // 175931] bfloat16 over dim 0 8124 -> 4885 us (torch.sum 7233), [400,
  // 30000] int16 1843 -> 535, float16 1159 -> 709, [50, 200, 4096] bfloat16
  // over dim 1 6960 -> 4715. Not wider rows of a tile (float32 and float64:
  // from 20% faster to 17% slower, run to run; int32 no change), nor int8
  // ones (422 -> 474), nor tasks of over 512 rows, whose prefetched lines
  // are evicted before their tile is read (float32 [1000, 4096] over dim 0
  // 219 -> 271 with every tile prefetching), nor rows closer together ([8,
  // 128, 768] float32 over dim 1 27 -> 32).
  int64_t prefetch_bytes = 0;
  const int64_t row_bytes = p.reduce_stride * int64_t(sizeof(in_t));
  if constexpr (kLeafKind == ColumnLeaf::kTile && sizeof(in_t) == 2) {
    if (col_stride == 1 && row_bytes >= 4096 && p.n_reduce * p.n_reduce_outer <= 512)
      prefetch_bytes = 2 * K * L::kWidth * int64_t(sizeof(in_t));
  }
  // Full tiles of 4- and 8-byte inputs whose rows lie 4-16 KB apart (those
  // that column_tile_group_reduce does not take, run_columns) prefetch the
  // row eight rows down as they read each row: each row is a page of its
  // own, which the hardware prefetchers do not cross. A/B on this
  // project's 2-core machine, 2 threads, in one process, two runs
  // (NOTES.md, session 65): [16, 1024, 2048] float32 over dim 1 0.75-0.77x
  // of the time without, [16, 1024, 1024] float64 0.68-0.83x, [8, 2048,
  // 3072] float32 0.78-0.81x, inputs of 64 MB 0.94-0.98x, [1000, 2048]
  // float32 over dim 0 (8 MB) 1.03-1.11x; the same bits. Sixteen rows down
  // gained more on inputs of 100 MB or more and lost up to 40% on those of
  // 64 MB and less; four rows down gained less.
  if constexpr (kLeafKind == ColumnLeaf::kTile && sizeof(in_t) >= 4) {
    if (col_stride == 1 && row_bytes > 4096 && row_bytes < 16384 && p.n_reduce_outer == 1)
      prefetch_bytes = 8 * row_bytes;
  }
  ColumnRows rows(p, r0);
  for (int64_t r = 0; r < nr; r += leaf_rows) {
    const int64_t n = std::min(leaf_rows, nr - r);
    if constexpr (kLeafKind == ColumnLeaf::kStream) {
      stack.push(stream_column_leaf<L, K>(base, r0 + r, n));
    } else if constexpr (kLeafKind == ColumnLeaf::kNarrow) {
      stack.push(narrow_column_leaf<L, K>(base, col_stride, rows, n));
    } else {
      stack.push(column_tile_leaf<L, K>(base, width, col_stride, rows, n, prefetch_bytes));
    }
  }
  const auto sums = stack.result();
  if constexpr (kLeafKind == ColumnLeaf::kTile) {
    constexpr int W = L::kWidth;
    const int64_t last = width - (K - 1) * W;
    GPUREDUCE_CPU_UNROLL(8)
    for (int k = 0; k < K - 1; ++k) L::store(sums.v[k], dst + k * W, 0, W);
    // (A part vector's columns are in its top lanes where they were read
    // by a load ending at the last column: dense, or picked in a tile of
    // two vectors or more.)
    const bool top = col_stride == 1 || (K > 1 && picks_columns<L, in_t>(col_stride));
    L::store(sums.v[K - 1], dst + (K - 1) * W, last < W && top ? W - last : 0, last);
  } else {
    GPUREDUCE_CPU_UNROLL(8)
    for (int k = 0; k < K; ++k) dst[k] = sums.v[k];
  }
}

// Full tiles of columns side by side (dense columns), reduced together:
// each leaf's rows are read for every tile before the next leaf, so that a
// row's lines of all the tiles are read while its page is fresh, rather
// than tile after tile down hundreds of rows each a page or more apart.
// Each tile's leaves and their pairwise combine are column_leaves_reduce's,
// so the bits are the same.
constexpr int kTileGroup = 4;

template <class L, typename in_t, typename acc_t>
void column_tile_group_reduce(const in_t* base, int n_tiles, int64_t col_stride, int64_t r0, int64_t nr,
                              const ReducePass& p, acc_t* dst) {
  constexpr int K = kColVectors, W = L::kWidth;
  constexpr int64_t kTile = kColWidth<L>;
  constexpr int64_t leaf_rows = kColLeafRows;  // column_leaves_reduce's for a full tile
  PairwiseStack<SideBySide<L, K>, kColStackLevels> stacks[kTileGroup];
  ColumnRows rows(p, r0);
  for (int64_t r = 0; r < nr; r += leaf_rows) {
    const int64_t n = std::min(leaf_rows, nr - r);
    for (int t = 0; t + 1 < n_tiles; ++t) {
      ColumnRows leaf = rows;
      stacks[t].push(column_tile_leaf<L, K>(base + t * kTile * col_stride, kTile, col_stride, leaf, n));
    }
    stacks[n_tiles - 1].push(
        column_tile_leaf<L, K>(base + (n_tiles - 1) * kTile * col_stride, kTile, col_stride, rows, n));
  }
  for (int t = 0; t < n_tiles; ++t) {
    const auto sums = stacks[t].result();
    GPUREDUCE_CPU_UNROLL(8)
    for (int k = 0; k < K; ++k) L::store(sums.v[k], dst + t * kTile + k * W, 0, W);
  }
}

// Reduces rows [r0, r0 + nr) of n_tiles full tiles of columns (dense, or
// 2 or 3 apart where the tiles pick them) into dst.
template <typename in_t, typename acc_t>
using TileGroupFn = void (*)(const in_t* base, int n_tiles, int64_t col_stride, int64_t r0, int64_t nr,
                             const ReducePass&, acc_t* dst);

// column_leaves_reduce for leaves of a kind and N columns (narrow and
// stream leaves), or for tiles with as many vectors as `width` needs.
template <class L, ColumnLeaf kLeafKind, int N, typename in_t, typename acc_t>
void column_block_reduce(const in_t* base, int64_t width, int64_t col_stride, int64_t r0, int64_t nr,
                         const ReducePass& p, acc_t* dst) {
  if constexpr (kLeafKind != ColumnLeaf::kTile) {
    return column_leaves_reduce<L, kLeafKind, N>(base, width, col_stride, r0, nr, p, dst);
  } else {
    static_assert(kColVectors == 8, "one case per vector count");
    switch ((width + L::kWidth - 1) / L::kWidth) {
      case 1: return column_leaves_reduce<L, kLeafKind, 1>(base, width, col_stride, r0, nr, p, dst);
      case 2: return column_leaves_reduce<L, kLeafKind, 2>(base, width, col_stride, r0, nr, p, dst);
      case 3: return column_leaves_reduce<L, kLeafKind, 3>(base, width, col_stride, r0, nr, p, dst);
      case 4: return column_leaves_reduce<L, kLeafKind, 4>(base, width, col_stride, r0, nr, p, dst);
      case 5: return column_leaves_reduce<L, kLeafKind, 5>(base, width, col_stride, r0, nr, p, dst);
      case 6: return column_leaves_reduce<L, kLeafKind, 6>(base, width, col_stride, r0, nr, p, dst);
      case 7: return column_leaves_reduce<L, kLeafKind, 7>(base, width, col_stride, r0, nr, p, dst);
      default: return column_leaves_reduce<L, kLeafKind, 8>(base, width, col_stride, r0, nr, p, dst);
    }
  }
}

// Calls f(leaf kind, N) with the leaves a columns pass of this width and
// layout reads: a stream where fewer columns than two vectors hold (not
// exactly one) lie end to end, else vectors across a tile of columns, or
// for fewer columns than a vector holds, a scalar per column.
template <class L, int N = 1, class F>
void with_column_leaf(const ReducePass& p, F&& f) {
  if constexpr (N < 2 * L::kWidth) {
    if (p.n_cols > N) return with_column_leaf<L, N + 1>(p, f);
    const bool rows_end_to_end = p.col_stride == 1 && p.n_reduce_outer == 1 && p.reduce_stride == N;
    if constexpr (N != L::kWidth) {
      if (rows_end_to_end)
        return f(std::integral_constant<ColumnLeaf, ColumnLeaf::kStream>{}, std::integral_constant<int, N>{});
    }
    if constexpr (N < L::kWidth)
      return f(std::integral_constant<ColumnLeaf, ColumnLeaf::kNarrow>{}, std::integral_constant<int, N>{});
  }
  return f(std::integral_constant<ColumnLeaf, ColumnLeaf::kTile>{}, std::integral_constant<int, 0>{});
}

// Narrow columns of neighbouring outputs (the innermost outer dim at a
// stride of a few elements, a strided view's kept dims that do not merge):
// G outputs side by side, each reduced as column_leaves_reduce reduces it
// alone (the same leaves, the same adds in the same order, so the same
// bits), but a leaf's rows read across all G, their accumulators kept in
// memory. An output at a time read one element group per row from a page
// per row, and the next outputs the same lines again: [249, 19737, 8]
// float16 .step(2, 3) over dim 0 took 2.4x torch.sum's time (2026-11-25).
// Where an output's N columns lie within one vector of lanes and the
// outputs are a vector or more apart, a row of output g is one vector load
// from its first element, lanes k * col_stride its columns (the other
// lanes are summed and dropped): one load and add a row, not N scalar
// ones. Outputs [0, vector_outputs) may be read so (the caller leaves out
// the last of a run, whose vector could reach past the tensor); from
// the next output, a whole vector after an output's first element is the
// tensor's.
constexpr int kOutputBlock = 64;

template <class L, int N, typename in_t, typename acc_t>
void narrow_output_block(const in_t* base, int64_t out_step, int G, int vector_outputs, int64_t col_stride,
                         int64_t r0, int64_t nr, const ReducePass& p, acc_t* dst, int64_t dst_out_stride) {
  using op = typename L::op;
  using Cols = SideBySide<Scalar<op>, N>;
  constexpr int64_t leaf_rows = kColLeafRows * kColVectors;  // a narrow leaf's
  typename Cols::vec acc[kOutputBlock];
  PairwiseStack<Cols, kColStackLevels> stacks[kOutputBlock];
  constexpr bool kVectorLoads = requires(const in_t* q) { L::load(q); };  // not for scalar lanes (complex)
  int V = 0;  // outputs read a vector a row
  if constexpr (kVectorLoads) {
    if (col_stride >= 0 && (N - 1) * col_stride < L::kWidth && out_step >= L::kWidth) V = vector_outputs;
  }
  ColumnRows rows(p, r0);
  for (int64_t r = 0; r < nr; r += leaf_rows) {
    const int64_t n = std::min(leaf_rows, nr - r);
    for (int g = 0; g < G; ++g) acc[g] = Cols::identity();
    if constexpr (kVectorLoads) {
      if (V > 0) {
        typename L::vec lanes[kOutputBlock];
        for (int g = 0; g < V; ++g) lanes[g] = L::identity();
        ColumnRows leaf = rows;
        for (int64_t i = 0; i < n; ++i) {
          const in_t* row = base + leaf.next();
          for (int g = 0; g < V; ++g) lanes[g] = L::fold(lanes[g], row + g * out_step, 1);
        }
        for (int g = 0; g < V; ++g)
          GPUREDUCE_CPU_UNROLL(8)
          for (int k = 0; k < N; ++k) acc[g].v[k] = L::lane(lanes[g], static_cast<int>(k * col_stride));
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      const in_t* row = base + rows.next();
      for (int g = V; g < G; ++g) {
        const in_t* x = row + g * out_step;
        GPUREDUCE_CPU_UNROLL(8)
        for (int k = 0; k < N; ++k) acc[g].v[k] = fold<op>(acc[g].v[k], x[k * col_stride]);
      }
    }
    for (int g = 0; g < G; ++g) stacks[g].push(acc[g]);
  }
  for (int g = 0; g < G; ++g) {
    const auto sums = stacks[g].result();
    GPUREDUCE_CPU_UNROLL(8)
    for (int k = 0; k < N; ++k) dst[g * dst_out_stride + k] = sums.v[k];
  }
}

// G outputs of a narrow columns pass from the one at `base`, `out_step`
// elements apart, into dst (output g's columns at dst + g * dst_out_stride).
template <typename in_t, typename acc_t>
using OutputBlockFn = void (*)(const in_t* base, int64_t out_step, int G, int vector_outputs, int64_t col_stride,
                               int64_t r0, int64_t nr, const ReducePass&, acc_t* dst, int64_t dst_out_stride);

// Reduces rows [r0, r0 + nr) of a tile of `width` columns into dst.
template <typename in_t, typename acc_t>
using ColumnBlockFn = void (*)(const in_t*, int64_t width, int64_t col_stride, int64_t r0, int64_t nr,
                               const ReducePass&, acc_t* dst);

// The fold of a columns pass's partials: row_tasks of them for each of a
// tile's columns, tile task * row_tasks + rt (task = output * col_blocks +
// column block), kTile columns apart.
template <class Op, typename acc_t, typename out_t>
void fold_column_partials(const ReducePass& p, const acc_t* partial, int64_t row_tasks, int64_t col_blocks,
                          int64_t kTile, out_t* out) {
  const int64_t tasks = p.n_out * col_blocks;
  at::parallel_for(0, tasks, std::max<int64_t>(1, 32768 / (row_tasks * kTile)), [&](int64_t b, int64_t e) {
    std::vector<acc_t> column(static_cast<size_t>(row_tasks));
    for (int64_t task = b; task < e; ++task) {
      const int64_t o = task / col_blocks, cb = task % col_blocks;
      int64_t in_off, out_off;
      p.outer.offsets(o, in_off, out_off);
      const int64_t c0 = cb * kTile, width = std::min(kTile, p.n_cols - c0);
      for (int64_t c = 0; c < width; ++c) {
        for (int64_t rt = 0; rt < row_tasks; ++rt) column[rt] = partial[(task * row_tasks + rt) * kTile + c];
        out[out_off + (c0 + c) * p.out_col_stride] =
            finish<Op, out_t>(pairwise_combine<Op>(column.data(), row_tasks), p.projection);
      }
    }
  });
}

// The driver takes its tiles' reducer as a pointer, a call per tile, so that
// it is compiled once per dtype pair rather than once per leaf kind and
// width (15 drivers per pair doubled the compile time of these files).
template <class Op, typename in_t, typename out_t>
void run_columns(const ReducePass& p, const in_t* in, out_t* out) {
  using acc_t = typename Op::acc_type;
  using L = Lanes<Op, acc_t>;
  ColumnBlockFn<in_t, acc_t> block = nullptr;
  OutputBlockFn<in_t, acc_t> output_block = nullptr;
  TileGroupFn<in_t, acc_t> tile_group = nullptr;
  with_column_leaf<L>(p, [&](auto kind, auto n) {
    block = &column_block_reduce<L, decltype(kind)::value, decltype(n)::value, in_t, acc_t>;
    if constexpr (decltype(kind)::value == ColumnLeaf::kNarrow)
      output_block = &narrow_output_block<L, decltype(n)::value, in_t, acc_t>;
    if constexpr (decltype(kind)::value == ColumnLeaf::kTile)
      tile_group = &column_tile_group_reduce<L, in_t, acc_t>;
  });
  constexpr int64_t kTile = kColWidth<L>;
  const int64_t col_blocks = (p.n_cols + kTile - 1) / kTile;
  const int64_t n_rows = p.n_reduce * p.n_reduce_outer;
  if (n_rows == 1) {
    // A size-1 reduction (the planner's only passes of one row): each
    // output is its one input folded into the op's identity, an element-wise
    // pass that the compiler vectorises where both sides are dense. Through
    // the tiles, [6, 1, 8192] bool over dim 1 took 74 us on one thread,
    // torch.sum 49.
    constexpr int64_t kChunk = 4096;
    const int64_t chunks = (p.n_cols + kChunk - 1) / kChunk;
    const int64_t grain = std::max<int64_t>(1, 16384 / std::min(p.n_cols, kChunk));
    at::parallel_for(0, p.n_out * chunks, grain, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / chunks, c0 = t % chunks * kChunk, c1 = std::min(p.n_cols, c0 + kChunk);
        int64_t in_off, out_off;
        p.outer.offsets(o, in_off, out_off);
        const in_t* x = in + in_off;
        out_t* y = out + out_off;
        if (p.col_stride == 1 && p.out_col_stride == 1) {
          for (int64_t c = c0; c < c1; ++c)
            y[c] = finish<Op, out_t>(fold<Op>(Op::identity(), widen_one(x[c])), p.projection);
        } else {
          for (int64_t c = c0; c < c1; ++c)
            y[c * p.out_col_stride] =
                finish<Op, out_t>(fold<Op>(Op::identity(), widen_one(x[c * p.col_stride])), p.projection);
        }
      }
    });
    return;
  }
  // Rows per task: an even count of equal tasks of at most kRowsPerTask
  // rows (in kRowsPerTask and the rest, [5000, 130] float32 over dim 0 ran
  // 4096 rows on one thread and 904 on the other: 1.3-1.8x of torch.sum's
  // time); or, for a pass of one tile, as many tasks of whole leaves as its
  // elements give work for (2 threads, this project's machine: [4000, 64]
  // float32 over dim 0 14.1 us on one thread, torch.sum 12.2; [1412,
  // 131].step(1, 3) 14.0, torch.sum 12.4). So too for one output of 2- to
  // 8-byte inputs whose columns take under eight tile groups: its tile
  // groups made a few tasks (a group of four tiles a task), one thread's or
  // unequal ([1810, 115] float64 over dim 0 1.3-1.6x -> 0.84-0.87x, int64
  // [3156, 114] 1.9-2.5x -> 0.45-0.54x, [3000, 600] float32 2.2x ->
  // 0.91-0.96x; A/B over 61 columns passes, NOTES.md, session 73); several
  // outputs lost ([2, 2309, 70] float32 0.73x -> 0.83x), as did 1-byte
  // inputs, and 2-byte ones cut into tasks under kSplitNarrowColumnsMinRows
  // rows (bfloat16 [1262, 255] 0.66x -> 0.74-0.90x, float16 [901, 1382]
  // 0.91x -> 1.08-1.12x), where tasks of more won (2 threads, processes alternating,
  // NOTES.md session 74: float16 [3760, 393] 1.99-2.06x -> 0.64-0.76x,
  // bfloat16 [4000, 512] 0.86x -> 0.53-0.55x, [3097, 270] 1.19x -> 0.76x;
  // 39 random 2-byte passes 0.448x -> 0.421x in geomean, 3 -> 0 over
  // 1.05x). Tasks of 4- and 8-byte inputs under kSplitColumnsMinRows rows
  // lost as well: the two tasks of 128 rows of [256, 1024] float32 took as
  // long on two threads as on one (A/B against tasks of 256 rows or more,
  // one build and a switch, 71 columns passes: 0.542x -> 0.514x, 8 -> 0
  // over 1.05x; [256, 1024] 1.23x -> 0.79x, [300, 768] 1.45x -> 0.90x,
  // [200, 750] float64 1.20x -> 0.77x; session 74). The split depends on the
  // shape only, so the bits do not depend on the thread count.
  // Tasks are rounded up to kColLeafRows rows, not to the 128 rows of a
  // narrow tile's leaf: four tasks of [1600, 384] float32 over dim 0 were
  // 512, 512, 512 and 64 rows, the first thread's two half as long again as
  // the second's, 1.46x torch.sum's time on 2 threads (0.81x on one).
  // A/B on this project's 2-core machine, 2 threads, two runs a side,
  // processes alternating (NOTES.md, session 77): that case 1.46x ->
  // 0.79x, [1600, 512] 0.78x -> 0.41x, 48 random dense columns passes
  // 0.694x -> 0.679x in geomean, 2 -> 0 over 1.05x ([1640, 908] float64
  // 1.10x -> 0.97x, [15, 768, 8, 8] channels_last float32 over (0, 2, 3)
  // 0.92x -> 0.72x).
  const auto rows_in = [&](int64_t task_count) {
    return ((n_rows + task_count - 1) / task_count + kColLeafRows - 1) / kColLeafRows * kColLeafRows;
  };
  int64_t rows_per_task = kRowsPerTask;
  if (n_rows > kRowsPerTask) {
    const int64_t fewest = (n_rows + kRowsPerTask - 1) / kRowsPerTask;
    rows_per_task = rows_in(fewest + fewest % 2);
  } else if (p.n_out * col_blocks == 1 || (p.n_out == 1 && col_blocks < 8 * kTileGroup && sizeof(in_t) >= 2)) {
    const int64_t per_task = p.col_stride == 1 ? kSplitTileTaskElements : kSplitTileTaskElements / 4;
    const int64_t min_rows = p.n_out * col_blocks == 1 ? 1
                             : sizeof(in_t) == 2      ? kSplitNarrowColumnsMinRows
                                                      : kSplitColumnsMinRows;
    // A power of two, so that an even thread count splits them evenly.
    int64_t want = 1;
    while (want * 2 <= kSplitTileMaxTasks && want * 2 * per_task <= n_rows * p.n_cols &&
           want * 2 * min_rows <= n_rows)
      want *= 2;
    if (want >= 2) rows_per_task = rows_in(want);
  }
  const int64_t row_tasks = (n_rows + rows_per_task - 1) / rows_per_task;
  const int64_t tasks = p.n_out * col_blocks;
  // Narrow columns whose neighbouring outputs share cache lines (the
  // innermost outer dim at most 64 bytes a step) in blocks of up to
  // kOutputBlock outputs of that dim (narrow_output_block).
  const int64_t run = p.outer.ndim > 0 ? static_cast<int64_t>(p.outer.sizes[0].divisor) : 1;
  if (output_block != nullptr && run >= 2 &&
      std::abs(p.outer.in_strides[0]) * static_cast<int64_t>(sizeof(in_t)) <= 64) {
    const int64_t blocks_per_run = (run + kOutputBlock - 1) / kOutputBlock;
    const int64_t units = p.n_out / run * blocks_per_run;
    const int64_t in_step = p.outer.in_strides[0], out_step = p.outer.out_strides[0];
    // The block's first output and its count g; v of them may be read a
    // vector a row (all but the run's last).
    const auto first_output = [&](int64_t u, int& g, int& v) {
      const int64_t b = u % blocks_per_run;
      g = static_cast<int>(std::min<int64_t>(kOutputBlock, run - b * kOutputBlock));
      v = b * kOutputBlock + g == run ? g - 1 : g;
      return u / blocks_per_run * run + b * kOutputBlock;
    };
    if (row_tasks == 1) {
      const int64_t grain = std::max<int64_t>(1, 32768 / (n_rows * std::min<int64_t>(run, kOutputBlock) * p.n_cols));
      at::parallel_for(0, units, grain, [&](int64_t b, int64_t e) {
        acc_t sums[kOutputBlock * L::kWidth];
        for (int64_t u = b; u < e; ++u) {
          int g = 0, v = 0;
          const int64_t o0 = first_output(u, g, v);
          int64_t in_off, out_off;
          p.outer.offsets(o0, in_off, out_off);
          output_block(in + in_off, in_step, g, v, p.col_stride, 0, n_rows, p, sums, p.n_cols);
          for (int j = 0; j < g; ++j)
            for (int64_t c = 0; c < p.n_cols; ++c)
              out[out_off + j * out_step + c * p.out_col_stride] =
                  finish<Op, out_t>(sums[j * p.n_cols + c], p.projection);
        }
      });
      return;
    }
    // Partials as the tiles lay them out (one tile an output: tile o, row task rt).
    std::vector<acc_t> partial(static_cast<size_t>(p.n_out * row_tasks * kTile));
    const int64_t grain = std::max<int64_t>(1, 32768 / (rows_per_task * std::min<int64_t>(run, kOutputBlock) * p.n_cols));
    at::parallel_for(0, units * row_tasks, grain, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t u = t % units, rt = t / units;  // row task major (the plain tasks below say why)
        int g = 0, v = 0;
        const int64_t o0 = first_output(u, g, v);
        int64_t in_off, out_off;
        p.outer.offsets(o0, in_off, out_off);
        const int64_t r0 = rt * rows_per_task, nr = std::min(rows_per_task, n_rows - r0);
        output_block(in + in_off, in_step, g, v, p.col_stride, r0, nr, p, partial.data() + (o0 * row_tasks + rt) * kTile,
                     row_tasks * kTile);
      }
    });
    fold_column_partials<Op>(p, partial.data(), row_tasks, col_blocks, kTile, out);
    return;
  }
  // Dense columns of several tiles: kTileGroup tiles a task, read leaf by
  // leaf together (column_tile_group_reduce), but for rows more than 4 KB
  // and less than 16 KB apart. A/B on this project's 2-core machine, 2
  // threads, in one process, against one tile a task (NOTES.md, session
  // 64): 15 passes of rows 0.5-4 KB apart 5-22% faster in every run but
  // one ([10, 4096, 512] float32 over dim 1 1.04-1.15x -> 0.91-1.03x of
  // torch.sum's time; [64, 512, 1024], 4 KB, 1% slower once); rows 16 KB
  // and more apart 3-40% faster ([2, 3000, 8192] 0.86-0.91x -> 0.52-0.55x)
  // but [1000, 4096] over dim 0 0.97-1.10x; rows 6-8 KB apart went either
  // way by shape, the same way in nearly every run ([16, 1024, 2048]
  // float32 faster in four runs of five, [16, 512, 2048] 4-17% and [8,
  // 1024, 1024] int64 3-19% slower in all five). Two tiles a task gained
  // less.
  const int64_t row_bytes = p.reduce_stride * int64_t(sizeof(in_t));
  // 2-byte inputs: in passes of several row tasks whose rows lie under 4
  // KB apart (from 4 KB they prefetch rows instead, column_leaves_reduce).
  // A/B, two processes (NOTES.md, session 67): [36, 128, 112, 112]
  // channels_last float16 over (2, 3) 0.90-0.99x of torch.sum's time ->
  // 0.72-0.75x, [8, 6000, 768] float16 over dim 1 0.94-1.02x -> 0.51-0.68x,
  // [20000, 256] bfloat16 over dim 0 0.91-0.96x -> 0.64-0.71x; not in
  // passes of one row task ([4000, 512] bfloat16 0.55-0.74x -> 0.71-0.78x).
  // Columns 2 or 3 apart that the tiles pick (kPicksColumns) are grouped
  // as dense ones are, outside the same band of row pitches: grouped in it
  // too, [498, 526][:, ::2] float64 over dim 0 took 2.1x torch.sum's time
  // against 0.70x through the planner's superset pass (NOTES.md, session
  // 77).
  const int64_t cs = p.col_stride;
  const bool grouped =
      tile_group != nullptr && (cs == 1 || picks_columns<L, in_t>(cs)) && p.n_cols >= 2 * kTile &&
      (sizeof(in_t) == 2 ? row_tasks > 1 && row_bytes < 4096 : row_bytes <= 4096 || row_bytes >= 16384);
  // Where the outputs are the accumulators themselves, dense, the tiles of a
  // pass of one row task write them directly: through a buffer, [3, 50257]
  // float64 over dim 0 spent as long copying outputs as summing its three
  // rows. Tile groups too (A/B on this project's 2-core machine, 2 threads,
  // two runs a side, processes alternating; NOTES.md, session 70): [4000,
  // 5, 300] float64 over dim 1 1.21-1.36x of torch.sum's time -> 0.75-0.78x,
  // [1262, 10, 3, 240] int64 permuted to sum its dim 2 1.07-1.08x ->
  // 0.71-0.87x; the same bits.
  constexpr bool kOutputsAreAccumulators = std::is_same_v<out_t, acc_t>;
  const bool direct = kOutputsAreAccumulators && p.out_col_stride == 1 && p.projection.is_identity();
  // Outputs that run along an outer dim rather than along the columns (a
  // permuted input whose kept dims are transposed against memory): the
  // tasks of a pass of one row task go column block by column block, each
  // over every outer index in output order, so that a thread writes a
  // region of the output of its own. Outer index by outer index, the two
  // threads wrote neighbouring outputs of each column, in the same cache
  // lines: [28, 2, 596, 4].permute(2, 3, 0, 1) int64 over dim 3 took 146 us
  // on one thread and 426 on two, torch.sum 186. A/B on this project's
  // 2-core machine, 2 threads, two runs a side, processes alternating
  // (NOTES.md, session 70): that case 2.18-3.23x of torch.sum's time ->
  // 0.48-0.59x, [64, 4, 4096].permute(2, 0, 1) float32 over dim 2
  // 1.00-1.07x -> 0.36-0.39x, bfloat16 0.70-0.76x -> 0.13-0.16x; dense
  // outputs unchanged; the same bits.
  const OuterIndexer by_output = in_output_order(p.outer);
  const bool column_block_major =
      p.out_col_stride != 1 && p.outer.ndim > 0 && by_output.out_strides[0] < p.out_col_stride;
  const OuterIndexer& outer = column_block_major ? by_output : p.outer;
  if (row_tasks == 1 && grouped) {
    constexpr int64_t kGroupCols = kTile * kTileGroup;
    const int64_t groups = (p.n_cols + kGroupCols - 1) / kGroupCols;
    const int64_t grain = std::max<int64_t>(1, 32768 / (n_rows * std::min(kGroupCols, p.n_cols)));
    at::parallel_for(0, p.n_out * groups, grain, [&](int64_t b, int64_t e) {
      acc_t column[kGroupCols];
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = column_block_major ? t % p.n_out : t / groups;
        const int64_t c0 = (column_block_major ? t / p.n_out : t % groups) * kGroupCols;
        int64_t in_off, out_off;
        outer.offsets(o, in_off, out_off);
        const int64_t width = std::min(kGroupCols, p.n_cols - c0);
        const int full = static_cast<int>(width / kTile);
        acc_t* dst = column;
        if constexpr (kOutputsAreAccumulators) {
          if (direct) dst = reinterpret_cast<acc_t*>(out + out_off + c0);
        }
        if (full > 0) tile_group(in + in_off + c0 * cs, full, cs, 0, n_rows, p, dst);
        if (width > full * kTile)
          block(in + in_off + (c0 + full * kTile) * cs, width - full * kTile, cs, 0, n_rows, p, dst + full * kTile);
        if (dst != column) continue;
        for (int64_t c = 0; c < width; ++c)
          out[out_off + (c0 + c) * p.out_col_stride] = finish<Op, out_t>(column[c], p.projection);
      }
    });
    return;
  }
  if (row_tasks == 1) {
    // Rows enough for one task: each task writes its outputs itself, with
    // no partials buffer and no second pass ([19, 7, 8192] float32 over
    // dim 1 zeroed and re-read 600 KB of partials).
    // 32K elements to a thread, counted by the columns a tile holds, not
    // by its capacity: [2, 384, 2, 2] float16 over dim 1 (two tasks of 4
    // columns) woke the second thread, 2.6 us against 1.7 on one.
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, n_rows * std::min(kTile, p.n_cols)));
    // Outputs of one tile each at one stride, each reading within its step
    // of at most kStreamPrefetchMaxRowBytes: one stream, which a task
    // prefetches kLeafPrefetchBytes ahead across its outputs, as the rows
    // pass does its short rows (run_repeated_rows). The hardware left each
    // output's line a miss: int64 [1028813, 4, 2] over dim 1 (64 bytes an
    // output) took 27 ms on one thread where the same bytes as rows of 8
    // took 3.2. A/B on this project's 2-core machine, 2 threads, two runs a
    // side, processes alternating (NOTES.md, session 74): that case 0.98x
    // -> 0.37x of torch.sum's time, 49 passes of 2 to 64 rows of 2 to 70
    // columns 0.386x -> 0.375x in geomean ([3365, 42, 4][:, 1:] int64 0.52x
    // -> 0.43x; [22479, 22, 18][:, 1:] float32 0.74x -> 0.81x); the same
    // bits.
    const int64_t in_step = p.outer.ndim == 1 ? p.outer.in_strides[0] : 0;
    const int64_t extent = (p.n_reduce - 1) * p.reduce_stride + (p.n_reduce_outer - 1) * p.reduce_outer_stride +
                           (p.n_cols - 1) * p.col_stride + 1;
    const bool stream_outputs = kVectorLanes<Op, acc_t> && col_blocks == 1 && in_step > 0 && p.reduce_stride >= 0 &&
                                p.reduce_outer_stride >= 0 && p.col_stride >= 0 && extent <= in_step &&
                                in_step * int64_t(sizeof(in_t)) <= kStreamPrefetchMaxRowBytes;
    at::parallel_for(0, tasks, grain, [&](int64_t b, int64_t e) {
      acc_t column[kTile];
      StreamPrefetch<in_t> prefetch(in, in_step, b, e);
      for (int64_t task = b; task < e; ++task) {
        const int64_t o = column_block_major ? task % p.n_out : task / col_blocks;
        const int64_t cb = column_block_major ? task / p.n_out : task % col_blocks;
        if (stream_outputs) prefetch.through(o);
        int64_t in_off, out_off;
        outer.offsets(o, in_off, out_off);
        const int64_t c0 = cb * kTile, width = std::min(kTile, p.n_cols - c0);
        if constexpr (kOutputsAreAccumulators) {
          if (direct) {
            block(in + in_off + c0 * p.col_stride, width, p.col_stride, 0, n_rows, p,
                  reinterpret_cast<acc_t*>(out + out_off + c0));
            continue;
          }
        }
        block(in + in_off + c0 * p.col_stride, width, p.col_stride, 0, n_rows, p, column);
        for (int64_t c = 0; c < width; ++c)
          out[out_off + (c0 + c) * p.out_col_stride] = finish<Op, out_t>(column[c], p.projection);
      }
    });
    return;
  }
  std::vector<acc_t> partial(static_cast<size_t>(tasks * row_tasks * kTile));
  // Tile groups as above for passes of several row tasks too, each group's
  // tiles scattered into the partials where one tile a task would put them
  // (the same leaves, so the same bits). A/B on this project's 2-core
  // machine, 2 threads, two runs in two processes each (NOTES.md, session
  // 67): [23, 512, 28, 28] channels_last float32 over (0, 2, 3) 1.02-1.16x
  // of torch.sum's time -> 0.73-0.91x, [20000, 256] over dim 0 1.06-1.36x ->
  // 0.64-0.84x, [8, 6000, 768] over dim 1 0.95-1.10x -> 0.62-0.78x, 12
  // such passes 10-50% faster; [36, 128, 56, 56] channels_last over (2, 3),
  // two tiles a group, 0.85-0.89x -> 0.88-1.04x.
  if (grouped) {
    constexpr int64_t kGroupCols = kTile * kTileGroup;
    const int64_t groups = (p.n_cols + kGroupCols - 1) / kGroupCols;
    const int64_t grain = std::max<int64_t>(1, 32768 / (rows_per_task * std::min(kGroupCols, p.n_cols)));
    const int64_t units = p.n_out * groups;
    at::parallel_for(0, units * row_tasks, grain, [&](int64_t b, int64_t e) {
      acc_t column[kGroupCols];
      for (int64_t t = b; t < e; ++t) {
        const int64_t unit = t % units, rt = t / units;  // row task major (the plain tasks below say why)
        const int64_t o = unit / groups, c0 = unit % groups * kGroupCols;
        int64_t in_off, out_off;
        p.outer.offsets(o, in_off, out_off);
        const int64_t width = std::min(kGroupCols, p.n_cols - c0);
        const int full = static_cast<int>(width / kTile);
        const int64_t r0 = rt * rows_per_task, nr = std::min(rows_per_task, n_rows - r0);
        if (full > 0) tile_group(in + in_off + c0 * cs, full, cs, r0, nr, p, column);
        if (width > full * kTile)
          block(in + in_off + (c0 + full * kTile) * cs, width - full * kTile, cs, r0, nr, p, column + full * kTile);
        for (int64_t j = 0; j * kTile < width; ++j) {
          const int64_t task = o * col_blocks + c0 / kTile + j;
          std::copy_n(column + j * kTile, std::min(kTile, width - j * kTile),
                      partial.data() + (task * row_tasks + rt) * kTile);
        }
      }
    });
    fold_column_partials<Op>(p, partial.data(), row_tasks, col_blocks, kTile, out);
    return;
  }
  // At least 32K elements to a thread (a task of a few columns holds 4K-28K).
  // The work items run row task major, so that at::parallel_for's equal
  // runs of items give each thread whole row tasks of every tile: tile
  // major, a pass of a full tile and a narrow one ([5425, 80] float32 over
  // dim 0: 64 and 16 columns, two row tasks) left one thread four fifths
  // of the reads. The partials keep their places, so the bits are the same.
  const int64_t grain = std::max<int64_t>(1, 32768 / (rows_per_task * std::min(kTile, p.n_cols)));
  at::parallel_for(0, tasks * row_tasks, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t task = t % tasks, rt = t / tasks;
      const int64_t o = task / col_blocks, cb = task % col_blocks;
      int64_t in_off, out_off;
      p.outer.offsets(o, in_off, out_off);
      const int64_t c0 = cb * kTile, width = std::min(kTile, p.n_cols - c0);
      const int64_t r0 = rt * rows_per_task, nr = std::min(rows_per_task, n_rows - r0);
      block(in + in_off + c0 * p.col_stride, width, p.col_stride, r0, nr, p,
            partial.data() + (task * row_tasks + rt) * kTile);
    }
  });
  fold_column_partials<Op>(p, partial.data(), row_tasks, col_blocks, kTile, out);
}

template <class Op, typename in_t, typename out_t>
void run_pass_typed(const ReducePass& pass, const in_t* x, out_t* y) {
  if (pass.kind == ReducePass::Kind::kRows) {
    run_rows<Op>(pass, x, y);
  } else {
    run_columns<Op>(pass, x, y);
  }
}

// One pass of the op of `Family` on CPU tensors whose input is of group G.
template <class Family, InputGroup G>
void run_pass_cpu(const ReducePass& pass, const CpuPassBuffers& b) {
  dispatch_reduce_types<G>(b.in_dtype, b.out_dtype, [&](auto in_tag, auto out_tag) {
    using in_t = typename decltype(in_tag)::type;
    using out_t = typename decltype(out_tag)::type;
    using Op = typename Family::template Op<typename AccOf<out_t>::type>::cpu_op;
    if constexpr (!kRunsPair<Family, in_t, out_t>) {
      TORCH_INTERNAL_ASSERT(false, "gpureduce: no CPU kernel of this op for ", b.in_dtype, " -> ", b.out_dtype);
    } else {
      const in_t* x = static_cast<const in_t*>(b.in);
      out_t* y = static_cast<out_t*>(b.out);
      // Partials flow only between passes of the accumulator type, and a
      // pass reads them only where the op's reduce folds them in as inputs
      // (the others' run PartialsKernelsFor's kernels).
      constexpr bool kAnyPartials = Op::kPartialsInResultDtype;
      TORCH_INTERNAL_ASSERT(
          (!pass.reads_partials ||
           ((kAnyPartials || std::is_same_v<in_t, typename Op::acc_type>) && Op::kPartialsFoldAsInputs)) &&
          (!pass.writes_partials || kAnyPartials || std::is_same_v<out_t, typename Op::acc_type>));
      run_pass_typed<Op>(pass, x, y);
    }
  });
}

}  // namespace GPUREDUCE_CPU_NS
}  // namespace gpureduce

// One instance file's whole content: the engine of this build for one op
// family and one dtype group.
#define GPUREDUCE_CPU_ENGINE_INSTANCE(FAMILY, GROUP)                                               \
  template void                                                                                    \
  gpureduce::GPUREDUCE_CPU_NS::run_pass_cpu<gpureduce::FAMILY, gpureduce::InputGroup::GROUP>(      \
      const gpureduce::ReducePass&, const gpureduce::CpuPassBuffers&)
