// The CUDA engine for amax and amin of float32 and float64 inputs (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(AmaxFamily, kFloat);
GPUREDUCE_CUDA_ENGINE_INSTANCE(AminFamily, kFloat);
