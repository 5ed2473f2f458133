// The baseline CPU engine for amax and amin of bfloat16 inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(AmaxFamily, kBFloat16);
GPUREDUCE_CPU_BASELINE_INSTANCE(AminFamily, kBFloat16);
