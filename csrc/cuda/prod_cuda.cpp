// gpureduce::prod on the CUDA key: the CUDA engine for ProdFamily, whose
// instances (one per dtype group) are compiled in instances/prod_*.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "../engine/reduce_entry.h"
#include "../engine/reduce_family.h"
#include "run_pass.h"

namespace gpureduce {
namespace {

const OpSpec& prod_spec() {
  static const OpSpec spec = op_spec<ProdFamily, Backend::kCuda>(&cuda::run_pass_cuda<ProdFamily>, "prod_cuda");
  return spec;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) {
  using Entries = SumLikeEntries<&prod_spec, c10::cuda::CUDAGuard>;
  m.impl("prod", &Entries::all);
  m.impl("prod.dim_int", &Entries::one_dim);
  m.impl("prod.int_out", &Entries::one_dim_out);
}

}  // namespace gpureduce
