// The AVX2 CPU engine for amax and amin of bool, uint8 and int8 inputs (engine_avx2.h).
#include "../engine_avx2.h"

#if defined(GPUREDUCE_HAS_AVX2_BUILD)
GPUREDUCE_CPU_ENGINE_INSTANCE(AmaxFamily, kNarrowInt);
GPUREDUCE_CPU_ENGINE_INSTANCE(AminFamily, kNarrowInt);
#endif
