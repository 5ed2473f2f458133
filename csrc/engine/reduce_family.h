// The ops as the planner sees them: one OpSpec per op and backend, built
// from the op's family. Sum, prod and nansum share torch's dtype rules
// (reduce_shape.h) and the kernels' dtype pairs (reduce_dtypes.h); amax and
// amin keep their input's dtype (kKeepsResultDtype). An op's family adds
// its functor, its empty result and how k copies fold together.
#pragma once

#include <type_traits>

#include "reduce_dtypes.h"
#include "reduce_ops.h"
#include "reduce_plan.h"

namespace gpureduce {

// What a family may say beyond its op (defaults here): whether its passes
// hand accumulators on to one another through tensors (OpSpec::
// hands_partials_on), whether its results fold k copies of an input
// (fold_repeats; OpSpec::fold_repeats is null where not) or its passes take
// them (OpSpec::repeats_in_pass), and whether its
// kernels read float32 and 16-bit float inputs of a float64 result
// directly (WideningReads::floats_into_double): sum's and mean's do, as
// issue 12 asks of dtype=. The other ops' float64 results of narrower
// floats (a dtype= or out= few models pass) are read from a float64 copy,
// torch's own order: those pairs were a quarter of each of their files'
// compile (NOTES.md, session 53).
struct FamilyBase {
  static constexpr bool kHandsPartialsOn = true;
  static constexpr bool kFoldsRepeats = true;
  static constexpr RepeatsInPass kRepeatsInPass = RepeatsInPass::kFolded;
  static constexpr bool kReadsFloatsIntoDouble = false;
};

// fill_empty and fold_repeats are defined in reduce_family.cpp: the ATen ops
// they call have heavy headers, which every kernel file would otherwise parse.
struct SumFamily : FamilyBase {
  static constexpr bool kKeepsResultDtype = false;
  static constexpr bool kReadsFloatsIntoDouble = true;
  // Whether each output is divided by its count of inputs (OpSpec::averages).
  static constexpr bool kAverages = false;
  template <typename acc_t>
  using Op = SumOp<acc_t>;
  static constexpr bool kInputIsPartial = true;
  static void fill_empty(const at::Tensor& t);
  // k copies of x sum to k * x: exact for integers, one rounding for floats
  // (k adds would round k times).
  static void fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest);
};

struct ProdFamily : FamilyBase {
  static constexpr bool kKeepsResultDtype = false;
  static constexpr bool kAverages = false;
  template <typename acc_t>
  using Op = ProdOp<acc_t>;
  static constexpr bool kInputIsPartial = true;
  static void fill_empty(const at::Tensor& t);
  static void fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest);
};

// nansum: sum's empty result (0) and fold of k copies (k * x of a partial
// whose NaN inputs were already counted as zero; a NaN input is not its own
// partial, so the input itself is never folded).
struct NanSumFamily : FamilyBase {
  static constexpr bool kKeepsResultDtype = false;
  static constexpr bool kAverages = false;
  template <typename acc_t>
  using Op = NanSumOp<acc_t>;
  static constexpr bool kInputIsPartial = false;
  static void fill_empty(const at::Tensor& t) { SumFamily::fill_empty(t); }
  static void fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest) {
    SumFamily::fold_repeats(partial, k, dest);
  }
};

// amax and amin: k copies of x are x itself, so a pass that reduces other
// dims too reads a reduced dim of stride 0 as its one element
// (RepeatsInPass::kIgnored); where repeats and dims of size 1 are all it
// reduces, they fold to x (a copy, with the cast to dest's dtype): an
// element is its own partial. Reductions over no
// elements are refused before they reach the planner (check_extremum_args),
// so fill_empty is never called with a target to fill.
template <bool kMax>
struct ExtremumFamily : FamilyBase {
  // Integer results are compared in int32 (int64 for int64): an int8 or
  // bool accumulator would need shuffles and loads of its own.
  template <typename acc_t>
  using Op = ExtremumOp<std::conditional_t<std::is_integral_v<acc_t> && sizeof(acc_t) < 4, int32_t, acc_t>, kMax>;
  static constexpr bool kInputIsPartial = true;
  // Kernels write the input's dtype (an int8 amax is int8, not int64 then
  // cast), and partials between passes are of it too: the result is one of
  // the inputs, exact in any of them.
  static constexpr bool kKeepsResultDtype = true;
  static constexpr bool kAverages = false;
  static constexpr RepeatsInPass kRepeatsInPass = RepeatsInPass::kIgnored;
  static void fill_empty(const at::Tensor& t);
  static void fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest);
};
using AmaxFamily = ExtremumFamily<true>;
using AminFamily = ExtremumFamily<false>;

// torch.mean: sum's dtype rules, passes and kernels (KernelsFor), each
// output divided by the count of inputs reduced into it by the pass that
// stores it, and NaN over none. It compiles no kernel of its own. Only
// floating and complex results reach it (check_mean_args).
struct MeanFamily : SumFamily {
  static constexpr bool kAverages = true;
};

// torch.logsumexp: float and complex results (integer and bool inputs are
// cast to the default float dtype first, as torch computes them). k copies
// of x fold to x + log(k), and an element is its own partial (the
// logsumexp of one input is itself); over no elements the result is -inf.
struct LogSumExpFamily : FamilyBase {
  static constexpr bool kKeepsResultDtype = false;
  static constexpr bool kAverages = false;
  template <typename acc_t>
  using Op = LogSumExpOp<acc_t>;
  static constexpr bool kInputIsPartial = true;
  static void fill_empty(const at::Tensor& t);
  static void fold_repeats(const at::Tensor& partial, int64_t k, const at::Tensor& dest);
};

// torch.var and torch.std (one family: the root is the projection's,
// OpSpec::roots): the squared deviations from the mean (VarianceOp)
// divided by the count less the correction (OpSpec::averages), real
// floating inputs only (complex ones are taken as their real and imaginary
// parts by the entry points). Its accumulators are structs: no pass hands
// them on through a tensor, and k copies of an input are read as they are.
// Over no elements the result is NaN (reduce_into, as an average).
struct VarianceFamily : FamilyBase {
  static constexpr bool kKeepsResultDtype = false;
  static constexpr bool kAverages = true;
  static constexpr bool kHandsPartialsOn = false;
  static constexpr bool kFoldsRepeats = false;
  template <typename acc_t>
  using Op = VarianceOp<acc_t>;
  static constexpr bool kInputIsPartial = false;
  static void fill_empty(const at::Tensor& t);
};

// torch.linalg.vector_norm of orders 1, 2 and inf (NormOp): sum's dtype
// rules, so that a dtype= wider than the input is read as the narrow input
// (the cast is exact, and torch casts first), and float results only (the
// entry points refuse the rest, and take complex inputs as their real
// views or their magnitudes). An input's partial is |x| or x * x, not
// itself. k copies of an input are taken by the pass, which reads them as
// one element: they scale the sum of orders 1 and 2 before the root (a
// fold after the root would not overflow where k squares do, as torch's
// does) and change no maximum. Over no elements the result is 0 (the
// orders whose empty norm is an error are refused first).
template <NormKind K>
struct NormFamily : FamilyBase {
  static constexpr bool kKeepsResultDtype = false;
  static constexpr bool kAverages = false;
  static constexpr bool kFoldsRepeats = false;
  static constexpr RepeatsInPass kRepeatsInPass = K == NormKind::kInf ? RepeatsInPass::kIgnored : RepeatsInPass::kScaled;
  template <typename acc_t>
  using Op = NormOp<acc_t, K>;
  static constexpr bool kInputIsPartial = false;
  static void fill_empty(const at::Tensor& t) { SumFamily::fill_empty(t); }
};
using NormOneFamily = NormFamily<NormKind::kOne>;
using NormTwoFamily = NormFamily<NormKind::kTwo>;
using NormInfFamily = NormFamily<NormKind::kInf>;

// Whose kernels run a pass of an op over inputs of group G (`type`), and
// whether the op takes such inputs at all (`kTaken`; the entry points refuse
// the others first). The backends route each pass through this, so that an
// op compiles only the kernels it runs.
template <class Family, InputGroup G>
struct KernelsFor {
  using type = Family;
  // Integer inputs of float results are staged through a cast for an op
  // unless it says otherwise below.
  static constexpr bool kTaken = !is_integer_to_float(G);
};
// sum: integers and bool read at their own width into float32 results too
// (dtype=), each element converted as torch's cast would.
template <InputGroup G>
struct KernelsFor<SumFamily, G> {
  using type = SumFamily;
  static constexpr bool kTaken = true;
};
// nansum: integers hold no NaN, so sum's kernels run them (floating inputs
// staged into an integer dtype=; integer and bool inputs themselves are
// sum's before they get here: NanSumEntries). Complex inputs, where either
// part is NaN, count as zero, as in torch's CUDA kernel; the CPU refuses
// them, as torch's does (kTakesComplex, check_nansum_args).
template <InputGroup G>
struct KernelsFor<NanSumFamily, G> {
  using type = std::conditional_t<G == InputGroup::kNarrowInt || G == InputGroup::kWideInt || is_integer_to_float(G),
                                   SumFamily, NanSumFamily>;
  static constexpr bool kTaken = true;
};

// mean: sum's kernels for every input (integer inputs of a float dtype=
// are read at their own width, as sum's are).
template <InputGroup G>
struct KernelsFor<MeanFamily, G> {
  using type = SumFamily;
  static constexpr bool kTaken = true;
};

// amax and amin: complex inputs are refused (check_extremum_args).
template <bool kMax, InputGroup G>
struct KernelsFor<ExtremumFamily<kMax>, G> {
  using type = ExtremumFamily<kMax>;
  static constexpr bool kTaken = G != InputGroup::kComplex && !is_integer_to_float(G);
};

// logsumexp: floating and complex inputs, and integer and bool inputs of a
// float32 result where the backend reads them so (kReadsIntegersIntoFloat;
// torch computes them in the default float dtype; a float64 out= casts them
// first, a rare case not worth its compile).
template <InputGroup G>
struct KernelsFor<LogSumExpFamily, G> {
  using type = LogSumExpFamily;
  static constexpr bool kTaken = G == InputGroup::kFloat || G == InputGroup::kHalf || G == InputGroup::kBFloat16 ||
                                 G == InputGroup::kComplex || is_integer_to_float(G);
};

// var and std: real floating inputs only (check_variance_args).
template <InputGroup G>
struct KernelsFor<VarianceFamily, G> {
  using type = VarianceFamily;
  static constexpr bool kTaken = G == InputGroup::kFloat || G == InputGroup::kHalf || G == InputGroup::kBFloat16;
};

// vector_norm: real floating inputs only (check_vector_norm_args; complex
// inputs reach the kernels as real tensors).
template <NormKind K, InputGroup G>
struct KernelsFor<NormFamily<K>, G> {
  using type = NormFamily<K>;
  static constexpr bool kTaken = G == InputGroup::kFloat || G == InputGroup::kHalf || G == InputGroup::kBFloat16;
};

// The backends an OpSpec is built for (op_spec).
enum class Backend { kCpu, kCuda };

// Whether Family's kernels on backend B read integer and bool inputs of a
// float32 result at their own width (the integer-to-float groups) rather
// than from a float32 copy cast first.
template <class Family, Backend B>
inline constexpr bool kReadsIntegersIntoFloat = KernelsFor<Family, InputGroup::kWideIntToFloat>::kTaken;
// logsumexp's on the CUDA engine only, for the full reductions' read rate
// (int32 and int64 of 2^28 elements: 1036 and 1886 GB/s from a cast copy,
// 4165 and 4346 read directly through the rows kernels; H200, NOTES.md
// session 53). The CPU casts
// first, as torch does: its two instance files for these pairs took 2.4
// minutes of core time of the GPU machine's clean build.
template <>
inline constexpr bool kReadsIntegersIntoFloat<LogSumExpFamily, Backend::kCpu> = false;

// Whether a family's kernels are compiled for the dtype pair (in_t, out_t)
// of reduce_dtypes.h: sum's rules write integer results as int64; amax and
// amin write their input's own dtype and nothing else (no widening to
// float64 or int64); narrower floats into float64 only where the family
// reads them so (kReadsFloatsIntoDouble). The kernels a family never runs
// would only lengthen the build.
template <class Family, typename in_t, typename out_t>
constexpr bool kRunsPair =
    !Family::kKeepsResultDtype
        ? !(std::is_integral_v<out_t> && !std::is_same_v<out_t, int64_t>) &&
              (Family::kReadsFloatsIntoDouble || !std::is_same_v<out_t, double> || std::is_same_v<in_t, double>)
        : std::is_same_v<in_t, out_t>;

// Whose kernels run a pass that reads another pass's partials (of the
// accumulator dtype): the family's own where its reduce folds a partial in
// as an input (Op::kPartialsFoldAsInputs), else a family whose reduce does,
// with the same combine.
template <class Family>
struct PartialsKernelsFor {
  using type = Family;
};
// nansum's partials are plain sums: NaN inputs were counted as zero when
// they were folded in, and sum's adds keep the NaN of inf + -inf. (An
// adapter that ran nansum's own kernels with combine for reduce cost a
// CUDA instance file, 47 s of compile, for the same bits; on the CPU the
// same roles as template flags doubled nansum's compile.)
template <>
struct PartialsKernelsFor<NanSumFamily> {
  using type = SumFamily;
};

// vector_norm's partials are sums (ord 1 and 2: of |x| or x * x already)
// or maxima of |x| (inf), folded as sum and amax fold theirs.
template <NormKind K>
struct PartialsKernelsFor<NormFamily<K>> {
  using type = std::conditional_t<K == NormKind::kInf, AmaxFamily, SumFamily>;
};

// Whether Family's kernels on backend B take complex inputs: as KernelsFor
// says, save nansum's on the CPU (torch's CPU nansum refuses complex inputs,
// its CUDA nansum sums them; no CPU instance file compiles them).
template <class Family, Backend B>
inline constexpr bool kTakesComplex = KernelsFor<Family, InputGroup::kComplex>::kTaken;
template <>
inline constexpr bool kTakesComplex<NanSumFamily, Backend::kCpu> = false;

// Calls run(TypeTag<K>{}, group) with the family K whose kernels run pass
// p from dtype `in` into dtype `out` on backend B (KernelsFor, or
// PartialsKernelsFor for a pass that reads partials the op's reduce would
// not take as inputs), and group, the std::integral_constant of the pair's
// InputGroup. Each backend routes its passes through this.
template <class Family, Backend B, class Run>
void with_pass_kernels(const ReducePass& p, at::ScalarType in, at::ScalarType out, Run&& run) {
  with_pass_group(in, out, [&](auto group) {
    constexpr InputGroup G = decltype(group)::value;
    using Kernels = KernelsFor<Family, G>;
    using K = typename Kernels::type;
    if constexpr (!Kernels::kTaken || (is_integer_to_float(G) && !kReadsIntegersIntoFloat<Family, B>) ||
                  (G == InputGroup::kComplex && !kTakesComplex<Family, B>)) {
      TORCH_INTERNAL_ASSERT(false, "gpureduce: no kernel for ", in, " inputs of this op");
    } else {
      if constexpr (!K::kHandsPartialsOn) {
        TORCH_INTERNAL_ASSERT(!p.reads_partials, "gpureduce: this op's passes read no partials");
      } else if constexpr (!K::template Op<float>::kPartialsFoldAsInputs) {
        using P = typename PartialsKernelsFor<K>::type;
        static_assert(P::template Op<float>::kPartialsFoldAsInputs, "partials kernels must fold partials as inputs");
        if (p.reads_partials) return run(TypeTag<P>{}, group);
      }
      run(TypeTag<K>{}, group);
    }
  });
}

// The OpSpec of Family's op on backend B, whose passes run through
// with_pass_kernels<Family, B>.
template <class Family, Backend B>
OpSpec op_spec(PassRunner run, const char* kernel_name, bool roots = false) {
  OpSpec spec{std::move(run), nullptr, &Family::fill_empty, kernel_name,
              Family::kInputIsPartial, Family::kKeepsResultDtype, Family::kAverages};
  if constexpr (Family::kFoldsRepeats) spec.fold_repeats = &Family::fold_repeats;
  spec.repeats_in_pass = Family::kRepeatsInPass;
  spec.roots = roots;
  spec.hands_partials_on = Family::kHandsPartialsOn;
  spec.widening.floats_into_double = KernelsFor<Family, InputGroup::kFloat>::type::kReadsFloatsIntoDouble;
  spec.widening.integers_into_float = kReadsIntegersIntoFloat<Family, B>;
  return spec;
}

}  // namespace gpureduce
