// The CUDA engine for amax and amin of bool, uint8 and int8 inputs (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(AmaxFamily, kNarrowInt);
GPUREDUCE_CUDA_ENGINE_INSTANCE(AminFamily, kNarrowInt);
