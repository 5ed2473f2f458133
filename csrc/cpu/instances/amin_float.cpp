// The baseline CPU engine for amin of float32 and float64 inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(AminFamily, kFloat);
