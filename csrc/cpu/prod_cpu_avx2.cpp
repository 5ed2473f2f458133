// prod's CPU kernels compiled for AVX2, FMA and F16C (engine_avx2.h).
#include "engine_avx2.h"

#if defined(GPUREDUCE_HAS_AVX2_BUILD)
namespace gpureduce {
namespace cpu_avx2 {
template void run_pass<ProdFamily>(const ReducePass&, const at::Tensor&, const at::Tensor&);
}  // namespace cpu_avx2
}  // namespace gpureduce
#endif
