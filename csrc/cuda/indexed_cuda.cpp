// argmax, argmin, max.dim and min.dim on the CUDA key: the engine's indexed
// pass (engine/indexed_plan.h), whose kernels (engine/indexed.cuh) are
// compiled per dtype group in instances/indexed_*.cu.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <vector>

#include "../engine/indexed_ops.h"
#include "../engine/indexed_plan.h"
#include "instance.h"

namespace gpureduce {
namespace {

void run_kernels(const IndexedPass& p, const at::Tensor& in, const at::Tensor* values, const at::Tensor& indices,
                 Extreme extreme) {
  with_indexed_type(in.scalar_type(), [&](auto tag) {
    using in_t = typename decltype(tag)::type;
    cuda::run_indexed_pass_cuda<in_t>(p, in.const_data_ptr(), values != nullptr ? values->data_ptr() : nullptr,
                                      indices.data_ptr<int64_t>(), extreme);
  });
}

// Output stride (elements) between neighbouring threads' outputs from which
// they are staged. Staging writes the outputs three times (the scratch, and
// the copy's read and write); stores at a stride of s waste their sectors
// s-fold (an 8-byte index: 32-byte sectors, one index each from s = 4), so
// below 4 the stores cost less: [578065, 32, 2, 2] channels_last float32
// over dim 2 (outputs 2 apart) ran staged at 0.58x of torch.max (H200).
constexpr int64_t kScatteredMinStride = 4;

// 32-byte sectors that n elements `step` bytes apart take (from a sector's
// start).
int64_t sectors(int64_t n, int64_t step, int64_t elem_bytes) {
  if (n <= 1) return 1;
  if (step >= 32) return n;
  return ((n - 1) * step + elem_bytes + 31) / 32;
}

// The largest divisor of n that is at most cap.
int64_t divisor_at_most(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// A warp's outputs: t0 neighbours along the pass's dim 0 (the input's
// innermost kept dim) by tk along dim k.
struct OutputTile {
  int k = 1;
  int64_t t0 = 1, tk = 1;
};

// The pass's own order as a tile: a warp's 32 outputs along dim 0, and
// along dim 1 where dim 0 has fewer.
OutputTile own_order(const IndexedPass& p) {
  OutputTile own;
  own.t0 = std::min<int64_t>(static_cast<int64_t>(p.outer.sizes[0].divisor), 32);
  own.tk = std::min<int64_t>(static_cast<int64_t>(p.outer.sizes[1].divisor), std::max<int64_t>(1, 32 / own.t0));
  return own;
}

// Sectors a warp's stores of the outputs of tile t take: t0 runs of tk
// along dim k (dim 0's outputs lie apart), indices and, if asked, values.
int64_t store_sectors(const IndexedPass& p, const OutputTile& t, int64_t elem_bytes, bool values) {
  const int64_t outk = std::abs(p.outer.out_strides[t.k]);
  return t.t0 * (sectors(t.tk, outk * 8, 8) + (values ? sectors(t.tk, outk * elem_bytes, elem_bytes) : 0));
}

// Sectors an output of pass p costs when a warp takes the outputs of tile t:
// its loads over the n_reduce rows (t0 elements of dim 0 a row, for each of
// the tk along dim k) and its stores.
double sectors_per_output(const IndexedPass& p, const OutputTile& t, int64_t elem_bytes, bool values) {
  const int64_t in0 = std::abs(p.outer.in_strides[0]) * elem_bytes;
  const int64_t reads = p.n_reduce * t.tk * sectors(t.t0, in0, elem_bytes);
  return double(reads + store_sectors(p, t, elem_bytes, values)) / double(t.t0 * t.tk);
}

// The gain in sectors an output from which a tile is taken over the pass's
// own order (staged or not): the renumbering costs an index computation a
// dim, and small gains lost to staging ([11326, 128, 7, 7] channels_last
// float16 min over dim 2, tiles of 4 x 7 for a gain of 1.12: 0.92x ->
// 0.83x of torch.min, H100, NOTES.md session 45).
constexpr double kTileMinGain = 1.5;

// Where a columns pass's neighbouring outputs lie far apart in the output
// (a channels_last input over N or H: neighbouring threads take
// neighbouring channels, a plane or a row of the output apart), the tile
// whose warps touch fewest sectors an output, by kTileMinGain or more over
// the pass's own order: a few neighbours along dim 0 loaded each row, by a
// run along the dim whose outputs are neighbours stored. Tiles of 8 x 4
// against the scratch and copy before (H100, session 45, one machine):
// [3, 128, 32, 32] channels_last bfloat16 min over dim 0 0.70x -> 1.42x of
// torch.min, [16, 512, 14, 14] int32 max over dim 0 1.02x -> 1.81x,
// [8, 256, 56, 56] float32 argmax over dim 0 2.30x -> 3.22x.
std::optional<OutputTile> output_tile(const IndexedPass& p, int64_t elem_bytes, bool values) {
  if (p.along_rows() || p.outer.ndim < 2 || p.outer.ndim + 2 > kMaxDims ||
      std::abs(p.outer.out_strides[0]) < kScatteredMinStride)
    return std::nullopt;
  const int64_t n0 = static_cast<int64_t>(p.outer.sizes[0].divisor);
  const double own_cost = sectors_per_output(p, own_order(p), elem_bytes, values);
  OutputTile best;  // (tk == 1: the own order, or a tile that stores no runs)
  double best_cost = own_cost;
  for (int k = 1; k < p.outer.ndim; ++k) {
    const int64_t nk = static_cast<int64_t>(p.outer.sizes[k].divisor);
    for (int64_t t0 = 1; t0 <= 32; t0 *= 2) {
      OutputTile t{k, divisor_at_most(n0, t0), 1};
      t.tk = divisor_at_most(nk, 32 / t.t0);
      if (t.t0 * t.tk < 16) continue;  // (a warp of several tiles: their stores interleave)
      const double cost = sectors_per_output(p, t, elem_bytes, values);
      if (cost < best_cost) best = t, best_cost = cost;
    }
  }
  if (best.tk == 1 || best_cost * kTileMinGain > own_cost) return std::nullopt;
  return best;
}

// Pass p with its outputs numbered tile by tile (t0 along dim 0 by tk along
// dim k, then the tiles), so that a warp's stores fall in runs of
// neighbours: the kernels are the same, only which thread takes which output
// changes (and with it nothing of the results).
IndexedPass tiled(const IndexedPass& p, const OutputTile& t) {
  IndexedPass q = p;
  int nd = 0;
  const auto push = [&](int64_t size, int64_t in_stride, int64_t out_stride) {
    if (size == 1) return;
    q.outer.sizes[nd] = FastDivmod(static_cast<uint64_t>(size));
    q.outer.in_strides[nd] = in_stride;
    q.outer.out_strides[nd] = out_stride;
    ++nd;
  };
  const int64_t n0 = static_cast<int64_t>(p.outer.sizes[0].divisor);
  const int64_t nk = static_cast<int64_t>(p.outer.sizes[t.k].divisor);
  push(t.t0, p.outer.in_strides[0], p.outer.out_strides[0]);
  push(t.tk, p.outer.in_strides[t.k], p.outer.out_strides[t.k]);
  push(n0 / t.t0, p.outer.in_strides[0] * t.t0, p.outer.out_strides[0] * t.t0);
  push(nk / t.tk, p.outer.in_strides[t.k] * t.tk, p.outer.out_strides[t.k] * t.tk);
  for (int d = 1; d < p.outer.ndim; ++d)
    if (d != t.k) push(static_cast<int64_t>(p.outer.sizes[d].divisor), p.outer.in_strides[d], p.outer.out_strides[d]);
  q.outer.ndim = nd;
  return q;
}

// Rows of at most this many bytes may be taken in the result's order
// (rows_in_output_order): the rows the A/B below measured.
constexpr int64_t kOutputOrderMaxRowBytes = 16;

// Pass p in the order of its results, where it is a rows pass of short
// rows (kOutputOrderMaxRowBytes) whose neighbouring outputs (dim 0) lie
// apart in the result, with some dim k of neighbouring outputs, and where
// that order touches fewer sectors an output by kTileMinGain: dim k
// numbered first, each thread's row then a sector of its own to read, but
// a warp's stores 32 neighbours rather than t0 runs. In the pass's own
// order a warp reads its rows side by side and stores t0 runs of tk. So
// max.dim of short rows whose results lie a plane apart pays (its values
// and indices, two scattered sectors an output); argmax (indices alone)
// and passes whose own runs are long (a dim 0 of a few outputs) do not.
// A/B on the H200 over 36 transposed inputs reduced over their rows of 2
// to 16 bytes (NOTES.md, session 80), max.dim in the result's order
// wherever it had a dim of neighbours: 0.57-0.75x -> 1.15-1.72x of
// torch.max where dim 0 held 47 to 256 outputs ([166569, 47, 3] int32
// transposed (0, 2) over dim 0 0.64x -> 1.63x, [242425, 100, 2] bfloat16
// 0.60x -> 1.72x), but 2.89x -> 2.19x with 12 ([1400224, 12, 5] bfloat16)
// and 3.95x -> 3.10x with 3 ([6673334, 3, 4] int32); the sector counts
// here separate the two groups (own over ordered: 1.62-1.95 against
// 0.57-1.02) and leave every argmax of the A/B in the own order.
std::optional<IndexedPass> rows_in_output_order(const IndexedPass& p, int64_t elem_bytes, bool values) {
  if (!p.along_rows() || p.outer.ndim < 2 || p.n_reduce * elem_bytes > kOutputOrderMaxRowBytes ||
      std::abs(p.outer.out_strides[0]) < kScatteredMinStride)
    return std::nullopt;
  int k = 1;
  while (k < p.outer.ndim && std::abs(p.outer.out_strides[k]) != 1) ++k;
  if (k == p.outer.ndim) return std::nullopt;
  const OutputTile own = own_order(p);
  const int64_t own_span = own.t0 * std::abs(p.outer.in_strides[0]) * elem_bytes;
  const int64_t own_sectors = own.tk * ((own_span + 31) / 32) + store_sectors(p, own, elem_bytes, values);
  const int64_t ordered_sectors = 32 + sectors(32, 8, 8) + (values ? sectors(32, elem_bytes, elem_bytes) : 0);
  if (double(own_sectors) / double(own.t0 * own.tk) < kTileMinGain * double(ordered_sectors) / 32.0)
    return std::nullopt;
  return tiled(p, OutputTile{k, 1, static_cast<int64_t>(p.outer.sizes[k].divisor)});
}

// Outputs from which a columns pass with scattered outputs is staged: below,
// the copy's launch costs more than the stores it saves.
constexpr int64_t kStageScatteredMinOutputs = int64_t(1) << 16;

// Whether pass p, taking no tile, writes its scattered outputs through a
// scratch (run_indexed_cuda): enough of them, kScatteredMinStride or more
// apart, unless its own order already stores each warp's indices in whole
// 32-byte sectors (a dim 0 of 8 outputs or fewer, runs of 4 or more along a
// dim 1 of neighbouring outputs) and its elements are 2 bytes or more.
// Written directly, runs of 2 indices took [7761, 16, 32, 32] channels_last
// uint8 argmax over dim 2 to 0.68x of torch.argmax, 1.21x staged (NOTES.md
// session 45). A/B over 24 transposes on the H200 (session 47): whole
// sectors written directly gained ([2, 145168, 80, 8] float32 transposed
// (0, 3) over dim 3, runs of 4: max 0.56x -> 1.52x of torch.max, argmax
// 0.73x -> 1.45x; bfloat16 [2, 158034, 30, 8] 0.52x -> 1.22x), but 1-byte
// inputs lost ([5, 11350, 64, 4] uint8, runs of 8: argmax 1.15x -> 0.80x).
bool stages_scattered_outputs(const IndexedPass& p, int64_t element_size) {
  if (p.along_rows() || p.outer.ndim < 2 || std::abs(p.outer.out_strides[0]) < kScatteredMinStride ||
      p.n_out < kStageScatteredMinOutputs)
    return false;
  const OutputTile own = own_order(p);
  const bool whole_sectors = std::abs(p.outer.out_strides[1]) == 1 && own.tk * int64_t(sizeof(int64_t)) >= 32;
  return !(whole_sectors && element_size >= 2);
}

// Runs pass p into indices and values (contiguous, p's out_strides): short
// rows in the result's order (rows_in_output_order), columns with their
// outputs in tiles (output_tile), or, where it stages scattered outputs,
// into scratch in the pass's own order, then one copy: the kernels'
// scattered 8-byte stores had run the pass at 40% of torch's speed ([11326,
// 128, 7, 7] channels_last float16 over dim 2, H100, NOTES.md). (The
// sum-like passes' with_staged_output, run_pass.h, for this pass's
// geometry.)
void run_indexed_cuda(const IndexedPass& p, const at::Tensor& in, const at::Tensor* values, const at::Tensor& indices,
                      Extreme extreme) {
  if (const std::optional<IndexedPass> q = rows_in_output_order(p, in.element_size(), values != nullptr)) {
    run_kernels(*q, in, values, indices, extreme);
    return;
  }
  if (const std::optional<OutputTile> t = output_tile(p, in.element_size(), values != nullptr)) {
    run_kernels(tiled(p, *t), in, values, indices, extreme);
    return;
  }
  if (!stages_scattered_outputs(p, in.element_size())) {
    run_kernels(p, in, values, indices, extreme);
    return;
  }
  IndexedPass q = p;
  int64_t next = 1;
  for (int d = 0; d < q.outer.ndim; ++d) {
    q.outer.out_strides[d] = next;
    next *= static_cast<int64_t>(q.outer.sizes[d].divisor);
  }
  const at::Tensor index_scratch = at::empty({p.n_out}, indices.options());
  const at::Tensor value_scratch = values != nullptr ? at::empty({p.n_out}, values->options()) : at::Tensor();
  run_kernels(q, in, values != nullptr ? &value_scratch : nullptr, index_scratch, extreme);
  std::vector<int64_t> sizes, out_strides, scratch_strides;
  for (int d = p.outer.ndim - 1; d >= 0; --d) {
    sizes.push_back(static_cast<int64_t>(p.outer.sizes[d].divisor));
    out_strides.push_back(p.outer.out_strides[d]);
    scratch_strides.push_back(q.outer.out_strides[d]);
  }
  indices.as_strided(sizes, out_strides, indices.storage_offset())
      .copy_(index_scratch.as_strided(sizes, scratch_strides));
  if (values != nullptr) {
    values->as_strided(sizes, out_strides, values->storage_offset())
        .copy_(value_scratch.as_strided(sizes, scratch_strides));
  }
}

// Inputs of max.dim and min.dim over a dim of one element a slice below
// which the pass over those elements (one launch) runs rather than a fill
// of the indices and a copy of the values (two).
constexpr int64_t kSingleSlicePassMaxBytes = int64_t(256) << 10;

// Passes of one element a slice that run as one launch: small ones, whose
// outputs are not staged (a launch and two copies more). On the H200
// (NOTES.md, session 44), inputs of 2-92 KB gained ([5593, 1, 3] uint8
// over dim 1 0.75x -> 1.10x of torch.max, [1, 64, 2, 2] channels_last
// float64 over dim 0 0.78x -> 0.99x); from 600 KB the fill and copy were
// faster ([1, 384, 28, 28] int16 over dim 0 2.04x -> 1.18x, [300154, 1,
// 3] float32 1.48x -> 0.97x), as were staged passes ([1, 96, 28, 28]
// channels_last float32 over dim 0 1.03x -> 0.51x).
bool runs_single_slices(const IndexedPass& p, int64_t element_size) {
  return p.n_out * element_size < kSingleSlicePassMaxBytes &&
         (output_tile(p, element_size, true).has_value() || !stages_scattered_outputs(p, element_size));
}

const IndexedKernels& indexed_kernels() {
  static const IndexedKernels k{&run_indexed_cuda, "cuda", &runs_single_slices};
  return k;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) {
  IndexedEntries<&indexed_kernels, c10::cuda::CUDAGuard>::register_on(m);
}

}  // namespace gpureduce
