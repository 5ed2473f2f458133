// The index-carrying op functors of the engine (argmax, argmin, max.dim,
// min.dim), shared by the CPU and CUDA kernels of engine/indexed_plan.h:
// ATen's SharedReduceOps.h arg-reductions, in this project's form. A state
// is the value and the position along the reduced dim of the element it
// holds; reduce folds an input at a position past every one folded before
// (a walk of increasing index), combine merges two states of any order.
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/macros/Macros.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace gpureduce {

template <typename T>
struct ValueIndex {
  T value;
  int64_t index;  // -1: no element yet
};

// The largest (kMax) or smallest element and the index of its first
// occurrence; a NaN beats every number, and the first NaN wins, as in
// torch.argmax and torch.max(dim). combine is a choice by a total order
// (NaN first, then the value, then the lower index), so the result is the
// same element whatever order the kernels merge in: bitwise reproducible,
// with no fixed tree needed. -0.0 and +0.0 tie (==), so the earlier wins
// and its own bits are the value returned, as torch's.
template <typename acc_t, bool kMax>
struct ArgExtremumOp {
  using state = ValueIndex<acc_t>;
  static constexpr bool kLargest = kMax;

  C10_HOST_DEVICE static state identity() { return {acc_t{}, -1}; }

  // Whether x, later than the held best, replaces it: x is larger (smaller)
  // or NaN, and best is not NaN. !(x <= best) is x > best for numbers and
  // true for a NaN x; for integers the NaN test folds away.
  C10_HOST_DEVICE static bool beats(acc_t x, acc_t best) {
    const bool past = kMax ? !(x <= best) : !(x >= best);
    if constexpr (std::is_floating_point_v<acc_t>) {
      return past && best == best;
    } else {
      return past;
    }
  }

  // The larger (smaller) of a and b with a NaN ignored where the other is
  // a number: a batch's extreme before any index is looked at (a NaN is
  // flagged apart, by is_nan). One instruction on the GPU (fmaxf).
  C10_HOST_DEVICE static acc_t pick(acc_t a, acc_t b) {
    if constexpr (std::is_floating_point_v<acc_t>) {
#if defined(__CUDA_ARCH__)
      return kMax ? ::fmax(a, b) : ::fmin(a, b);
#else
      return kMax ? std::fmax(a, b) : std::fmin(a, b);
#endif
    } else {
      return (kMax ? b > a : b < a) ? b : a;
    }
  }
  C10_HOST_DEVICE static bool is_nan(acc_t v) {
    if constexpr (std::is_floating_point_v<acc_t>) {
      return v != v;
    } else {
      return false;
    }
  }

  C10_HOST_DEVICE static state reduce(state s, acc_t x, int64_t i) {
    return (s.index < 0 || beats(x, s.value)) ? state{x, i} : s;
  }

  C10_HOST_DEVICE static state combine(state a, state b) {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    bool take_b;
    const bool a_nan = a.value != a.value, b_nan = b.value != b.value;
    if (a_nan || b_nan) {
      take_b = a_nan == b_nan ? b.index < a.index : b_nan;
    } else if (a.value == b.value) {
      take_b = b.index < a.index;
    } else {
      take_b = kMax ? b.value > a.value : b.value < a.value;
    }
    return take_b ? b : a;
  }
};

// The type an input is compared in: float for 16-bit floats (exact), int32
// for integers of up to 4 bytes and bool, the type itself otherwise.
template <typename in_t>
using arg_acc_t = std::conditional_t<
    std::is_floating_point_v<in_t>, in_t,
    std::conditional_t<std::is_integral_v<in_t>, std::conditional_t<(sizeof(in_t) < 8), int32_t, int64_t>, float>>;

// Calls f(TypeTag<in_t>{}) for the input types the indexed kernels are
// compiled for (the checks of indexed_plan.cpp refuse the rest first).
template <typename T>
struct IndexedType {
  using type = T;
};
template <typename F>
void with_indexed_type(c10::ScalarType t, F&& f) {
  switch (t) {
    case c10::ScalarType::Float:
      return f(IndexedType<float>{});
    case c10::ScalarType::Double:
      return f(IndexedType<double>{});
    case c10::ScalarType::Half:
      return f(IndexedType<c10::Half>{});
    case c10::ScalarType::BFloat16:
      return f(IndexedType<c10::BFloat16>{});
    case c10::ScalarType::Bool:
      return f(IndexedType<bool>{});
    case c10::ScalarType::Byte:
      return f(IndexedType<uint8_t>{});
    case c10::ScalarType::Char:
      return f(IndexedType<int8_t>{});
    case c10::ScalarType::Short:
      return f(IndexedType<int16_t>{});
    case c10::ScalarType::Int:
      return f(IndexedType<int32_t>{});
    case c10::ScalarType::Long:
      return f(IndexedType<int64_t>{});
    default:
      TORCH_CHECK(false, "gpureduce: no indexed kernel for ", c10::toString(t));
  }
}

}  // namespace gpureduce
