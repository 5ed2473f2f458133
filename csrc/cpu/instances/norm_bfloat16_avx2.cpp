// The AVX2 CPU engine for vector_norm of orders 1, 2 and inf of bfloat16
// inputs (engine_avx2.h).
#include "../engine_avx2.h"

GPUREDUCE_CPU_AVX2_INSTANCE(NormOneFamily, kBFloat16);
GPUREDUCE_CPU_AVX2_INSTANCE(NormTwoFamily, kBFloat16);
GPUREDUCE_CPU_AVX2_INSTANCE(NormInfFamily, kBFloat16);
