// gpureduce::fsum: the correctly rounded sum (the exact sum of the inputs,
// rounded once to the output dtype, to nearest with ties to even), over
// all elements or over dims, like sum. A result is a mathematical function
// of the input: the same bits for any thread count or split.
//
// The CPU kernel (this file): the reduced dims moved last and made
// contiguous, each output's elements added into a superaccumulator
// (superaccumulator.h) a block at a time, by the windows of the CUDA
// kernel, or whole where it would take them whole (add_block below);
// rows in parallel, and a lone row in parallel
// chunks whose accumulators merge exactly. Meta and Autograd here too (the
// gradient is sum's: the output's gradient spread over the reduced
// elements). The CUDA kernel is fsum_cuda.cu.
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "../autograd/forward_ad.h"
#include "../autograd/node.h"
#include "../engine/reduce_shape.h"
#include "fsum.h"
#include "superaccumulator.h"

namespace gpureduce {
namespace fsum {
namespace {

bool is_fsum_type(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16;
}

// The dtype of the result (and of its rounding), with the errors: floating
// inputs and results only (an exact sum of integers is the integer sum).
at::ScalarType result_type(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  TORCH_CHECK(is_fsum_type(self.scalar_type()), "fsum(): expected a float16, bfloat16, float32 or float64 input, got ",
              c10::toString(self.scalar_type()));
  const at::ScalarType out = dtype.value_or(self.scalar_type());
  TORCH_CHECK(is_fsum_type(out), "fsum(): dtype must be float16, bfloat16, float32 or float64, got ",
              c10::toString(out));
  return out;
}

// Which dims are reduced (a flag a dim): all when `dim` is absent or
// empty, as for sum, with torch's errors for a dim out of range or
// repeated (the engine's helper, whose messages hold no streamed integers).
std::vector<bool> reduced_dims(const at::Tensor& self, at::OptionalIntArrayRef dim) {
  return reduced_dims_mask(self.dim(), dim);
}

std::vector<c10::SymInt> result_sizes(const at::Tensor& self, const std::vector<bool>& reduced, bool keepdim) {
  std::vector<c10::SymInt> sizes;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!reduced[d]) sizes.push_back(self.sym_size(d));
    else if (keepdim) sizes.emplace_back(1);
  }
  return sizes;
}

Format format_of(at::ScalarType t) {
  switch (t) {
    case at::kDouble: return {53, -1074};
    case at::kFloat: return {24, -149};
    case at::kHalf: return {11, -24};
    default: return {8, -133};  // bfloat16
  }
}

// A block of elements into the accumulator by windows (fsum_cuda.cu says
// why they are exact): with c = 1.5 * 2^m, m = E + kLogCount where the
// block's magnitudes are below 2^(E + 1), (x + c) - c is x rounded to a
// multiple of 2^(m - 52) and the rest is exact; each of kLanes sums adds
// kBlock / kLanes of them exactly. The rests go through the next window,
// 53 - kLogCount exponents lower, until none is left (float32's 24 bits
// fit one window, float64's 53 two, unless the block's values spread
// wider). A block with inf, nan, values from 2^1018 up (a window's
// constant would overflow) or only zeros (their signs) is added element by
// element.
constexpr int kBlock = 128, kLanes = 8, kLogCount = 4;
static_assert((1 << kLogCount) >= kBlock / kLanes && kLogCount >= 4, "a window's sums must stay exact");

double from_bits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}
// 2^e for e in [-1022, 1023]; 1.5 * 2^e with `half` (libm's ldexp is a
// call a block could not afford).
double pow2(int e, bool half = false) {
  return from_bits((static_cast<uint64_t>(e + 1023) << 52) | (half ? uint64_t(1) << 51 : 0));
}
// a * 2^k, exact for the integers below 2^53 that the windows' sums become
// (k up to 1074: two steps).
double times_pow2(double a, int k) {
  if (k > 1000) {
    a *= pow2(k - 1000);
    k = 1000;
  }
  return a * pow2(k);
}

// Window m over x[0, n) (n a multiple of kLanes, at most kBlock): the sum
// of its parts, an integer of units 2^(m - 52) below 2^56 (eight lanes
// below 2^53 each), the rests left in x. Returns whether any rest is not
// zero. The lanes are independent chains, which the compiler keeps in
// vector registers (it may not reorder one chain of double additions).
bool take_window(double* x, int n, int m, int64_t& units) {
  const double c = pow2(m, true);
  double sum[kLanes] = {}, left[kLanes] = {};
  for (int k = 0; k < n; k += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const double hi = (x[k + l] + c) - c;
      x[k + l] -= hi;
      sum[l] += hi;
      left[l] += std::fabs(x[k + l]);  // zero only if every rest is
    }
  units = 0;
  double any_left = 0.0;
  for (int l = 0; l < kLanes; ++l) {
    units += static_cast<int64_t>(times_pow2(sum[l], 52 - m));
    any_left += left[l];
  }
  return any_left != 0.0;
}

// What a block's magnitudes say about its windows: `ordinary` (false for
// a block to add element by element: one with inf, nan, float64 values
// from 2^1018 up, where a window's constant would overflow, or only zeros,
// for their signs); the first window m, kLogCount above the exponent of
// the largest; and `whole`, whether that window takes every element whole.
struct BlockRange {
  bool ordinary = false, whole = false;
  int m = 0;
};

// The range of float64 values x[0, n) (never whole: see whole_span).
BlockRange double_range(const double* v, int n) {
  // Lanes the compiler keeps in vector registers.
  double top[kLanes] = {}, special[kLanes] = {};
  for (int k = 0; k < n; k += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const double a = std::fabs(v[k + l]);
      top[l] = a > top[l] ? a : top[l];  // nan never replaces the largest...
      special[l] += a * 0.0;             // ...but makes this nan, as inf does
    }
  double largest = 0.0, specials = 0.0;
  for (int l = 0; l < kLanes; ++l) largest = std::max(largest, top[l]), specials += special[l];
  BlockRange r;
  if (specials != 0.0 || !(largest < 0x1p1018) || largest == 0.0) return r;
  uint64_t bits;
  std::memcpy(&bits, &largest, 8);
  const int biased = static_cast<int>(bits >> 52);
  const int exponent = biased ? biased - 1023 : std::ilogb(largest);  // largest < 2^(exponent + 1)
  r.ordinary = true;
  r.m = std::max(exponent + kLogCount, -1022);
  return r;
}

// Whether the first window takes every element whole: an input value of
// exponent e is a multiple of 2^(e + 1 - precision) (a subnormal of a
// coarser one), so with none more than 52 - (precision - 1) - kLogCount
// exponents below the largest, all are multiples of the window's unit
// 2^(m - 52). float64 (precision 53) never.
constexpr int whole_span(int precision) { return 52 - (precision - 1) - kLogCount; }

// Values of float32 or narrower, as their float32 bits' magnitude keys
// (ordered as the magnitudes): the largest, and the smallest nonzero one
// minus one (zeros wrap to ~0u). Integer maxima and minima, which the
// compiler vectorizes in the conversion's pass; a select on doubles that
// skipped zeros stayed scalar, and took most of the kernel's time.
struct FloatKeys {
  uint32_t top = 0, low = ~0u;
  void take(float f) {
    uint32_t key;
    std::memcpy(&key, &f, 4);
    key &= 0x7fffffffu;
    top = std::max(top, key);
    low = std::min(low, key - 1u);
  }
  template <int kInputPrecision>
  BlockRange range() const {
    BlockRange r;
    if (top >= 0x7f800000u || top == 0) return r;  // inf or nan, or only zeros
    const int biased = std::max(static_cast<int>(top >> 23), 1);  // subnormals as 1
    r.ordinary = true;
    r.m = biased - 127 + kLogCount;
    r.whole = biased - std::max(static_cast<int>((low + 1) >> 23), 1) <= whole_span(kInputPrecision);
    return r;
  }
};

// The sum of a whole block in units 2^(m - 52): each lane's elements add
// up exactly as they are (multiples of the unit, below 2^53 of them).
int64_t whole_units(const double* x, int n, int m) {
  double sum[kLanes] = {};
  for (int k = 0; k < n; k += kLanes)
    for (int l = 0; l < kLanes; ++l) sum[l] += x[k + l];
  int64_t units = 0;
  for (int l = 0; l < kLanes; ++l) units += static_cast<int64_t>(times_pow2(sum[l], 52 - m));
  return units;
}

int next_window(int m) { return std::max(m - (53 - kLogCount), -1022); }

void add_block(SuperAccumulator& acc, double* v, BlockRange r) {
  if (!r.ordinary) {
    for (int k = 0; k < kBlock; ++k) acc.add(v[k]);
    return;
  }
  acc.any_term = acc.any_not_neg_zero = true;  // a nonzero element
  if (r.whole) {
    acc.add_integer(whole_units(v, kBlock, r.m), r.m - 52 - kBase);
    return;
  }
  // The last window (m = -1022, a unit of 2^-1074) takes any rest whole.
  for (int m = r.m;; m = next_window(m)) {
    int64_t units;
    const bool left = take_window(v, kBlock, m, units);
    acc.add_integer(units, m - 52 - kBase);
    if (!left) break;
  }
}

// r * 2^e in steps that stay exact (as round_to's).
double scale(double r, int e) {
  for (; e > 0; e -= std::min(e, 1000)) r *= pow2(std::min(e, 1000));
  for (; e < 0; e -= std::max(e, -1000)) r *= pow2(std::max(e, -1000));
  return r;
}

// s * 2^e rounded once to a format of `precision` bits whose smallest
// subnormal is 2^min_exp, to nearest with ties to even: round_to's
// result for the same exact value.
double round_scaled(__int128 s, int e, int precision, int min_exp) {
  if (s == 0) return 0.0;  // from nonzero elements: +0.0
  const bool negative = s < 0;
  const unsigned __int128 mag = negative ? 0 - static_cast<unsigned __int128>(s) : static_cast<unsigned __int128>(s);
  const uint64_t high = static_cast<uint64_t>(mag >> 64);
  const int top = high ? 127 - __builtin_clzll(high) : 63 - __builtin_clzll(static_cast<uint64_t>(mag));
  const int lo = std::max(top + e - (precision - 1), min_exp);  // the exponent of the result's last bit
  const int shift = lo - e;
  double r;
  if (shift <= 0) {
    r = scale(static_cast<double>(static_cast<uint64_t>(mag)), e);  // mag < 2^precision: exact
  } else {
    uint64_t m = shift > top ? 0 : static_cast<uint64_t>(mag >> shift);
    const bool round = shift - 1 <= top && ((mag >> (shift - 1)) & 1);
    const bool sticky =
        shift >= 2 && (shift - 1 > 127 ? mag != 0 : (mag & ((static_cast<unsigned __int128>(1) << (shift - 1)) - 1)) != 0);
    if (round && (sticky || (m & 1))) ++m;  // may reach 2^precision: still exact
    r = scale(static_cast<double>(m), lo);
  }
  return negative ? -r : r;
}

// A row of at most kBlock elements (v[0, n), padded with -0.0 to n, a
// multiple of kLanes, of range r) whose every part the first two windows
// take: its exact sum is one 128-bit integer of the second window's units,
// rounded straight away, without the 68 digits. Returns false for a row
// that needs the accumulator.
bool fsum_short_row(double* v, int n, BlockRange r, Format f, double& result) {
  if (!r.ordinary) return false;
  const int m1 = r.m;
  int64_t units1, units2;
  if (r.whole) {
    result = round_scaled(whole_units(v, n, m1), m1 - 52, f.precision, f.min_exp);
    return true;
  }
  if (!take_window(v, n, m1, units1)) {
    result = round_scaled(units1, m1 - 52, f.precision, f.min_exp);
    return true;
  }
  const int m2 = next_window(m1);
  if (take_window(v, n, m2, units2)) return false;
  const __int128 s = (static_cast<__int128>(units1) << (m1 - m2)) + units2;  // below 2^(56 + 49)
  result = round_scaled(s, m2 - 52, f.precision, f.min_exp);
  return true;
}

// The significant bits of float32 and the 16-bit types (float64 takes
// its own path in load_block).
template <typename scalar_t>
constexpr int kPrecision = std::is_same_v<scalar_t, float> ? 24 : std::is_same_v<scalar_t, c10::BFloat16> ? 8 : 11;

// p[0, n) as doubles into v (padded with -0.0 to `padded`), and their range.
template <typename scalar_t>
BlockRange load_block(const scalar_t* p, int n, int padded, double* v) {
  if constexpr (std::is_same_v<scalar_t, double>) {
    for (int j = 0; j < padded; ++j) v[j] = j < n ? p[j] : -0.0;
    return double_range(v, padded);
  } else {
    FloatKeys keys;
    if (n == padded) {  // the full blocks: a loop without the padding's test
      for (int j = 0; j < n; ++j) {
        const float f = static_cast<float>(p[j]);
        keys.take(f);
        v[j] = f;
      }
    } else {
      for (int j = 0; j < padded; ++j) {
        const float f = j < n ? static_cast<float>(p[j]) : -0.0f;
        keys.take(f);
        v[j] = f;
      }
    }
    return keys.template range<kPrecision<scalar_t>>();
  }
}

template <typename scalar_t>
void add_elements(SuperAccumulator& acc, const scalar_t* p, int64_t n) {
  double v[kBlock];
  int64_t k = 0;
  for (; k + kBlock <= n; k += kBlock) add_block(acc, v, load_block(p + k, kBlock, kBlock, v));
  for (; k < n; ++k) acc.add(static_cast<double>(p[k]));
}

}  // namespace

FsumRows fsum_rows(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype) {
  FsumRows r;
  r.out_type = result_type(self, dtype);
  r.format = format_of(r.out_type);
  const std::vector<bool> reduced = reduced_dims(self, dim);
  std::vector<int64_t> order;  // kept dims, then reduced ones
  r.count = 1;
  r.length = 1;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!reduced[d]) order.push_back(d), r.count *= self.size(d);
  for (int64_t d = 0; d < self.dim(); ++d)
    if (reduced[d]) order.push_back(d), r.length *= self.size(d);
  for (const auto& s : result_sizes(self, reduced, keepdim)) r.out_sizes.push_back(s.expect_int());
  if (r.count > 0) r.rows = self.permute(order).contiguous();
  return r;
}

namespace {

at::Tensor fsum_cpu(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  const FsumRows r = fsum_rows(self, dim, keepdim, dtype);
  at::Tensor out = at::empty(r.out_sizes, self.options().dtype(r.out_type));
  const int64_t rows = r.count, length = r.length;
  if (rows == 0) return out;
  const at::Tensor& x = r.rows;
  const Format f = r.format;
  const at::ScalarType out_type = r.out_type;
  std::vector<double> results(static_cast<size_t>(rows));
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "fsum_cpu", [&] {
    const scalar_t* p = x.const_data_ptr<scalar_t>();
    const auto add_range = [&](SuperAccumulator& acc, int64_t row, int64_t begin, int64_t end) {
      add_elements(acc, p + row * length + begin, end - begin);
    };
    constexpr int64_t kChunk = 1 << 16;
    if (rows >= at::get_num_threads() || length < 2 * kChunk) {
      at::parallel_for(0, rows, std::max<int64_t>(1, kChunk / std::max<int64_t>(length, 1)), [&](int64_t b, int64_t e) {
        SuperAccumulator acc;
        double v[kBlock];
        for (int64_t row = b; row < e; ++row) {
          if (length <= kBlock) {
            const int n = static_cast<int>((length + kLanes - 1) / kLanes * kLanes);
            const BlockRange range = load_block(p + row * length, static_cast<int>(length), n, v);
            if (fsum_short_row(v, n, range, f, results[row])) continue;
          }
          acc.clear();
          add_range(acc, row, 0, length);
          results[row] = acc.round_to(f.precision, f.min_exp);
        }
      });
    } else {
      // Few long rows: chunks of each row in parallel, merged after (exact,
      // so the order of the merge does not matter).
      const int64_t chunks = (length + kChunk - 1) / kChunk;
      std::vector<SuperAccumulator> parts(static_cast<size_t>(rows * chunks));
      at::parallel_for(0, rows * chunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          SuperAccumulator& acc = parts[t];
          acc.clear();
          const int64_t c = t % chunks;
          add_range(acc, t / chunks, c * kChunk, std::min(length, (c + 1) * kChunk));
        }
      });
      for (int64_t row = 0; row < rows; ++row) {
        SuperAccumulator& acc = parts[row * chunks];
        for (int64_t c = 1; c < chunks; ++c) acc.merge(parts[row * chunks + c]);
        results[row] = acc.round_to(f.precision, f.min_exp);
      }
    }
  });
  // Each result is exact in the output dtype (or +-inf past its largest
  // value, nan): the cast from double only changes the representation.
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out_type, "fsum_cpu_out", [&] {
    scalar_t* o = out.mutable_data_ptr<scalar_t>();
    for (int64_t row = 0; row < rows; ++row) {
      if constexpr (std::is_same_v<scalar_t, double>) {
        o[row] = results[row];
      } else {
        o[row] = static_cast<scalar_t>(static_cast<float>(results[row]));
      }
    }
  });
  return out;
}

at::Tensor fsum_meta(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype) {
  const at::ScalarType out_type = result_type(self, dtype);
  return at::empty_symint(result_sizes(self, reduced_dims(self, dim), keepdim), self.options().dtype(out_type));
}

using FsumOp = c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool,
                                                   std::optional<at::ScalarType>)>;
const FsumOp& fsum_op() {
  static const FsumOp op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("gpureduce::fsum", "dim_IntList")
                               .typed<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool,
                                                 std::optional<at::ScalarType>)>();
  return op;
}

// The gradient of a sum: each reduced element gets its output's gradient,
// cast to the input's dtype.
struct GpureduceFsumBackward : public torch::autograd::Node {
  std::vector<int64_t> dims;  // reduced, ascending
  bool keepdim = false;
  std::vector<c10::SymInt> sizes;
  at::ScalarType type = at::kFloat;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    at::Tensor g = grads[0];
    if (!g.defined()) return {at::Tensor()};
    if (!keepdim)
      for (int64_t d : dims) g = g.unsqueeze(d);
    return {g.expand_symint(sizes).to(type)};
  }
  std::string name() const override { return "GpureduceFsumBackward"; }
};

at::Tensor fsum_autograd(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype) {
  result_type(self, dtype);  // the errors before any node is made
  at::Tensor result;
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    result = fsum_op().call(self, dim, keepdim, dtype);
  }
  if (at::GradMode::is_enabled() && self.requires_grad()) {
    NodePtr node = make_node<GpureduceFsumBackward>();
    auto* n = static_cast<GpureduceFsumBackward*>(node.get());
    const std::vector<bool> reduced = reduced_dims(self, dim);
    for (int64_t d = 0; d < self.dim(); ++d)
      if (reduced[d]) n->dims.push_back(d);
    n->keepdim = keepdim;
    n->sizes = self.sym_sizes().vec();
    n->type = self.scalar_type();
    node->set_next_edges(torch::autograd::collect_next_edges(self));
    torch::autograd::set_history(result, node);
  }
  // A sum's tangent: the tangent's own correctly rounded sum.
  set_tangent(self, result, [&](const at::Tensor&, const at::Tensor& t) { return fsum_op().call(t, dim, keepdim, dtype); });
  return result;
}

at::Tensor fsum_all(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  return fsum_op().call(self, std::nullopt, false, dtype);
}

}  // namespace
}  // namespace fsum
}  // namespace gpureduce

TORCH_LIBRARY_IMPL(gpureduce, CompositeImplicitAutograd, m) { m.impl("fsum", &gpureduce::fsum::fsum_all); }
TORCH_LIBRARY_IMPL(gpureduce, CPU, m) { m.impl("fsum.dim_IntList", &gpureduce::fsum::fsum_cpu); }
TORCH_LIBRARY_IMPL(gpureduce, Meta, m) { m.impl("fsum.dim_IntList", &gpureduce::fsum::fsum_meta); }
TORCH_LIBRARY_IMPL(gpureduce, Autograd, m) { m.impl("fsum.dim_IntList", &gpureduce::fsum::fsum_autograd); }
