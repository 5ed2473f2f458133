// The indexed pass (argmax, argmin, max.dim, min.dim) of bool, uint8 and int8 inputs.
#include "../engine/indexed.cuh"

GPUREDUCE_CUDA_INDEXED_INSTANCE(bool);
GPUREDUCE_CUDA_INDEXED_INSTANCE(uint8_t);
GPUREDUCE_CUDA_INDEXED_INSTANCE(int8_t);
