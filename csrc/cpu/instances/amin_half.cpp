// The baseline CPU engine for amin of float16 inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(AminFamily, kHalf);
