// The CUDA engine for sum (and mean, nansum) of bool and integer inputs into
// float32 results, read at their own width (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(SumFamily, kNarrowIntToFloat);
GPUREDUCE_CUDA_ENGINE_INSTANCE(SumFamily, kWideIntToFloat);
