// The AVX2 CPU engine for amax of bool, uint8 and int8 inputs (engine_avx2.h).
#include "../engine_avx2.h"

GPUREDUCE_CPU_AVX2_INSTANCE(AmaxFamily, kNarrowInt);
