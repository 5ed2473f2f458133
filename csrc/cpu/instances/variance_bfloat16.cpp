// The baseline CPU engine for var and std of bfloat16 inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(VarianceFamily, kBFloat16);
