// What the host side of an op hands the CUDA engine for one pass: the
// instance run_pass_cuda_group<Family, G>, defined in reduce_cuda.cuh and
// compiled once per op and dtype group in instances/<op>_<group>.cu, and
// the pass's two buffers. The instances see no at::Tensor: a kernel file
// that parsed ATen's headers took 20 s of its 40 before a kernel (nvcc's
// front ends and the host compiler), one that parses c10's 8.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>

#include "../engine/reduce_dtypes.h"
#include "../engine/indexed_pass.h"
#include "../engine/reduce_plan.h"

namespace gpureduce {
namespace cuda {

struct PassBuffers {
  const void* in = nullptr;  // the input's first element (storage offset applied)
  void* out = nullptr;
  at::ScalarType in_dtype = at::kFloat, out_dtype = at::kFloat;
  // Bytes of the input's storage from `in` to its end: how far a kernel may
  // read past the last element the pass names (stride-2 rows).
  int64_t in_bytes_to_end = 0;
};

template <class Family, InputGroup G>
void run_pass_cuda_group(const ReducePass& p, const PassBuffers& b);

// The indexed pass (argmax, argmin, max.dim, min.dim) for inputs of type
// in_t: defined in engine/indexed.cuh, compiled in instances/indexed_*.cu.
// `values` may be null (argmax and argmin write indices only).
template <typename in_t>
void run_indexed_pass_cuda(const IndexedPass& p, const void* in, void* values, int64_t* indices, Extreme extreme);

}  // namespace cuda
}  // namespace gpureduce

// One instance file's whole content: the engine for one op family and one
// dtype group.
#define GPUREDUCE_CUDA_ENGINE_INSTANCE(FAMILY, GROUP)                                          \
  template void gpureduce::cuda::run_pass_cuda_group<gpureduce::FAMILY, gpureduce::InputGroup::GROUP>( \
      const gpureduce::ReducePass&, const gpureduce::cuda::PassBuffers&)
