// Shape and dtype rules of the sum-like reductions (sum, prod), shared by
// every dispatch key. They follow torch.sum and torch.prod exactly, so that
// the ops are drop-in replacements.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <c10/core/SymInt.h>
#include <c10/util/OptionalArrayRef.h>

#include <optional>
#include <vector>

namespace gpureduce {

// One flag per input dim: true where the dim is reduced. None and [] both mean
// "every dim", as in torch.sum. Raises IndexError for a dim out of range and
// RuntimeError for a repeated dim, with torch's messages, and, as torch,
// RuntimeError for dims named on a tensor of more than 64 dims
// (check_dims_listable).
std::vector<bool> reduced_dims_mask(int64_t ndim, at::OptionalIntArrayRef dim);

// torch holds a list of reduced dims in a 64-bit mask, so it refuses to name
// dims of a tensor of more than 64 ("only tensors with up to 64 dims are
// supported"): wherever dims are given, and for sum's and mean's dim=None,
// which their structured kernels expand to the list of every dim. A full
// reduction without a dim argument, and nansum's, var's or amax's dim=None,
// list none and take any number of dims.
void check_dims_listable(int64_t ndim);

// torch.sum's and torch.prod's result dtype: `dtype` when given; otherwise int and bool promote
// to int64 and everything else keeps its own dtype.
at::ScalarType result_dtype(at::ScalarType input, std::optional<at::ScalarType> dtype);

// The out= overload computes in `dtype` if given (which must then match out's
// dtype) and otherwise in out's dtype, as aten's sum.IntList_out does.
at::ScalarType out_compute_dtype(std::optional<at::ScalarType> dtype, const at::Tensor& out);

// Output shape, symbolic so that the Meta kernel keeps dynamic shapes dynamic.
std::vector<c10::SymInt> reduced_sym_shape(c10::SymIntArrayRef input_sizes,
                                              const std::vector<bool>& mask, bool keepdim);
std::vector<int64_t> reduced_shape(at::IntArrayRef input_sizes, const std::vector<bool>& mask,
                                      bool keepdim);

// out= on the input's device, with the message of torch's structured
// kernels. A kernel would otherwise write one device's memory from
// another's: the dispatcher picks the CUDA kernel for a CUDA input with a
// CPU out=, or a CPU input with a CUDA out=.
void check_out_device(const at::Tensor& input, const at::Tensor& out);

// out= resized to `shape` (at::native::resize_output's rules and warning),
// then refused where elements of it share memory (an expanded out=), with
// the error torch's TensorIterator raises: a kernel's writes there would
// leave one of the results, not all of them.
void resize_out(const at::Tensor& out, at::IntArrayRef shape);

// Accumulation dtype: float for the 16-bit floats, int64 for int and bool.
at::ScalarType acc_dtype(at::ScalarType t);

// Rejects dtypes torch.sum rejects (float8, quantized, ...), with
// NotImplementedError as torch raises it. `device` names the kernel in the
// message, as ATen does ("sum_cpu", "prod_cuda").
void check_dtype_supported(at::ScalarType t, const char* kernel_name);

// The same for the result of reducing `input`, where torch checks it: an
// input with no elements runs no kernel in torch (its reductions fill the
// result with the op's identity first), so any dtype passes there. Sizes
// are read only for a dtype that would be refused, so that the Meta kernel
// guards on none for the others.
void check_dtype_supported(at::ScalarType t, const char* kernel_name, const at::Tensor& input);

// torch.nansum's checks beyond sum's, in its order and with its messages:
// the dims (range, repeats) first, then a complex input raises
// RuntimeError, a complex result dtype (dtype= or out's) NotImplementedError
// naming `kernel_name`, and an out= whose dtype differs from dtype=
// RuntimeError. `out` may be null. Integer and bool inputs, which hold no
// NaN, are sum's (nansum_is_sum): none of the checks after the dims'.
void check_nansum_args(const at::Tensor& input, at::OptionalIntArrayRef dim, std::optional<at::ScalarType> dtype,
                       const at::Tensor* out, const char* kernel_name);

// Whether nansum of this input is its sum, dtype= and out= as sum takes them
// (a complex dtype= included), as torch runs it: integer and bool inputs.
inline bool nansum_is_sum(const at::Tensor& input) {
  return at::isIntegralType(input.scalar_type(), /*includeBool=*/true);
}

// torch.amax's and torch.amin's checks, in its order and with its messages
// (`name`: "amax" or "amin"): out='s dtype must be the input's; an empty
// input must name its reduced dims, none of size 0 (IndexError); complex,
// uint64 and, on the CPU, uint16 and uint32 inputs raise NotImplementedError
// naming `kernel_name` ("max_values_cpu", "max_all"). On CUDA, uint16 and uint32 are
// reduced as int64 (exact) and cast back; uint64 would not be, and is refused.
void check_extremum_args(const at::Tensor& input, at::IntArrayRef dim, const at::Tensor* out, const char* name,
                         const char* kernel_name);

// torch.max(input, out=)'s (`max`) and torch.min's checks, in aten's
// order: out on the input's device, a dtype the input's casts to
// (RuntimeError); on CUDA, out's dtype the input's (torch's CUDA kernel
// takes no other, its CPU one casts); then the dtypes the kernels take
// (NotImplementedError naming `kernel_name`, an empty input's included:
// torch's kernel runs for it).
void check_extremum_all_out_args(const at::Tensor& input, const at::Tensor& out, bool max, const char* kernel_name);

// The identity of max (`max`) or min over dtype `t`: -inf or inf for the
// floating dtypes, else the dtype's lowest or highest value.
c10::Scalar extremum_identity(at::ScalarType t, bool max);

// torch.mean's checks before sum's, in its order and with its messages: the
// dtype it computes in (dtype=, else the input's) must be floating or
// complex (RuntimeError); dtype= must match out='s dtype, as for sum; an
// integer or bool out= raises as torch's CPU mean does (its division's
// result cannot be cast into it); complex32 and the dtypes sum's kernels
// lack raise NotImplementedError naming `kernel_name`, as torch's mean does
// on both devices, an empty input included.
void check_mean_args(const at::Tensor& input, std::optional<at::ScalarType> dtype, const at::Tensor* out,
                     const char* kernel_name);

// torch.logsumexp's checks, in its order and with its messages, and the
// dtype the kernels compute in. The result is the input's float dtype, or
// the default float dtype for integer and bool inputs; out= must be a
// floating or complex tensor (RuntimeError), and the result is computed in
// out's (real) dtype where that is at least as wide as the natural result,
// else in the natural dtype and then cast (`computed_then_cast`). An empty
// dim list reduces every dim, but with keepdim=False on a non-empty tensor
// of rank 1 or more torch raises (its amax keeps the dims, its sum does
// not), and so does this. Float8 inputs raise NotImplementedError naming
// "max_values_<dev>" as torch's amax does, float8 outputs naming
// "sum_<dev>". A complex input's result is complex; into a real out= it is
// that result's real part, log|sum exp z|, where torch's CPU op writes
// log(Re sum exp z) (it drops the imaginary parts before the sum and the
// log; NaN where that sum is negative). `device` is "cpu" or "cuda".
at::ScalarType check_logsumexp_args(const at::Tensor& input, at::IntArrayRef dim, bool keepdim, const at::Tensor* out,
                                    const char* device, bool* computed_then_cast = nullptr);

// torch.var's and torch.std's checks (also var_mean's and std_mean's), in
// their order and with their messages, and the result's dtype: the input
// must be floating or complex (RuntimeError); float8 inputs raise
// NotImplementedError naming `kernel_name` ("std_cpu"); an out= must take
// a cast from the input's dtype (for a complex input, from its real dtype
// into out's real dtype; RuntimeError), and a complex out= a complex input
// (NotImplementedError, as torch's CPU kernels raise it outside a full
// reduction, which they take). The
// result is out's dtype, else the input's real dtype (a complex input's
// spread is real). torch's warning where the count less the correction is
// not positive is the Python wrapper's (reduce_op.var): a TORCH_WARN from
// an op called through torch.ops reaches stderr, not Python's warnings, as
// aten's own var's does there.
at::ScalarType check_variance_args(const at::Tensor& input, const at::Tensor* out, const char* kernel_name);

// var_mean's and std_mean's (`root`) first check, in torch's words: the
// input must be floating or complex (RuntimeError naming the op); then
// check_variance_args's.
void check_variance_mean_dtype(const at::Tensor& input, bool root);

// torch.linalg.vector_norm's checks, in ATen's order and with its messages,
// and the result's dtype (the real dtype of dtype=, else of the input): ord
// must be real; the input floating or complex; an empty input may not be
// reduced whole, nor over an empty dim, by an order with no identity (ord
// < 0 or inf); dtype= must be floating or complex, complex exactly where
// the input is, and no narrower than the input; an out= must have the
// result's dtype. All RuntimeError but for a dim out of range (IndexError).
// Sizes are read as SymInts (the Meta kernel's guards).
at::ScalarType check_vector_norm_args(const at::Tensor& input, const c10::Scalar& ord, at::OptionalIntArrayRef dim,
                                      std::optional<at::ScalarType> dtype, const at::Tensor* out);

}  // namespace gpureduce
