// The AVX2 CPU engine for amax and amin of bfloat16 inputs (engine_avx2.h).
#include "../engine_avx2.h"

GPUREDUCE_CPU_AVX2_INSTANCE(AmaxFamily, kBFloat16);
GPUREDUCE_CPU_AVX2_INSTANCE(AminFamily, kBFloat16);
