// Division by a run-time constant with a multiply and a shift (Granlund and
// Montgomery's round-up method), used by kernels that map linear indices to
// strided offsets. FastDivmod is 64-bit, since tensors may hold more than
// 2^32 elements; FastDivmod32, where the indices are known to stay below
// 2^31 (tile and row counts that a launch checks), is a multiply-high, an
// add and a shift, where the 64-bit form's __umul64hi and 64-bit shift are
// some 15 instructions.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>

namespace gpureduce {

// Word: uint32_t or uint64_t; Wide: an unsigned type of twice its bits.
template <typename Word, typename Wide>
struct MultiplyShiftDivisor {
  static constexpr int kBits = 8 * sizeof(Word);
  Word divisor = 1;
  Word magic = 1;
  int shift = 0;

  MultiplyShiftDivisor() = default;
  explicit MultiplyShiftDivisor(Word d) : divisor(d) {
    shift = 0;
    while (shift < kBits - 1 && (Word(1) << shift) < d) ++shift;
    magic = static_cast<Word>((Wide(1) << kBits) * ((Word(1) << shift) - d) / d + 1);
  }

  // Valid for n < 2^(kBits - 1), where the sum below cannot overflow.
  C10_HOST_DEVICE Word div(Word n) const {
#if defined(__CUDA_ARCH__)
    Word t;
    if constexpr (sizeof(Word) == 8)
      t = __umul64hi(n, magic);
    else
      t = __umulhi(n, magic);
#else
    const Word t = static_cast<Word>((static_cast<Wide>(n) * magic) >> kBits);
#endif
    return (t + n) >> shift;
  }
};

using FastDivmod = MultiplyShiftDivisor<uint64_t, unsigned __int128>;
using FastDivmod32 = MultiplyShiftDivisor<uint32_t, uint64_t>;

}  // namespace gpureduce
