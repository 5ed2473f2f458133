// The CUDA engine for nansum of bfloat16 inputs (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(NanSumFamily, kBFloat16);
