// argmax, argmin, max.dim and min.dim on the CUDA key: the engine's indexed
// pass (engine/indexed_plan.h), whose kernels (engine/indexed.cuh) are
// compiled per dtype group in instances/indexed_*.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "../engine/indexed_ops.h"
#include "../engine/indexed_plan.h"
#include "instance.h"

namespace gpureduce {
namespace {

void run_indexed_cuda(const IndexedPass& p, const at::Tensor& in, const at::Tensor* values, const at::Tensor& indices,
                      Extreme extreme) {
  with_indexed_type(in.scalar_type(), [&](auto tag) {
    using in_t = typename decltype(tag)::type;
    cuda::run_indexed_pass_cuda<in_t>(p, in.const_data_ptr(), values != nullptr ? values->data_ptr() : nullptr,
                                      indices.data_ptr<int64_t>(), extreme);
  });
}

const IndexedKernels& indexed_kernels() {
  static const IndexedKernels k{&run_indexed_cuda, "cuda"};
  return k;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) {
  IndexedEntries<&indexed_kernels, c10::cuda::CUDAGuard>::register_on(m);
}

}  // namespace gpureduce
