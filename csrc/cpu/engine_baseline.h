// The CPU engine (reduce_cpu.h) in its baseline build. On x86-64 it runs
// only where the CPU lacks AVX2 (cpu/isa.h), which no x86-64 CPU of the
// last decade does: the AVX2 build is the one they, and this project's
// machines, run. There it is compiled at -O1, as a fallback, to spare the
// clean build: its 20 instance files were half the compile work at -O3
// (68-70 s a file on the 2-core machine), 28 s at -O2 (session 34), and
// -O1 takes a further quarter off (extremum_narrow_int.cpp 29.7 -> 20.5 s,
// sum_float.cpp 10.0 -> 7.7; session 35), while the clean build on the GPU
// machine was still 148-199 s. It is also lean (GPUREDUCE_CPU_LEAN): no
// forced inlining or unrolling, which had made its instances 69 MB of code
// with the AVX2 ones; its compile went 1529 -> 296 s on the 2-core machine
// (logsumexp_integer_to_float.cpp 162 -> 28 s), its kernels 1.0-1.4x
// slower (NOTES.md, session 51). Elsewhere (aarch64) this build is the CPU
// engine, and keeps the -O3 and inlining of the rest. Same order of
// operations at every level (no fast-math), so the same bits as the AVX2
// build (but for its fused multiply-adds, cpu/isa.h). Included first, and
// only, by the baseline instance files (instances/<op>_<group>.cpp); every
// header it includes is included before the switch, at -O3, as
// engine_avx2.h does for its target switch.
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

#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O1")
#define GPUREDUCE_CPU_LEAN 1
#include "reduce_cpu.h"
#pragma GCC pop_options
#else
#include "reduce_cpu.h"
#endif
