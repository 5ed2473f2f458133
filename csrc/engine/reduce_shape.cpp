#include "reduce_shape.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <c10/core/DefaultDtype.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

namespace gpureduce {

void check_dims_listable(int64_t ndim) {
  // torch keeps a list of dims as a 64-bit mask (dim_list_to_bitset).
  TORCH_CHECK(ndim <= 64, "only tensors with up to 64 dims are supported");
}

std::vector<bool> reduced_dims_mask(int64_t ndim, at::OptionalIntArrayRef dim) {
  if (dim.has_value() && !dim->empty()) check_dims_listable(ndim);
  std::vector<bool> mask(static_cast<size_t>(ndim), false);
  if (!dim.has_value() || dim->empty()) {
    std::fill(mask.begin(), mask.end(), true);
    return mask;
  }
  // Like torch, a 0-d tensor takes dim 0 or -1. The messages are torch's.
  // They are assembled with std::to_string: on the GPU machine's toolchain,
  // streaming an integer into a TORCH_CHECK message from this library crashed
  // (benchmarks/NOTES.md, 2026-11-22).
  const int64_t range = std::max<int64_t>(ndim, 1);
  bool zero_d_taken = false;  // (a 0-d tensor's dim 0, given as 0 or -1)
  for (int64_t d : *dim) {
    if (d < -range || d >= range) {
      throw c10::IndexError(
          {__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
          "Dimension out of range (expected to be in range of [" + std::to_string(-range) + ", " +
              std::to_string(range - 1) + "], but got " + std::to_string(d) + ")");
    }
    if (ndim == 0) {
      if (zero_d_taken) {
        throw c10::Error({__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                         "dim 0 appears multiple times in the list of dims");
      }
      zero_d_taken = true;
      continue;
    }
    const int64_t wrapped = d < 0 ? d + ndim : d;
    if (mask[wrapped]) {
      throw c10::Error({__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                       "dim " + std::to_string(wrapped) + " appears multiple times in the list of dims");
    }
    mask[wrapped] = true;
  }
  return mask;
}

at::ScalarType result_dtype(at::ScalarType input, std::optional<at::ScalarType> dtype) {
  if (dtype.has_value()) return *dtype;
  if (at::isIntegralType(input, /*includeBool=*/true)) return at::kLong;
  return input;
}

at::ScalarType out_compute_dtype(std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  if (dtype.has_value()) {
    TORCH_CHECK(*dtype == out.scalar_type(), "Expected out tensor to have dtype ",
                c10::scalarTypeToTypeMeta(*dtype).name(), ", but got ", out.dtype().name(),
                " instead");
    return *dtype;
  }
  return out.scalar_type();
}

template <typename Size>
static std::vector<Size> output_shape(c10::ArrayRef<Size> sizes, const std::vector<bool>& mask,
                                      bool keepdim) {
  std::vector<Size> shape;
  shape.reserve(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask[d]) {
      shape.push_back(sizes[d]);
    } else if (keepdim) {
      shape.push_back(Size(1));
    }
  }
  return shape;
}

std::vector<c10::SymInt> reduced_sym_shape(c10::SymIntArrayRef input_sizes,
                                              const std::vector<bool>& mask, bool keepdim) {
  return output_shape<c10::SymInt>(input_sizes, mask, keepdim);
}

std::vector<int64_t> reduced_shape(at::IntArrayRef input_sizes, const std::vector<bool>& mask,
                                      bool keepdim) {
  return output_shape<int64_t>(input_sizes, mask, keepdim);
}

void check_out_device(const at::Tensor& input, const at::Tensor& out) {
  TORCH_CHECK(out.device() == input.device(), "Expected out tensor to have device ", input.device(), ", but got ",
              out.device(), " instead");
}

void resize_out(const at::Tensor& out, at::IntArrayRef shape) {
  at::native::resize_output(out, shape);
  at::assert_no_internal_overlap(out);
}

at::ScalarType acc_dtype(at::ScalarType t) {
  switch (t) {
    case at::kHalf:
    case at::kBFloat16:
    case at::kFloat:
      return at::kFloat;
    case at::kDouble:
      return at::kDouble;
    case at::kComplexHalf:
    case at::kComplexFloat:
      return at::kComplexFloat;
    case at::kComplexDouble:
      return at::kComplexDouble;
    default:
      TORCH_INTERNAL_ASSERT(at::isIntegralType(t, /*includeBool=*/true), "no accumulator for ", t);
      return at::kLong;
  }
}

static bool is_cpu_kernel(const char* name) {
  const std::string s(name);
  return s.size() >= 4 && s.compare(s.size() - 4, 4, "_cpu") == 0;
}

static bool dtype_supported(at::ScalarType t, const char* kernel_name) {
  return at::isIntegralType(t, /*includeBool=*/true) || t == at::kFloat || t == at::kDouble || t == at::kHalf ||
         t == at::kBFloat16 || t == at::kComplexFloat || t == at::kComplexDouble ||
         (t == at::kComplexHalf && !is_cpu_kernel(kernel_name));
}

void check_dtype_supported(at::ScalarType t, const char* kernel_name) {
  TORCH_CHECK_NOT_IMPLEMENTED(dtype_supported(t, kernel_name), "\"", kernel_name, "\" not implemented for '",
                              c10::toString(t), "'");
}

void check_dtype_supported(at::ScalarType t, const char* kernel_name, const at::Tensor& input) {
  if (!dtype_supported(t, kernel_name) && input.sym_numel() != 0) check_dtype_supported(t, kernel_name);
}

void check_nansum_args(const at::Tensor& input, at::OptionalIntArrayRef dim, std::optional<at::ScalarType> dtype,
                       const at::Tensor* out, const char* kernel_name) {
  // torch's order: the dims first, but for nansum.out, whose input and
  // dtype= checks come before them.
  const bool cpu = input.device().is_cpu();
  const auto input_and_dtype = [&] {
    // torch refuses complex inputs on the CPU only; its CUDA kernel drops
    // the elements with a NaN in either part.
    TORCH_CHECK(!(cpu && at::isComplexType(input.scalar_type())), "nansum on CPU does not support complex inputs");
    // Elsewhere torch reads a complex input in the complex type of the
    // result's (c10::toComplexType), which integer, bool and float8 results
    // lack: its error, before any other, empty inputs included.
    if (at::isComplexType(input.scalar_type())) {
      const at::ScalarType to = dtype.has_value() ? *dtype : out != nullptr ? out->scalar_type() : input.scalar_type();
      TORCH_CHECK((at::isFloatingType(to) && !at::isFloat8Type(to)) || at::isComplexType(to),
                  "Unknown Complex ScalarType for ", c10::toString(to));
    }
    if (out != nullptr && dtype.has_value()) {
      TORCH_CHECK(*dtype == out->scalar_type(), "nansum: provided dtype must match dtype of result. Got ",
                  c10::toString(out->scalar_type()), " and ", c10::toString(*dtype), ".");
    }
  };
  if (out != nullptr && !nansum_is_sum(input)) input_and_dtype();
  if (dim.has_value()) reduced_dims_mask(input.dim(), *dim);  // torch's range and repeat errors
  if (nansum_is_sum(input)) return;
  if (out == nullptr) input_and_dtype();
  const at::ScalarType result = out != nullptr ? out->scalar_type() : result_dtype(input.scalar_type(), dtype);
  // The kernel's own dtype errors: an empty input reaches no kernel in
  // torch, whatever the result's dtype (check_dtype_supported).
  if (input.sym_numel() == 0) return;
  TORCH_CHECK_NOT_IMPLEMENTED(!(cpu && at::isComplexType(result)), "\"", kernel_name, "\" not implemented for '",
                              c10::toString(result), "'");
  // A floating input into an integer or bool out= with no dtype=: torch's
  // kernel runs in out's dtype and has no integer version. With an integer
  // dtype= torch 2.13 casts the NaN-free input and sums it (pytorch#183808,
  // May 2026); torch 2.11 raises here too (both seen; 2.12 not checked).
  constexpr bool kCastsForIntegerDtype = TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 12;
  const bool int_of_floats = !at::isIntegralType(input.scalar_type(), /*includeBool=*/true) &&
                             at::isIntegralType(result, /*includeBool=*/true);
  const bool int_out_of_floats = int_of_floats && (dtype.has_value() ? !kCastsForIntegerDtype : out != nullptr);
  TORCH_CHECK_NOT_IMPLEMENTED(!int_out_of_floats, "\"", kernel_name, "\" not implemented for '",
                              c10::toString(result), "'");
}

void check_mean_args(const at::Tensor& input, std::optional<at::ScalarType> dtype, const at::Tensor* out,
                     const char* kernel_name) {
  const at::ScalarType t = dtype.value_or(input.scalar_type());
  TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t), "mean(): could not infer output dtype. ",
              dtype.has_value() ? "Optional" : "Input", " dtype must be either a floating point or complex dtype. Got: ",
              c10::toString(t));
  const at::ScalarType result = out != nullptr ? out_compute_dtype(dtype, *out) : t;
  // torch's CPU mean sums into out= and then divides it in place: the
  // quotient, of the default dtype, cannot be cast into an integer out.
  TORCH_CHECK(!at::isIntegralType(result, /*includeBool=*/true), "result type ",
              c10::toString(c10::typeMetaToScalarType(c10::get_default_dtype())),
              " can't be cast to the desired output type ", c10::toString(result));
  // torch's CUDA mean fills an empty input's result with NaN and runs no
  // kernel, whatever the dtype (float8 and complex32 included; seen on
  // torch 2.11). Its CPU mean divides the sum, and the division refuses
  // these dtypes however few elements there are, unlike sum's.
  if (input.is_cuda() && input.sym_numel() == 0) return;
  TORCH_CHECK_NOT_IMPLEMENTED(result != at::kComplexHalf, "\"", kernel_name, "\" not implemented for '",
                              c10::toString(result), "'");
  check_dtype_supported(result, kernel_name);
}

// The dtypes amax's and amin's kernels take: every real dtype but float8;
// uint16 and uint32 on CUDA only (reduced as int64), uint64 nowhere.
static bool extremum_dtype_supported(const at::Tensor& input) {
  const at::ScalarType t = input.scalar_type();
  const bool wide_unsigned = t == at::kUInt16 || t == at::kUInt32 || t == at::kUInt64;
  return (at::isIntegralType(t, /*includeBool=*/true) && !wide_unsigned) || t == at::kFloat || t == at::kDouble ||
         t == at::kHalf || t == at::kBFloat16 || (wide_unsigned && t != at::kUInt64 && !input.is_cpu());
}

void check_extremum_args(const at::Tensor& input, at::IntArrayRef dim, const at::Tensor* out, const char* name,
                         const char* kernel_name) {
  const at::ScalarType t = input.scalar_type();
  if (out != nullptr) {
    TORCH_CHECK(out->scalar_type() == t, "Expected the dtype for input and out to match, but got ", c10::toString(t),
                " for input's dtype and ", c10::toString(out->scalar_type()), " for out's dtype.");
  }
  // Sizes as SymInts: the Meta kernel checks symbolic shapes too (a guard).
  if (input.sym_numel() == 0) {
    TORCH_CHECK(!dim.empty(), name,
                "(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with "
                "the 'dim' argument.");
    // Each dim in turn, its range then its size, and only then repeats, as
    // torch's checks come.
    for (int64_t d : dim) {
      reduced_dims_mask(input.dim(), at::IntArrayRef(&d, 1));  // torch's range error, as its size(dim) raises
      const int64_t wrapped = d < 0 ? d + input.dim() : d;
      if (input.sym_size(wrapped) == 0) {
        throw c10::IndexError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                              std::string(name) + "(): Expected reduction dim " + std::to_string(d) +
                                  " to have non-zero size.");
      }
    }
    // No reduced dim is empty, so a kept one is: an empty result, which
    // torch returns whatever the dtype (its kernel, which would refuse
    // complex and uint64, never runs).
    reduced_dims_mask(input.dim(), dim);  // repeats
    return;
  }
  const bool supported = extremum_dtype_supported(input);
  // A dim out of range or repeated is torch's error before the dtype's.
  if (!supported) reduced_dims_mask(input.dim(), dim);
  TORCH_CHECK_NOT_IMPLEMENTED(supported, "\"", kernel_name, "\" not implemented for '", c10::toString(t), "'");
}

void check_extremum_all_out_args(const at::Tensor& input, const at::Tensor& out, bool max, const char* kernel_name) {
  check_out_device(input, out);
  TORCH_CHECK(at::canCast(input.scalar_type(), out.scalar_type()), "Expected canCast(input dtype ",
              c10::toString(input.scalar_type()), ", out dtype ", c10::toString(out.scalar_type()),
              ") to be true, but got false.");
  TORCH_CHECK(!input.is_cuda() || out.scalar_type() == input.scalar_type(), max ? "max_all" : "min_all",
              ": provided dtype must match dtype of result. Got ", c10::toString(out.scalar_type()), " and ",
              c10::toString(input.scalar_type()), ".");
  TORCH_CHECK_NOT_IMPLEMENTED(extremum_dtype_supported(input), "\"", kernel_name, "\" not implemented for '",
                              c10::toString(input.scalar_type()), "'");
}

c10::Scalar extremum_identity(at::ScalarType t, bool max) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (at::isFloatingType(t)) return max ? -inf : inf;
  switch (t) {
    case at::kBool:
      return !max;
    case at::kByte:
      return max ? int64_t{0} : int64_t{std::numeric_limits<uint8_t>::max()};
    case at::kChar:
      return int64_t{max ? std::numeric_limits<int8_t>::lowest() : std::numeric_limits<int8_t>::max()};
    case at::kShort:
      return int64_t{max ? std::numeric_limits<int16_t>::lowest() : std::numeric_limits<int16_t>::max()};
    case at::kInt:
      return int64_t{max ? std::numeric_limits<int32_t>::lowest() : std::numeric_limits<int32_t>::max()};
    case at::kLong:
      return max ? std::numeric_limits<int64_t>::lowest() : std::numeric_limits<int64_t>::max();
    case at::kUInt16:
      return max ? int64_t{0} : int64_t{std::numeric_limits<uint16_t>::max()};
    case at::kUInt32:
      return max ? int64_t{0} : int64_t{std::numeric_limits<uint32_t>::max()};
    default:
      TORCH_CHECK(false, "no identity of ", max ? "max" : "min", " for ", c10::toString(t));
  }
}

at::ScalarType check_logsumexp_args(const at::Tensor& input, at::IntArrayRef dim, bool keepdim, const at::Tensor* out,
                                    const char* device, bool* computed_then_cast) {
  const at::ScalarType t = input.scalar_type();
  const std::string dev(device);
  // out= must be floating or complex, before the dims (torch's order)
  if (out != nullptr) {
    TORCH_CHECK(at::isFloatingType(out->scalar_type()) || at::isComplexType(out->scalar_type()),
                "logsumexp(): Expected floating point type for result tensor, but got: ",
                c10::toString(out->scalar_type()));
  }
  reduced_dims_mask(input.dim(), dim);  // torch's range and repeat errors, before the dtype's
  // An empty complex32 input on CUDA is torch's log of a sum of no exps,
  // which its CUDA kernels take in complex32 (-inf everywhere; the engine
  // fills it with no kernel); its CPU kernels raise.
  const bool empty_cuda_complex32 = t == at::kComplexHalf && dev == "cuda" && input.sym_numel() == 0;
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(t, /*includeBool=*/true) || t == at::kHalf || t == at::kBFloat16 ||
                                  t == at::kFloat || t == at::kDouble || t == at::kComplexFloat ||
                                  t == at::kComplexDouble || empty_cuda_complex32,
                              "\"max_values_", dev, "\" not implemented for '", c10::toString(t), "'");
  const at::ScalarType natural =
      at::isIntegralType(t, /*includeBool=*/true) ? c10::typeMetaToScalarType(c10::get_default_dtype()) : t;
  at::ScalarType compute = natural;
  if (out != nullptr) {
    const at::ScalarType o = out->scalar_type();
    check_dtype_supported(o, ("sum_" + dev).c_str());
    // A real input into a complex out= is computed in out's real dtype
    // where that is as wide (torch sums and takes the log in out's dtype).
    const at::ScalarType wide = c10::toRealValueType(o);
    if (!at::isComplexType(natural) && at::promoteTypes(natural, wide) == wide) compute = wide;
  }
  if (computed_then_cast != nullptr) *computed_then_cast = out != nullptr && compute != out->scalar_type();
  if (dim.empty() && !keepdim && input.dim() > 0 && input.sym_numel() != 0) {
    // torch squeezes the kept dims of its maxima by the dims given, [] a list.
    check_dims_listable(input.dim());
    std::string ones;
    for (int64_t d = 0; d < input.dim(); ++d) ones += d == 0 ? "1" : ", 1";
    TORCH_CHECK(false, "output with shape [] doesn't match the broadcast shape [", ones, "]");
  }
  return compute;
}

at::ScalarType check_variance_args(const at::Tensor& input, const at::Tensor* out, const char* kernel_name) {
  const at::ScalarType t = input.scalar_type();
  TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t), "std and var only support floating point and complex dtypes");
  // The kernel's dtype errors only where torch runs one: an empty input's
  // result is filled (check_dtype_supported).
  TORCH_CHECK_NOT_IMPLEMENTED(!at::isFloat8Type(t) || input.sym_numel() == 0, "\"", kernel_name,
                              "\" not implemented for '", c10::toString(t), "'");
  if (out == nullptr) return c10::toRealValueType(t);
  const at::ScalarType o = out->scalar_type();
  // torch spreads a complex input as its two real parts, each into out's
  // real dtype: the cast it checks is between those (a complex128 input
  // into a float32 out= is taken).
  const at::ScalarType from = at::isComplexType(t) ? c10::toRealValueType(t) : t;
  const at::ScalarType to = at::isComplexType(t) ? c10::toRealValueType(o) : o;
  TORCH_CHECK(at::canCast(from, to), "result type ", c10::toString(from), " can't be cast to the desired output type ",
              c10::toString(to));
  TORCH_CHECK_NOT_IMPLEMENTED(at::isComplexType(t) || !at::isComplexType(o) || input.sym_numel() == 0, "\"",
                              kernel_name, "\" not implemented for '", c10::toString(o), "'");
  return o;
}

void check_variance_mean_dtype(const at::Tensor& input, bool root) {
  const at::ScalarType t = input.scalar_type();
  TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t), root ? "std_mean" : "var_mean",
              " only support floating point and complex dtypes");
}

// ord as ATen's messages print a Scalar: an integer as one, a double in
// the shortest form (inf, -inf, -0.5).
static std::string ord_text(const c10::Scalar& ord) {
  if (ord.isIntegral(/*includeBool=*/true)) return std::to_string(ord.toLong());
  const double v = ord.toDouble();
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

at::ScalarType check_vector_norm_args(const at::Tensor& input, const c10::Scalar& ord, at::OptionalIntArrayRef dim,
                                      std::optional<at::ScalarType> dtype, const at::Tensor* out) {
  TORCH_CHECK(!ord.isComplex(), "linalg.vector_norm: Expected a non-complex scalar as the order of norm.");
  const at::ScalarType t = input.scalar_type();
  TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t),
              "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ", c10::toString(t));
  TORCH_CHECK_NOT_IMPLEMENTED(!at::isFloat8Type(t) || input.sym_numel() == 0, "\"norm_",
                              input.is_cuda() ? "cuda" : "cpu", "\" not implemented for '", c10::toString(t), "'");
  const double p = ord.toDouble();
  if ((p < 0.0 || p == std::numeric_limits<double>::infinity()) && input.sym_numel() == 0) {
    TORCH_CHECK(dim.has_value() && !dim->empty(), "linalg.vector_norm cannot compute the ", ord_text(ord),
                " norm on an empty tensor because the operation does not have an identity");
    for (int64_t d : *dim) {
      reduced_dims_mask(input.dim(), at::IntArrayRef(d));  // torch's size(d): IndexError out of range
      // (An input with no elements has a dim, so d wraps into range.) The
      // missing space before "because" is ATen's.
      if (input.sym_size(d < 0 ? d + input.dim() : d) == 0) {
        TORCH_CHECK(false, "linalg.vector_norm cannot compute the ", ord_text(ord), " norm on the dimension ",
                    std::to_string(d), "because this dimension is empty and the operation does not have an identity");
      }
    }
  }
  if (dtype.has_value()) {
    const at::ScalarType d = *dtype;
    TORCH_CHECK(at::isFloatingType(d) || at::isComplexType(d),
                "linalg.vector_norm: dtype should be floating point or complex, but got ", c10::toString(d));
    TORCH_CHECK(at::isComplexType(d) == at::isComplexType(t), "linalg.vector_norm: dtype should be ",
                at::isComplexType(t) ? "complex for complex inputs, but got " : "real for real inputs, but got ",
                c10::toString(d));
    TORCH_CHECK(at::promoteTypes(t, d) == d, "linalg.vector_norm: the dtype of the input (", c10::toString(t),
                ") should be convertible without narrowing to the specified dtype (", c10::toString(d), ")");
  }
  const at::ScalarType result = c10::toRealValueType(dtype.value_or(t));
  if (out != nullptr) {
    if (dim.has_value()) reduced_dims_mask(input.dim(), *dim);  // torch's order: the dims before out's dtype
    TORCH_CHECK(out->scalar_type() == result, "Expected out tensor to have dtype ",
                c10::scalarTypeToTypeMeta(result).name(), ", but got ", out->dtype().name(), " instead");
  }
  return result;
}

}  // namespace gpureduce
