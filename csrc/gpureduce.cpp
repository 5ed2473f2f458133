// The operator schemas (sum, prod, nansum, mean, amax, amin, max, min,
// argmax, argmin, logsumexp, var,
// std, var_mean, std_mean, linalg_vector_norm, conv1d, and the classic
// kernels).
// Kernels register themselves per dispatch key from cpu/, cuda/, meta/ and
// autograd/, so the shared library alone is a complete operator for
// LibTorch programs.
#include <ATen/core/enum_tag.h>
#include <torch/library.h>

#include "classic.h"
#include "conv/conv1d.h"

TORCH_LIBRARY(gpureduce, m) {
  // The overloads, argument names and defaults of aten::sum, so that the op
  // is a drop-in replacement. The out= overload returns () rather than its
  // argument: a custom mutating op that returns an alias breaks torch.compile.
  m.def("sum(Tensor input, *, ScalarType? dtype=None) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("sum.dim_IntList(Tensor input, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.def("sum.IntList_out(Tensor input, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
        "Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
  // prod with aten's overloads: the second op on the engine (its autograd
  // in autograd/sum_autograd.cpp).
  m.def("prod(Tensor input, *, ScalarType? dtype=None) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("prod.dim_int(Tensor input, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.def("prod.int_out(Tensor input, int dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
  // nansum with aten's overloads.
  m.def("nansum(Tensor input, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.def("nansum.out(Tensor input, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, "
        "Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
  // mean with aten's overloads: sum's kernels, each output divided by its
  // count.
  m.def("mean(Tensor input, *, ScalarType? dtype=None) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("mean.dim(Tensor input, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.def("mean.out(Tensor input, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
  // amax and amin with aten's overloads: the result in the input's dtype.
  m.def("amax(Tensor input, int[1] dim=[], bool keepdim=False) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("amax.out(Tensor input, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
  m.def("amin(Tensor input, int[1] dim=[], bool keepdim=False) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("amin.out(Tensor input, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
  // max and min of every element (aten's max, min: amax's and amin's
  // kernels), and along one dim with the index of each (max.dim, min.dim
  // and their out= forms, argmax, argmin: the engine's indexed pass,
  // engine/indexed_plan.h). The out= forms take aten's argument names.
  m.def("max(Tensor input) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("min(Tensor input) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("max.unary_out(Tensor input, *, Tensor(a!) out) -> ()", {at::Tag::pt2_compliant_tag});
  m.def("min.unary_out(Tensor input, *, Tensor(a!) out) -> ()", {at::Tag::pt2_compliant_tag});
  m.def("max.dim(Tensor input, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
        {at::Tag::pt2_compliant_tag});
  m.def("max.dim_max(Tensor input, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> ()",
        {at::Tag::pt2_compliant_tag});
  m.def("min.dim(Tensor input, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
        {at::Tag::pt2_compliant_tag});
  m.def("min.dim_min(Tensor input, int dim, bool keepdim=False, *, Tensor(a!) min, Tensor(b!) min_indices) -> ()",
        {at::Tag::pt2_compliant_tag});
  m.def("argmax(Tensor input, int? dim=None, bool keepdim=False) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("argmax.out(Tensor input, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
  m.def("argmin(Tensor input, int? dim=None, bool keepdim=False) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("argmin.out(Tensor input, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
  // logsumexp with aten's overloads: one pass over memory (LogSumExpOp).
  m.def("logsumexp(Tensor input, int[1] dim, bool keepdim=False) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("logsumexp.out(Tensor input, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
  // var and std with aten's .correction overloads (torch.var's and
  // torch.std's unbiased= forms are the Python wrapper's, as a correction),
  // and var_mean and std_mean: the spread in one pass over memory
  // (VarianceOp).
  m.def("var.correction(Tensor input, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.def("var.correction_out(Tensor input, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, "
        "Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
  m.def("std.correction(Tensor input, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.def("std.correction_out(Tensor input, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, "
        "Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
  m.def("var_mean.correction(Tensor input, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) "
        "-> (Tensor, Tensor)",
        {at::Tag::pt2_compliant_tag});
  m.def("std_mean.correction(Tensor input, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) "
        "-> (Tensor, Tensor)",
        {at::Tag::pt2_compliant_tag});
  // linalg_vector_norm with aten's overloads: orders 1, 2 and inf in one
  // pass over memory (NormOp), the others staged through an elementwise op.
  m.def("linalg_vector_norm(Tensor input, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.def("linalg_vector_norm.out(Tensor input, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
        "ScalarType? dtype=None, Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
  // conv1d: a 1-D cross-correlation under a short mask (conv/conv1d.h), by
  // padding name; _conv1d_padded takes the left padding and output length
  // themselves (the backward's correlation needs others than the names').
  m.def("conv1d(Tensor input, Tensor weight, Tensor? bias=None, str padding=\"same\") -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.def("_conv1d_padded(Tensor input, Tensor weight, Tensor? bias, SymInt left, SymInt out_len) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  // conv1d's mask gradient (conv/conv1d.h): weight gives its shape and dtype.
  m.def("_conv1d_weight_grad(Tensor grad, Tensor input, Tensor weight, SymInt left) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  // The correctly rounded sum (csrc/fsum/): sum's overloads, floating types.
  m.def("fsum(Tensor input, *, ScalarType? dtype=None) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("fsum.dim_IntList(Tensor input, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  // The book's four conv1d kernels (PMPP ch. 8), by name, forward only.
  m.def("classic_conv1d(Tensor input, Tensor weight, Tensor? bias, str padding, str kernel) -> Tensor");
  m.def("conv1d_kernels() -> str[]", &gpureduce::conv::book_kernel_names);
  // The classic teaching kernels (reduce0 ... reduce7, tensorcore, cpu): a 1-D
  // sum of all elements by the named kernel.
  m.def("classic_sum(Tensor input, str kernel) -> Tensor");
  m.def("classic_kernels() -> str[]", &gpureduce::classic_kernel_names);
}
