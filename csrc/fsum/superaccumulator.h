// gpureduce::fsum's accumulator: the exact sum of floating-point values in
// a fixed-point superaccumulator (Neal's "small superaccumulator" layout),
// rounded once to the output type (to nearest, ties to even).
//
// A value is sum_i digit[i] * 2^(32 i - 1074): 32-bit digits from the
// smallest subnormal double's unit up. A double x = m 2^e (|m| < 2^53, e in
// [-1074, 971]) adds its 53 bits into three consecutive digits; digits are
// int64, so 2^30 additions fit before carries must move up (normalize()).
// Merging two accumulators adds digits: exact, hence associative and
// commutative, so any order, split or launch gives the same bits.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#ifdef __CUDACC__
#define FSUM_HD __host__ __device__
#else
#define FSUM_HD
#endif
// The digit loops stay loops on the GPU: unrolled, they put the 68 digits
// in registers and take a whole kernel's worth for a once-per-block step.
#ifdef __CUDA_ARCH__
#define FSUM_DIGIT_LOOP _Pragma("unroll 1")
#else
#define FSUM_DIGIT_LOOP
#endif

namespace gpureduce {
namespace fsum {

constexpr int kDigits = 68;  // 2045 + 84 bits of value, and room for 2^64 terms' carries
constexpr int kBase = -1074;

FSUM_HD inline int leading_zeros(uint64_t v) {  // v != 0
#ifdef __CUDA_ARCH__
  return __clzll(static_cast<long long>(v));
#else
  return __builtin_clzll(v);
#endif
}

// Bits [b, b + n) (b >= 0, n <= 54; from 2^-1074 up) of normalized,
// non-negative digits; bits past the top read as 0.
FSUM_HD inline uint64_t bits_at(const int64_t* digit, int b, int n) {
  const int i = b >> 5, s = b & 31;
  const auto at = [&](int k) { return k < kDigits ? uint64_t(digit[k]) : uint64_t(0); };
  uint64_t v = (at(i) | (at(i + 1) << 32)) >> s;
  if (s) v |= at(i + 2) << (64 - s);
  return v & ((uint64_t(1) << n) - 1);
}

// Whether any bit below `b` (b >= 0) of normalized digits is set: the
// digits just below are looked at first, the likely place.
FSUM_HD inline bool any_below(const int64_t* digit, int b) {
  const int i = b >> 5, s = b & 31;
  if (i < kDigits && s && (uint64_t(digit[i]) & ((uint64_t(1) << s) - 1))) return true;
  FSUM_DIGIT_LOOP
  for (int k = (i < kDigits ? i : kDigits) - 1; k >= 0; --k)
    if (digit[k]) return true;
  return false;
}

// The magnitude of normalized, non-negative digits whose highest nonzero
// one is `highest` (>= 0), rounded once to `precision` significant bits
// with the smallest subnormal 2^min_exp (to nearest, ties to even), with
// the sign applied. The digits may be an accumulator's (the CPU) or a
// block's in shared memory (the CUDA kernel, after carrying by a warp).
FSUM_HD inline double round_magnitude(const int64_t* digit, int highest, bool negative, int precision, int min_exp) {
  const int top = 32 * highest + 63 - leading_zeros(uint64_t(digit[highest]));  // the leading bit
  int lo = top - (precision - 1);
  const int min_bit = min_exp - kBase;
  if (lo < min_bit) lo = min_bit;
  uint64_t m = top >= lo ? bits_at(digit, lo, top - lo + 1) : 0;
  const int round = lo >= 1 ? int(bits_at(digit, lo - 1, 1)) : 0;
  const bool sticky = lo >= 2 && any_below(digit, lo - 1);
  if (round && (sticky || (m & 1))) ++m;  // may carry to 2^precision: still exact below
  double r = double(m);  // m <= 2^53
  // times 2^(lo + kBase), in steps that stay exact (no step leaves r subnormal)
  int e = lo + kBase;
  while (e > 0) {
    const int s = e > 1000 ? 1000 : e;
    r *= ::ldexp(1.0, s);
    e -= s;
  }
  while (e < 0) {
    const int s = e < -1000 ? -1000 : e;
    r *= ::ldexp(1.0, s);
    e -= s;
  }
  return negative ? -r : r;
}

// The sum of terms among which is an infinity or a NaN (math.fsum's rule):
// NaN for a NaN or for infinities of both signs, else the infinity.
FSUM_HD inline double special_sum(bool nan, bool pos_inf, bool neg_inf) {
  if (nan || (pos_inf && neg_inf)) return std::numeric_limits<double>::quiet_NaN();
  return pos_inf ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

// An exact zero sum: -0.0 only when there were terms and every one was -0.0.
FSUM_HD inline double zero_sum(bool any_term, bool any_not_neg_zero) {
  return any_term && !any_not_neg_zero ? -0.0 : 0.0;
}

struct SuperAccumulator {
  int64_t digit[kDigits];
  uint32_t pending;  // additions since the last normalize()
  bool nan, pos_inf, neg_inf, any_term, any_not_neg_zero;  // an exact zero is -0.0 only if every term was

  FSUM_HD void clear() {
    FSUM_DIGIT_LOOP
    for (int i = 0; i < kDigits; ++i) digit[i] = 0;
    pending = 0;
    nan = pos_inf = neg_inf = any_term = any_not_neg_zero = false;
  }

  FSUM_HD void add(double x) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    const bool neg = bits >> 63;
    const int biased = int((bits >> 52) & 0x7ff);
    uint64_t m = bits & ((uint64_t(1) << 52) - 1);
    if (biased == 0x7ff) {
      if (m) nan = true;
      else if (neg) neg_inf = true;
      else pos_inf = true;
      return;
    }
    any_term = true;
    if (!neg || biased || m) any_not_neg_zero = true;
    if (biased == 0 && m == 0) return;
    int e;  // the exponent of m's unit
    if (biased) {
      m |= uint64_t(1) << 52;
      e = biased - 1075;
    } else {
      e = -1074;
    }
    add_magnitude(m, e - kBase, neg);
  }

  // Adds v * 2^(offset + kBase): offset >= 0, |v| < 2^63, and the value
  // below 2^1100 (the digits' top, with room for carries).
  FSUM_HD void add_integer(int64_t v, int offset) {
    if (v) add_magnitude(v < 0 ? 0 - uint64_t(v) : uint64_t(v), offset, v < 0);
  }

  // m * 2^(o + kBase), m < 2^63, into the three digits from o's.
  FSUM_HD void add_magnitude(uint64_t m, int o, bool neg) {
    const int i = o >> 5, s = o & 31;
    const uint64_t t0 = (m & 0xffffffffu) << s;  // < 2^63
    const uint64_t t1 = ((m >> 32) << s) + (t0 >> 32);
    const int64_t d0 = int64_t(t0 & 0xffffffffu), d1 = int64_t(t1 & 0xffffffffu), d2 = int64_t(t1 >> 32);
    if (neg) {
      digit[i] -= d0;
      digit[i + 1] -= d1;
      digit[i + 2] -= d2;
    } else {
      digit[i] += d0;
      digit[i + 1] += d1;
      digit[i + 2] += d2;
    }
    if (++pending == (1u << 30)) normalize();
  }

  // Carries up: digits 0 .. kDigits - 2 into [0, 2^32), the top one
  // signed. Returns the highest nonzero digit's index, or -1.
  FSUM_HD int normalize() {
    int highest = -1;
    FSUM_DIGIT_LOOP
    for (int i = 0; i + 1 < kDigits; ++i) {
      const int64_t c = digit[i] >> 32;  // floor
      digit[i] -= c * (int64_t(1) << 32);
      digit[i + 1] += c;
      if (digit[i]) highest = i;
    }
    if (digit[kDigits - 1]) highest = kDigits - 1;
    pending = 0;
    return highest;
  }

  FSUM_HD void merge(SuperAccumulator& other) {
    normalize();
    other.normalize();
    FSUM_DIGIT_LOOP
    for (int i = 0; i < kDigits; ++i) digit[i] += other.digit[i];
    pending = 1;
    nan |= other.nan;
    pos_inf |= other.pos_inf;
    neg_inf |= other.neg_inf;
    any_term |= other.any_term;
    any_not_neg_zero |= other.any_not_neg_zero;
  }

  // The sum rounded once to a format of `precision` significant bits whose
  // smallest subnormal is 2^min_exp (double: 53, -1074; float: 24, -149;
  // half: 11, -24; bfloat16: 8, -133), returned as a double that the
  // format holds exactly (or +-inf, nan): the caller casts it. Spends the
  // accumulator (its digits become the magnitude's).
  FSUM_HD double round_to(int precision, int min_exp) {
    if (nan || pos_inf || neg_inf) return special_sum(nan, pos_inf, neg_inf);
    // The magnitude in place (the accumulator is spent): negate and carry
    // again if the sum is negative.
    int highest = normalize();
    const bool negative = digit[kDigits - 1] < 0;
    if (negative) {
      FSUM_DIGIT_LOOP
      for (int k = 0; k < kDigits; ++k) digit[k] = -digit[k];
      highest = normalize();
    }
    if (highest < 0) return zero_sum(any_term, any_not_neg_zero);
    return round_magnitude(digit, highest, negative, precision, min_exp);
  }
};

}  // namespace fsum
}  // namespace gpureduce
