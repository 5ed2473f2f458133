// The baseline CPU engine for vector_norm of orders 1, 2 and inf of bfloat16
// inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(NormOneFamily, kBFloat16);
GPUREDUCE_CPU_BASELINE_INSTANCE(NormTwoFamily, kBFloat16);
GPUREDUCE_CPU_BASELINE_INSTANCE(NormInfFamily, kBFloat16);
