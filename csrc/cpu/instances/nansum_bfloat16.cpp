// The baseline CPU engine for nansum of bfloat16 inputs (reduce_cpu.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cpu.h"

GPUREDUCE_CPU_ENGINE_INSTANCE(NanSumFamily, kBFloat16);
