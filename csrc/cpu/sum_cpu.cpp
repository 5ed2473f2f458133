// sum's CPU kernels, baseline x86-64 build (the AVX2 one: sum_cpu_avx2.cpp).
// A file per op and instruction set keeps each compile short.
#include "../engine/reduce_family.h"
#include "reduce_cpu.h"

namespace gpureduce {
namespace cpu {
template void run_pass_cpu<SumFamily>(const ReducePass&, const at::Tensor&, const at::Tensor&);
}  // namespace cpu
}  // namespace gpureduce
