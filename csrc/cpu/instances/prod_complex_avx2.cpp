// The AVX2 CPU engine for prod of complex64 and complex128 inputs (engine_avx2.h).
#include "../engine_avx2.h"

GPUREDUCE_CPU_AVX2_INSTANCE(ProdFamily, kComplex);
