// The CUDA engine for logsumexp of bfloat16 inputs (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(LogSumExpFamily, kBFloat16);
