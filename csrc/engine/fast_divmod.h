// Division by a run-time constant with a multiply and a shift (Granlund and
// Montgomery's round-up method), used by kernels that map linear indices to
// strided offsets. 64-bit, since tensors may hold more than 2^32 elements;
// FastDivmod32 where the indices are known to stay below 2^31.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>

namespace gpureduce {

struct FastDivmod {
  uint64_t divisor = 1;
  uint64_t magic = 1;
  int shift = 0;

  FastDivmod() = default;
  explicit FastDivmod(uint64_t d) : divisor(d) {
    shift = 0;
    while (shift < 63 && (uint64_t(1) << shift) < d) ++shift;
    const unsigned __int128 two64 = static_cast<unsigned __int128>(1) << 64;
    magic = static_cast<uint64_t>(two64 * ((uint64_t(1) << shift) - d) / d + 1);
  }

  // Valid for n < 2^63, where the sum below cannot overflow.
  C10_HOST_DEVICE uint64_t div(uint64_t n) const {
#if defined(__CUDA_ARCH__)
    const uint64_t t = __umul64hi(n, magic);
#else
    const uint64_t t = static_cast<uint64_t>((static_cast<unsigned __int128>(n) * magic) >> 64);
#endif
    return (t + n) >> shift;
  }
};

// The same in 32 bits, for indices below 2^31 (tile and row counts, which
// the launch checks): a multiply-high, an add and a shift, where the 64-bit
// form's __umul64hi and 64-bit shift are some 15 instructions.
struct FastDivmod32 {
  uint32_t divisor = 1;
  uint32_t magic = 1;
  int shift = 0;

  FastDivmod32() = default;
  explicit FastDivmod32(uint32_t d) : divisor(d) {
    shift = 0;
    while (shift < 31 && (uint32_t(1) << shift) < d) ++shift;
    magic = static_cast<uint32_t>((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d) / d + 1);
  }

  // Valid for n < 2^31, where the sum below cannot overflow.
  C10_HOST_DEVICE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t t = __umulhi(n, magic);
#else
    const uint32_t t = static_cast<uint32_t>((uint64_t(n) * magic) >> 32);
#endif
    return (t + n) >> shift;
  }
};

}  // namespace gpureduce
