// The CUDA engine for amax and amin of bfloat16 inputs (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(AmaxFamily, kBFloat16);
GPUREDUCE_CUDA_ENGINE_INSTANCE(AminFamily, kBFloat16);
