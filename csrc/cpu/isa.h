// The CPU kernels come in two builds of reduce_cpu.h: the baseline one
// (<op>_cpu.cpp) and one compiled for AVX2, FMA and F16C (<op>_cpu_avx2.cpp,
// through engine_avx2.h), used where the CPU has them. Both sum in the same
// order, so they give the same bits. GPUREDUCE_CPU_BASELINE=1 in the
// environment keeps the baseline build (read once), so that tests can
// compare the two.
#pragma once

#include <ATen/core/Tensor.h>

#include "../engine/reduce_plan.h"

namespace gpureduce {

// Whether the AVX2 build runs on this CPU (and is compiled in: x86-64 and GCC or Clang).
bool cpu_runs_avx2();

namespace cpu {
// The baseline build's kernels for an op's family (reduce_cpu.h), instantiated in <op>_cpu.cpp.
template <class Family>
void run_pass_cpu(const ReducePass& pass, const at::Tensor& in, const at::Tensor& out);
}  // namespace cpu

namespace cpu_avx2 {
// run_pass_cpu<Family> of the AVX2 build (<op>_cpu_avx2.cpp); call only where cpu_runs_avx2().
template <class Family>
void run_pass(const ReducePass& pass, const at::Tensor& in, const at::Tensor& out);
}  // namespace cpu_avx2

}  // namespace gpureduce
