// The baseline CPU engine for vector_norm of order 2 of bfloat16 inputs
// (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(NormTwoFamily, kBFloat16);
