// Forward-mode AD (torch.autograd.forward_ad, torch.func.jvp and jacfwd)
// for the ops' Autograd kernels: where an input carries a tangent, the
// result's tangent from the op's formula, set at level 0 as ATen's
// generated kernels set it (torch.func runs each of its levels' forward AD
// there). The formulas run outside the kernels' below-autograd guards, on
// the primals and tangents, with differentiable ops, so that higher orders
// work. Without them a result carried no tangent, and forward AD read the
// op as a constant.
#pragma once

#include <ATen/core/Tensor.h>

namespace gpureduce {

inline bool has_tangent(const at::Tensor& t) { return t.defined() && t._fw_grad(/*level=*/0).defined(); }

// The value of `t` without its tangent (a view, through which backward
// still reaches t), or t itself where it has none.
inline at::Tensor primal(const at::Tensor& t) { return has_tangent(t) ? t._fw_primal(/*level=*/0) : t; }

inline at::Tensor tangent_of(const at::Tensor& t) { return t._fw_grad(/*level=*/0); }

// Sets result's tangent to `tangent`, cast to the result's dtype.
inline void set_tangent(const at::Tensor& result, at::Tensor tangent) {
  if (tangent.scalar_type() != result.scalar_type()) tangent = tangent.to(result.scalar_type());
  result._set_fw_grad(tangent, /*level=*/0, /*is_inplace_op=*/false);
}

// Where `input` carries a tangent, result's from formula(primal, tangent).
template <class Formula>
void set_tangent(const at::Tensor& input, const at::Tensor& result, Formula formula) {
  if (has_tangent(input)) set_tangent(result, formula(primal(input), tangent_of(input)));
}

}  // namespace gpureduce
