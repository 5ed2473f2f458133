// The AVX2 CPU engine for vector_norm of order 1 of float16 inputs
// (engine_avx2.h).
#include "../engine_avx2.h"

GPUREDUCE_CPU_AVX2_INSTANCE(NormOneFamily, kHalf);
