// The AVX2 CPU engine for var and std of float32 and float64 inputs (engine_avx2.h).
#include "../engine_avx2.h"

#if defined(GPUREDUCE_HAS_AVX2_BUILD)
GPUREDUCE_CPU_ENGINE_INSTANCE(VarianceFamily, kFloat);
#endif
