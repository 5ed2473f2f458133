// The baseline CPU engine for logsumexp of complex64 and complex128 inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(LogSumExpFamily, kComplex);
