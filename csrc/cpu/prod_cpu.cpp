// prod's CPU kernels, baseline x86-64 build (the AVX2 one: prod_cpu_avx2.cpp).
#include "../engine/reduce_family.h"
#include "reduce_cpu.h"

namespace gpureduce {
namespace cpu {
template void run_pass_cpu<ProdFamily>(const ReducePass&, const at::Tensor&, const at::Tensor&);
}  // namespace cpu
}  // namespace gpureduce
