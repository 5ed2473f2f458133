// The baseline CPU engine for sum of int16, int32 and int64 inputs (reduce_cpu.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cpu.h"

GPUREDUCE_CPU_ENGINE_INSTANCE(SumFamily, kWideInt);
