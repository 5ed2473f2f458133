// The baseline CPU engine for sum (and mean, nansum) of bool, uint8 and int8 inputs into float32
// results, read at their own width (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(SumFamily, kNarrowIntToFloat);
