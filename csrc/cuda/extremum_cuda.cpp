// gpureduce::amax and gpureduce::amin (and max and min of every element) on the CUDA key: the CUDA engine for
// their families, whose instances (one per dtype group, both ops) are
// compiled in instances/extremum_*.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "../engine/reduce_entry.h"
#include "../engine/reduce_family.h"
#include "run_pass.h"

namespace gpureduce {
namespace {

const OpSpec& amax_spec() {
  static const OpSpec spec = op_spec<AmaxFamily, Backend::kCuda>(&cuda::run_pass_cuda<AmaxFamily>, "max_values_cuda");
  return spec;
}
const OpSpec& amin_spec() {
  static const OpSpec spec = op_spec<AminFamily, Backend::kCuda>(&cuda::run_pass_cuda<AminFamily>, "min_values_cuda");
  return spec;
}

constexpr char kMaxAllCuda[] = "max_all_cuda";
constexpr char kMinAllCuda[] = "min_all_cuda";

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) {
  using Amax = ExtremumEntries<&amax_spec, kAmaxName, c10::cuda::CUDAGuard>;
  using Amin = ExtremumEntries<&amin_spec, kAminName, c10::cuda::CUDAGuard>;
  m.impl("amax", &Amax::dims);
  m.impl("amax.out", &Amax::dims_out);
  m.impl("amin", &Amin::dims);
  m.impl("amin.out", &Amin::dims_out);
  using MaxAll = ExtremumAllEntries<&amax_spec, kMaxAllName, kMaxAllCuda, c10::cuda::CUDAGuard>;
  using MinAll = ExtremumAllEntries<&amin_spec, kMinAllName, kMinAllCuda, c10::cuda::CUDAGuard>;
  m.impl("max", &MaxAll::all);
  m.impl("min", &MinAll::all);
  m.impl("max.unary_out", &MaxAll::all_out);
  m.impl("min.unary_out", &MinAll::all_out);
}

}  // namespace gpureduce
