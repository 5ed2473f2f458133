// The CUDA engine for var and std of float32 and float64 inputs (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(VarianceFamily, kFloat);
