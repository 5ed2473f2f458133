// The AVX2 CPU engine for logsumexp of complex64 and complex128 inputs (engine_avx2.h).
#include "../engine_avx2.h"

#if defined(GPUREDUCE_HAS_AVX2_BUILD)
GPUREDUCE_CPU_ENGINE_INSTANCE(LogSumExpFamily, kComplex);
#endif
