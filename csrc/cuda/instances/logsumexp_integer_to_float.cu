// The CUDA engine for logsumexp of bool and integer inputs into float32
// results, read at their own width (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(LogSumExpFamily, kNarrowIntToFloat);
GPUREDUCE_CUDA_ENGINE_INSTANCE(LogSumExpFamily, kWideIntToFloat);
