// The baseline CPU engine for amin of bfloat16 inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(AminFamily, kBFloat16);
