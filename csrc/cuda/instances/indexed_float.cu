// The indexed pass (argmax, argmin, max.dim, min.dim) of float32 and float64 inputs.
#include "../engine/indexed.cuh"

GPUREDUCE_CUDA_INDEXED_INSTANCE(float);
GPUREDUCE_CUDA_INDEXED_INSTANCE(double);
