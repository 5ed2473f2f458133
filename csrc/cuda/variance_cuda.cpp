// gpureduce::var, std, var_mean and std_mean on the CUDA key: the CUDA
// engine for the variance family (instances/variance_*.cu), std's outputs
// rooted by the same kernels, and mean's (sum's kernels) for the means.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "../engine/reduce_entry.h"
#include "../engine/reduce_family.h"
#include "run_pass.h"

namespace gpureduce {
namespace {

const OpSpec& var_spec() {
  static const OpSpec spec = op_spec<VarianceFamily, Backend::kCuda>(&cuda::run_pass_cuda<VarianceFamily>, "std_cuda");
  return spec;
}
const OpSpec& std_spec() {
  static const OpSpec spec =
      op_spec<VarianceFamily, Backend::kCuda>(&cuda::run_pass_cuda<VarianceFamily>, "std_cuda", /*roots=*/true);
  return spec;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) {
  VarianceEntries<&var_spec, &std_spec, &cuda::mean_spec, c10::cuda::CUDAGuard>::register_on(m);
}

}  // namespace gpureduce
