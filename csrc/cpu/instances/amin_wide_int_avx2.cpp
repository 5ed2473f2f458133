// The AVX2 CPU engine for amin of int16, int32 and int64 inputs (engine_avx2.h).
#include "../engine_avx2.h"

GPUREDUCE_CPU_AVX2_INSTANCE(AminFamily, kWideInt);
