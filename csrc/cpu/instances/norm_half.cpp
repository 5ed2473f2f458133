// The baseline CPU engine for vector_norm of orders 1, 2 and inf of float16
// inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(NormOneFamily, kHalf);
GPUREDUCE_CPU_BASELINE_INSTANCE(NormTwoFamily, kHalf);
GPUREDUCE_CPU_BASELINE_INSTANCE(NormInfFamily, kHalf);
