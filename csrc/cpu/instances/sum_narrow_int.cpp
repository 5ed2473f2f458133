// The baseline CPU engine for sum of bool, uint8 and int8 inputs (reduce_cpu.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cpu.h"

GPUREDUCE_CPU_ENGINE_INSTANCE(SumFamily, kNarrowInt);
