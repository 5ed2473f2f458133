// The CUDA engine for vector_norm of order 2 of float16 inputs (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(NormTwoFamily, kHalf);
