// The baseline CPU engine for amax of bool, uint8 and int8 inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(AmaxFamily, kNarrowInt);
