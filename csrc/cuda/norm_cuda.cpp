// gpureduce::linalg_vector_norm on the CUDA key: the CUDA engine for the
// norm families of orders 1, 2 and inf (instances/norm_*.cu), and sum's and
// amin's for the orders staged through an elementwise op.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "../engine/reduce_entry.h"
#include "../engine/reduce_family.h"
#include "run_pass.h"

namespace gpureduce {
namespace {

NormSpecs norm_specs() {
  static const OpSpec one = op_spec<NormOneFamily, Backend::kCuda>(&cuda::run_pass_cuda<NormOneFamily>, "norm_cuda");
  static const OpSpec two =
      op_spec<NormTwoFamily, Backend::kCuda>(&cuda::run_pass_cuda<NormTwoFamily>, "norm_cuda", /*roots=*/true);
  static const OpSpec inf = op_spec<NormInfFamily, Backend::kCuda>(&cuda::run_pass_cuda<NormInfFamily>, "norm_cuda");
  static const OpSpec sum = op_spec<SumFamily, Backend::kCuda>(&cuda::run_pass_cuda<SumFamily>, "norm_cuda");
  static const OpSpec amin = op_spec<AminFamily, Backend::kCuda>(&cuda::run_pass_cuda<AminFamily>, "norm_cuda");
  return {one, two, inf, sum, amin};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) { NormEntries<&norm_specs, c10::cuda::CUDAGuard>::register_on(m); }

}  // namespace gpureduce
