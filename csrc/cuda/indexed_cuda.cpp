// argmax, argmin, max.dim and min.dim on the CUDA key: the engine's indexed
// pass (engine/indexed_plan.h), whose kernels (engine/indexed.cuh) are
// compiled per dtype group in instances/indexed_*.cu.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdlib>
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

// Outputs from which a columns pass with scattered outputs is staged: below,
// the copy's launch costs more than the stores it saves.
constexpr int64_t kStageScatteredMinOutputs = int64_t(1) << 16;
// Output stride (elements) between neighbouring threads' outputs from which
// they are staged. Staging writes the outputs three times (the scratch, and
// the copy's read and write); stores at a stride of s waste their sectors
// s-fold (an 8-byte index: 32-byte sectors, one index each from s = 4), so
// below 4 the stores cost less: [578065, 32, 2, 2] channels_last float32
// over dim 2 (outputs 2 apart) ran staged at 0.58x of torch.max (H200).
constexpr int64_t kStageScatteredMinStride = 4;

// Whether pass p reads columns whose neighbours are not neighbours in the
// output (a channels_last input over its H: neighbouring threads take
// neighbouring channels, a row of the output apart), enough of them to be
// written through a scratch (run_indexed_cuda).
bool stages_scattered_outputs(const IndexedPass& p) {
  return !p.along_rows() && p.outer.ndim > 1 && std::abs(p.outer.out_strides[0]) >= kStageScatteredMinStride &&
         p.n_out >= kStageScatteredMinOutputs;
}

// Runs pass p into indices and values (contiguous, p's out_strides), or,
// where it stages scattered outputs, into scratch in the pass's own order,
// then one copy: the kernels' scattered 8-byte stores had run the pass at
// 40% of torch's speed ([11326, 128, 7, 7] channels_last float16 over dim
// 2, H100, NOTES.md). (The sum-like passes' with_staged_output,
// run_pass.h, for this pass's geometry.)
void run_indexed_cuda(const IndexedPass& p, const at::Tensor& in, const at::Tensor* values, const at::Tensor& indices,
                      Extreme extreme) {
  if (!stages_scattered_outputs(p)) {
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
  return p.n_out * element_size < kSingleSlicePassMaxBytes && !stages_scattered_outputs(p);
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
