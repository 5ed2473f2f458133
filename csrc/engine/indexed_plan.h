// The engine's path for reductions that return an index (argmax, argmin,
// max.dim, min.dim): one reduced dim, whose position each output carries
// (ArgExtremumOp, indexed_ops.h). Device-independent: the checks, the
// result tensors, the out= contract and the pass's geometry; a backend
// supplies the kernels of one pass (IndexedKernels); the pass is
// indexed_pass.h's.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <tuple>
#include <vector>

#include "indexed_pass.h"

namespace gpureduce {

// Runs one pass on a backend: indices (int64) and, unless null, values (the
// input's dtype) are contiguous tensors of the outputs, which `pass`
// addresses through its OuterIndexer's out_strides.
using IndexedRunner = void (*)(const IndexedPass& pass, const at::Tensor& in, const at::Tensor* values,
                               const at::Tensor& indices, Extreme extreme);

struct IndexedKernels {
  IndexedRunner run;
  const char* device;  // "cpu" or "cuda": kernel names in dtype errors ("argmax_cpu")
  // Whether max.dim and min.dim over a dim of one element a slice (size 1,
  // or stride 0) run `pass` (its n_reduce 1: one launch writing values and
  // indices) rather than a fill of the indices and a copy of the values;
  // null: never.
  bool (*runs_single_slices)(const IndexedPass& pass, int64_t element_size) = nullptr;
};

// torch.argmax's and torch.argmin's checks, in torch's order and with its
// messages (an empty reduced dim, or an empty input with dim=None, raises
// IndexError; complex and bool inputs RuntimeError; the wide unsigned types
// and float8 NotImplementedError naming "argmax_<device>"; an out= must be
// int64). Returns the wrapped dim. Sizes are read as SymInts (the Meta
// kernel's guards).
std::optional<int64_t> check_arg_extremum_args(const at::Tensor& input, std::optional<int64_t> dim,
                                               const at::Tensor* out, Extreme extreme, const char* device);

// torch.max(input, dim)'s and torch.min(input, dim)'s checks (bool inputs
// are taken; values= must have the input's dtype). Returns the wrapped dim.
int64_t check_extremum_dim_args(const at::Tensor& input, int64_t dim, const at::Tensor* values,
                                const at::Tensor* indices, Extreme extreme, const char* device);

// The result's shape: the input's without the (wrapped) dim, or with it of
// size 1 (keepdim); with no dim, [] or every dim of size 1 (keepdim).
std::vector<c10::SymInt> indexed_result_shape(const at::Tensor& input, std::optional<int64_t> dim, bool keepdim);

// torch.argmax and torch.argmin (`extreme`): into a new tensor, or into *out.
at::Tensor arg_extremum_with(const at::Tensor& input, std::optional<int64_t> dim, bool keepdim, const at::Tensor* out,
                             Extreme extreme, const IndexedKernels& kernels);

// torch.max(input, dim) and torch.min(input, dim): (values, indices), new or
// into *values and *indices (both or neither).
std::tuple<at::Tensor, at::Tensor> extremum_dim_with(const at::Tensor& input, int64_t dim, bool keepdim,
                                                     const at::Tensor* values, const at::Tensor* indices,
                                                     Extreme extreme, const IndexedKernels& kernels);

// The overloads of argmax, argmin, max.dim and min.dim on one backend.
template <const IndexedKernels& (*Kernels)(), class Guard>
struct IndexedEntries {
  template <Extreme E>
  static at::Tensor arg(const at::Tensor& input, std::optional<int64_t> dim, bool keepdim) {
    const Guard guard(input.device());
    return arg_extremum_with(input, dim, keepdim, nullptr, E, Kernels());
  }
  template <Extreme E>
  static void arg_out(const at::Tensor& input, std::optional<int64_t> dim, bool keepdim, const at::Tensor& out) {
    const Guard guard(input.device());
    arg_extremum_with(input, dim, keepdim, &out, E, Kernels());
  }
  template <Extreme E>
  static std::tuple<at::Tensor, at::Tensor> with_indices(const at::Tensor& input, int64_t dim, bool keepdim) {
    const Guard guard(input.device());
    return extremum_dim_with(input, dim, keepdim, nullptr, nullptr, E, Kernels());
  }
  template <Extreme E>
  static void with_indices_out(const at::Tensor& input, int64_t dim, bool keepdim, const at::Tensor& values,
                               const at::Tensor& indices) {
    const Guard guard(input.device());
    extremum_dim_with(input, dim, keepdim, &values, &indices, E, Kernels());
  }
  template <class Library>
  static void register_on(Library& m) {
    m.impl("argmax", &arg<Extreme::kMax>);
    m.impl("argmax.out", &arg_out<Extreme::kMax>);
    m.impl("argmin", &arg<Extreme::kMin>);
    m.impl("argmin.out", &arg_out<Extreme::kMin>);
    m.impl("max.dim", &with_indices<Extreme::kMax>);
    m.impl("max.dim_max", &with_indices_out<Extreme::kMax>);
    m.impl("min.dim", &with_indices<Extreme::kMin>);
    m.impl("min.dim_min", &with_indices_out<Extreme::kMin>);
  }
};

}  // namespace gpureduce
