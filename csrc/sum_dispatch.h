// The (input, output) dtype pairs the sum kernels are compiled for, and one
// dispatcher over them for every backend. Everything else is staged by
// sum_into (reduce_plan.h) through a cast, so the pairs stay few and the build
// stays fast.
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
void dispatch_sum_types(at::ScalarType in, at::ScalarType out, F&& f) {
#define GPUREDUCE_PAIR(IN_ENUM, IN_T, OUT_ENUM, OUT_T) \
  if (in == at::IN_ENUM && out == at::OUT_ENUM) return f(TypeTag<IN_T>{}, TypeTag<OUT_T>{});
  GPUREDUCE_PAIR(kFloat, float, kFloat, float)
  GPUREDUCE_PAIR(kDouble, double, kDouble, double)
  GPUREDUCE_PAIR(kHalf, c10::Half, kHalf, c10::Half)
  GPUREDUCE_PAIR(kBFloat16, c10::BFloat16, kBFloat16, c10::BFloat16)
  GPUREDUCE_PAIR(kHalf, c10::Half, kFloat, float)
  GPUREDUCE_PAIR(kBFloat16, c10::BFloat16, kFloat, float)
  GPUREDUCE_PAIR(kComplexFloat, c10::complex<float>, kComplexFloat, c10::complex<float>)
  GPUREDUCE_PAIR(kComplexDouble, c10::complex<double>, kComplexDouble, c10::complex<double>)
  GPUREDUCE_PAIR(kBool, bool, kLong, int64_t)
  GPUREDUCE_PAIR(kByte, uint8_t, kLong, int64_t)
  GPUREDUCE_PAIR(kChar, int8_t, kLong, int64_t)
  GPUREDUCE_PAIR(kShort, int16_t, kLong, int64_t)
  GPUREDUCE_PAIR(kInt, int32_t, kLong, int64_t)
  GPUREDUCE_PAIR(kLong, int64_t, kLong, int64_t)
#undef GPUREDUCE_PAIR
  TORCH_INTERNAL_ASSERT(false, "gpureduce: no sum kernel for ", in, " -> ", out);
}

// Accumulator type of the sum kernels for an output type.
template <typename out_t>
struct SumAcc {
  using type = out_t;
};
template <>
struct SumAcc<c10::Half> {
  using type = float;
};
template <>
struct SumAcc<c10::BFloat16> {
  using type = float;
};

}  // namespace gpureduce
