// The CUDA engine for nansum of complex64 and complex128 inputs (run_pass.h).
#include "../../engine/reduce_family.h"
#include "../reduce_cuda.cuh"

GPUREDUCE_CUDA_ENGINE_INSTANCE(NanSumFamily, kComplex);
