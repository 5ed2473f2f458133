// Checks csrc/engine/fast_divmod.h's multiply-and-shift division against
// the `/` operator on the host (the device path computes the same
// multiply-high with __umulhi / __umul64hi): every divisor up to 3000,
// divisors around powers of two and random ones up to 2^31 - 1, each at
// dividends around its multiples, near 0 and near the top of the valid
// range (2^31 - 1 for FastDivmod32). Prints "fast_divmod ok" or the first
// failures, and exits 1 on any.
#include "engine/fast_divmod.h"

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

using gpureduce::FastDivmod;
using gpureduce::FastDivmod32;

int main() {
  std::mt19937_64 rng(98);
  long bad = 0, checked = 0;
  std::vector<uint64_t> divisors;
  for (uint64_t d = 1; d <= 3000; ++d) divisors.push_back(d);
  for (int s = 1; s < 31; ++s)
    for (int64_t delta = -2; delta <= 2; ++delta) divisors.push_back(uint64_t((int64_t(1) << s) + delta));
  for (int i = 0; i < 20000; ++i) divisors.push_back(rng() % 0x7fffffffu + 1);
  const uint64_t top = 0x7fffffffu;  // FastDivmod32 is valid for n < 2^31
  for (uint64_t d : divisors) {
    if (d == 0 || d > top) continue;
    const FastDivmod32 f32(static_cast<uint32_t>(d));
    const FastDivmod f64(d);
    std::vector<uint64_t> ns = {0, 1, d - 1, d, d + 1, top, top - 1, top - d + 1, rng() % (top + 1)};
    for (int k = 0; k < 16; ++k) {
      const uint64_t m = d * (rng() % (top / d + 1));
      ns.push_back(m);
      if (m > 0) ns.push_back(m - 1);
      ns.push_back(m + 1);
    }
    for (uint64_t n : ns) {
      if (n > top) continue;
      ++checked;
      const uint64_t want = n / d;
      const uint64_t got32 = f32.div(static_cast<uint32_t>(n));
      const uint64_t got64 = f64.div(n);
      if (got32 != want || got64 != want) {
        if (bad < 10)
          std::printf("n=%llu d=%llu: %llu (32-bit) %llu (64-bit), want %llu\n", (unsigned long long)n,
                      (unsigned long long)d, (unsigned long long)got32, (unsigned long long)got64,
                      (unsigned long long)want);
        ++bad;
      }
    }
  }
  if (bad) {
    std::printf("%ld of %ld wrong\n", bad, checked);
    return 1;
  }
  std::printf("fast_divmod ok (%ld divisions)\n", checked);
  return 0;
}
