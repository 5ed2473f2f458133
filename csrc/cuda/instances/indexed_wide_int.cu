// The indexed pass (argmax, argmin, max.dim, min.dim) of int16, int32 and int64 inputs.
#include "../engine/indexed.cuh"

GPUREDUCE_CUDA_INDEXED_INSTANCE(int16_t);
GPUREDUCE_CUDA_INDEXED_INSTANCE(int32_t);
GPUREDUCE_CUDA_INDEXED_INSTANCE(int64_t);
