// The AVX2 CPU engine for amax and amin of int16, int32 and int64 inputs (engine_avx2.h).
#include "../engine_avx2.h"

#if defined(GPUREDUCE_HAS_AVX2_BUILD)
GPUREDUCE_CPU_ENGINE_INSTANCE(AmaxFamily, kWideInt);
GPUREDUCE_CPU_ENGINE_INSTANCE(AminFamily, kWideInt);
#endif
