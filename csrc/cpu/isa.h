// Which build of the CPU kernels (reduce_cpu.h) this library has.
//
// On x86-64 with GCC or Clang (GPUREDUCE_CPU_AVX2_ONLY), one build, for
// AVX2, FMA and F16C (instances/<op>_<group>_avx2.cpp, engine_avx2.h). A
// CPU without them (Intel's Core CPUs have them since 2013 and AMD's since
// 2015, some Atom, Celeron and Pentium parts not until about 2020; a
// virtual machine may hide them) runs ATen's own CPU kernels for the
// engine's ops instead (ops_cpu.cpp): torch's answers at torch's speed.
// Its baseline build was a third of the CPU engine's compile, 330 of the
// GPU machine's 2950 core-seconds of a clean build (NOTES.md, session 54),
// for CPUs that our machines never run.
//
// Elsewhere (aarch64, other compilers), the one build is the baseline one
// (instances/<op>_<group>.cpp, engine_baseline.h).
//
// GPUREDUCE_CPU_BASELINE=1 in the environment (read once, when the library
// loads) makes an AVX2 CPU take the path of one without, so that tests can
// check it.
#pragma once

#include "../engine/reduce_dtypes.h"
#include "../engine/reduce_plan.h"

#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
#define GPUREDUCE_CPU_AVX2_ONLY 1
#endif

namespace gpureduce {

// Whether the AVX2 build runs on this CPU (and is compiled in: x86-64 and GCC or Clang).
bool cpu_runs_avx2();

// Whether this CPU runs the engine's kernels: everywhere but on x86-64 CPUs
// without AVX2, FMA and F16C (see above).
inline bool cpu_runs_engine() {
#if defined(GPUREDUCE_CPU_AVX2_ONLY)
  return cpu_runs_avx2();
#else
  return true;
#endif
}

// What a CPU instance takes besides the pass: its input's first element
// and its output's, and their dtypes. The instance files see no at::Tensor:
// ATen's tensor header was 1.9 of the 3.7 s that an instance file spent on
// its headers alone (the 2-core machine, NOTES.md session 56), as the CUDA
// instances' PassBuffers (cuda/instance.h) keep theirs out.
struct CpuPassBuffers {
  const void* in = nullptr;  // storage offset applied
  void* out = nullptr;
  at::ScalarType in_dtype = at::kFloat, out_dtype = at::kFloat;
};

#if defined(GPUREDUCE_CPU_AVX2_ONLY)
namespace cpu_avx2 {
// The kernels of an op's family for an input dtype group; call only where cpu_runs_avx2().
template <class Family, InputGroup G>
void run_pass_cpu(const ReducePass& pass, const CpuPassBuffers& b);
}  // namespace cpu_avx2
#else
namespace cpu {
// The kernels of an op's family for an input dtype group, from the baseline build.
template <class Family, InputGroup G>
void run_pass_cpu(const ReducePass& pass, const CpuPassBuffers& b);
}  // namespace cpu
#endif

}  // namespace gpureduce
