// gpureduce::sum and gpureduce::mean on the CUDA key: the CUDA engine for
// SumFamily, whose instances (one per dtype group) are compiled in
// instances/sum_*.cu; mean runs them and divides (MeanFamily).
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "../engine/reduce_entry.h"
#include "../engine/reduce_family.h"
#include "run_pass.h"

namespace gpureduce {

const OpSpec& cuda::sum_spec() {
  static const OpSpec spec = op_spec<SumFamily, Backend::kCuda>(&cuda::run_pass_cuda<SumFamily>, "sum_cuda");
  return spec;
}

const OpSpec& cuda::mean_spec() {
  static const OpSpec spec = op_spec<MeanFamily, Backend::kCuda>(&cuda::run_pass_cuda<MeanFamily>, "mean_cuda");
  return spec;
}

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) {
  using Entries = SumLikeEntries<&cuda::sum_spec, c10::cuda::CUDAGuard, /*NoneListsDims=*/true>;
  m.impl("sum", &Entries::all);
  m.impl("sum.dim_IntList", &Entries::dims);
  m.impl("sum.IntList_out", &Entries::dims_out);
  using Mean = MeanEntries<&cuda::mean_spec, c10::cuda::CUDAGuard>;
  m.impl("mean", &Mean::all);
  m.impl("mean.dim", &Mean::dims);
  m.impl("mean.out", &Mean::dims_out);
}

}  // namespace gpureduce
