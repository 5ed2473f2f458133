// The CPU kernels come in two builds of reduce_cpu.h: the baseline one
// (instances/<op>_<group>.cpp) and one compiled for AVX2, FMA and F16C
// (instances/<op>_<group>_avx2.cpp, through engine_avx2.h), used where the
// CPU has them. Both reduce in the same order, so they give the same bits,
// but for the multiply-adds the AVX2 build fuses (var, vector_norm's ord 2,
// logsumexp's exp), which agree to the last bits (tests/test_cpu_isa.py).
// GPUREDUCE_CPU_BASELINE=1 in the environment keeps the baseline build (read
// once), so that tests can compare the two.
#pragma once

#include <ATen/core/Tensor.h>

#include "../engine/reduce_dtypes.h"
#include "../engine/reduce_plan.h"

namespace gpureduce {

// Whether the AVX2 build runs on this CPU (and is compiled in: x86-64 and GCC or Clang).
bool cpu_runs_avx2();

namespace cpu {
// The baseline build's kernels for an op's family and an input dtype group (reduce_cpu.h).
template <class Family, InputGroup G>
void run_pass_cpu(const ReducePass& pass, const at::Tensor& in, const at::Tensor& out);
}  // namespace cpu

namespace cpu_avx2 {
// The same, from the AVX2 build; call only where cpu_runs_avx2().
template <class Family, InputGroup G>
void run_pass_cpu(const ReducePass& pass, const at::Tensor& in, const at::Tensor& out);
}  // namespace cpu_avx2

}  // namespace gpureduce
