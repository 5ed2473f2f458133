// What a pass does to each output's accumulator before it stores it, beyond
// the op's own projection: mean divides by the count of inputs reduced into
// the output, var by that count less the correction (which may be 0 or
// negative: torch's max(0, N - correction)), and std and vector_norm of
// order 2 take the square root. vector_norm of orders 1 and 2 first
// multiplies its sum by the copies each input stands for (the reduced dims
// of stride 0 it was read without: reduce_into). Runtime values, so that
// var and std share their kernels and any correction runs them. The
// identity for every other op and for passes that write partials.
#pragma once

#include <c10/macros/Macros.h>

namespace gpureduce {

struct Projection {
  double divisor = 1.0;
  bool root = false;
  double repeats = 1.0;

  C10_HOST_DEVICE bool is_identity() const { return divisor == 1.0 && !root && repeats == 1.0; }
};

}  // namespace gpureduce
