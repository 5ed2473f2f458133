// gpureduce::logsumexp on the CUDA key: the CUDA engine for its family,
// whose instances (one per floating dtype group) are compiled in
// instances/logsumexp_*.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "../engine/reduce_entry.h"
#include "../engine/reduce_family.h"
#include "run_pass.h"

namespace gpureduce {
namespace {

const OpSpec& logsumexp_spec() {
  static const OpSpec spec =
      op_spec<LogSumExpFamily, Backend::kCuda>(&cuda::run_pass_cuda<LogSumExpFamily>, "logsumexp_cuda");
  return spec;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) {
  using LogSumExp = LogSumExpEntries<&logsumexp_spec, kCudaName, c10::cuda::CUDAGuard>;
  m.impl("logsumexp", &LogSumExp::dims);
  m.impl("logsumexp.out", &LogSumExp::dims_out);
}

}  // namespace gpureduce
