#include "indexed_plan.h"

#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <c10/core/WrapDimMinimal.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "reduce_shape.h"

namespace gpureduce {
namespace {

const char* op_name(Extreme e, bool arg) {
  if (arg) return e == Extreme::kMax ? "argmax" : "argmin";
  return e == Extreme::kMax ? "max" : "min";
}

// torch's zero_numel_check_dims for one dim: IndexError where the reduced
// dim is empty (an empty input may be reduced over a dim that is not).
void check_reduced_dim_not_empty(const at::Tensor& input, int64_t wrapped, int64_t given, const char* name) {
  if (input.dim() == 0) return;
  if (input.sym_size(wrapped) == 0) {
    throw c10::IndexError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                          std::string(name) + "(): Expected reduction dim " + std::to_string(given) +
                              " to have non-zero size.");
  }
}

// The dtypes torch's kernels take: every real type but the wide unsigned
// ones and float8, and bool only for max.dim and min.dim. The kernel's
// error is raised only for an input with elements: torch runs no kernel
// for an empty one (check_dtype_supported).
void check_indexed_dtype(const at::Tensor& input, Extreme e, bool arg, const char* device) {
  const at::ScalarType t = input.scalar_type();
  const std::string name = op_name(e, arg);
  TORCH_CHECK(!at::isComplexType(t), name, "(): does not support complex input");
  if (arg) TORCH_CHECK(t != at::kBool, name, "(): does not support bool input");
  const bool supported = t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16 ||
                         t == at::kBool || t == at::kByte || t == at::kChar || t == at::kShort || t == at::kInt ||
                         t == at::kLong;
  TORCH_CHECK_NOT_IMPLEMENTED(supported || input.sym_numel() == 0, "\"", name, "_", device, "\" not implemented for '",
                              c10::toString(t), "'");
}

// An out= of these ops: its dtype, then its device, as torch's structured
// kernels check them. torch names the dtypes here by their C++ types
// ("long int").
void check_out(const at::Tensor& input, const at::Tensor& out, at::ScalarType expected) {
  TORCH_CHECK(out.scalar_type() == expected, "Expected out tensor to have dtype ",
              c10::scalarTypeToTypeMeta(expected).name(), ", but got ", out.dtype().name(), " instead");
  check_out_device(input, out);
}

struct KeptDim {
  int64_t size, in_stride, out_stride;
};

// The pass reducing `dim` of `in` into contiguous outputs of its other dims.
IndexedPass plan_pass(const at::Tensor& in, int64_t dim) {
  IndexedPass p;
  p.n_reduce = in.dim() == 0 ? 1 : in.size(dim);
  p.reduce_stride = in.dim() == 0 ? 1 : in.stride(dim);
  std::vector<KeptDim> kept;
  int64_t out_stride = 1;
  for (int64_t d = in.dim() - 1; d >= 0; --d) {
    if (d == dim) continue;
    if (in.size(d) != 1) kept.push_back({in.size(d), in.stride(d), out_stride});
    out_stride *= in.size(d);
  }
  // Innermost in memory first; repeated (stride 0) dims outermost, so that
  // an expanded kept dim does not make the reduced dim look outer to it
  // (columns read along their rows, one element a thread: [1650, 16] of
  // strides (1, 0) over dim 0 ran at 0.44x of torch.argmax, H200).
  const auto key = [](const KeptDim& d) {
    return d.in_stride == 0 ? std::numeric_limits<int64_t>::max() : d.in_stride;
  };
  std::stable_sort(kept.begin(), kept.end(), [&](const KeptDim& a, const KeptDim& b) { return key(a) < key(b); });
  std::vector<KeptDim> merged;
  for (const KeptDim& k : kept) {
    if (!merged.empty()) {
      KeptDim& m = merged.back();
      if (k.in_stride == m.size * m.in_stride && k.out_stride == m.size * m.out_stride) {
        m.size *= k.size;
        continue;
      }
    }
    merged.push_back(k);
  }
  TORCH_CHECK(merged.size() <= static_cast<size_t>(kMaxDims), "gpureduce: too many dims");
  p.outer.ndim = static_cast<int>(merged.size());
  p.n_out = 1;
  for (size_t d = 0; d < merged.size(); ++d) {
    p.outer.sizes[d] = FastDivmod(static_cast<uint64_t>(merged[d].size));
    p.outer.in_strides[d] = merged[d].in_stride;
    p.outer.out_strides[d] = merged[d].out_stride;
    p.n_out *= merged[d].size;
  }
  return p;
}

// Reduces `dim` of `in` (wrapped, non-empty) into the contiguous `indices`
// and, unless null, `values`, of the kept dims' shape (with or without the
// reduced dim of size 1: the same memory).
void run_indexed(const at::Tensor& in, int64_t dim, const at::Tensor* values, const at::Tensor& indices,
                 Extreme extreme, const IndexedKernels& kernels) {
  if (indices.numel() == 0) return;
  if (in.dim() > 0 && (in.stride(dim) == 0 || in.size(dim) == 1)) {
    // Every slice is one element, or repeats its first: index 0, its value.
    if (values != nullptr && kernels.runs_single_slices != nullptr) {
      IndexedPass p = plan_pass(in, dim);
      p.n_reduce = 1;
      if (kernels.runs_single_slices(p, static_cast<int64_t>(in.element_size()))) {
        kernels.run(p, in, values, indices, extreme);
        return;
      }
    }
    indices.zero_();
    if (values != nullptr) values->copy_(in.select(dim, 0).reshape(values->sizes()));
    return;
  }
  kernels.run(plan_pass(in, dim), in, values, indices, extreme);
}

// Whether a result may be written by the kernels directly: contiguous and
// not overlapping the input.
bool writes_directly(const at::Tensor& out, const at::Tensor& in) {
  return out.is_contiguous() && !out.is_same(in) &&
         (!out.has_storage() || !in.has_storage() || !out.storage().is_alias_of(in.storage()));
}

std::vector<int64_t> concrete(const std::vector<c10::SymInt>& shape) {
  std::vector<int64_t> sizes;
  sizes.reserve(shape.size());
  for (const c10::SymInt& s : shape) sizes.push_back(s.expect_int());
  return sizes;
}

}  // namespace

std::vector<c10::SymInt> indexed_result_shape(const at::Tensor& input, std::optional<int64_t> dim, bool keepdim) {
  if (!dim.has_value()) return std::vector<c10::SymInt>(keepdim ? input.dim() : 0, c10::SymInt(1));
  std::vector<c10::SymInt> shape = input.sym_sizes().vec();
  if (input.dim() == 0) return shape;
  if (keepdim) {
    shape[*dim] = 1;
  } else {
    shape.erase(shape.begin() + *dim);
  }
  return shape;
}

std::optional<int64_t> check_arg_extremum_args(const at::Tensor& input, std::optional<int64_t> dim,
                                               const at::Tensor* out, Extreme extreme, const char* device) {
  const char* name = op_name(extreme, true);
  // torch's order: complex and bool inputs first, then the empty dims.
  const at::ScalarType t = input.scalar_type();
  TORCH_CHECK(!at::isComplexType(t), name, "(): does not support complex input");
  TORCH_CHECK(t != at::kBool, name, "(): does not support bool input");
  std::optional<int64_t> wrapped;
  if (dim.has_value()) {
    wrapped = c10::maybe_wrap_dim(*dim, input.dim());
    check_reduced_dim_not_empty(input, *wrapped, *dim, name);
    check_dims_listable(input.dim());
  } else if (input.sym_numel() == 0) {
    throw c10::IndexError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                          std::string(name) + "(): Expected reduction dim to be specified for input.numel() == 0.");
  }
  check_indexed_dtype(input, extreme, true, device);
  if (out != nullptr) check_out(input, *out, at::kLong);
  return wrapped;
}

int64_t check_extremum_dim_args(const at::Tensor& input, int64_t dim, const at::Tensor* values,
                                const at::Tensor* indices, Extreme extreme, const char* device) {
  const char* name = op_name(extreme, false);
  const int64_t wrapped = c10::maybe_wrap_dim(dim, input.dim());
  check_reduced_dim_not_empty(input, wrapped, dim, name);
  check_dims_listable(input.dim());
  check_indexed_dtype(input, extreme, false, device);
  if (values != nullptr) check_out(input, *values, input.scalar_type());
  if (indices != nullptr) check_out(input, *indices, at::kLong);
  return wrapped;
}

at::Tensor arg_extremum_with(const at::Tensor& input, std::optional<int64_t> dim, bool keepdim, const at::Tensor* out,
                             Extreme extreme, const IndexedKernels& kernels) {
  const std::optional<int64_t> wrapped = check_arg_extremum_args(input, dim, out, extreme, kernels.device);
  // dim=None flattens (torch reshapes, copying a non-contiguous input);
  // keepdim then keeps every dim, each of size 1.
  const at::Tensor in = wrapped.has_value() ? input : input.reshape({-1});
  const int64_t d = wrapped.value_or(0);
  const std::vector<int64_t> shape = concrete(indexed_result_shape(input, wrapped, keepdim));
  if (out != nullptr) {
    resize_out(*out, shape);
    if (writes_directly(*out, in)) {
      run_indexed(in, d, nullptr, *out, extreme, kernels);
    } else {
      at::Tensor scratch = at::empty(shape, in.options().dtype(at::kLong));
      run_indexed(in, d, nullptr, scratch, extreme, kernels);
      out->copy_(scratch);
    }
    return *out;
  }
  at::Tensor result = at::empty(shape, in.options().dtype(at::kLong));
  run_indexed(in, d, nullptr, result, extreme, kernels);
  return result;
}

std::tuple<at::Tensor, at::Tensor> extremum_dim_with(const at::Tensor& input, int64_t dim, bool keepdim,
                                                     const at::Tensor* values, const at::Tensor* indices,
                                                     Extreme extreme, const IndexedKernels& kernels) {
  const int64_t wrapped = check_extremum_dim_args(input, dim, values, indices, extreme, kernels.device);
  const std::vector<int64_t> shape = concrete(indexed_result_shape(input, wrapped, keepdim));
  if (values == nullptr) {
    at::Tensor v = at::empty(shape, input.options());
    at::Tensor i = at::empty(shape, input.options().dtype(at::kLong));
    run_indexed(input, wrapped, &v, i, extreme, kernels);
    return {v, i};
  }
  resize_out(*values, shape);
  resize_out(*indices, shape);
  if (writes_directly(*values, input) && writes_directly(*indices, input)) {
    run_indexed(input, wrapped, values, *indices, extreme, kernels);
  } else {
    at::Tensor v = at::empty(shape, input.options());
    at::Tensor i = at::empty(shape, input.options().dtype(at::kLong));
    run_indexed(input, wrapped, &v, i, extreme, kernels);
    values->copy_(v);
    indices->copy_(i);
  }
  return {*values, *indices};
}

}  // namespace gpureduce
