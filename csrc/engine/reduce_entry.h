// Entry points that every op and backend share: argument checks, output
// allocation and the out= contract. An op on a backend supplies only its
// OpSpec (reduce_family.h).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>

#include <optional>
#include <tuple>

#include "reduce_plan.h"
#include "reduce_shape.h"

namespace gpureduce {

at::Tensor reduce_dim_with(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                           std::optional<at::ScalarType> dtype, const OpSpec& op);

void reduce_out_with(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, const at::Tensor& out, const OpSpec& op);

// logsumexp.out after its checks: into out directly where the kernels
// compute in out's dtype, else the natural result cast into it.
void logsumexp_out_with(const at::Tensor& input, at::IntArrayRef dim, bool keepdim, const at::Tensor& out,
                        const OpSpec& op, const char* device);

}  // namespace gpureduce

namespace gpureduce {

struct NoGuard {
  explicit NoGuard(c10::Device) {}
};

// The overloads of a sum-like op (aten's sum, sum.dim_IntList,
// sum.IntList_out, prod, prod.dim_int, prod.int_out) over one OpSpec, so that a backend
// registers an op in a line per overload. `Guard` is constructed from the
// input's device first (a CUDA device guard; nothing on the CPU).
// `NoneListsDims`: dim=None names every dim, as torch's structured sum and
// mean take it (check_dims_listable).
template <const OpSpec& (*Spec)(), class Guard = NoGuard, bool NoneListsDims = false>
struct SumLikeEntries {
  static at::Tensor all(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
    const Guard guard(input.device());
    return reduce_dim_with(input, std::nullopt, false, dtype, Spec());
  }
  static at::Tensor dims(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype) {
    const Guard guard(input.device());
    if (NoneListsDims && !dim.has_value()) check_dims_listable(input.dim());
    return reduce_dim_with(input, dim, keepdim, dtype, Spec());
  }
  static at::Tensor one_dim(const at::Tensor& input, int64_t dim, bool keepdim,
                            std::optional<at::ScalarType> dtype) {
    const Guard guard(input.device());
    return reduce_dim_with(input, at::IntArrayRef(dim), keepdim, dtype, Spec());
  }
  static void dims_out(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype, const at::Tensor& out) {
    const Guard guard(input.device());
    if (NoneListsDims && !dim.has_value()) check_dims_listable(input.dim());
    reduce_out_with(input, dim, keepdim, dtype, out, Spec());
  }
  static void one_dim_out(const at::Tensor& input, int64_t dim, bool keepdim, std::optional<at::ScalarType> dtype,
                          const at::Tensor& out) {
    const Guard guard(input.device());
    reduce_out_with(input, at::IntArrayRef(dim), keepdim, dtype, out, Spec());
  }
};

// nansum's overloads (aten's nansum, nansum.out): sum's entry points after
// nansum's own checks (check_nansum_args), with nansum's kernels (Spec);
// integer and bool inputs are sum's, with sum's kernels and rules (SumSpec;
// nansum_is_sum).
template <const OpSpec& (*Spec)(), const OpSpec& (*SumSpec)(), class Guard = NoGuard>
struct NanSumEntries {
  using Base = SumLikeEntries<Spec, Guard>;
  using Sum = SumLikeEntries<SumSpec, Guard>;
  static at::Tensor dims(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype) {
    check_nansum_args(input, dim, dtype, nullptr, Spec().kernel_name);
    if (nansum_is_sum(input)) return Sum::dims(input, dim, keepdim, dtype);
    return Base::dims(input, dim, keepdim, dtype);
  }
  static void dims_out(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype, const at::Tensor& out) {
    check_nansum_args(input, dim, dtype, &out, Spec().kernel_name);
    if (nansum_is_sum(input)) return Sum::dims_out(input, dim, keepdim, dtype, out);
    Base::dims_out(input, dim, keepdim, dtype, out);
  }
};

// mean's overloads (aten's mean, mean.dim, mean.out): sum's entry points
// after mean's own checks (check_mean_args); the division is the
// OpSpec's (averages).
template <const OpSpec& (*Spec)(), class Guard = NoGuard>
struct MeanEntries {
  using Base = SumLikeEntries<Spec, Guard, /*NoneListsDims=*/true>;
  static at::Tensor all(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
    check_mean_args(input, dtype, nullptr, Spec().kernel_name);
    return Base::all(input, dtype);
  }
  static at::Tensor dims(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype) {
    check_mean_args(input, dtype, nullptr, Spec().kernel_name);
    return Base::dims(input, dim, keepdim, dtype);
  }
  static void dims_out(const at::Tensor& input, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype, const at::Tensor& out) {
    // torch's order: the dtype it computes in, the dims, then out's dtype.
    check_mean_args(input, dtype, nullptr, Spec().kernel_name);
    if (!dim.has_value()) check_dims_listable(input.dim());
    reduced_dims_mask(input.dim(), dim);
    check_mean_args(input, dtype, &out, Spec().kernel_name);
    Base::dims_out(input, dim, keepdim, dtype, out);
  }
};

inline constexpr char kAmaxName[] = "amax";
inline constexpr char kAminName[] = "amin";

// amax's and amin's overloads (aten's amax, amax.out): the result in the
// input's dtype, after their own checks (check_extremum_args). `Name` is
// the op's name in torch's messages, `Spec()`'s kernel_name the kernel's.
template <const OpSpec& (*Spec)(), const char* Name, class Guard = NoGuard>
struct ExtremumEntries {
  static at::Tensor dims(const at::Tensor& input, at::IntArrayRef dim, bool keepdim) {
    const Guard guard(input.device());
    check_extremum_args(input, dim, nullptr, Name, Spec().kernel_name);
    return reduce_dim_with(input, dim, keepdim, input.scalar_type(), Spec());
  }
  static void dims_out(const at::Tensor& input, at::IntArrayRef dim, bool keepdim, const at::Tensor& out) {
    const Guard guard(input.device());
    check_extremum_args(input, dim, &out, Name, Spec().kernel_name);
    reduce_out_with(input, dim, keepdim, std::nullopt, out, Spec());
  }
};

inline constexpr char kMaxAllName[] = "max";
inline constexpr char kMinAllName[] = "min";

// torch.max(input) and torch.min(input) (aten's max, min): amax's and
// amin's kernels over every dim, after torch's checks (an empty input
// raises, as it has no dim to name). `Kernel` names the kernel in dtype
// errors ("max_all").
template <const OpSpec& (*Spec)(), const char* Name, const char* Kernel, class Guard = NoGuard>
struct ExtremumAllEntries {
  static at::Tensor all(const at::Tensor& input) {
    const Guard guard(input.device());
    check_extremum_args(input, {}, nullptr, Name, Kernel);
    return reduce_dim_with(input, at::IntArrayRef{}, false, input.scalar_type(), Spec());
  }
  // torch.max(input, out=) (aten's max.unary_out): out takes any dtype the
  // input's casts to (on the CPU; on CUDA only the input's), and is resized
  // to a scalar; an input with no elements gives the op's identity there
  // (-inf, or the dtype's lowest value, for max), as torch's kernel fills
  // it, where max(input) raises.
  // The maximum commutes with a cast (casts are monotone), so it is
  // computed in out's dtype directly only where that is the input's.
  static void all_out(const at::Tensor& input, const at::Tensor& out) {
    const Guard guard(input.device());
    const bool max = Name == kMaxAllName;
    check_extremum_all_out_args(input, out, max, Kernel);
    resize_out(out, {});
    if (input.numel() == 0) {
      const_cast<at::Tensor&>(out).fill_(extremum_identity(input.scalar_type(), max));
    } else if (out.scalar_type() == input.scalar_type()) {
      reduce_out_with(input, at::IntArrayRef{}, false, std::nullopt, out, Spec());
    } else {
      const_cast<at::Tensor&>(out).copy_(all(input));
    }
  }
};

// logsumexp's overloads (aten's logsumexp, logsumexp.out) after its checks
// (check_logsumexp_args): integer inputs are cast to the default float
// dtype by the planner's staging, and an out= narrower than the natural
// result (or complex) gets the natural result cast, so that the exps are
// not taken of inputs rounded to out's dtype first.
template <const OpSpec& (*Spec)(), const char* Device, class Guard = NoGuard>
struct LogSumExpEntries {
  static at::Tensor dims(const at::Tensor& input, at::IntArrayRef dim, bool keepdim) {
    const Guard guard(input.device());
    const at::ScalarType compute = check_logsumexp_args(input, dim, keepdim, nullptr, Device);
    return reduce_dim_with(input, dim, keepdim, compute, Spec());
  }
  static void dims_out(const at::Tensor& input, at::IntArrayRef dim, bool keepdim, const at::Tensor& out) {
    const Guard guard(input.device());
    logsumexp_out_with(input, dim, keepdim, out, Spec(), Device);
  }
};

// var and std (`root`) into a new tensor, or into *out, after their checks
// (check_variance_args): a real input through `var_op`'s kernels (divided
// by the count less the correction, and rooted where `root`), a complex one
// as the sum of its real and imaginary parts' variances (then the root),
// as torch computes it.
at::Tensor variance_with(const at::Tensor& input, at::OptionalIntArrayRef dim,
                         const std::optional<c10::Scalar>& correction, bool keepdim, bool root, const at::Tensor* out,
                         const OpSpec& var_op, const OpSpec& std_op);

// var_mean and std_mean: the spread as variance_with computes it, and the
// mean through `mean_op` (the input's dtype; complex for complex inputs).
std::tuple<at::Tensor, at::Tensor> variance_mean_with(const at::Tensor& input, at::OptionalIntArrayRef dim,
                                                      const std::optional<c10::Scalar>& correction, bool keepdim,
                                                      bool root, const OpSpec& var_op, const OpSpec& std_op,
                                                      const OpSpec& mean_op);

// The overloads of var, std, var_mean and std_mean (aten's .correction and
// .correction_out) over a backend's OpSpecs: var's kernels (VarianceFamily),
// the same with roots for std, and mean's.
template <const OpSpec& (*VarSpec)(), const OpSpec& (*StdSpec)(), const OpSpec& (*MeanSpec)(), class Guard = NoGuard>
struct VarianceEntries {
  template <bool kRoot>
  static at::Tensor spread(const at::Tensor& input, at::OptionalIntArrayRef dim,
                           const std::optional<c10::Scalar>& correction, bool keepdim) {
    const Guard guard(input.device());
    return variance_with(input, dim, correction, keepdim, kRoot, nullptr, VarSpec(), StdSpec());
  }
  template <bool kRoot>
  static void spread_out(const at::Tensor& input, at::OptionalIntArrayRef dim,
                         const std::optional<c10::Scalar>& correction, bool keepdim, const at::Tensor& out) {
    const Guard guard(input.device());
    variance_with(input, dim, correction, keepdim, kRoot, &out, VarSpec(), StdSpec());
  }
  template <bool kRoot>
  static std::tuple<at::Tensor, at::Tensor> spread_mean(const at::Tensor& input, at::OptionalIntArrayRef dim,
                                                        const std::optional<c10::Scalar>& correction, bool keepdim) {
    const Guard guard(input.device());
    return variance_mean_with(input, dim, correction, keepdim, kRoot, VarSpec(), StdSpec(), MeanSpec());
  }
  // Registers the six overloads on a backend's torch::Library.
  template <class Library>
  static void register_on(Library& m) {
    m.impl("var.correction", &spread<false>);
    m.impl("var.correction_out", &spread_out<false>);
    m.impl("std.correction", &spread<true>);
    m.impl("std.correction_out", &spread_out<true>);
    m.impl("var_mean.correction", &spread_mean<false>);
    m.impl("std_mean.correction", &spread_mean<true>);
  }
};

// The kernels vector_norm runs on one backend: its own for orders 1, 2
// (rooted) and inf, and sum's and amin's for the orders it stages (0,
// -inf and any other p: an elementwise op of torch's first, then one of
// these reductions).
struct NormSpecs {
  const OpSpec& one;
  const OpSpec& two;
  const OpSpec& inf;
  const OpSpec& sum;
  const OpSpec& amin;
};

// torch.linalg.vector_norm into a new tensor, or into *out, after its
// checks (check_vector_norm_args).
at::Tensor vector_norm_with(const at::Tensor& input, const c10::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype, const at::Tensor* out, const NormSpecs& ops);

// vector_norm's overloads (aten's linalg_vector_norm, linalg_vector_norm.out)
// over a backend's NormSpecs (`Specs()`).
template <NormSpecs (*Specs)(), class Guard = NoGuard>
struct NormEntries {
  static at::Tensor norm(const at::Tensor& input, const c10::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype) {
    const Guard guard(input.device());
    return vector_norm_with(input, ord, dim, keepdim, dtype, nullptr, Specs());
  }
  static void norm_out(const at::Tensor& input, const c10::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype, const at::Tensor& out) {
    const Guard guard(input.device());
    vector_norm_with(input, ord, dim, keepdim, dtype, &out, Specs());
  }
  template <class Library>
  static void register_on(Library& m) {
    m.impl("linalg_vector_norm", &norm);
    m.impl("linalg_vector_norm.out", &norm_out);
  }
};

inline constexpr char kCpuName[] = "cpu";
inline constexpr char kCudaName[] = "cuda";

}  // namespace gpureduce
