// The (input, output) dtype pairs the engine's kernels are compiled for, and
// one dispatcher over them for every backend and op. Everything else is
// staged by the planner (reduce_plan.h) through a cast, so the pairs stay few
// and the build stays fast. Widening pairs (float32 -> float64, 16-bit floats
// -> float32 or float64, integers -> int64) read the narrow input directly.
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include <cstdint>

namespace gpureduce {

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<in_t>{}, TypeTag<out_t>{}).
template <typename F>
void dispatch_reduce_types(at::ScalarType in, at::ScalarType out, F&& f) {
#define GPUREDUCE_PAIR(IN_ENUM, IN_T, OUT_ENUM, OUT_T) \
  if (in == at::IN_ENUM && out == at::OUT_ENUM) return f(TypeTag<IN_T>{}, TypeTag<OUT_T>{});
  GPUREDUCE_PAIR(kFloat, float, kFloat, float)
  GPUREDUCE_PAIR(kDouble, double, kDouble, double)
  GPUREDUCE_PAIR(kHalf, c10::Half, kHalf, c10::Half)
  GPUREDUCE_PAIR(kBFloat16, c10::BFloat16, kBFloat16, c10::BFloat16)
  GPUREDUCE_PAIR(kHalf, c10::Half, kFloat, float)
  GPUREDUCE_PAIR(kBFloat16, c10::BFloat16, kFloat, float)
  GPUREDUCE_PAIR(kFloat, float, kDouble, double)
  GPUREDUCE_PAIR(kHalf, c10::Half, kDouble, double)
  GPUREDUCE_PAIR(kBFloat16, c10::BFloat16, kDouble, double)
  GPUREDUCE_PAIR(kComplexFloat, c10::complex<float>, kComplexFloat, c10::complex<float>)
  GPUREDUCE_PAIR(kComplexDouble, c10::complex<double>, kComplexDouble, c10::complex<double>)
  GPUREDUCE_PAIR(kBool, bool, kLong, int64_t)
  GPUREDUCE_PAIR(kByte, uint8_t, kLong, int64_t)
  GPUREDUCE_PAIR(kChar, int8_t, kLong, int64_t)
  GPUREDUCE_PAIR(kShort, int16_t, kLong, int64_t)
  GPUREDUCE_PAIR(kInt, int32_t, kLong, int64_t)
  GPUREDUCE_PAIR(kLong, int64_t, kLong, int64_t)
#undef GPUREDUCE_PAIR
  TORCH_INTERNAL_ASSERT(false, "gpureduce: no kernel for ", in, " -> ", out);
}

// Whether a kernel pair above reads `in` directly to produce `out`.
inline bool kernel_reads_directly(at::ScalarType in, at::ScalarType out) {
  const bool wide_unsigned = in == at::kUInt16 || in == at::kUInt32 || in == at::kUInt64;
  switch (out) {
    case at::kLong:
      return at::isIntegralType(in, /*includeBool=*/true) && !wide_unsigned;
    case at::kFloat:
      return in == at::kFloat || in == at::kHalf || in == at::kBFloat16;
    case at::kDouble:
      return in == at::kDouble || in == at::kFloat || in == at::kHalf || in == at::kBFloat16;
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
