// The baseline CPU engine for vector_norm of order inf of float16 inputs
// (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(NormInfFamily, kHalf);
