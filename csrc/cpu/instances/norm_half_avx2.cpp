// The AVX2 CPU engine for vector_norm of orders 1, 2 and inf of float16
// inputs (engine_avx2.h).
#include "../engine_avx2.h"

#if defined(GPUREDUCE_HAS_AVX2_BUILD)
GPUREDUCE_CPU_ENGINE_INSTANCE(NormOneFamily, kHalf);
GPUREDUCE_CPU_ENGINE_INSTANCE(NormTwoFamily, kHalf);
GPUREDUCE_CPU_ENGINE_INSTANCE(NormInfFamily, kHalf);
#endif
