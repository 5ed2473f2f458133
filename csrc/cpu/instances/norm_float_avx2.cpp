// The AVX2 CPU engine for vector_norm of orders 1, 2 and inf of float32 and float64
// inputs (engine_avx2.h).
#include "../engine_avx2.h"

#if defined(GPUREDUCE_HAS_AVX2_BUILD)
GPUREDUCE_CPU_ENGINE_INSTANCE(NormOneFamily, kFloat);
GPUREDUCE_CPU_ENGINE_INSTANCE(NormTwoFamily, kFloat);
GPUREDUCE_CPU_ENGINE_INSTANCE(NormInfFamily, kFloat);
#endif
