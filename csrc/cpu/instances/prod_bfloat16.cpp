// The baseline CPU engine for prod of bfloat16 inputs (engine_baseline.h).
#include "../engine_baseline.h"

GPUREDUCE_CPU_BASELINE_INSTANCE(ProdFamily, kBFloat16);
