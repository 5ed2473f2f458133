// The AVX2 CPU engine for sum (and mean, nansum) of bool, uint8 and int8 inputs into float32
// results, read at their own width (engine_avx2.h).
#include "../engine_avx2.h"

GPUREDUCE_CPU_AVX2_INSTANCE(SumFamily, kNarrowIntToFloat);
