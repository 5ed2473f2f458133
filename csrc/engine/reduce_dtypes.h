// The (input, output) dtype pairs the engine's kernels are compiled for, and
// one dispatcher over them for every backend and op. Everything else is
// staged by the planner (reduce_plan.h) through a cast, so the pairs stay few
// and the build stays fast. Widening pairs (16-bit floats -> float32,
// integers -> int64; sum's float32 and 16-bit floats -> float64) read the
// narrow input directly. A bool is read as the byte it is stored in (0 or
// 1, torch's invariant), by the uint8 pairs: the same values for every op.
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace gpureduce {

template <typename T>
struct TypeTag {
  using type = T;
};

// The pairs grouped by input type, about three each: a backend may compile
// each group in a translation unit of its own, so that a parallel build
// compiles them side by side (the CUDA engine's sum took 2 minutes as one).
// The integer-to-float groups are grouped by their result as well: integer
// and bool inputs of a float32 result (sum's and mean's dtype=, logsumexp's
// on CUDA: kReadsIntegersIntoFloat in reduce_family.h), read at their own
// width (with_pass_group), bool, uint8 and int8 in one group and the wider
// integers in the other, as kNarrowInt and kWideInt (as one, the CPU
// engine's file of their sums was its longest compile: 25-38 s of the 2-core
// machine, session 77). Into float64 they are staged as float64 first
// (torch's own order: cast, then reduce): their 6 pairs cost 2.4 minutes of
// core time in a clean build for a rare dtype= (NOTES.md, session 53).
enum class InputGroup {
  kAll,
  kFloat,
  kHalf,
  kBFloat16,
  kComplex,
  kNarrowInt,
  kWideInt,
  kNarrowIntToFloat,
  kWideIntToFloat
};

// Whether G is one of the integer-to-float groups.
constexpr bool is_integer_to_float(InputGroup g) {
  return g == InputGroup::kNarrowIntToFloat || g == InputGroup::kWideIntToFloat;
}

inline InputGroup input_group(at::ScalarType in) {
  switch (in) {
    case at::kFloat:
    case at::kDouble:
      return InputGroup::kFloat;
    case at::kHalf:
      return InputGroup::kHalf;
    case at::kBFloat16:
      return InputGroup::kBFloat16;
    case at::kComplexFloat:
    case at::kComplexDouble:
      return InputGroup::kComplex;
    case at::kBool:
    case at::kByte:
    case at::kChar:
      return InputGroup::kNarrowInt;
    default:
      return InputGroup::kWideInt;
  }
}

// Calls f(std::integral_constant<InputGroup, G>{}) for in's group G: a
// backend's way to the kernels it compiled for that group alone.
template <typename F>
decltype(auto) with_input_group(at::ScalarType in, F&& f) {
  using G = InputGroup;
  switch (input_group(in)) {
    case G::kFloat:
      return f(std::integral_constant<G, G::kFloat>{});
    case G::kHalf:
      return f(std::integral_constant<G, G::kHalf>{});
    case G::kBFloat16:
      return f(std::integral_constant<G, G::kBFloat16>{});
    case G::kComplex:
      return f(std::integral_constant<G, G::kComplex>{});
    case G::kNarrowInt:
      return f(std::integral_constant<G, G::kNarrowInt>{});
    default:
      return f(std::integral_constant<G, G::kWideInt>{});
  }
}

// uint16 to uint64: no kernel reads them; they are staged as int64.
inline bool is_wide_unsigned(at::ScalarType t) {
  return t == at::kUInt16 || t == at::kUInt32 || t == at::kUInt64;
}

// An integer or bool input that the kernels read as it is (into int64, or
// in an integer-to-float group).
inline bool is_integer_input(at::ScalarType in) {
  return at::isIntegralType(in, /*includeBool=*/true) && !is_wide_unsigned(in);
}

// Which widening pairs an op's kernels read directly (OpSpec::widening),
// beyond 16-bit floats into float32 (every op's: its partials between
// passes) and integers into int64 (sum's rules). The op compiles their
// kernels; without them, the planner casts the input first, as torch does.
struct WideningReads {
  // float32, float16 and bfloat16 inputs of float64 results (dtype=).
  bool floats_into_double = false;
  // Integer and bool inputs of float32 results (the integer-to-float groups).
  bool integers_into_float = false;
};

// with_input_group for a pass from `in` to `out`: the integer-to-float
// pairs are groups of their own.
template <typename F>
decltype(auto) with_pass_group(at::ScalarType in, at::ScalarType out, F&& f) {
  if (is_integer_input(in) && out == at::kFloat) {
    if (input_group(in) == InputGroup::kNarrowInt)
      return f(std::integral_constant<InputGroup, InputGroup::kNarrowIntToFloat>{});
    return f(std::integral_constant<InputGroup, InputGroup::kWideIntToFloat>{});
  }
  return with_input_group(in, std::forward<F>(f));
}

// Calls f(TypeTag<in_t>{}, TypeTag<out_t>{}) for the pair (in, out), one of
// group G's (of any group by default); bool inputs and results as uint8.
template <InputGroup G = InputGroup::kAll, typename F>
void dispatch_reduce_types(at::ScalarType in, at::ScalarType out, F&& f) {
  if (in == at::kBool) in = at::kByte;
  if (out == at::kBool) out = at::kByte;
#define GPUREDUCE_PAIR(GROUP, IN_ENUM, IN_T, OUT_ENUM, OUT_T)              \
  if constexpr (G == InputGroup::kAll || G == InputGroup::GROUP) {          \
    if (in == at::IN_ENUM && out == at::OUT_ENUM) return f(TypeTag<IN_T>{}, TypeTag<OUT_T>{}); \
  }
  GPUREDUCE_PAIR(kFloat, kFloat, float, kFloat, float)
  GPUREDUCE_PAIR(kFloat, kDouble, double, kDouble, double)
  GPUREDUCE_PAIR(kFloat, kFloat, float, kDouble, double)
  GPUREDUCE_PAIR(kHalf, kHalf, c10::Half, kHalf, c10::Half)
  GPUREDUCE_PAIR(kHalf, kHalf, c10::Half, kFloat, float)
  GPUREDUCE_PAIR(kHalf, kHalf, c10::Half, kDouble, double)
  GPUREDUCE_PAIR(kBFloat16, kBFloat16, c10::BFloat16, kBFloat16, c10::BFloat16)
  GPUREDUCE_PAIR(kBFloat16, kBFloat16, c10::BFloat16, kFloat, float)
  GPUREDUCE_PAIR(kBFloat16, kBFloat16, c10::BFloat16, kDouble, double)
  GPUREDUCE_PAIR(kComplex, kComplexFloat, c10::complex<float>, kComplexFloat, c10::complex<float>)
  GPUREDUCE_PAIR(kComplex, kComplexDouble, c10::complex<double>, kComplexDouble, c10::complex<double>)
  GPUREDUCE_PAIR(kNarrowInt, kByte, uint8_t, kLong, int64_t)
  GPUREDUCE_PAIR(kNarrowInt, kChar, int8_t, kLong, int64_t)
  GPUREDUCE_PAIR(kWideInt, kShort, int16_t, kLong, int64_t)
  GPUREDUCE_PAIR(kWideInt, kInt, int32_t, kLong, int64_t)
  GPUREDUCE_PAIR(kWideInt, kLong, int64_t, kLong, int64_t)
  // Integer results in the input's own dtype: amax and amin only
  // (kRunsPair, reduce_family.h).
  GPUREDUCE_PAIR(kNarrowInt, kByte, uint8_t, kByte, uint8_t)
  GPUREDUCE_PAIR(kNarrowInt, kChar, int8_t, kChar, int8_t)
  GPUREDUCE_PAIR(kWideInt, kShort, int16_t, kShort, int16_t)
  GPUREDUCE_PAIR(kWideInt, kInt, int32_t, kInt, int32_t)
  // Integer and bool inputs of float32 results, each element converted as
  // torch's cast would, then reduced as floats (sum, mean, logsumexp).
  GPUREDUCE_PAIR(kNarrowIntToFloat, kByte, uint8_t, kFloat, float)
  GPUREDUCE_PAIR(kNarrowIntToFloat, kChar, int8_t, kFloat, float)
  GPUREDUCE_PAIR(kWideIntToFloat, kShort, int16_t, kFloat, float)
  GPUREDUCE_PAIR(kWideIntToFloat, kInt, int32_t, kFloat, float)
  GPUREDUCE_PAIR(kWideIntToFloat, kLong, int64_t, kFloat, float)
#undef GPUREDUCE_PAIR
  TORCH_INTERNAL_ASSERT(false, "gpureduce: no kernel for ", in, " -> ", out);
}

// Whether a kernel pair above reads `in` directly to produce `out` for an
// op whose kernels read the widening pairs `widening` (OpSpec::widening).
inline bool kernel_reads_directly(at::ScalarType in, at::ScalarType out, WideningReads widening) {
  if (widening.integers_into_float && is_integer_input(in) && out == at::kFloat) return true;
  switch (out) {
    case at::kLong:
      return is_integer_input(in);
    case at::kFloat:
      return in == at::kFloat || in == at::kHalf || in == at::kBFloat16;
    case at::kDouble:
      return in == at::kDouble ||
             (widening.floats_into_double && (in == at::kFloat || in == at::kHalf || in == at::kBFloat16));
    case at::kHalf:
    case at::kBFloat16:
    case at::kComplexFloat:
    case at::kComplexDouble:
      return in == out;
    default:
      return false;
  }
}

// Accumulator type for an output type: float for the 16-bit floats.
template <typename out_t>
struct AccOf {
  using type = out_t;
};
template <>
struct AccOf<c10::Half> {
  using type = float;
};
template <>
struct AccOf<c10::BFloat16> {
  using type = float;
};

}  // namespace gpureduce
