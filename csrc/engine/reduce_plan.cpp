#include "reduce_plan.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/result_type.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "reduce_dtypes.h"
#include "reduce_shape.h"

namespace gpureduce {
namespace {

struct Dim {
  int64_t size;
  int64_t in_stride;
  int64_t out_stride;  // 0 for reduced dims
  bool reduced;
  uint64_t orig_dims;  // bit d set: this (coalesced) dim holds input dim d
};

// The dtype the kernels write. Integer results are computed in int64 and cast
// afterwards: integer casts wrap modulo 2^k, and so do the integer adds and
// multiplies of sum and prod, so this equals torch's order (cast each
// element, then reduce) exactly.
at::ScalarType kernel_out_dtype(at::ScalarType out) {
  if (at::isIntegralType(out, /*includeBool=*/true)) return at::kLong;
  if (out == at::kComplexHalf) return at::kComplexFloat;
  return out;
}

// The dtype the kernels read for a given result dtype: the input's own where
// the kernels take it directly, else what torch would cast it to first.
at::ScalarType staged_input_dtype(at::ScalarType in, at::ScalarType out, const OpSpec& op) {
  if (out == at::kBool) return at::kBool;  // bool(x) is not modular: cast first
  const at::ScalarType kout = kernel_out_dtype(out);
  if (kernel_reads_directly(in, kout, op.widening)) return in;
  if (at::isIntegralType(out, /*includeBool=*/true)) {
    const at::ScalarType as_int = at::isIntegralType(in, true) ? in : out;
    return is_wide_unsigned(as_int) ? at::kLong : as_int;
  }
  return kout;
}

// Expanded inputs of at most this many bytes (counting their repeats) are
// reduced as they are, in one launch, not narrowed to their distinct
// elements first (two or three). Over 48 expanded inputs of 83 KB to 33 MB
// (H200, NOTES.md session 105) a limit of 256 KB left four of them under
// torch.sum (0.81-0.92x: [2, 136722] bfloat16 into float32, [4096, 340]
// bfloat16, [284, 1024] float32, [169198, 2] float16), 4 MB took all four
// to 1.28-1.50x, and slowed none whose launches it changed; 32 MB slowed
// five inputs of 7-34 MB by 8-40% and sped four up. On the CPU, where a
// re-read runs at a core's bandwidth rather than from a GPU's L2, the
// limit stays at 256 KB.
constexpr int64_t kRereadExpandedBytes = int64_t(4) << 20;
constexpr int64_t kCpuRereadExpandedBytes = int64_t(256) << 10;
// A reduction over dims of size 1 only, of at most this many bytes, is a
// pass on the GPU rather than a fold (below, session 30).
constexpr int64_t kPassBeforeFoldBytes = int64_t(256) << 10;
// On the CPU, expanded inputs of at most this many bytes are read as they
// are even where every reduced dim is a repeat: the fold is a TensorIterator
// multiply, which cost 5.1 us a call whatever the size, against 2.1-3.3 us
// for reading up to 16 KB as it is (2 threads, this project's 2-core
// machine; bfloat16 [1] expanded to 4096: 5.1 -> 2.3 us, torch.sum 3.2;
// float32 [10] expanded to [10, 409] over dim 1: 5.5 -> 3.3, torch.sum 2.7;
// [10, 1638]: 5.5 -> 5.9, so no further). On the GPU the fold is one launch
// like the reduction's (but for dims of size 1 only: reduce_into).
constexpr int64_t kCpuRereadBeforeFoldBytes = int64_t(16) << 10;

// Dims of size 1 dropped, sorted into memory order (innermost first) and
// neighbours merged where the memory allows it.
std::vector<Dim> canonical_dims(const at::Tensor& in, const std::vector<bool>& mask,
                                const at::Tensor& target) {
  std::vector<Dim> dims;
  for (int64_t d = in.dim() - 1; d >= 0; --d) {
    if (in.size(d) == 1) continue;
    const bool r = mask[d];
    dims.push_back({in.size(d), in.stride(d), r ? 0 : target.stride(d), r, uint64_t(1) << d});
  }
  // Dims of stride 0 (a small expanded input read as it is) go outermost,
  // so that the dims that walk memory stay innermost.
  auto order = [](const Dim& d) { return d.in_stride == 0 ? INT64_MAX : d.in_stride; };
  std::stable_sort(dims.begin(), dims.end(), [&](const Dim& a, const Dim& b) { return order(a) < order(b); });
  std::vector<Dim> merged;
  for (const Dim& d : dims) {
    if (!merged.empty()) {
      Dim& m = merged.back();
      const bool same_kind = m.reduced == d.reduced;
      const bool in_adjacent = d.in_stride == m.in_stride * m.size;
      const bool out_adjacent = d.reduced || d.out_stride == m.out_stride * m.size;
      if (same_kind && in_adjacent && out_adjacent) {
        m.size *= d.size;
        m.orig_dims |= d.orig_dims;
        continue;
      }
    }
    merged.push_back(d);
  }
  return merged;
}

void fill_outer(OuterIndexer& outer, int64_t& n_out, const std::vector<Dim>& dims, size_t skip) {
  outer.ndim = 0;
  n_out = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].reduced || i == skip) continue;
    TORCH_INTERNAL_ASSERT(outer.ndim < kMaxDims);
    outer.sizes[outer.ndim] = FastDivmod(static_cast<uint64_t>(dims[i].size));
    outer.in_strides[outer.ndim] = dims[i].in_stride;
    outer.out_strides[outer.ndim] = dims[i].out_stride;
    ++outer.ndim;
    n_out *= dims[i].size;
  }
}

std::vector<bool> mask_of(uint64_t bits, int64_t ndim) {
  std::vector<bool> m(static_cast<size_t>(ndim));
  for (int64_t d = 0; d < ndim; ++d) m[d] = (bits >> d) & 1;
  return m;
}

void reduce_strided(const at::Tensor& in, const std::vector<bool>& mask, const at::Tensor& target,
                    const OpSpec& op, bool reads_partials, bool writes_partials,
                    const Projection& projection = Projection{});

// Up to this many elements, a CPU result is broadcast along its kept dims
// of stride 0 by the loop below: a TensorIterator copy cost about 3 us a
// call whatever the size ([33486] float32 expanded to [33486, 2] over dim
// 0: 11.2 us, of which 2.9 the copy of two elements, torch.sum 9.1).
constexpr int64_t kCpuLoopBroadcastMax = int64_t(1) << 12;

template <size_t kBytes>
void copy_row(const char* src, int64_t src_stride, char* dst, int64_t dst_stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * dst_stride, src + i * src_stride, kBytes);
}

// Writes every element of `dst` from `src`, of dst's rank and dtype with
// size 1 at the dims it is broadcast along, where both are small CPU
// tensors that do not overlap. Returns false, writing nothing, elsewhere.
bool broadcast_by_loop(const at::Tensor& src, const at::Tensor& dst) {
  const int64_t rank = dst.dim();
  if (!src.device().is_cpu() || !dst.device().is_cpu() || dst.numel() > kCpuLoopBroadcastMax ||
      src.scalar_type() != dst.scalar_type() || src.dim() != rank || rank == 0) {
    return false;
  }
  // Views with gaps are "too hard" to compare: in separate storages they
  // cannot overlap either.
  const at::MemOverlapStatus overlap = at::get_overlap_status(src, dst);
  if (overlap != at::MemOverlapStatus::No &&
      (overlap != at::MemOverlapStatus::TooHard || src.storage().is_alias_of(dst.storage()))) {
    return false;
  }
  if (dst.numel() == 0) return true;
  const int64_t bytes = dst.element_size();
  std::vector<int64_t> src_step(rank), dst_step(rank);
  for (int64_t d = 0; d < rank; ++d) {
    src_step[d] = (src.size(d) == 1 ? 0 : src.stride(d)) * bytes;
    dst_step[d] = dst.stride(d) * bytes;
  }
  auto row = [&](const char* s, char* o) {
    const int64_t n = dst.size(rank - 1), ss = src_step[rank - 1], ds = dst_step[rank - 1];
    switch (bytes) {
      case 1: return copy_row<1>(s, ss, o, ds, n);
      case 2: return copy_row<2>(s, ss, o, ds, n);
      case 4: return copy_row<4>(s, ss, o, ds, n);
      case 8: return copy_row<8>(s, ss, o, ds, n);
      default: return copy_row<16>(s, ss, o, ds, n);  // complex double, the widest dtype
    }
  };
  const char* s = static_cast<const char*>(src.const_data_ptr());
  char* o = static_cast<char*>(dst.mutable_data_ptr());
  std::vector<int64_t> index(rank, 0);
  for (;;) {
    row(s, o);
    int64_t d = rank - 2;  // the outer dims as an odometer
    for (; d >= 0; --d) {
      s += src_step[d];
      o += dst_step[d];
      if (++index[d] < dst.size(d)) break;
      s -= src_step[d] * index[d];
      o -= dst_step[d] * index[d];
      index[d] = 0;
    }
    if (d < 0) return true;
  }
}

// An empty tensor of `shape` (in's rank) whose dims lie in memory in the
// order in's do, so that the dims a first step keeps merge in its partials
// as they do in the input.
at::Tensor empty_in_memory_order(const at::Tensor& in, const std::vector<int64_t>& shape, at::ScalarType dtype) {
  std::vector<int64_t> order(static_cast<size_t>(in.dim()));
  std::iota(order.begin(), order.end(), int64_t(0));
  // Outermost first: larger strides first, ties in dim order.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return in.stride(a) > in.stride(b); });
  std::vector<int64_t> strides(shape.size());
  int64_t step = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[static_cast<size_t>(*it)] = step;
    step *= std::max<int64_t>(shape[static_cast<size_t>(*it)], 1);
  }
  return at::empty_strided(shape, strides, in.options().dtype(dtype));
}

// A short inner reduced row under a second reduced dim, with kept dims
// between them that lie dense against the row ([N, C, r] over (0, 2)): the
// rows pass gives each output a few bytes of N rows far apart (on the GPU a
// sector's fraction per load; on the CPU a strided walk per output).
// Reading the N rows first as columns (C * r dense columns, neighbouring
// outputs' rows side by side) into partials of the accumulator dtype, then
// rows of r over those, wins from these sizes up (NOTES.md, session 42):
// - H200, 90 random passes of r = 2 to 32: 21 of the 22 with rows under 32
//   bytes and 8 MB or more 1.1-3.3x faster ([1588, 7666, 5] float32 131 ->
//   62 us, torch.sum 111; [15184, 11064, 3] float16 824 -> 248, torch.sum
//   1568); smaller inputs lost the second launch ([4, 9285, 4] float16 2.6
//   -> 5.1 us), as did rows of 32 bytes and more over few outputs ([9688,
//   174, 16] float16 21.8 -> 26.1).
// - CPU (2 threads), 60 random passes of r = 2 to 64
//   (benchmarks/results/cpu_2026-11-27/cpu_columns_first_s42.txt): rows of
//   up to 64 bytes 1.0-12x faster from 64 KB up (42 passes; [2153, 5453,
//   2] bfloat16 18.2 -> 1.75 ms); rows of 96 to 256 bytes 1.04-2.5x
//   faster from 2 MB up ([1479, 28, 64] float32 125 -> 67 us) but slower
//   under 1 MB ([20, 168, 64] bfloat16 12.0 -> 18.9 us), as were smaller
//   inputs of any row ([117, 11, 4] float32 3.6 -> 5.9 us: the second
//   call's cost).
// The partials are 1/N of the input: at least kColumnsFirstMinRows rows.
// var's accumulators hand on no partials.
struct ColumnsFirstLimits {
  // Rows of up to short_row_bytes from short_min_bytes of input, of up to
  // max_row_bytes from min_bytes.
  int64_t short_row_bytes, short_min_bytes, max_row_bytes, min_bytes;
};
constexpr ColumnsFirstLimits kColumnsFirstGpu{31, int64_t(8) << 20, 31, int64_t(8) << 20};
constexpr ColumnsFirstLimits kColumnsFirstCpu{64, int64_t(64) << 10, 256, int64_t(2) << 20};
constexpr int64_t kColumnsFirstMinRows = 16;

bool columns_first_pays(const at::Tensor& in, const std::vector<Dim>& dims, const std::vector<size_t>& reduced,
                        const OpSpec& op) {
  if (!op.hands_partials_on || reduced.size() != 2 || reduced[0] != 0 || reduced[1] < 2) return false;
  const ColumnsFirstLimits lim = in.is_cpu() ? kColumnsFirstCpu : kColumnsFirstGpu;
  const Dim& row = dims[0];
  const Dim& kept = dims[1];  // kept: the second reduced dim is further out
  const int64_t elem = static_cast<int64_t>(in.element_size());
  const int64_t row_bytes = row.size * elem, bytes = in.numel() * elem;
  const bool big_enough = row_bytes <= lim.short_row_bytes ? bytes >= lim.short_min_bytes
                                                            : row_bytes <= lim.max_row_bytes && bytes >= lim.min_bytes;
  return row.in_stride == 1 && kept.in_stride == row.size && dims[reduced[1]].size >= kColumnsFirstMinRows &&
         big_enough;
}

// The dtype of partials handed from one pass to the next: the result's own
// for ops that keep it (amax), else the accumulator of the result's dtype
// (float32 summed with dtype=float64 over three dims that do not merge kept
// its partials in float32: a 1.7e-6 error where torch's is 1e-13).
at::ScalarType partial_dtype(const at::Tensor& target, const OpSpec& op) {
  return op.keeps_result_dtype ? target.scalar_type() : acc_dtype(target.scalar_type());
}

// `partial` reduced over `mask` into `target`, read as partials: through a
// buffer of the partials' dtype where target's is another (no kernel reads
// float partials into a 16-bit result).
void reduce_partials_into(const at::Tensor& partial, const std::vector<bool>& mask, const at::Tensor& target,
                          const OpSpec& op, bool writes_partials, const Projection& projection) {
  if (writes_partials || target.scalar_type() == partial.scalar_type()) {
    reduce_strided(partial, mask, target, op, /*reads_partials=*/true, writes_partials, projection);
  } else {
    at::Tensor staged = at::empty(target.sizes(), target.options().dtype(partial.scalar_type()));
    reduce_strided(partial, mask, staged, op, /*reads_partials=*/true, /*writes_partials=*/false, projection);
    target.copy_(staged);
  }
}

// Reduces `in` over the dims of `first_bits` into partials of the
// accumulator dtype, then those over the rest of `mask` into `target`: two
// plans of their own, the first writing partials, the second reading them.
void reduce_in_two_steps(const at::Tensor& in, const std::vector<bool>& mask, uint64_t first_bits,
                         const at::Tensor& target, const OpSpec& op, bool reads_partials, bool writes_partials,
                         const Projection& projection) {
  std::vector<bool> first = mask_of(first_bits, in.dim());
  std::vector<bool> rest(mask);
  std::vector<int64_t> tmp_shape(in.sizes().begin(), in.sizes().end());
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (first[d]) {
      tmp_shape[d] = 1;
      rest[d] = false;
    }
  }
  at::Tensor partial = empty_in_memory_order(in, tmp_shape, partial_dtype(target, op));
  reduce_strided(in, first, partial, op, reads_partials, /*writes_partials=*/true);
  reduce_partials_into(partial, rest, target, op, writes_partials, projection);
}

// Strided columns of floats a few elements apart ([R, 3 W][:, ::3] over
// dim 0) on the CPU: the columns leaves gather each row's columns an
// element at a time (each 16-bit one converted alone), where the dense
// span they lie in loads and converts a vector at a time. Summed over the
// whole span into partials of the accumulator dtype, the columns then
// picked from them by a pass over dims of size 1, these read faster from
// 1 MB up (2 threads, this project's machine;
// `cpu_2026-11-27/cpu_superset_columns_s42.txt`): [2970, 441][:, ::3]
// float16 0.67x -> 1.68x of torch.sum, bfloat16 0.91x -> 1.69x; [4327,
// 536][:, ::4] float32 0.71x -> 1.36x; the 9 of 16 random float32 and
// float64 passes that take it 0.71-1.36x -> 1.16-2.08x but one (1.26x ->
// 1.19x); float16 and bfloat16 1.43-5.1x after. Emulated
// first: steps of 6 and 8 lost (0.62-0.85x), as did spans under 256
// elements ([7185, 72][:, ::4] float16, 0.85x) and inputs under 1 MB.
// A span that the kept dims after it continue in memory ([R, K, 2 W][...,
// ::2] over dim 0: K spans back to back) merges with them into one dense
// row, however short the span: read so from 64 KB up, 16 such passes took
// 0.18-0.91x of torch.sum's time where the columns leaves took 0.41-3.2x,
// 12 of them over 1.05x (2 threads, this project's machine, NOTES.md
// session 66, `cpu_2026-11-30/s66/superset_merged_*.txt`:
// [43, 19, 52, 17][..., ::2] over (0, 1) 1.31x -> 0.45x, [2000, 4, 9][...,
// ::2] float16 3.2x -> 0.52x, [20000, 4, 5][..., ::2] 1.30x -> 0.29x).
constexpr int64_t kSupersetMaxStep = 4;
constexpr int64_t kSupersetMinSpan = 256;
constexpr int64_t kSupersetMinBytes = int64_t(1) << 20;
constexpr int64_t kSupersetMinMergedBytes = int64_t(64) << 10;

// A superset plan: the input dim whose strided columns are read through
// their dense span, and the span's length in elements.
struct SupersetSpan {
  int64_t dim = -1;
  int64_t length = 0;
  uint64_t folded = 0;  // other input dims the span covers (kept dims with gaps between them)
};

// Whether the storage holds `extra` elements past the last one `in` reads.
bool storage_holds_past_end(const at::Tensor& in, int64_t extra) {
  int64_t last = in.storage_offset();
  for (int64_t d = 0; d < in.dim(); ++d) last += (in.size(d) - 1) * in.stride(d);
  return in.storage().data() != nullptr &&
         last + extra < static_cast<int64_t>(in.storage().nbytes()) / static_cast<int64_t>(in.element_size());
}

// Kept columns in runs of a few dense ones with gaps between them ([R, K,
// W][..., :w] over dim 0: K runs of w columns, W apart), on the CPU: the
// columns pass reads them a run at a time, narrower than a vector (a
// narrowed channel dim: [726, 592, 5][..., :2] float16 over dim 0 took 2.0x
// torch.sum's time). Summed over the dense span of the kept dims into
// partials, the columns then picked, as for strided columns above. A/B on
// this project's 2-core machine, 2 threads, two runs a side, processes
// alternating (NOTES.md, session 74): runs of up to 16 bytes filling a
// third of their span or more, from 1 MB, 0.52x -> 0.38x of torch.sum's
// time in geomean over 46 passes, 14 -> 6 over 1.05x ([726, 592, 5][...,
// :2] float16 2.03-2.09x -> 0.38x, float32 1.11-1.18x -> 0.54x, [525, 521,
// 4][..., :3] float16 2.2x -> 0.18x), one 16% slower ([6, 14, 762,
// 3][..., 1:3] float64 over dim 1 0.37x -> 0.43x); wider runs lost
// ([2752, 13, 34][..., 19:28] float32 1.2x -> 2.0x), as did runs filling a
// quarter of their span ([208, 245, 12][..., 8:11] bfloat16 0.54x ->
// 0.70x).
constexpr int64_t kGappedMaxRunBytes = 16;
constexpr int64_t kGappedMaxSpanPerKept = 3;

SupersetSpan gapped_kept_span(const at::Tensor& in, const std::vector<Dim>& dims) {
  int64_t span = 1, kept = 1;
  uint64_t bits = 0;
  for (size_t i = 0; i < dims.size() && !dims[i].reduced; ++i) {
    span += (dims[i].size - 1) * dims[i].in_stride;
    kept *= dims[i].size;
    bits |= dims[i].orig_dims;
  }
  const int64_t bytes = in.numel() / kept * span * in.element_size();
  if (dims[0].size * in.element_size() > kGappedMaxRunBytes || kept * kGappedMaxSpanPerKept < span ||
      span < kSupersetMinSpan || bytes < kSupersetMinBytes)
    return {};
  int64_t d = -1;
  for (int64_t e = 0; e < in.dim(); ++e)
    if ((bits >> e & 1) != 0 && in.stride(e) == 1 && in.size(e) > 1) d = e;
  if (d < 0) return {};
  return {d, span, bits & ~(uint64_t(1) << d)};
}

// The superset plan where it pays, else one of dim -1.
SupersetSpan superset_columns_span(const at::Tensor& in, const std::vector<Dim>& dims, const OpSpec& op,
                                   at::ScalarType out_dtype) {
  const at::ScalarType t = in.scalar_type();
  const bool floating = t == at::kHalf || t == at::kBFloat16 || t == at::kFloat || t == at::kDouble;
  if (!in.is_cpu() || !op.hands_partials_on || !floating) return {};
  const Dim& cols = dims[0];
  const int64_t step = cols.in_stride;
  if (!cols.reduced && step == 1 && dims.size() > 1 && !dims[1].reduced) return gapped_kept_span(in, dims);
  if (cols.reduced || step < 2 || step > kSupersetMaxStep) return {};
  // The input dim of the columns' stride (the innermost of those merged
  // into them: [R, K, 4 W][..., ::4] has K * W columns 4 apart).
  int64_t d = -1;
  for (int64_t e = 0; e < in.dim(); ++e)
    if ((cols.orig_dims >> e & 1) != 0 && in.stride(e) == step) d = e;
  const bool one_dim = (cols.orig_dims & (cols.orig_dims - 1)) == 0;
  if (d < 0) return {};
  const int64_t n = in.size(d);
  const int64_t span = (n - 1) * step + 1;
  const int64_t bytes = in.numel() * step * in.element_size();
  // The kept dims that continue the span in memory (a strided last dim of
  // a tensor summed over its leading dims) merge with it into one dense
  // row of the span's pass.
  int64_t kept_extent = span;
  for (size_t i = 1; i < dims.size() && !dims[i].reduced && dims[i].in_stride == kept_extent; ++i)
    kept_extent *= dims[i].size;
  // Columns whose next dim lies a whole step past the last one (x[...,
  // ::k] of a dense last dim that k divides) are read to the step's end
  // where the storage holds that after the last row; then, like a span
  // that the dims after it continue, reduced ones too, the pass reads one
  // dense block. That pays where each output reduces at least as many
  // elements as there are outputs. A/B, 2 threads, this project's machine
  // (NOTES.md session 67): [300, 8, 40][..., ::4] over (0, 1) 1.3-1.5x ->
  // 0.77-0.81x of torch.sum, [1000, 6, 6][..., ::2] over 0 1.15-1.20x ->
  // 0.72x, [7185, 72][..., ::4] float16 1.02-1.16x -> 0.41-0.61x; but [50,
  // 1000][..., ::4] over 0 0.97x -> 1.10-1.23x, [100, 30, 8][..., ::2]
  // float64 0.78x -> 0.93-1.05x (more outputs than rows).
  const int64_t next_stride = !one_dim ? n * step : dims.size() > 1 ? dims[1].in_stride : 0;
  const bool padded = next_stride == n * step && storage_holds_past_end(in, step - 1);
  if (!one_dim && !padded) return {};
  const int64_t dense_span = padded ? n * step : span;
  int64_t extent = padded ? cols.size * step : span;
  int64_t rows = 1;
  for (const Dim& dim : dims) rows *= dim.reduced ? dim.size : 1;
  for (size_t i = 1; i < dims.size() && dims[i].in_stride == extent; ++i) extent *= dims[i].size;
  const bool dense = extent > dense_span && rows >= in.numel() / rows;
  const bool merged = !padded && kept_extent > span;
  // Columns 2 or 3 apart in lanes of their own type (float32 and float64
  // inputs of their own dtype's results) are read by the columns tiles, in
  // one pass, each vector picked from its dense span (Lanes::fold_picked):
  // under 1 MB, the dense block's superset pass and pick pass cost more.
  // A/B on this project's 2-core machine, 2 threads, two runs a side,
  // processes alternating (NOTES.md, session 77), over 48 random strided
  // columns passes: superset from 64 KB 0.503x of torch's time in geomean
  // (3 over 1.05x), never 0.468x (0), from 1 MB 0.477x (0); [139,
  // 115][:, ::3] float64 1.48x -> 0.91x. From 1 MB the superset held its
  // own or won: [1642, 789][:, ::3] float32 0.60x against 0.75x, [442,
  // 789][:, ::3] float64 0.94x against 1.27x, rows 4-16 KB apart, where
  // the tiles are not grouped.
  const bool tiles_pick = step <= 3 && (t == at::kFloat || t == at::kDouble) && out_dtype == t;
  if (bytes >= kSupersetMinMergedBytes && (merged || (dense && !(tiles_pick && bytes < kSupersetMinBytes))))
    return {d, dense ? dense_span : span};
  if (dense_span < kSupersetMinSpan || bytes < kSupersetMinBytes) return {};
  return {d, dense_span};
}

void reduce_superset_columns(const at::Tensor& in, const std::vector<bool>& mask, const SupersetSpan& superset,
                             const at::Tensor& target, const OpSpec& op, bool writes_partials,
                             const Projection& projection) {
  const int64_t d = superset.dim, step = in.stride(d), n = in.size(d);
  const auto folded = [&](int64_t e) { return (superset.folded >> e & 1) != 0; };
  std::vector<int64_t> sizes(in.sizes().begin(), in.sizes().end()), strides(in.strides().begin(), in.strides().end());
  sizes[d] = superset.length;
  strides[d] = 1;
  for (int64_t e = 0; e < in.dim(); ++e)
    if (folded(e)) sizes[e] = 1;
  const at::Tensor span = in.as_strided(sizes, strides, in.storage_offset());
  std::vector<int64_t> partial_sizes(target.sizes().begin(), target.sizes().end());
  partial_sizes[d] = sizes[d];
  for (int64_t e = 0; e < in.dim(); ++e)
    if (folded(e)) partial_sizes[e] = 1;
  at::Tensor partial = empty_in_memory_order(span, partial_sizes, partial_dtype(target, op));
  reduce_strided(span, mask, partial, op, /*reads_partials=*/false, /*writes_partials=*/true);
  std::vector<int64_t> picked_sizes(partial.sizes().begin(), partial.sizes().end());
  std::vector<int64_t> picked_strides(partial.strides().begin(), partial.strides().end());
  picked_sizes[d] = n;
  picked_strides[d] *= step;
  for (int64_t e = 0; e < in.dim(); ++e) {
    if (!folded(e)) continue;
    picked_sizes[e] = in.size(e);
    picked_strides[e] = partial.stride(d) * in.stride(e);
  }
  reduce_partials_into(partial.as_strided(picked_sizes, picked_strides, partial.storage_offset()), mask, target, op,
                       writes_partials, projection);
}

// `target` has the input's rank with size 1 at reduced dims, and a dtype the
// kernels write for this input dtype. `reads_partials`: `in` holds another
// pass's accumulators; `writes_partials`: so must `target`. `projection`:
// what the last pass does to its outputs (ReducePass::projection).
void reduce_strided(const at::Tensor& in, const std::vector<bool>& mask, const at::Tensor& target,
                    const OpSpec& op, bool reads_partials, bool writes_partials, const Projection& projection) {
  if (target.numel() == 0) return;
  if (in.numel() == 0) {
    op.fill_empty(target);
    return;
  }
  const std::vector<Dim> dims = canonical_dims(in, mask, target);
  std::vector<size_t> reduced;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].reduced) reduced.push_back(i);
  ReducePass pass;
  pass.reads_partials = reads_partials;
  pass.writes_partials = writes_partials;
  pass.projection = writes_partials ? Projection{} : projection;
  if (reduced.empty()) {
    // Only dims of size 1 are reduced: each output is one element, folded
    // into the op's identity by a columns pass over one row, as torch's
    // reduction does (a sum of -0.0 is +0.0; a copy kept -0.0), and with no
    // TensorIterator copy (3.7 us a call on the CPU, torch.sum 2.8).
    pass.kind = ReducePass::Kind::kColumns;
    if (!dims.empty()) {
      pass.n_cols = dims[0].size;
      pass.col_stride = dims[0].in_stride;
      pass.out_col_stride = dims[0].out_stride;
    }
    fill_outer(pass.outer, pass.n_out, dims, /*skip=*/0);
    op.run(pass, in, target);
    return;
  }

  const bool rows = dims[0].reduced;
  // Each pass handles at most two reduced dims; more take several passes
  // that hand accumulators on through an intermediate of the accumulator
  // dtype.
  const size_t per_pass = 2;
  if (reduced.size() > per_pass) {
    // Or one copy of the input with the reduced dims innermost, in their
    // order, where they are dense and merge into one, then one pass: for an
    // op whose accumulators have no dtype to hand on (var), and for a small
    // CPU input, copied by a loop: two passes of 36 elements ([3, 2, 5,
    // 2][:, :, ::2] float32 over (0, 2, 3)) took 1.99 us, torch.sum 1.76;
    // the copy and one pass 1.86, torch.sum 1.86 (2 threads, this
    // project's machine, NOTES.md session 75).
    if (in.device().is_cpu() && in.numel() <= kCpuLoopBroadcastMax && !in.is_conj() && !in.is_neg()) {
      // The copy in the input's dim order, its strides putting the reduced
      // dims innermost (no permuted views, each a dispatched op).
      std::vector<int64_t> strides(static_cast<size_t>(in.dim()));
      int64_t next = 1;
      for (bool reduced_dims : {true, false}) {
        for (int64_t d = in.dim() - 1; d >= 0; --d) {
          if (mask[d] != reduced_dims) continue;
          strides[d] = next;
          next *= in.size(d);
        }
      }
      at::Tensor packed = at::empty_strided(in.sizes(), strides, in.options());
      if (broadcast_by_loop(in, packed)) {
        reduce_strided(packed, mask, target, op, reads_partials, writes_partials, projection);
        return;
      }
    }
    if (!op.hands_partials_on) {
      std::vector<int64_t> order;
      for (int64_t d = 0; d < in.dim(); ++d)
        if (!mask[d]) order.push_back(d);
      for (int64_t d = 0; d < in.dim(); ++d)
        if (mask[d]) order.push_back(d);
      std::vector<bool> packed_mask;
      for (int64_t d : order) packed_mask.push_back(mask[d]);
      reduce_strided(in.permute(order).contiguous(), packed_mask, target.permute(order), op, reads_partials,
                     writes_partials, projection);
      return;
    }
    uint64_t first_bits = 0;
    for (size_t k = 0; k < per_pass; ++k) first_bits |= dims[reduced[k]].orig_dims;
    reduce_in_two_steps(in, mask, first_bits, target, op, reads_partials, writes_partials, projection);
    return;
  }
  if (columns_first_pays(in, dims, reduced, op)) {
    reduce_in_two_steps(in, mask, dims[reduced[1]].orig_dims, target, op, reads_partials, writes_partials,
                        projection);
    return;
  }
  if (!reads_partials) {
    const SupersetSpan superset = superset_columns_span(in, dims, op, target.scalar_type());
    if (superset.dim >= 0) {
      reduce_superset_columns(in, mask, superset, target, op, writes_partials, projection);
      return;
    }
  }

  if (rows) {
    pass.kind = ReducePass::Kind::kRows;
    pass.row_len = dims[0].size;
    pass.elem_stride = dims[0].in_stride;
    if (reduced.size() == 2) {
      pass.n_rows = dims[reduced[1]].size;
      pass.row_stride = dims[reduced[1]].in_stride;
    }
    fill_outer(pass.outer, pass.n_out, dims, /*skip=*/dims.size());
  } else {
    pass.kind = ReducePass::Kind::kColumns;
    pass.n_cols = dims[0].size;
    pass.col_stride = dims[0].in_stride;
    pass.out_col_stride = dims[0].out_stride;
    pass.n_reduce = dims[reduced[0]].size;
    pass.reduce_stride = dims[reduced[0]].in_stride;
    if (reduced.size() == 2) {
      pass.n_reduce_outer = dims[reduced[1]].size;
      pass.reduce_outer_stride = dims[reduced[1]].in_stride;
    }
    fill_outer(pass.outer, pass.n_out, dims, /*skip=*/0);
  }
  op.run(pass, in, target);
}

// `out` (a result without the reduced dims) seen with the input's rank, a
// dim of size 1 at each reduced dim, with the strides that unsqueeze would
// give it. Made as a TensorImpl over out's storage rather than by an
// unsqueeze per reduced dim, each a dispatched op: a CPU call of sum(x, [0,
// 1]) on [100, 10] went 3.07 -> 2.79 us, sum(x, 1) 3.36 -> 3.25 (NOTES.md,
// session 14). The view stays inside the kernel; every write through it
// lands in out's storage.
at::Tensor with_reduced_dims(const at::Tensor& out, const std::vector<bool>& mask) {
  std::vector<int64_t> sizes(out.sizes().begin(), out.sizes().end());
  std::vector<int64_t> strides(out.strides().begin(), out.strides().end());
  for (size_t d = 0; d < mask.size(); ++d) {
    if (!mask[d]) continue;
    const int64_t stride = d < sizes.size() ? sizes[d] * strides[d] : 1;
    sizes.insert(sizes.begin() + static_cast<std::ptrdiff_t>(d), 1);
    strides.insert(strides.begin() + static_cast<std::ptrdiff_t>(d), stride);
  }
  auto impl = c10::make_intrusive<c10::TensorImpl>(c10::TensorImpl::VIEW, c10::Storage(out.storage()), out.key_set(),
                                                   out.dtype());
  impl->set_sizes_and_strides(sizes, strides, out.storage_offset());
  return at::Tensor(std::move(impl));
}

}  // namespace

void reduce_into(const at::Tensor& input, const std::vector<bool>& mask, bool keepdim,
                 const at::Tensor& out, const OpSpec& op, double correction) {
  check_dtype_supported(out.scalar_type(), op.kernel_name, input);
  // An averaging op (mean, var) divides by the count of elements reduced
  // into each output, repeats included, less the correction (var's; torch
  // divides by max(0, count - correction)); over none, the result is NaN, as in
  // torch: complex NaN + NaN i on the CPU (torch's sum divided by 0) and
  // NaN + 0 i on CUDA (torch fills with a real NaN).
  int64_t count = 1;
  if (op.averages) {
    for (size_t d = 0; d < mask.size(); ++d)
      if (mask[d]) count *= input.size(static_cast<int64_t>(d));
    if (count == 0) {
      constexpr double nan = std::numeric_limits<double>::quiet_NaN();
      const bool nan_imag = out.is_complex() && out.device().is_cpu();
      const_cast<at::Tensor&>(out).fill_(nan_imag ? c10::Scalar(c10::complex<double>(nan, nan)) : c10::Scalar(nan));
      return;
    }
  }
  // No elements: the op's identity in out's dtype, as torch fills it, with
  // no kernel and no staged copy (a dtype the kernels lack, float8 or
  // complex32, passes the check above for an empty input).
  if (input.numel() == 0) {
    if (out.numel() != 0) op.fill_empty(out);
    return;
  }
  // Every element of a contiguous input, read as it is into a result of the
  // kernels' own dtype: the one rows pass the planner below would make (its
  // dims merge into one row of numel elements at stride 1, no outer dims),
  // made here without its views and vectors, a third of the host time of
  // max(x) on 10 float32 (CPU, one thread: 1205 -> 829 ns a call, torch.max
  // 1006; NOTES.md session 46). Two elements or more: one is read as a
  // columns pass of one row (reduce_strided).
  const bool keeps_dtype = op.keeps_result_dtype && !is_wide_unsigned(out.scalar_type());
  const auto result_kernel_dtype = [&](at::ScalarType t) { return keeps_dtype ? t : kernel_out_dtype(t); };
  if (input.numel() >= 2 && input.is_contiguous() && std::all_of(mask.begin(), mask.end(), [](bool m) { return m; }) &&
      result_kernel_dtype(out.scalar_type()) == out.scalar_type() &&
      staged_input_dtype(input.scalar_type(), out.scalar_type(), op) == input.scalar_type()) {
    ReducePass pass;
    pass.kind = ReducePass::Kind::kRows;
    pass.row_len = input.numel();
    if (op.averages) pass.projection.divisor = std::max(static_cast<double>(count) - correction, 0.0);
    pass.projection.root = op.roots;
    op.run(pass, input, out);
    return;
  }
  // An op whose result over k copies of an input is the pass's own
  // (OpSpec::repeats_in_pass) reads a reduced dim of stride 0 as its one
  // element: amax of k copies is the element itself, and vector_norm of
  // orders 1 and 2 scales its sum by k before the root
  // (Projection::repeats), as k adds would have summed it. One launch that
  // reads the distinct elements, where a fold is a second launch and a
  // re-read reads every repeat. Not where it would leave only dims of size
  // 1 to an op that folds (amax, amin): a pass of one-element columns
  // cost more GPU time than the fold's copy or the re-read (amax of [21,
  // 3417, 21] bfloat16 expanded from [21, 1, 21] over dim 1: 1.43 -> 1.79
  // us). A/B on the H200 over 64 expanded inputs of norm, amax and amin
  // (NOTES.md, session 81): 1.84x -> 3.43x of torch in geometric mean,
  // below 0.97x 8 -> 0; [79] float32 expanded to [79, 4096], norm over dim
  // 1, 7.51 -> 1.82 us (0.65x -> 2.89x), [4096, 246] bfloat16 from [246]
  // over dim 0 7.39 -> 1.92 (0.69x -> 2.85x).
  bool reduces = false;  // a reduced dim of more than one element that is not a repeat
  for (int64_t d = 0; d < input.dim(); ++d)
    reduces = reduces || (mask[d] && input.stride(d) != 0 && input.size(d) > 1);
  double repeats_in_pass = 1.0;
  at::Tensor src = input;
  if (op.repeats_in_pass != RepeatsInPass::kFolded && (reduces || !op.fold_repeats)) {
    for (int64_t d = 0; d < input.dim(); ++d) {
      if (!mask[d] || input.stride(d) != 0 || input.size(d) <= 1) continue;
      if (op.repeats_in_pass == RepeatsInPass::kScaled) repeats_in_pass *= static_cast<double>(input.size(d));
      src = src.narrow(d, 0, 1);
    }
  }
  // Dims of stride 0 are read once: a reduced one of size k is dropped here
  // and folded in as k copies at the end; a kept one is computed at index 0
  // and broadcast. (Before the cast below, which would copy the expansion.)
  int64_t repeats = 1;
  std::vector<int64_t> broadcast_dims, repeated_dims;
  for (int64_t d = 0; d < src.dim(); ++d) {
    if (src.stride(d) != 0 || src.size(d) <= 1) continue;
    repeated_dims.push_back(d);
    if (mask[d]) {
      repeats *= src.size(d);
    } else {
      broadcast_dims.push_back(d);
    }
  }
  // The input without its repeats, made only where it is read (a narrow per
  // dim is a dispatched op: 0.3 us each on the CPU).
  auto narrowed_input = [&] {
    at::Tensor narrowed = src;
    for (int64_t d : repeated_dims) narrowed = narrowed.narrow(d, 0, 1);
    return narrowed;
  };
  // With repeats to fold, 16-bit float results stay in float until the fold,
  // so that it rounds once, as torch's float accumulation does.
  // (amax and amin: the result's own dtype, but for the wide unsigned ints.)
  at::ScalarType kout = result_kernel_dtype(out.scalar_type());
  if (repeats > 1 && !keeps_dtype && (kout == at::kHalf || kout == at::kBFloat16)) kout = at::kFloat;

  // A view of `out` with the input's rank, size 1 at the reduced dims.
  const at::Tensor out_kd = keepdim ? out : with_reduced_dims(out, mask);
  const int64_t expanded_bytes = src.numel() * static_cast<int64_t>(src.element_size());
  // On the GPU, a reduction over dims of size 1 only (a fold of one repeat)
  // of at most kPassBeforeFoldBytes is a pass of one-element rows too: sum's
  // fold, a TensorIterator add, cost 1.0-1.3 us more host time a call than the
  // pass's own launch, more than torch.sum's whole call, while the pass's
  // extra GPU time (0.6 us) keeps it under torch.sum's (H200, NOTES.md
  // session 30: [1, 16384] float32 over dim 0 7.66 -> 6.32 us a call,
  // torch.sum 7.60; GPU time 1.20 -> 1.81 us, torch.sum 2.04).
  const bool size_one_only = repeats == 1 && broadcast_dims.empty();
  const bool fold_costs_more = src.device().is_cpu()
                                   ? expanded_bytes <= kCpuRereadBeforeFoldBytes
                                   : size_one_only && expanded_bytes <= kPassBeforeFoldBytes;
  if (broadcast_dims.empty() && at::canCast(kout, out_kd.scalar_type()) && !fold_costs_more) {
    // Every reduced dim of more than one element was of stride 0, or there
    // is no such dim (dims of size 1 only: the fold of one repeat, a map
    // over the input in its own layout; read as a reduction of one-element
    // rows, [176, 764, 23, 1] float32 permuted (2, 1, 0, 3) over dim 3 took
    // 45.2 us against torch.sum's 26.3, H200). The result is the op's fold
    // of the input itself, in one kernel, where that kernel
    // computes in the dtype the reduction would have (a cast and a copy of
    // the input first cost a second launch: [4, 6219] bfloat16 expanded
    // over dim 0 took 4.5 us, 1.4 folded directly, torch.sum 2.2 on the
    // H200). A 16-bit float kept as its own result dtype computes in float
    // and rounds once, as kout does.
    const at::ScalarType own = src.scalar_type();
    const bool own_rounds_like_kout =
        (own == at::kHalf || own == at::kBFloat16) && out.scalar_type() == own && kout == at::kFloat;
    // An averaging op divides the fold by the count of elements reduced,
    // which here is `repeats` itself: its result is the fold of one copy
    // (0 + x, so -0.0 gives +0.0 as torch's reduction does), one kernel.
    // A fold by 1 (no repeats, or an average) is x + 0 in any dtype: one
    // rounding of each float into the result's float dtype, the one the
    // cast of the input torch makes first ([5, 2048, 1, 1] float32 over
    // (2, 3) with dtype=float64 on the CPU: 24.5 us as a cast and a pass of
    // one-element rows, torch.sum 22.1).
    const int64_t multiplier = op.averages ? 1 : repeats;
    const bool float_fold_by_one = multiplier == 1 && at::isFloatingType(own) && at::isFloatingType(kout);
    if (!reduces && src.numel() > 0 && op.input_is_partial) {
      const at::Tensor narrowed = narrowed_input();
      if (at::result_type(narrowed, c10::Scalar(repeats)) == kout || own_rounds_like_kout || float_fold_by_one) {
        op.fold_repeats(narrowed, multiplier, out_kd);
        return;
      }
    }
  }
  // A small expanded input is read as it is, its repeats and all, in one
  // launch: re-reading up to a few MB costs less than a second kernel to
  // fold or broadcast ([4096, 11] float32 expanded from [11] over dim 1:
  // 3.40 us in two launches against torch.sum's 2.18, H200; the limit's
  // sweep at kRereadExpandedBytes).
  // So is any input with reduced repeats of an op that cannot fold them (var).
  const bool reread = (repeats > 1 || !broadcast_dims.empty()) &&
                      (expanded_bytes <= (src.device().is_cpu() ? kCpuRereadExpandedBytes : kRereadExpandedBytes) ||
                       (repeats > 1 && !op.fold_repeats));
  if (reread) {
    repeats = 1;
    broadcast_dims.clear();
    kout = result_kernel_dtype(out.scalar_type());
  }
  const at::ScalarType kin = staged_input_dtype(src.scalar_type(), out.scalar_type(), op);
  at::Tensor in;
  if (reread && src.scalar_type() == kin) {
    in = src;
  } else {
    const at::Tensor narrowed = narrowed_input();
    in = narrowed.scalar_type() == kin ? narrowed : narrowed.to(kin);
    if (reread) in = in.expand(src.sizes());  // a cast of the narrowed input, expanded again
  }

  at::Tensor target = out_kd;
  for (int64_t d : broadcast_dims) target = target.narrow(d, 0, 1);
  const bool staged = out_kd.scalar_type() != kout || !broadcast_dims.empty() || repeats > 1;
  at::Tensor result = staged ? at::empty(target.sizes(), target.options().dtype(kout)) : target;
  Projection projection;
  if (op.averages) projection.divisor = std::max(static_cast<double>(count) - correction, 0.0);
  projection.root = op.roots;
  projection.repeats = repeats_in_pass;
  reduce_strided(in, mask, result, op, /*reads_partials=*/false, /*writes_partials=*/false, projection);
  if (repeats > 1 && broadcast_dims.empty() && at::canCast(kout, out_kd.scalar_type())) {
    op.fold_repeats(result, repeats, out_kd);  // folds and casts in one kernel
  } else if (repeats > 1) {
    // Kept dims of stride 0 to broadcast to (an out= tensor of fold_repeats
    // is resized to the partial's shape, not broadcast into), or a cast that
    // an out= argument refuses (int64 into bool).
    at::Tensor folded = at::empty(result.sizes(), result.options());
    op.fold_repeats(result, repeats, folded);
    if (!broadcast_by_loop(folded, out_kd)) out_kd.copy_(folded.expand(out_kd.sizes()));
  } else if (staged && !broadcast_by_loop(result, out_kd)) {
    out_kd.copy_(result.expand(out_kd.sizes()));
  }
}

}  // namespace gpureduce
