// An op's way into the CUDA engine: run_pass_cuda<Family> hands each pass to
// the engine's instance for the input's dtype group. The instances are
// compiled in files of their own (instances/), so that a parallel build
// compiles an op's dtype groups side by side and an op's .cu file holds no
// kernels.
#pragma once

#include <ATen/core/Tensor.h>

#include "../engine/reduce_dtypes.h"
#include "../engine/reduce_plan.h"

namespace gpureduce {
namespace cuda {

// Defined in reduce_cuda.cuh; instantiated in instances/<op>_<group>.cu.
template <class Family, InputGroup G>
void run_pass_cuda_group(const ReducePass& p, const at::Tensor& in, const at::Tensor& out);

template <class Family>
void run_pass_cuda(const ReducePass& p, const at::Tensor& in, const at::Tensor& out) {
  with_input_group(in.scalar_type(), [&](auto group) {
    run_pass_cuda_group<Family, decltype(group)::value>(p, in, out);
  });
}

}  // namespace cuda
}  // namespace gpureduce

// One instance file's whole content: the engine for one op family and one
// dtype group.
#define GPUREDUCE_CUDA_ENGINE_INSTANCE(FAMILY, GROUP)                                          \
  template void gpureduce::cuda::run_pass_cuda_group<gpureduce::FAMILY, gpureduce::InputGroup::GROUP>( \
      const gpureduce::ReducePass&, const at::Tensor&, const at::Tensor&)
