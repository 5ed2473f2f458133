// The AVX2 CPU engine for vector_norm of orders 1, 2 and inf of float16
// inputs (engine_avx2.h).
#include "../engine_avx2.h"

GPUREDUCE_CPU_AVX2_INSTANCE(NormOneFamily, kHalf);
GPUREDUCE_CPU_AVX2_INSTANCE(NormTwoFamily, kHalf);
GPUREDUCE_CPU_AVX2_INSTANCE(NormInfFamily, kHalf);
