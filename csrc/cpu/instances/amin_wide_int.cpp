// The baseline CPU engine for amin of int16, int32 and int64 inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(AminFamily, kWideInt);
