// The indexed pass (argmax, argmin, max.dim, min.dim) of float16 and bfloat16 inputs.
#include "../engine/indexed.cuh"

GPUREDUCE_CUDA_INDEXED_INSTANCE(c10::Half);
GPUREDUCE_CUDA_INDEXED_INSTANCE(c10::BFloat16);
