// The families' host-side pieces (reduce_family.h).
#include "reduce_family.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/ScalarOps.h>
#include <ATen/ops/add.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/view_as_real.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "reduce_dtypes.h"

namespace gpureduce {

namespace {

// Up to this many elements, sum's fold on the CPU is a plain loop: through
// a TensorIterator op (at::mul_out, when measured) it cost 4-5 us a call whatever the size,
// more than the reductions it ends.
constexpr int64_t kCpuLoopFoldMax = int64_t(1) << 14;

// y = 0 + k * x as at::add_out(y, 0, x, k) computes it: in float for the
// 16-bit floats and float32 (k converted to float, one rounding), in double
// for float64, modulo 2^64 for integers (bool read as 0 or 1). The 0 is
// sum's identity: torch.sum of repeats of -0.0 is +0.0.
template <typename src_t, typename dst_t>
void scale_into(const src_t* x, int64_t n, int64_t k, dst_t* y) {
  if constexpr (std::is_same_v<dst_t, int64_t>) {
    const uint64_t uk = static_cast<uint64_t>(k);
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<int64_t>(static_cast<uint64_t>(x[i]) * uk);
  } else {
    using math_t = std::conditional_t<std::is_same_v<src_t, double>, double, float>;
    const math_t kk = static_cast<math_t>(k);
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<dst_t>(static_cast<math_t>(x[i]) * kk + math_t(0));
  }
}

// The loop above where it applies: small dense CPU tensors of one shape
// that do not partly overlap, of the dtype pairs sum's fold meets, float16
// aside (converted one at a time in this baseline build, [16000, 1] float16
// expanded to [16000, 8] took 57 us in the loop, 19 through at::mul_out).
bool scale_by_loop(const at::Tensor& x, int64_t k, const at::Tensor& y) {
  if (!x.device().is_cpu() || !y.device().is_cpu() || x.numel() > kCpuLoopFoldMax || x.sizes() != y.sizes() ||
      !x.is_contiguous() || !y.is_contiguous()) {
    return false;
  }
  const at::MemOverlapStatus overlap = at::get_overlap_status(x, y);
  if (overlap == at::MemOverlapStatus::Partial || overlap == at::MemOverlapStatus::TooHard) return false;
  const at::ScalarType s = x.scalar_type(), d = y.scalar_type();
  const int64_t n = x.numel();
  auto run = [&](auto src_tag, auto dst_tag) {
    using src_t = typename decltype(src_tag)::type;
    using dst_t = typename decltype(dst_tag)::type;
    scale_into(x.const_data_ptr<src_t>(), n, k, y.mutable_data_ptr<dst_t>());
    return true;
  };
  if (d == at::kLong && s == at::kLong) return run(TypeTag<int64_t>{}, TypeTag<int64_t>{});
  if (d == at::kLong && s == at::kBool) return run(TypeTag<bool>{}, TypeTag<int64_t>{});
  if (d == at::kDouble && s == at::kDouble) return run(TypeTag<double>{}, TypeTag<double>{});
  if (d == at::kFloat && s == at::kFloat) return run(TypeTag<float>{}, TypeTag<float>{});
  if (d == at::kDouble && s == at::kFloat) return run(TypeTag<float>{}, TypeTag<double>{});
  if (d == at::kBFloat16 && s == at::kBFloat16) return run(TypeTag<c10::BFloat16>{}, TypeTag<c10::BFloat16>{});
  if (d == at::kBFloat16 && s == at::kFloat) return run(TypeTag<float>{}, TypeTag<c10::BFloat16>{});
  return false;
}

}  // namespace

void SumFamily::fill_empty(const at::Tensor& t) { t.zero_(); }

void SumFamily::fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest) {
  if (partial.is_complex() && dest.is_complex()) {
    // Each part scaled on its own: a complex multiply by k + 0i makes
    // (inf + 1i) * k into inf + nan i, where k adds give inf + k i.
    return fold_repeats(at::view_as_real(partial), k, at::view_as_real(dest));
  }
  if (scale_by_loop(partial, k, dest)) return;
  at::add_out(const_cast<at::Tensor&>(dest), c10::scalar_to_tensor(c10::Scalar(int64_t(0))), partial, c10::Scalar(k));
}

void ProdFamily::fill_empty(const at::Tensor& t) { t.fill_(1); }

void ProdFamily::fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest) {
  at::pow_out(const_cast<at::Tensor&>(dest), partial, c10::Scalar(k));
}

template <bool kMax>
void ExtremumFamily<kMax>::fill_empty(const at::Tensor& /*t*/) {
  TORCH_CHECK_INDEX(false, kMax ? "amax" : "amin", "(): Expected reduction dim to have non-zero size.");
}

template <bool kMax>
void ExtremumFamily<kMax>::fold_repeats(const at::Tensor& partial, int64_t /*k*/, const at::Tensor& dest) {
  const_cast<at::Tensor&>(dest).copy_(partial);
}

void LogSumExpFamily::fill_empty(const at::Tensor& t) { t.fill_(-std::numeric_limits<double>::infinity()); }

// logsumexp of k copies of x is x + log(k): one add, rounded once in the
// result's dtype (x of +inf or -inf stays itself, NaN stays NaN).
void LogSumExpFamily::fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest) {
  at::add_out(const_cast<at::Tensor&>(dest), partial, c10::scalar_to_tensor(c10::Scalar(std::log(double(k)))));
}

template struct ExtremumFamily<true>;
template struct ExtremumFamily<false>;

// Reached only where an output reduces no elements, which reduce_into
// fills with NaN itself (an average over none); kept for the OpSpec.
void VarianceFamily::fill_empty(const at::Tensor& t) { t.fill_(std::numeric_limits<double>::quiet_NaN()); }

}  // namespace gpureduce
