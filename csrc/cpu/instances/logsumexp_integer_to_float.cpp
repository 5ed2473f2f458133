// The baseline CPU engine for logsumexp of bool and integer inputs into
// float32 results, read at their own width (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_ENGINE_INSTANCE(LogSumExpFamily, kIntegerToFloat);
