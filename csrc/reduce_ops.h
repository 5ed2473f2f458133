// Op functors for the reduction engine, shared by the CPU and CUDA kernels
// (the shape of ATen's SharedReduceOps.h). An op says how to start (identity),
// fold in one input (reduce), fold in a short vector of inputs
// (reduce_vector, which an op may specialise), merge two partials (combine)
// and produce the output value (project). prod, max, min and mean are meant
// to slot in beside SumOp.
#pragma once

#include <c10/macros/Macros.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/complex.h>

#include <cstdint>
#include <type_traits>

namespace gpureduce {

template <typename acc_t>
struct SumOp {
  using acc_type = acc_t;

  // The op in which the CUDA rows kernels carry their partials, from a
  // thread's running sums to the grid's finish. float32 sums (float, half and
  // bfloat16 inputs) run in float64 there: each vector load's few elements
  // are still added in float, but nothing long is. With float running sums,
  // a thread's partial grows to hundreds of adds, and every level of the
  // block and grid trees rounds again; on 2^28 normal samples that left the
  // error no better than torch.sum's (benchmarks/NOTES.md).
  using wide_op = std::conditional_t<std::is_same_v<acc_t, float>, SumOp<double>, SumOp<acc_t>>;

  C10_HOST_DEVICE static acc_t identity() { return acc_t(0); }

  template <typename in_t>
  C10_HOST_DEVICE static acc_t reduce(acc_t acc, in_t x) {
    return acc + static_cast<acc_t>(x);
  }

  C10_HOST_DEVICE static acc_t combine(acc_t a, acc_t b) { return a + b; }

  template <typename out_t>
  C10_HOST_DEVICE static out_t project(acc_t a) {
    return static_cast<out_t>(a);
  }

  // Byte inputs: the CUDA engine hands the 16 bytes of a load over as the
  // four 32-bit words they arrived in. Going through reduce_vector's byte
  // array instead made the compiler take the words apart byte by byte and
  // pack them again (Nsight Compute: 71% SM throughput against 17% for the
  // float32 sum of the same bytes, and 8% less bandwidth).
  template <typename in_t>
  static constexpr bool sums_packed_bytes() {
    return sizeof(in_t) == 1 && std::is_integral_v<acc_t>;
  }

#if defined(__CUDA_ARCH__)
  template <typename in_t>
  __device__ static acc_t reduce_packed_bytes(const uint4& w) {
    static_assert(sums_packed_bytes<in_t>(), "byte inputs only");
    if constexpr (std::is_signed_v<in_t>) {
      int s = __dp4a(static_cast<int>(w.x), 0x01010101, 0);
      s = __dp4a(static_cast<int>(w.y), 0x01010101, s);
      s = __dp4a(static_cast<int>(w.z), 0x01010101, s);
      s = __dp4a(static_cast<int>(w.w), 0x01010101, s);
      return static_cast<acc_t>(s);
    } else {
      unsigned s = __dp4a(w.x, 0x01010101u, 0u);
      s = __dp4a(w.y, 0x01010101u, s);
      s = __dp4a(w.z, 0x01010101u, s);
      s = __dp4a(w.w, 0x01010101u, s);
      return static_cast<acc_t>(s);
    }
  }
#endif

  // Sum of V consecutive inputs as a balanced tree, so that a vector load
  // costs one add into the running partial. (Byte vectors on CUDA go through
  // reduce_packed_bytes instead.)
  template <int V, typename in_t>
  C10_HOST_DEVICE static acc_t reduce_vector(const in_t (&v)[V]) {
    if constexpr (sizeof(in_t) == 2 && std::is_integral_v<acc_t>) {
      int32_t s = 0;  // 8 int16 values cannot overflow int32
#pragma unroll
      for (int i = 0; i < V; ++i) s += static_cast<int32_t>(v[i]);
      return static_cast<acc_t>(s);
    } else {
      acc_t t[V];
#pragma unroll
      for (int i = 0; i < V; ++i) t[i] = static_cast<acc_t>(v[i]);
#pragma unroll
      for (int w = 1; w < V; w *= 2) {
#pragma unroll
        for (int i = 0; i + w < V; i += 2 * w) t[i] = t[i] + t[i + w];
      }
      return t[0];
    }
  }
};

}  // namespace gpureduce
