// The baseline CPU engine for vector_norm of orders 1, 2 and inf of float32 and float64
// inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(NormOneFamily, kFloat);
GPUREDUCE_CPU_BASELINE_INSTANCE(NormTwoFamily, kFloat);
GPUREDUCE_CPU_BASELINE_INSTANCE(NormInfFamily, kFloat);
