// The baseline CPU engine for sum of float16 inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(SumFamily, kHalf);
