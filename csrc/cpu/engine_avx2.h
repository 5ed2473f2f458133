// The CPU engine (reduce_cpu.h) compiled for AVX2, FMA and F16C: 8-wide
// float vectors and hardware float16 conversion, which the baseline x86-64
// build cannot use. Included first, and only, by the AVX2 instance files
// (instances/<op>_<group>_avx2.cpp). Only the engine's own code is compiled
// for AVX2: every header it includes is included before the target switch,
// for the baseline, so that no inline function shared with the other files
// is emitted with instructions an older CPU lacks (the engine's templates
// live in a namespace of their own, cpu_avx2).
#pragma once

#include "isa.h"

#if defined(GPUREDUCE_CPU_AVX2_ONLY)
#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "../engine/reduce_dtypes.h"
#include "../engine/reduce_family.h"
#include "../engine/reduce_ops.h"
#include "../engine/reduce_plan.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#define GPUREDUCE_CPU_AVX2 1
#define GPUREDUCE_CPU_NS cpu_avx2
#include "reduce_cpu.h"
#pragma GCC pop_options
#define GPUREDUCE_CPU_AVX2_INSTANCE(FAMILY, GROUP) GPUREDUCE_CPU_ENGINE_INSTANCE(FAMILY, GROUP)
#else
#define GPUREDUCE_CPU_AVX2_INSTANCE(FAMILY, GROUP) static_assert(true, "no AVX2 build here")
#endif
