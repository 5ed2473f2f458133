// The AVX2 CPU engine for sum (and mean, nansum) of bool and integer inputs into
// float64 results, read at their own width (engine_avx2.h).
#include "../engine_avx2.h"

#if defined(GPUREDUCE_HAS_AVX2_BUILD)
GPUREDUCE_CPU_ENGINE_INSTANCE(SumFamily, kIntegerToDouble);
#endif
