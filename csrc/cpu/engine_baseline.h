// The CPU engine (reduce_cpu.h) in its baseline build, the one build where
// there is no AVX2 one (cpu/isa.h: not x86-64, or not GCC or Clang).
// Included first, and only, by the baseline instance files
// (instances/<op>_<group>.cpp), which setup.py compiles only there; on
// x86-64 they compile to nothing. Every header it includes is included
// before the engine, as engine_avx2.h does for its target switch.
#pragma once

#include "isa.h"

#if defined(GPUREDUCE_CPU_AVX2_ONLY)
#define GPUREDUCE_CPU_BASELINE_INSTANCE(FAMILY, GROUP) static_assert(true, "no baseline build here")
#else
#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

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
#include "reduce_cpu.h"
#define GPUREDUCE_CPU_BASELINE_INSTANCE(FAMILY, GROUP) GPUREDUCE_CPU_ENGINE_INSTANCE(FAMILY, GROUP)
#endif
