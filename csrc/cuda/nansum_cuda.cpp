// gpureduce::nansum on the CUDA key: the CUDA engine for NanSumFamily, whose
// instances are compiled in instances/nansum_*.cu; integer and bool inputs
// are sum's (NanSumEntries).
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "../engine/reduce_entry.h"
#include "../engine/reduce_family.h"
#include "run_pass.h"

namespace gpureduce {
namespace {

const OpSpec& nansum_spec() {
  static const OpSpec spec = op_spec<NanSumFamily, Backend::kCuda>(&cuda::run_pass_cuda<NanSumFamily>, "nansum_cuda");
  return spec;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) {
  using Entries = NanSumEntries<&nansum_spec, &cuda::sum_spec, c10::cuda::CUDAGuard>;
  m.impl("nansum", &Entries::dims);
  m.impl("nansum.out", &Entries::dims_out);
}

}  // namespace gpureduce
