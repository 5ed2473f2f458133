// The CUDA engine for vector_norm of order inf of float32 and float64 inputs (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(NormInfFamily, kFloat);
