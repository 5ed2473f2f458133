// The CUDA engine for amax and amin of int16, int32 and int64 inputs (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(AmaxFamily, kWideInt);
GPUREDUCE_CUDA_ENGINE_INSTANCE(AminFamily, kWideInt);
