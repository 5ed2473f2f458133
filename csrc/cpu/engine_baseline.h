// The CPU engine (reduce_cpu.h) in its baseline x86-64 build, compiled at
// -O2 rather than the -O3 of the rest. It runs only where the CPU lacks
// AVX2 (cpu/isa.h); the AVX2 build is the one every recent x86-64 CPU, and
// this project's machines, run. Its 20 instance files at -O3 were half the
// compile work of a clean build: one took 68-70 s on the 2-core machine,
// 28 s at -O2 (gcc 13), and a clean build on the GPU machine reached 199 s
// with amax and amin. Same order of operations either way (no fast-math),
// so the same bits. Included first, and only, by the baseline instance
// files (instances/<op>_<group>.cpp); every header it includes is included
// before the switch, at -O3, as engine_avx2.h does for its target switch.
#pragma once

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
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
#include "isa.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O2")
#include "reduce_cpu.h"
#pragma GCC pop_options
#else
#include "reduce_cpu.h"
#endif
