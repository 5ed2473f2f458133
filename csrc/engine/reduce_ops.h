// Op functors of the reduction engine, shared by the CPU and CUDA kernels
// (the shape of ATen's SharedReduceOps.h). An op says how to start
// (identity), fold in one input (reduce), fold in a short vector of inputs
// (reduce_vector), merge two partials (combine) and produce the output value
// (project). The kernels, the planner and the host policies name no op: they
// call these, and the few traits below, only.
//
// Traits an op may set (OpBase gives the defaults):
//   wide_op            the op in which the CUDA rows kernels carry partials
//                      longer than one vector load (sum: float -> double);
//   packs_bytes<in_t>  whether byte inputs are folded four 32-bit words at a
//                      time through reduce_packed_bytes (sum: dp4a);
//   walk_type<in_t>    the running type of a columns thread before it is
//                      widened to acc_t (sum of bytes: int32), with
//                      walk_start and walk to fold inputs into it;
//   leaf_walk_type<in_t>  the lanes' type of a CPU row leaf (at most 1024
//                      inputs) before it is widened to acc_t (sum of 1- and
//                      2-byte integers: int32, twice the lanes of int64;
//                      amax and amin of 1- and 2-byte integers: the input's
//                      own type, two or four times the lanes of int32), with
//                      identity_as<T> its identity in those lanes.
//   kCombinesLanes     the CPU kernels may hold its accumulators as GCC
//                      vectors, combined element-wise by combine_lanes, and
//                      fold an input x in as combine(acc, as_partial(acc_t(x)));
//                      otherwise they keep arrays of scalars and call
//                      reduce and combine on each;
//   as_partial(v)      an input (or a GCC vector of inputs) converted to the
//                      accumulator type, as the partial it contributes
//                      (nansum: NaN -> 0; others: itself).
// And one an op must set itself:
//   kPartialsFoldAsInputs  reduce(acc, partial) is combine(acc, partial), so
//                      that a kernel may read another pass's partials as
//                      plain inputs (where it is false, such a pass runs
//                      the kernels of PartialsKernelsFor, reduce_family.h).
// A pass that writes partials stores project<acc_t> of its accumulators,
// which must be the accumulator itself (OpBase's cast is).
// Partials are accumulators (or, for an op with kPartialsInResultDtype,
// values of the result's dtype): a pass that reads another pass's partials
// folds them in with combine (see ReducePass::reads_partials). An op's
// project to a 16-bit float is its project to float rounded once, as the
// default's cast is: the CPU kernels round with the hardware's conversion.
#pragma once

#include <c10/macros/Macros.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/complex.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "projection.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

// nvcc's unroll hint; host compilers unroll these constant-trip loops at -O3
// anyway, and gcc warns of a pragma it does not know.
#if defined(__CUDACC__)
#define GPUREDUCE_UNROLL _Pragma("unroll")
#else
#define GPUREDUCE_UNROLL
#endif

// A device function called, not inlined, at each of its many sites in a
// kernel: for steps whose code is long (complex exp and sincos), inlined
// into every load of every kernel of an instance file, which then took
// minutes of cicc and ptxas (logsumexp_complex.cu: 145 -> 37 s on the
// 2-core machine, 194 -> 45-59 s in the GPU machine's clean builds).
// Complex logsumexp so ran at 1.2-4.3x torch.logsumexp's speed (H200,
// NOTES.md session 51).
#if defined(__CUDA_ARCH__)
#define GPUREDUCE_DEVICE_OUTLINED __noinline__
#else
#define GPUREDUCE_DEVICE_OUTLINED
#endif

namespace gpureduce {

template <class Self, typename acc_t>
struct OpBase {
  using acc_type = acc_t;
  using wide_op = Self;
  // The op in which the CPU engine runs (var of float32: float64 states).
  using cpu_op = Self;
  static constexpr bool kCombinesLanes = false;
  // Vectors a CPU row leaf folds side by side (cpu/reduce_cpu.h).
  static constexpr int kCpuChains = 4;
  // Inputs a CPU row leaf hands reduce_block at once (0: none, the leaf
  // folds each input with reduce). An op that sets it also gives
  // reduce_block, which folds kCpuBlock contiguous inputs widened to its
  // value type in vector code (logsumexp: a max, then exps), and
  // block_pad, the input a short last block is padded with.
  static constexpr int kCpuBlock = 0;
  // Whether partials may be stored in the result's dtype (project to it is
  // exact: amax, amin), not only as accumulators.
  static constexpr bool kPartialsInResultDtype = false;
  // Whether the op projects through project_with(acc, Projection) rather
  // than project after the Projection's division (project_output).
  static constexpr bool kProjectsWith = false;
  // Whether a CPU leaf pads its short last block with block_pad() (an input
  // that changes no result); otherwise it hands reduce_block the count.
  static constexpr bool kPadsLastBlock = true;
  // Whether the CPU engine folds the op's states side by side in vectors of
  // its own (a tile of columns' lanes): the op then gives LaneValues (a
  // vector of 32 bytes: the lanes' inputs), StateLanes, lanes_identity,
  // lanes_fold (a vector of inputs, each into its lane), lanes_combine,
  // lanes_state (lane k's state) and lanes_with_first.
  static constexpr bool kCpuStateLanes = false;
  // Whether the op's fold tests each input for NaN (amax, amin and nansum
  // of floats): the CUDA pitch rows kernel's blocks per SM
  // (EnginePolicy::pitch_rows_blocks_per_sm).
  static constexpr bool kTestsNan = false;
  // Whether the CUDA engine compiles its stream-rows kernel for the op
  // (narrow rows and planes in tiles through shared memory; else the dense
  // tiles and the rows and columns kernels read them). That kernel is a
  // third to a half of an instance file's compile.
  static constexpr bool kStreamTiles = true;
  // Whether the CUDA split rows kernel's vectors of eight bfloat16 or int16
  // inputs fit the 40 registers of three blocks an SM
  // (EnginePolicy::split_blocks_per_sm); float16's do for every op.
  static constexpr bool kSplitRows16BitFits = false;
  // Whether the CUDA pitch rows and split rows kernels fold a thread's
  // round of kUnroll chunks of in_t into one state (reduce_vector over the
  // round's inputs) and merge that into one running state, rather than each
  // chunk into a state of its own (fold_round and reduce_chunks,
  // engine/rows.cuh): for ops whose merge costs more than a round's adds.
  template <typename in_t>
  static constexpr bool folds_rounds() {
    return false;
  }

  template <typename in_t>
  static constexpr bool packs_bytes() {
    return false;
  }
  template <typename in_t>
  using walk_type = acc_t;
  template <typename in_t>
  using leaf_walk_type = acc_t;
  template <typename in_t>
  C10_HOST_DEVICE static acc_t walk_start() {
    return Self::identity();
  }
  template <typename in_t>
  C10_HOST_DEVICE static acc_t walk(acc_t w, in_t x) {
    return Self::reduce(w, x);
  }

  template <typename out_t>
  C10_HOST_DEVICE static out_t project(acc_t a) {
    return static_cast<out_t>(a);
  }

  // The identity held in lanes of type T (a CPU row leaf's walk type,
  // which may be narrower than acc_t): the identity itself, converted.
  template <typename T>
  static T identity_as() {
    return static_cast<T>(Self::identity());
  }

  template <typename T>
  C10_HOST_DEVICE static T as_partial(T v) {
    return v;
  }

  // V consecutive inputs folded as a balanced tree, so that a vector load
  // costs one combine into the running partial.
  template <int V, typename in_t>
  C10_HOST_DEVICE static acc_t reduce_vector(const in_t (&v)[V]) {
    acc_t t[V];
GPUREDUCE_UNROLL
    for (int i = 0; i < V; ++i) t[i] = Self::reduce(Self::identity(), v[i]);
GPUREDUCE_UNROLL
    for (int w = 1; w < V; w *= 2) {
GPUREDUCE_UNROLL
      for (int i = 0; i + w < V; i += 2 * w) t[i] = Self::combine(t[i], t[i + w]);
    }
    return t[0];
  }

  // acc with V consecutive inputs folded in: their reduce_vector state
  // combined into it, unless the op folds them into its running state
  // itself (logsumexp: no exp for the vector's own state).
  template <int V, typename in_t>
  C10_HOST_DEVICE static acc_t fold_vector(acc_t acc, const in_t (&v)[V]) {
    return Self::combine(acc, Self::template reduce_vector<V>(v));
  }
};

// The correctly rounded root of float and double, on either side.
template <typename T>
C10_HOST_DEVICE T square_root(T v) {
#if defined(__CUDA_ARCH__)
  return ::sqrt(v);
#else
  return std::sqrt(v);
#endif
}

// The value a pass stores for an output: the op's projection of its
// accumulator after the pass's Projection. For a plain accumulator that is
// a multiply by the repeats each input stands for where they are not 1
// (vector_norm of orders 1 and 2 over an expanded input; one rounding, as
// sum's fold of k copies), a division where the divisor is not 1 (mean:
// the count of elements reduced into the output, one rounding in the
// accumulator's type, as torch's CPU mean divides its sum), then the
// square root where the
// Projection asks for one (vector_norm of order 2, whose last pass may be
// sum's kernels folding partials); integer accumulators are never divided
// (mean refuses integer results, and runs sum's kernels). An op whose
// projection takes the Projection itself (var and std: the squared
// deviations divided, then a root) says so with kProjectsWith.
template <class Op, typename out_t, typename acc_t>
C10_HOST_DEVICE out_t project_output(acc_t a, const Projection& projection) {
  if constexpr (Op::kProjectsWith) {
    return Op::template project_with<out_t>(a, projection);
  } else {
    if constexpr (std::is_floating_point_v<acc_t> || c10::is_complex<acc_t>::value) {
      using real_t = typename c10::scalar_value_type<acc_t>::type;
      if (projection.repeats != 1.0) a = a * static_cast<real_t>(projection.repeats);
      if (projection.divisor != 1.0)
        a = a / static_cast<real_t>(projection.divisor);
    }
    if constexpr (std::is_floating_point_v<acc_t>) {
      if (projection.root) a = square_root(a);
    }
    return Op::template project<out_t>(a);
  }
}

template <typename acc_t>
struct SumOp : OpBase<SumOp<acc_t>, acc_t> {
  // float32 sums (float, half and bfloat16 inputs) carry their partials in
  // float64 in the CUDA rows kernels: each vector load's few elements are
  // still added in float, but nothing long is. With float running sums a
  // thread's partial grows to hundreds of adds and every level of the block
  // and grid trees rounds again; on 2^28 normal samples that left the error
  // no better than torch.sum's (benchmarks/NOTES.md).
  using wide_op = std::conditional_t<std::is_same_v<acc_t, float>, SumOp<double>, SumOp<acc_t>>;
  // reduce of an accumulator is combine, and project to acc_t the identity.
  static constexpr bool kPartialsFoldAsInputs = true;

  C10_HOST_DEVICE static acc_t identity() { return acc_t(0); }

  template <typename in_t>
  C10_HOST_DEVICE static acc_t reduce(acc_t acc, in_t x) {
    return acc + static_cast<acc_t>(x);
  }

  C10_HOST_DEVICE static acc_t combine(acc_t a, acc_t b) { return a + b; }

  static constexpr bool kCombinesLanes = true;
  template <typename V>
  static V combine_lanes(V a, V b) {
    return a + b;
  }

  // Byte inputs of an integer sum: the CUDA engine hands the 16 bytes of a
  // load over as the four 32-bit words they arrived in. Taking them apart
  // byte by byte instead cost 8% of bandwidth (Nsight Compute: 71% SM
  // throughput against 17% for the float32 sum of the same bytes). So for a
  // float sum of bytes (dtype=): the load's exact int32 sum (at most 16 *
  // 255) is what 16 float adds of its elements give, with one conversion
  // for 16 (those took the full reduction of 2^28 int8 to 2961 GB/s).
  template <typename in_t>
  static constexpr bool packs_bytes() {
    return sizeof(in_t) == 1 && std::is_integral_v<in_t> &&
           (std::is_integral_v<acc_t> || std::is_floating_point_v<acc_t>);
  }

  // A columns thread adds byte inputs in int32 (the host bounds its rows so
  // that 255 * rows cannot overflow): 16 columns of int64 partials would not
  // fit in the registers.
  template <typename in_t>
  using walk_type = std::conditional_t<sizeof(in_t) == 1 && std::is_integral_v<acc_t>, int32_t, acc_t>;
  // A CPU row leaf of at most 1024 inputs of 1 or 2 bytes sums them in
  // int32 lanes (at most 128 a lane: 2^22 in magnitude), then widens.
  template <typename in_t>
  using leaf_walk_type =
      std::conditional_t<sizeof(in_t) <= 2 && std::is_integral_v<in_t> && std::is_integral_v<acc_t>, int32_t, acc_t>;
  template <typename in_t>
  C10_HOST_DEVICE static walk_type<in_t> walk_start() {
    return walk_type<in_t>(0);
  }
  template <typename in_t>
  C10_HOST_DEVICE static walk_type<in_t> walk(walk_type<in_t> w, in_t x) {
    return w + static_cast<walk_type<in_t>>(x);
  }

#if defined(__CUDA_ARCH__)
  template <typename in_t>
  __device__ static acc_t reduce_packed_bytes(const uint4& w) {
    static_assert(packs_bytes<in_t>(), "byte inputs only");
    if constexpr (std::is_signed_v<in_t>) {
      int s = __dp4a(static_cast<int>(w.x), 0x01010101, 0);
      s = __dp4a(static_cast<int>(w.y), 0x01010101, s);
      s = __dp4a(static_cast<int>(w.z), 0x01010101, s);
      s = __dp4a(static_cast<int>(w.w), 0x01010101, s);
      return static_cast<acc_t>(s);
    } else {
      unsigned s = __dp4a(w.x, 0x01010101u, 0u);
      s = __dp4a(w.y, 0x01010101u, s);
      s = __dp4a(w.z, 0x01010101u, s);
      s = __dp4a(w.w, 0x01010101u, s);
      return static_cast<acc_t>(s);
    }
  }
#endif

  // int16 inputs: a vector's exact int32 sum, then one conversion (for a
  // float result too: at most 8 * 2^15 in magnitude, the float adds of its
  // elements would be exact and give the same).
  template <int V, typename in_t>
  C10_HOST_DEVICE static acc_t reduce_vector(const in_t (&v)[V]) {
    if constexpr (sizeof(in_t) == 2 && std::is_integral_v<in_t> && V <= 8) {
      int32_t s = 0;  // 8 int16 values cannot overflow int32
GPUREDUCE_UNROLL
      for (int i = 0; i < V; ++i) s += static_cast<int32_t>(v[i]);
      return static_cast<acc_t>(s);
    } else {
      return OpBase<SumOp<acc_t>, acc_t>::template reduce_vector<V>(v);
    }
  }
};

template <typename acc_t>
struct ProdOp : OpBase<ProdOp<acc_t>, acc_t> {
  static constexpr bool kPartialsFoldAsInputs = true;

  C10_HOST_DEVICE static acc_t identity() { return acc_t(1); }

  template <typename in_t>
  C10_HOST_DEVICE static acc_t reduce(acc_t acc, in_t x) {
    return acc * static_cast<acc_t>(x);
  }

  C10_HOST_DEVICE static acc_t combine(acc_t a, acc_t b) { return a * b; }

  static constexpr bool kCombinesLanes = true;
  template <typename V>
  static V combine_lanes(V a, V b) {
    return a * b;
  }

  // Float products fold a vector's inputs into the running product one
  // after another, not as a tree of their own first. Factors within about
  // 2^-10 of 1 (a float32 1 + a: a holds 14 bits or fewer) multiplied in
  // pairs round toward 1 more often than away: the residual a * b is a
  // few ulps, not spread over many. A running product is soon far from 1
  // and its roundings even out. On the H200, float32 products of 2^28
  // factors exp(u * 2^-10): 0.20 from the float64 product with each
  // vector's tree, 0.062 folded one by one, torch.prod 0.10; rows of 2^20
  // 9.8e-4 -> 4.9e-4 (torch 4.9e-4); no change in speed beyond 1-2%
  // (NOTES.md session 83).
  template <int V, typename in_t>
  C10_HOST_DEVICE static acc_t fold_vector(acc_t acc, const in_t (&v)[V]) {
    if constexpr (std::is_integral_v<acc_t> && std::is_integral_v<in_t> && sizeof(in_t) <= 2 &&
                  V % (2 * kFactorsPerWord<in_t>) == 0) {
      return acc * narrow_product<V>(v);
    } else if constexpr (std::is_integral_v<acc_t>) {
      return acc * OpBase<ProdOp<acc_t>, acc_t>::template reduce_vector<V>(v);
    } else {
GPUREDUCE_UNROLL
      for (int i = 0; i < V; ++i) acc = reduce(acc, v[i]);
      return acc;
    }
  }

  // Integer products of 1- and 2-byte inputs (bool is read as uint8): each
  // 32-bit word takes the exact product of four bytes or two int16 (at most
  // 2^28, 2^30 in magnitude signed, 255^4 < 2^32 unsigned), two words one
  // widening multiply into 64 bits, and only then full 64-bit multiplies
  // (three instructions each on the GPU). The result is the product modulo
  // 2^64, as any order gives. Byte products were bound by the integer
  // multiply pipe, not by memory: the vector's tree spent about 94 IMAD
  // issue slots a 16-byte load of int8, this form about 64 (SASS). Full
  // products of 2^28 on the H200: int8 2869 -> 3686 GB/s, uint8 and bool
  // 3295 -> 3813 and 3797, int16 4237 -> 4310 (NOTES.md sessions 83-84).
  // The widening is explicit: ptxas did not see int32 products cast to
  // int64 as 32-bit operands and multiplied them in full.
  template <typename in_t>
  static constexpr int kFactorsPerWord = sizeof(in_t) == 1 ? 4 : 2;

  template <typename word_t>
  C10_HOST_DEVICE static acc_t widening_product(word_t a, word_t b) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_signed_v<word_t>) {
      long long r;
      asm("mul.wide.s32 %0, %1, %2;" : "=l"(r) : "r"(a), "r"(b));
      return static_cast<acc_t>(r);
    } else {
      unsigned long long r;
      asm("mul.wide.u32 %0, %1, %2;" : "=l"(r) : "r"(a), "r"(b));
      return static_cast<acc_t>(r);
    }
#else
    using wide_t = std::conditional_t<std::is_signed_v<word_t>, int64_t, uint64_t>;
    return static_cast<acc_t>(static_cast<wide_t>(a) * static_cast<wide_t>(b));
#endif
  }

  template <int V, typename in_t>
  C10_HOST_DEVICE static acc_t narrow_product(const in_t (&v)[V]) {
    using word_t = std::conditional_t<std::is_signed_v<in_t>, int32_t, uint32_t>;
    constexpr int kPer = kFactorsPerWord<in_t>;
    constexpr int W = V / kPer;
    word_t w[W];
GPUREDUCE_UNROLL
    for (int j = 0; j < W; ++j) {
      w[j] = static_cast<word_t>(v[kPer * j]) * static_cast<word_t>(v[kPer * j + 1]);
      if constexpr (kPer == 4)
        w[j] *= static_cast<word_t>(v[kPer * j + 2]) * static_cast<word_t>(v[kPer * j + 3]);
    }
    acc_t t[W / 2];
GPUREDUCE_UNROLL
    for (int j = 0; j < W / 2; ++j) t[j] = widening_product(w[2 * j], w[2 * j + 1]);
GPUREDUCE_UNROLL
    for (int k = 1; k < W / 2; k *= 2) {
GPUREDUCE_UNROLL
      for (int j = 0; j + k < W / 2; j += 2 * k) t[j] = t[j] * t[j + k];
    }
    return t[0];
  }
};

// torch.nansum: a sum in which NaN inputs count as zero. A NaN that the
// adds make (inf + -inf) stays: partials fold in with combine, never
// through reduce, so kPartialsFoldAsInputs is false. Its CUDA rows kernels
// carry float partials in double, as sum's do. Integer and bool inputs hold
// no NaN: their passes are sum's (KernelsFor in reduce_family.h).
template <typename acc_t>
struct NanSumOp : OpBase<NanSumOp<acc_t>, acc_t> {
  using wide_op = std::conditional_t<std::is_same_v<acc_t, float>, NanSumOp<double>, NanSumOp<acc_t>>;
  static constexpr bool kPartialsFoldAsInputs = false;
  static constexpr bool kTestsNan = true;

  C10_HOST_DEVICE static acc_t identity() { return acc_t(0); }

  template <typename T>
  C10_HOST_DEVICE static T as_partial(T v) {
    return v == v ? v : T{};
  }

  template <typename in_t>
  C10_HOST_DEVICE static acc_t reduce(acc_t acc, in_t x) {
    return acc + as_partial(static_cast<acc_t>(x));
  }

  C10_HOST_DEVICE static acc_t combine(acc_t a, acc_t b) { return a + b; }

  static constexpr bool kCombinesLanes = true;
  template <typename V>
  static V combine_lanes(V a, V b) {
    return a + b;
  }
};

// torch.amax and torch.amin: the largest (smallest) element, NaN if any
// element is NaN. combine keeps its first argument where that is NaN or
// wins, else takes the second: a NaN on either side propagates, with no
// test of the second (x != x is false for integers, and the compiler drops
// it). Which NaN, and which of -0.0 and +0.0 where they tie, follows the
// kernels' fixed order, so the bits are the same on every run. Integer and
// bool results are written in their own dtype (ExtremumFamily), compared in
// int32 or int64.
template <typename acc_t, bool kMax>
struct ExtremumOp : OpBase<ExtremumOp<acc_t, kMax>, acc_t> {
  static constexpr bool kPartialsFoldAsInputs = true;
  static constexpr bool kPartialsInResultDtype = true;
  static constexpr bool kTestsNan = std::is_floating_point_v<acc_t>;

  C10_HOST_DEVICE static acc_t identity() {
    if constexpr (std::is_floating_point_v<acc_t>) {
      return kMax ? -std::numeric_limits<acc_t>::infinity() : std::numeric_limits<acc_t>::infinity();
    } else {
      return kMax ? std::numeric_limits<acc_t>::lowest() : std::numeric_limits<acc_t>::max();
    }
  }

  // The larger (smaller) of a and b, a NaN kept (a's where both are). On
  // the CPU as two selects with no branch: "a != a || keep" compiled to two
  // conditional jumps a fold (gcc 13, x86-64), taken at random on random
  // data, and the CPU amax of [366403, 10] float32 over dim 1 took 2.1x
  // torch's time, 6.6x our sum's. The GPU kernels keep the form their
  // SASS was checked with (both give the same bits).
  C10_HOST_DEVICE static acc_t combine(acc_t a, acc_t b) {
    const bool keep = kMax ? a > b : a < b;
#if defined(__CUDA_ARCH__)
    return (a != a || keep) ? a : b;
#else
    const acc_t m = keep ? a : b;
    return a != a ? a : m;
#endif
  }

  template <typename in_t>
  C10_HOST_DEVICE static acc_t reduce(acc_t acc, in_t x) {
    return combine(acc, static_cast<acc_t>(x));
  }

  static constexpr bool kCombinesLanes = true;
  template <typename V>
  static V combine_lanes(V a, V b) {
    return ((a != a) | (kMax ? a > b : a < b)) ? a : b;
  }
  // A fold of lanes is a chain of a compare, an or and a blend on the
  // accumulator (gcc keeps that form for "keep ? a : b" with a NaN test
  // too, no vmaxps): eight chains, where four left float32 rows of 1000+
  // elements at 0.78-0.91x of torch's speed (CPU, 2 threads).
  static constexpr int kCpuChains = 8;

  // Integer inputs of up to 4 bytes (accumulated as int64) are compared in
  // int32 while a columns thread walks its rows, and a vector load's
  // elements before they meet the int64 accumulator: 16 byte inputs in
  // int64 spilled 180-340 bytes of registers in the CUDA kernels (ptxas,
  // sm_90), as they do for prod. The extreme of values that fit int32 is
  // exact in int32.
  // A CPU row leaf of 1- or 2-byte integers compares them in lanes of
  // their own type (bool as uint8), 32 or 16 to a vector where int32 lanes
  // hold 8, and widens the leaf's lanes once: torch's int8 amax over 10^7
  // elements took a third of our time with each load widened to int32
  // (session 34). Exact: the extreme of values of a type is one of them.
  template <typename in_t>
  using leaf_walk_type = std::conditional_t<
      std::is_integral_v<in_t> && std::is_integral_v<acc_t> && sizeof(in_t) < sizeof(acc_t) && sizeof(in_t) <= 2,
      std::conditional_t<std::is_same_v<in_t, bool>, uint8_t, in_t>, acc_t>;
  template <typename T>
  static T identity_as() {
    if constexpr (std::is_integral_v<T>) {
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    } else {
      return static_cast<T>(identity());
    }
  }

  template <typename in_t>
  static constexpr bool kNarrowWalk = std::is_integral_v<in_t> && sizeof(in_t) <= 4 && std::is_integral_v<acc_t>;
  template <typename in_t>
  using walk_type = std::conditional_t<kNarrowWalk<in_t>, int32_t, acc_t>;
  template <typename in_t>
  C10_HOST_DEVICE static walk_type<in_t> walk_start() {
    if constexpr (kNarrowWalk<in_t>) {
      return kMax ? std::numeric_limits<int32_t>::lowest() : std::numeric_limits<int32_t>::max();
    } else {
      return identity();
    }
  }
  template <typename in_t>
  C10_HOST_DEVICE static walk_type<in_t> walk(walk_type<in_t> w, in_t x) {
    const auto v = static_cast<walk_type<in_t>>(x);
    return (kMax ? v > w : v < w) || v != v ? v : w;
  }
  // Byte inputs in the CUDA rows kernels: the four 32-bit words of a load
  // compared four bytes at a time (__vmaxs4 and kin), then the four bytes
  // left. Taken apart into 16 registers a load, with 4 loads in flight,
  // they had spilled 124-740 bytes (ptxas, sm_90).
  template <typename in_t>
  static constexpr bool packs_bytes() {
    return sizeof(in_t) == 1 && std::is_integral_v<acc_t>;
  }
#if defined(__CUDA_ARCH__)
  template <typename in_t>
  __device__ static acc_t reduce_packed_bytes(const uint4& w) {
    static_assert(packs_bytes<in_t>(), "byte inputs only");
    constexpr bool kSigned = std::is_signed_v<in_t>;
    const auto pick = [](unsigned a, unsigned b) {
      if constexpr (kSigned) {
        return kMax ? __vmaxs4(a, b) : __vmins4(a, b);
      } else {
        return kMax ? __vmaxu4(a, b) : __vminu4(a, b);
      }
    };
    const unsigned m = pick(pick(w.x, w.y), pick(w.z, w.w));
    int32_t r = kSigned ? static_cast<int32_t>(static_cast<int8_t>(m & 0xff)) : static_cast<int32_t>(m & 0xff);
GPUREDUCE_UNROLL
    for (int k = 1; k < 4; ++k) {
      const unsigned byte = (m >> (8 * k)) & 0xff;
      const int32_t x = kSigned ? static_cast<int32_t>(static_cast<int8_t>(byte)) : static_cast<int32_t>(byte);
      r = (kMax ? x > r : x < r) ? x : r;
    }
    return static_cast<acc_t>(r);
  }
#endif

  template <int V, typename in_t>
  C10_HOST_DEVICE static acc_t reduce_vector(const in_t (&v)[V]) {
    if constexpr (kNarrowWalk<in_t>) {
      int32_t m = static_cast<int32_t>(v[0]);
GPUREDUCE_UNROLL
      for (int i = 1; i < V; ++i) {
        const int32_t x = static_cast<int32_t>(v[i]);
        m = (kMax ? x > m : x < m) ? x : m;
      }
      return static_cast<acc_t>(m);
    } else {
      return OpBase<ExtremumOp<acc_t, kMax>, acc_t>::template reduce_vector<V>(v);
    }
  }
};
template <typename acc_t>
using MaxOp = ExtremumOp<acc_t, true>;
template <typename acc_t>
using MinOp = ExtremumOp<acc_t, false>;

#if !defined(__CUDACC__)
// Eight floats as one GCC vector: one AVX register in the AVX2 CPU engine,
// two SSE ones in the baseline's. The compiler's own vectoriser left the
// loops below scalar (loops of eight unrolled first, then not packed).
using Float8 = float __attribute__((vector_size(32)));
using Uint8x32 = uint32_t __attribute__((vector_size(32)));

C10_ALWAYS_INLINE Float8 load_float8(const float* p) {
  Float8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// exp(d) for d <= 0 (or NaN), lane by lane, in float arithmetic and bit
// moves only: d = n ln2 + r with |r| <= ln2 / 2 (Cody-Waite: ln2 in two
// parts, the first exact in a product with n), e^r by its Taylor series to
// r^7 (truncation under 2^-27 relative), 2^n through the exponent's bits.
// d under -87, where e^d leaves float's normal range, is taken as -87
// (e^-87 is 2^-125.5, nothing beside the 1 of a max's own term). NaN stays
// NaN.
C10_ALWAYS_INLINE Float8 exp_nonpositive(Float8 d) {
  const Float8 lowest = Float8{} - 87.0f;
  d = d < lowest ? lowest : d;
  const Float8 shifted = d * 1.44269504f + 12582912.0f;  // 1.5 * 2^23 + round(d / ln2)
  const Float8 n = shifted - 12582912.0f;
  const Float8 r = (d - n * 0.693145752f) - n * 1.42860677e-6f;
  const Float8 p =
      1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
  Uint8x32 bits;
  std::memcpy(&bits, &shifted, sizeof(bits));  // n + 127 in the low bits, after the + 127 below
  const Uint8x32 exponent = (bits + 127u) << 23;
  Float8 scale;
  std::memcpy(&scale, &exponent, sizeof(scale));
  return p * scale;
}

// Four doubles as one GCC vector, and exp_nonpositive of them: ln2 in
// fdlibm's two parts (the first with 32 trailing zero bits, exact in a
// product with n), e^r by its Taylor series to r^13 (truncation under
// 2^-57 relative for |r| <= ln2 / 2), d under -708 taken as -708 (e^-708 is
// 2^-1021.4, nothing beside the 1 of a max's own term).
using Double4 = double __attribute__((vector_size(32)));
using Uint64x4 = uint64_t __attribute__((vector_size(32)));
C10_ALWAYS_INLINE Double4 exp_nonpositive(Double4 d) {
  const Double4 lowest = Double4{} - 708.0;
  d = d < lowest ? lowest : d;
  const Double4 shifted = d * 1.4426950408889634 + 6755399441055744.0;  // 1.5 * 2^52 + round(d / ln2)
  const Double4 n = shifted - 6755399441055744.0;
  const Double4 r = (d - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
  Double4 p = Double4{} + 1.0 / 6227020800.0;  // 1 / 13!
  constexpr double kInverseFactorials[13] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                                             1.0 / 40320.0,     1.0 / 5040.0,     1.0 / 720.0,     1.0 / 120.0,
                                             1.0 / 24.0,        1.0 / 6.0,        0.5,             1.0,
                                             1.0};
  for (double c : kInverseFactorials) p = p * r + c;
  Uint64x4 bits;
  std::memcpy(&bits, &shifted, sizeof(bits));  // n + 1023 in the low bits, after the + 1023 below
  const Uint64x4 exponent = (bits + 1023u) << 52;
  Double4 scale;
  std::memcpy(&scale, &exponent, sizeof(scale));
  return p * scale;
}
#endif

// logsumexp's running state: the largest input folded in (max) and the sum
// of exp(x - max) over the inputs (scaled), so that the result is
// max + log(scaled). Two words, shuffled and stored as they are.
template <typename T>
struct MaxScaledSum {
  T max;
  T scaled;
};

// torch.logsumexp in one pass over memory: each input, vector or partial
// state is merged into the running state by rescaling the side with the
// smaller max by exp(its max - the larger), which is at most 1 (online
// softmax's rescaling; torch reads the input twice, for amax and then for
// the sum of exp(x - amax)). A pass's partial is the projection
// m + log(s) of its inputs: itself the logsumexp of those inputs, which a
// later pass folds in as an input (kPartialsFoldAsInputs; in any float
// dtype, kPartialsInResultDtype). acc_t is float (float, half and bfloat16
// inputs) or double.
//
// Special values, as torch's masked max gives them: a max of +inf or -inf
// counts the inputs equal to it as exp(0) = 1 rather than exp(inf - inf),
// so that +inf anywhere gives inf and only -inf gives -inf; a NaN input
// makes its term, and so the sum, NaN (the max itself may skip it).
template <typename acc_t>
struct LogSumExpOp : OpBase<LogSumExpOp<acc_t>, MaxScaledSum<acc_t>> {
  using state = MaxScaledSum<acc_t>;
  static constexpr bool kPartialsFoldAsInputs = true;
  static constexpr bool kPartialsInResultDtype = true;
  // No stream-rows kernel: torch's logsumexp is several kernels, and the
  // passes that took it ran 1.37x torch's time or better without it (H200,
  // 142 of 5 x 1000 random cases: 6.09x -> 4.84x of torch in geometric
  // mean, slowest 3.17x -> 1.37x), for 44% of logsumexp_float.cu's compile
  // (NOTES.md, session 55).
  static constexpr bool kStreamTiles = false;
  // (bfloat16 and int16 at 40 registers with no spill, SASS; the sum's
  // spilled.)
  static constexpr bool kSplitRows16BitFits = true;

  // exp of a difference x - max <= 0. On the GPU in float through the
  // hardware's exp2 (one multiply by log2(e), one MUFU.EX2): its error
  // bound grows with |x - max| only through the rounding of that product,
  // which weighs in at most 0.53 * 2^-24 of the largest term, so the sum's
  // relative error stays about the 2 ulp of expf's (measured against
  // float64: our largest float32 error 0.92-1.45x torch's). With expf (a
  // range reduction of its own) 16-bit full reductions of 2^28 ran
  // compute-bound at 1.9 TB/s on the H100 (NOTES.md, session 36). The exp2
  // flushes results below 2^-126 to zero (ftz): such a term is nothing
  // beside the max's own 1 in the sum it joins, and __expf's care for
  // them took a compare and two predicated multiplies an input (SASS).
  C10_HOST_DEVICE static acc_t exp_of(acc_t v) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<acc_t, float>) {
      float r;
      asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v * 1.44269504088896341f));
      return r;
    } else {
      return ::exp(v);
    }
#else
    return std::exp(v);
#endif
  }
  C10_HOST_DEVICE static acc_t log_of(acc_t v) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<acc_t, float>) {
      return ::logf(v);
    } else {
      return ::log(v);
    }
#else
    return std::log(v);
#endif
  }
  // The larger of two, or the one that is not NaN.
  C10_HOST_DEVICE static acc_t max_of(acc_t a, acc_t b) {
#if defined(__CUDA_ARCH__)
    return ::fmax(a, b);
#else
    return std::fmax(a, b);
#endif
  }
  // exp(x - max) for an x no larger than max (or NaN), 1 where they are
  // equal (infinite maxes).
  C10_HOST_DEVICE static acc_t scale(acc_t x, acc_t max) { return x == max ? acc_t(1) : exp_of(x - max); }

  C10_HOST_DEVICE static state identity() { return {-std::numeric_limits<acc_t>::infinity(), acc_t(0)}; }

  C10_HOST_DEVICE static state combine(state a, state b) {
    if (b.max > a.max || b.max != b.max) {
      const state t = a;
      a = b;
      b = t;
    }
    return {a.max, a.scaled + b.scaled * scale(b.max, a.max)};
  }

  template <typename in_t>
  C10_HOST_DEVICE static state reduce(state acc, in_t x) {
    return combine(acc, state{static_cast<acc_t>(x), acc_t(1)});
  }

  // Whether inputs of in_t are taken as the float K + x, K = 1.5 * 2^23
  // (exact for integers of up to 22 bits, and so are differences of two):
  // an add to K's bits rather than a conversion (I2F). Converted, with an
  // exp an input, byte logsumexps of 2^28 ran at 1.5 TB/s on the H200 and
  // int16 ones at 2.5; taken so, with fold_vector, at 2.2-2.4 and 4.1
  // (NOTES.md, session 82). On the GPU, integers of up to 16 bits and bool.
  template <typename in_t>
  C10_HOST_DEVICE static constexpr bool shifted_inputs() {
#if defined(__CUDA_ARCH__)
    return std::is_same_v<acc_t, float> && std::is_integral_v<in_t> && sizeof(in_t) <= 2;
#else
    return false;
#endif
  }
  static constexpr float kShift = 12582912.0f;
  static constexpr int kShiftBits = 0x4B400000;

  // An input as acc_t.
  template <typename in_t>
  C10_HOST_DEVICE static acc_t input_value(in_t v) {
    if constexpr (shifted_inputs<in_t>()) {
#if defined(__CUDA_ARCH__)
      return __int_as_float(kShiftBits + static_cast<int>(v)) - kShift;
#endif
    } else {
      return static_cast<acc_t>(v);
    }
  }

  // The largest of V inputs. In float, fmax, which skips NaN (a NaN input's
  // term is NaN); in double a NaN wins, for scale's form throughout (terms).
  template <int V>
  C10_HOST_DEVICE static acc_t largest(const acc_t (&x)[V]) {
    acc_t m = x[0];
    if constexpr (std::is_same_v<acc_t, float>) {
GPUREDUCE_UNROLL
      for (int i = 1; i < V; ++i) m = max_of(m, x[i]);
    } else {
GPUREDUCE_UNROLL
      for (int i = 1; i < V; ++i) m = (x[i] > m || x[i] != x[i]) ? x[i] : m;
    }
    return m;
  }

  // The sum of exp(x - max) over V inputs no larger than max (or NaN). In
  // float a branch taken by whole vectors: the plain exp where max is
  // finite, scale where it is infinite. float64 keeps the form of scale
  // throughout, a NaN max included: its exp is a long routine, and the float
  // form cost it 29% of its bandwidth on a full reduction of 2^27 (2076 ->
  // 1482 GB/s), exp(x == max ? 0 : x - max) 72% (590 GB/s; H100, session
  // 36, NOTES.md).
  template <int V>
  C10_HOST_DEVICE static acc_t terms(const acc_t (&x)[V], acc_t max) {
    acc_t s = acc_t(0);
    if constexpr (std::is_same_v<acc_t, float>) {
      if (max - max == acc_t(0)) {  // finite
GPUREDUCE_UNROLL
        for (int i = 0; i < V; ++i) s += exp_of(x[i] - max);
        return s;
      }
    }
GPUREDUCE_UNROLL
    for (int i = 0; i < V; ++i) s += scale(x[i], max);
    return s;
  }

  // A vector's state: its max, then one exp an element (largest, terms):
  // one a vector is rescaled, not one an element as reduce would.
  template <int V, typename in_t>
  C10_HOST_DEVICE static state reduce_vector(const in_t (&v)[V]) {
    acc_t x[V];
GPUREDUCE_UNROLL
    for (int i = 0; i < V; ++i) x[i] = input_value(v[i]);
    const acc_t m = largest(x);
    return {m, terms(x, m)};
  }

  // V inputs folded into the running state acc, one exp an input and none
  // for the vector itself: their max first; where it is above acc's, acc's
  // sum is rescaled to it (an exp, on few vectors past a walk's first),
  // and each input's term is then taken against the running max. Folding
  // a vector's own state {m, s} in instead took an exp, a swap and a
  // multiply-add a vector: this and the flushing exp above took the split
  // rows kernel's loop over four float32 vectors from 635 instructions to
  // 424 (SASS, its paths for infinite maxes included). The terms of a
  // vector whose max is the running one are the same either way; the
  // others are rounded once, not twice.
  template <int V, typename in_t>
  C10_HOST_DEVICE static state fold_vector(state acc, const in_t (&v)[V]) {
    if constexpr (shifted_inputs<in_t>()) {
#if defined(__CUDA_ARCH__)
      // The max as an integer, and each term's difference taken from the
      // input's K + x less the running max plus K, one subtract: exact, the
      // running max of a fold of integers being an integer (and finite once
      // a vector is in). (Built from the loaded words with a byte permute
      // an input instead, the int8 pass took 3% more instructions and ran
      // 11% slower, H200, session 82.)
      int mi = static_cast<int>(v[0]);
GPUREDUCE_UNROLL
      for (int i = 1; i < V; ++i) mi = max(mi, static_cast<int>(v[i]));
      const acc_t m = static_cast<acc_t>(mi);
      if (m > acc.max) {
        acc.scaled *= exp_of(acc.max - m);  // 0 from the identity's -inf
        acc.max = m;
      }
      const acc_t shifted_max = acc.max + kShift;
      acc_t s = acc_t(0);
GPUREDUCE_UNROLL
      for (int i = 0; i < V; ++i) s += exp_of(__int_as_float(kShiftBits + static_cast<int>(v[i])) - shifted_max);
      acc.scaled += s;
      return acc;
#endif
    } else {
      acc_t x[V];
GPUREDUCE_UNROLL
      for (int i = 0; i < V; ++i) x[i] = input_value(v[i]);
      const acc_t m = largest(x);
      if constexpr (std::is_same_v<acc_t, float>) {
        // (m > max is false for a NaN m: its terms make the sum NaN.)
        if (m > acc.max) {
          acc.scaled *= exp_of(acc.max - m);  // 0 from a max of -inf, or to one of +inf
          acc.max = m;
        }
      } else if (m > acc.max || m != m) {
        acc.scaled *= scale(acc.max, m);
        acc.max = m;
      }
      acc.scaled += terms(x, acc.max);
      return acc;
    }
  }

  // A CPU row leaf's block of 64 inputs (float results only): its max and
  // its exps eight lanes at a time (Float8), each lane's in order, then the
  // lanes in a fixed tree; a block whose max is infinite takes scale's
  // route. Always inlined: the baseline and AVX2 engines compile it with
  // their own flags, and an out-of-line copy is one symbol the linker picks
  // from either (it took the baseline's -O1 one). ([65536, 100] float32
  // over dim 1 took 5.6x torch's time with reduce an input, 2 threads;
  // NOTES.md, session 36.)
  static constexpr int kCpuBlock = std::is_same_v<acc_t, float> ? 64 : 0;
  // What a short last block is padded with: -inf, whose term exp(-inf -
  // m) is nothing beside the 1 of the max's own (reduce_block takes it as
  // e^-87, 2^-125.5 of that 1); where every input is -inf, the result is
  // -inf whatever the count.
  static acc_t block_pad() { return -std::numeric_limits<acc_t>::infinity(); }
#if !defined(__CUDACC__)
  // A short row's block: kCpuShortBlock inputs, in registers
  // (reduce_lanes).
  static constexpr int kCpuShortBlock = 16;
  C10_ALWAYS_INLINE static state reduce_block(const acc_t* x) {
    static_assert(std::is_same_v<acc_t, float>, "float blocks only");
    Float8 v[kCpuBlock / 8];
    for (int j = 0; j < kCpuBlock / 8; ++j) v[j] = load_float8(x + 8 * j);
    return reduce_lanes(v);
  }
  // The block of K vectors v.
  template <int K>
  C10_ALWAYS_INLINE static state reduce_lanes(const Float8 (&v)[K]) {
    Float8 lane = v[0];
    for (int j = 1; j < K; ++j) lane = v[j] > lane ? v[j] : lane;
    acc_t m = lane[0];
    for (int k = 1; k < 8; ++k) m = lane[k] > m ? lane[k] : m;
    if (!(m - m == acc_t(0))) {  // infinite (NaN inputs were skipped by the max)
      state acc{m, acc_t(0)};
      for (int j = 0; j < K; ++j) {
        for (int k = 0; k < 8; ++k) acc.scaled += scale(v[j][k], m);
      }
      return acc;
    }
    const Float8 mv = Float8{} + m;
    Float8 sum = exp_nonpositive(v[0] - mv);
    for (int j = 1; j < K; ++j) sum += exp_nonpositive(v[j] - mv);
    const acc_t s = ((sum[0] + sum[4]) + (sum[2] + sum[6])) + ((sum[1] + sum[5]) + (sum[3] + sum[7]));
    return {m, s};
  }

  // States side by side, for the CPU's tiles of columns: their maxes and
  // sums as two vectors (eight floats, or four doubles), a row of columns
  // folded in by one vector exp. A state a lane took a scalar exp an input
  // ([64, 1000] float32 transposed, over its strided dim: 4.3x
  // torch.logsumexp's time, 2 threads; float64 [64, 1000] 3.2x).
  static constexpr bool kCpuStateLanes = true;
  using LaneValues = std::conditional_t<std::is_same_v<acc_t, float>, Float8, Double4>;
  struct StateLanes {
    LaneValues max, scaled;
  };
  C10_ALWAYS_INLINE static StateLanes lanes_identity() {
    return {LaneValues{} - std::numeric_limits<acc_t>::infinity(), LaneValues{}};
  }
  // exp(a - b) for a <= b (or NaN) lane by lane, 1 where a == b (infinite
  // maxes), as scale.
  C10_ALWAYS_INLINE static LaneValues scale_lanes(LaneValues a, LaneValues b) {
    return a == b ? LaneValues{} + acc_t(1) : exp_nonpositive(a - b);
  }
  // Input x into each lane, with one exp: e = exp(-|x - max|) (1 where they
  // are equal), the sum rescaled by it where x is the new max (or NaN),
  // else e added to it.
  C10_ALWAYS_INLINE static StateLanes lanes_fold(StateLanes a, LaneValues x) {
    const LaneValues d = x - a.max;
    const LaneValues e = x == a.max ? LaneValues{} + acc_t(1) : exp_nonpositive(d > 0 ? -d : d);
    const auto new_max = (x > a.max) | (x != x);
    return {new_max ? x : a.max, new_max ? a.scaled * e + acc_t(1) : a.scaled + e};
  }
  C10_ALWAYS_INLINE static StateLanes lanes_combine(StateLanes a, StateLanes b) {
    const LaneValues m = (b.max > a.max) | (b.max != b.max) ? b.max : a.max;
    return {m, a.scaled * scale_lanes(a.max, m) + b.scaled * scale_lanes(b.max, m)};
  }
  C10_ALWAYS_INLINE static state lanes_state(const StateLanes& a, int k) { return {a.max[k], a.scaled[k]}; }
  // s in lane 0, the identity in the others.
  C10_ALWAYS_INLINE static StateLanes lanes_with_first(state s) {
    StateLanes a = lanes_identity();
    a.max[0] = s.max;
    a.scaled[0] = s.scaled;
    return a;
  }
#endif

  template <typename out_t>
  C10_HOST_DEVICE static out_t project(state a) {
    return static_cast<out_t>(a.max + log_of(a.scaled));
  }
};

// Complex logsumexp's running state: the largest real part folded in (max)
// and the complex sum of exp(z - max') over the inputs (scaled), where max'
// is max, or 0 where max is infinite (LogSumExpOp<complex>).
template <typename T>
struct MaxScaledComplexSum {
  T max;
  c10::complex<T> scaled;
};

// torch.logsumexp of complex inputs, as torch defines it: m, the largest
// real part, shifts every input, m + log(sum exp(z - m)), with an infinite
// m taken as 0 (torch masks its amax so); its result is complex. In one
// pass, as the real op: a state's sum is rescaled by exp(its max - the
// larger), a real factor. An input's own term is exp(i Im z) where its
// real part is finite (sin and cos), else exp(z) itself (c10's complex exp,
// C99's special values, as torch's exp_ gives them). Where one max is -inf
// (its terms are zeros) or the other +inf (finite terms beside infinite
// ones change no component of the log), the smaller side adds nothing
// but its NaN, if it holds one. A pass's partial is the projection: the
// logsumexp of its inputs, folded in as an input by a later pass.
template <typename T>
struct LogSumExpOp<c10::complex<T>> : OpBase<LogSumExpOp<c10::complex<T>>, MaxScaledComplexSum<T>> {
  using state = MaxScaledComplexSum<T>;
  using value = c10::complex<T>;
  // The CPU engine folds complex64 inputs in double: a CPU row leaf folds
  // each input into one running state, each a rounding of the sum and,
  // where the max rises, of its rescale; in float, rows of 1000 came out
  // 1.5e-5 from the complex128 result where torch's vectorised sum was
  // 4.1e-6 (the GPU's tree of lanes folds a few inputs a lane).
  using cpu_op = std::conditional_t<std::is_same_v<T, float>, LogSumExpOp<c10::complex<double>>, LogSumExpOp>;
  static constexpr bool kPartialsFoldAsInputs = true;
  static constexpr bool kPartialsInResultDtype = true;
  static constexpr bool kStreamTiles = false;  // as the real op's

  C10_HOST_DEVICE static bool is_infinite(T v) { return v == std::numeric_limits<T>::infinity() || v == -std::numeric_limits<T>::infinity(); }
  // The shift torch applies: m, or 0 where m is infinite.
  C10_HOST_DEVICE static T shift(T m) { return is_infinite(m) ? T(0) : m; }
  C10_HOST_DEVICE static bool has_nan(value v) { return v.real() != v.real() || v.imag() != v.imag(); }
  C10_HOST_DEVICE static T real_exp(T v) {
#if defined(__CUDA_ARCH__)
    return ::exp(v);
#else
    return std::exp(v);
#endif
  }
  // exp(z - shift(Re z)).
  C10_HOST_DEVICE static value term(value z) {
    const T re = z.real();
    if (re - re == T(0)) {  // finite: exp(i Im z)
      T s, c;
#if defined(__CUDA_ARCH__)
      ::sincos(z.imag(), &s, &c);
#elif defined(__GLIBC__)
      // (one range reduction for both: sin and cos apart cost the CPU's
      // complex128 rows 1.3x torch.logsumexp's time)
      if constexpr (std::is_same_v<T, float>) {
        ::sincosf(z.imag(), &s, &c);
      } else {
        ::sincos(z.imag(), &s, &c);
      }
#else
      s = std::sin(z.imag());
      c = std::cos(z.imag());
#endif
      return value(c, s);
    }
    return std::exp(value(re - shift(re), z.imag()));
  }

  C10_HOST_DEVICE static state identity() { return {-std::numeric_limits<T>::infinity(), value(T(0), T(0))}; }

  GPUREDUCE_DEVICE_OUTLINED C10_HOST_DEVICE static state combine(state a, state b) {
    if (b.max > a.max || b.max != b.max) {
      const state t = a;
      a = b;
      b = t;
    }
    value add = b.scaled;
    if (b.max != a.max) {
      if (b.max == -std::numeric_limits<T>::infinity() || a.max == std::numeric_limits<T>::infinity()) {
        add = has_nan(b.scaled) ? b.scaled : value(T(0), T(0));
      } else {
        add = b.scaled * real_exp(b.max - a.max);
      }
    }
    return {a.max, a.scaled + add};
  }

  template <typename in_t>
  GPUREDUCE_DEVICE_OUTLINED C10_HOST_DEVICE static state reduce(state acc, in_t x) {
    const value z = static_cast<value>(x);
    return combine(acc, state{z.real(), term(z)});
  }

  template <typename out_t>
  C10_HOST_DEVICE static out_t project(state a) {
    return static_cast<out_t>(std::log(a.scaled) + value(shift(a.max), T(0)));
  }
};

// var's and std's running state: the mean of the inputs folded in, the sum
// of their squared deviations from it (m2) and their count, all of acc_t
// (a float count is exact to 2^24 inputs, as torch's CUDA var keeps it).
// Three words, shuffled and stored as they are.
template <typename T>
struct MeanSpread {
  T mean;
  T m2;
  T n;
};

// torch.var and torch.std in one pass over memory: Welford's update for a
// single input, and for two states the merge of Chan, Golub and LeVeque
// (the deviation of the means, weighted by the counts, adds to m2), so
// that no sum of squares is ever subtracted from another. A vector load is
// one state of its own (its mean, then its squared deviations: no
// division where V is a power of two) merged into the running one: one
// division a load, where Welford's update costs one an input. The result
// is m2 over the count less the correction, and its root for std
// (project_with).
//
// Special values: an infinite or NaN input makes m2 NaN, as in torch.
template <typename acc_t>
struct VarianceOp : OpBase<VarianceOp<acc_t>, MeanSpread<acc_t>> {
  using state = MeanSpread<acc_t>;
  // The CPU engine keeps float64 states throughout, as torch's CPU var
  // does: merged in float, 10^5 float32 inputs around 1000 came out with a
  // relative error of 5e-7 where torch's was 2e-9. The CUDA kernels keep
  // float states, as torch's CUDA var does (its Welford updates each input
  // in float; ours a vector's state): float64 ones, three doubles an
  // accumulator and four accumulators a thread, spilled 150-500 bytes in
  // most kernels at the engine's register caps (ptxas, sm_90).
  using cpu_op = std::conditional_t<std::is_same_v<acc_t, float>, VarianceOp<double>, VarianceOp<acc_t>>;
  static constexpr bool kPartialsFoldAsInputs = false;
  static constexpr bool kProjectsWith = true;
  static constexpr bool kPadsLastBlock = false;
  // A merge divides (combine's weight), and four float64 states a thread
  // spilled (the pitch rows kernel 184 bytes, 4 folded; split rows 168, 0
  // folded): a round of chunks is one state, one merge. A/B on the H200
  // (NOTES.md, session 76), pitch rows over 34 made rows passes each:
  // float64 0.65x of the time before in geometric mean ([32768, 384] over
  // dim 1 0.75x -> 1.48x of torch.var), float32 0.88x; split rows: a
  // float64 full var of 2^28 2868 -> 4408 GB/s, [250, 50257] over dim 1
  // 1.00x -> 1.39x of torch.var, float32 0.95-1.00x of before. Not 16-bit
  // inputs, whose pitch rows' rounds of 32 inputs, summed then in two
  // chains of 32 adds, ran up to 15% slower (1.02x).
  template <typename in_t>
  static constexpr bool folds_rounds() {
    return sizeof(in_t) >= 4;
  }

  C10_HOST_DEVICE static state identity() { return {acc_t(0), acc_t(0), acc_t(0)}; }

  // d / n. In float on the GPU the hardware's reciprocal and a multiply
  // (__fdividef, 2 ulp): the division of IEEE float is a routine of a
  // dozen instructions with a slow path, once an input in the columns
  // kernels' walks. The mean it steps is off by those ulps at most, which
  // the update's m2 term (d times the distance to the new mean) sees only
  // to second order.
  C10_HOST_DEVICE static acc_t divide(acc_t d, acc_t n) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<acc_t, float>) return __fdividef(d, n);
#endif
    return d / n;
  }

  template <typename in_t>
  C10_HOST_DEVICE static state reduce(state a, in_t in) {
    const acc_t x = static_cast<acc_t>(in);
    const acc_t n = a.n + acc_t(1);
    const acc_t d = x - a.mean;
    const acc_t mean = a.mean + divide(d, n);
    return {mean, a.m2 + d * (x - mean), n};
  }

  // With the identity on either side the other comes back unchanged (its
  // weight is exactly 1 or 0, not a rounded quotient: a constant slice's
  // spread stays 0); two identities stay the identity. The deviation's
  // term is d (d (a.n w)): with the identity on the left a.n w is 0 and so
  // is the term, where d d first would overflow to inf and give NaN for
  // inputs past the square root of the type's range (torch: inf).
  C10_HOST_DEVICE static state combine(state a, state b) {
    const acc_t n = a.n + b.n;
    const acc_t d = b.mean - a.mean;
    const acc_t w = a.n == acc_t(0) ? acc_t(b.n != acc_t(0)) : divide(b.n, n);
    return {a.mean + d * w, a.m2 + b.m2 + d * (d * (a.n * w)), n};
  }

  // The state of `n` inputs at x: their mean, then their squared
  // deviations from it (two passes over values already in registers).
  C10_HOST_DEVICE static state of_values(const acc_t* x, int n) {
    acc_t sum = acc_t(0);
    for (int i = 0; i < n; ++i) sum += x[i];
    const acc_t mean = sum / static_cast<acc_t>(n);
    acc_t m2 = acc_t(0);
    for (int i = 0; i < n; ++i) m2 += (x[i] - mean) * (x[i] - mean);
    return {mean, m2, static_cast<acc_t>(n)};
  }

  // The sum of x's V values in pairs, then pairs of pairs, in place (x is
  // overwritten): V = 2^k equal values c sum to exactly V c (each level
  // doubles), so the mean of a constant vector is c itself and its spread
  // 0, as Welford's per input gives (added one after another, 8 float64
  // copies of a random c came to a mean other than c 43% of the time). The
  // pairs are also chains of log2 V adds, not V.
  template <int V>
  C10_HOST_DEVICE static acc_t pairwise_sum(acc_t (&x)[V]) {
GPUREDUCE_UNROLL
    for (int w = 1; w < V; w *= 2) {
GPUREDUCE_UNROLL
      for (int i = 0; i + w < V; i += 2 * w) x[i] += x[i + w];
    }
    return x[0];
  }

  // A vector's state (V a power of two: the mean a product by 1/V).
  template <int V, typename in_t>
  C10_HOST_DEVICE static state reduce_vector(const in_t (&v)[V]) {
    acc_t x[V], t[V];
GPUREDUCE_UNROLL
    for (int i = 0; i < V; ++i) t[i] = x[i] = static_cast<acc_t>(v[i]);
    const acc_t mean = pairwise_sum(t) / static_cast<acc_t>(V);
GPUREDUCE_UNROLL
    for (int i = 0; i < V; ++i) t[i] = (x[i] - mean) * (x[i] - mean);
    return {mean, pairwise_sum(t), static_cast<acc_t>(V)};
  }

  // A CPU row leaf's blocks of 64 inputs, each a state of its own (its
  // mean, then its squared deviations, in 32-byte GCC vectors), merged in
  // order; the short last block with its count (no input pads a spread).
  // Inputs widened to T (float for 16-bit floats) are taken to acc_t as
  // they are loaded, a vector at a time (a float64 result of them is
  // computed in float64), and loaded again for the second pass: converted
  // into a block of acc_t first, that block was stored in 16-byte halves
  // and read back in 32-byte vectors, which store forwarding cannot serve
  // (float32 var of 16M elements 0.38x of torch's time; NOTES.md, session
  // 43).
  static constexpr int kCpuBlock = 64;
#if !defined(__CUDACC__)
  template <typename T>
  C10_ALWAYS_INLINE static state reduce_block(const T* in, int n = kCpuBlock) {
    if (n < kCpuBlock) {
      acc_t x[kCpuBlock];
      for (int i = 0; i < n; ++i) x[i] = static_cast<acc_t>(in[i]);
      return of_values(x, n);
    }
    typedef acc_t lanes_t __attribute__((vector_size(32)));
    constexpr int L = 32 / sizeof(acc_t);
    typedef T in_lanes_t __attribute__((vector_size(L * sizeof(T))));
    const auto load = [&](int i) {
      in_lanes_t v;
      std::memcpy(&v, in + i, sizeof(v));
      return __builtin_convertvector(v, lanes_t);
    };
    lanes_t lane[4] = {load(0), load(L), load(2 * L), load(3 * L)};
    for (int i = 4 * L; i < kCpuBlock; i += 4 * L) {
      for (int c = 0; c < 4; ++c) lane[c] += load(i + c * L);
    }
    const lanes_t all = (lane[0] + lane[2]) + (lane[1] + lane[3]);
    acc_t sum = all[0];
    for (int k = 1; k < L; ++k) sum += all[k];
    const acc_t mean = sum / static_cast<acc_t>(kCpuBlock);
    const lanes_t mv = lanes_t{} + mean;
    for (int c = 0; c < 4; ++c) lane[c] = lanes_t{};
    for (int i = 0; i < kCpuBlock; i += 4 * L) {
      for (int c = 0; c < 4; ++c) {
        const lanes_t d = load(i + c * L) - mv;
        lane[c] += d * d;
      }
    }
    const lanes_t sq = (lane[0] + lane[2]) + (lane[1] + lane[3]);
    acc_t m2 = sq[0];
    for (int k = 1; k < L; ++k) m2 += sq[k];
    return {mean, m2, static_cast<acc_t>(kCpuBlock)};
  }
#endif

  template <typename out_t>
  C10_HOST_DEVICE static out_t project_with(state s, const Projection& projection) {
    acc_t v = s.m2 / static_cast<acc_t>(projection.divisor);
    if (projection.root) v = square_root(v);
    return static_cast<out_t>(v);
  }
};

// Which of torch.linalg.vector_norm's orders an op computes: the inner loop
// differs by order, so each compiled order is an op of its own (the others
// are staged through elementwise ops onto sum's and amin's kernels: see
// vector_norm_with in reduce_entry.cpp).
enum class NormKind { kOne, kTwo, kInf };

// torch.linalg.vector_norm of real floating inputs in one pass over memory:
// each input contributes its partial as_partial(x), |x| (ord 1 and inf) or
// x * x (ord 2), folded by combine, a sum (ord 1 and 2) or the largest with
// NaN kept (inf, as amax's). Over no inputs the result is 0 (identity). The
// root of ord 2 is the pass's Projection (project_output), taken in the
// accumulator's type before the cast to the result's, as torch's is.
// Partials are plain sums or maxima, which later passes fold with sum's and
// amax's kernels (PartialsKernelsFor, reduce_family.h). Float sums carry
// their rows kernels' partials in double, as sum's do.
template <typename acc_t, NormKind K>
struct NormOp : OpBase<NormOp<acc_t, K>, acc_t> {
  static constexpr bool kSums = K != NormKind::kInf;
  using wide_op = std::conditional_t<std::is_same_v<acc_t, float> && kSums, NormOp<double, K>, NormOp<acc_t, K>>;
  static constexpr bool kPartialsFoldAsInputs = false;

  C10_HOST_DEVICE static acc_t identity() { return acc_t(0); }

  // |v| as 0 - v where v <= 0, so that -0.0 gives +0.0 (torch's abs); T is
  // acc_t or a GCC vector of it (the CPU engine's lanes). NaN stays NaN.
  template <typename T>
  C10_HOST_DEVICE static T as_partial(T v) {
    if constexpr (K == NormKind::kTwo) {
      return v * v;
    } else {
      return v <= T{} ? T{} - v : v;
    }
  }

  C10_HOST_DEVICE static acc_t combine(acc_t a, acc_t b) {
    if constexpr (kSums) {
      return a + b;
    } else {
      return (a != a || a > b) ? a : b;
    }
  }

  template <typename in_t>
  C10_HOST_DEVICE static acc_t reduce(acc_t acc, in_t x) {
    return combine(acc, as_partial(static_cast<acc_t>(x)));
  }

  // inf of 16-bit inputs on the GPU: a vector load's pairs compared as
  // half2 (bfloat162), their signs cleared by __habs2 and NaN kept by
  // __hmax2_nan, two elements an instruction, then the pair's two halves
  // widened once. Exact (the largest magnitude is one of the inputs).
  // Widened an element at a time, each with its abs and NaN test, float16
  // full reductions of 2^28 ran at 3770 GB/s and bfloat16 at 3563 against
  // 4190-4236 for ord 1 and 2 (H200, NOTES.md, session 38).
  template <int V, typename in_t>
  C10_HOST_DEVICE static acc_t reduce_vector(const in_t (&v)[V]) {
#if defined(__CUDA_ARCH__)
    constexpr bool kHalf = std::is_same_v<in_t, c10::Half>;
    if constexpr (K == NormKind::kInf && (kHalf || std::is_same_v<in_t, c10::BFloat16>) && V % 2 == 0) {
      using pair_t = std::conditional_t<kHalf, __half2, __nv_bfloat162>;
      pair_t m;
      std::memcpy(&m, &v[0], sizeof(m));
      m = __habs2(m);
GPUREDUCE_UNROLL
      for (int i = 2; i < V; i += 2) {
        pair_t p;
        std::memcpy(&p, &v[i], sizeof(p));
        m = __hmax2_nan(m, __habs2(p));
      }
      return combine(static_cast<acc_t>(__low2float(m)), static_cast<acc_t>(__high2float(m)));
    }
#endif
    return OpBase<NormOp<acc_t, K>, acc_t>::template reduce_vector<V>(v);
  }

  static constexpr bool kCombinesLanes = true;
  template <typename V>
  static V combine_lanes(V a, V b) {
    if constexpr (kSums) {
      return a + b;
    } else {
      return ((a != a) | (a > b)) ? a : b;
    }
  }

};

}  // namespace gpureduce
