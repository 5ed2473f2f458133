// The CUDA engine for sum of bool, uint8 and int8 inputs (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(SumFamily, kNarrowInt);
