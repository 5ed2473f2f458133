// An op's way into the CUDA engine: run_pass_cuda<Family> hands each pass to
// the engine's instance (instance.h) for the input's dtype group, of the
// family whose kernels run it (with_pass_kernels in reduce_family.h), with
// the pass's buffers; the tensor work around it (a staged output's scratch
// and copy) is done here, on the host side of the op. The instances are
// compiled in files of their own (instances/), so that a parallel build
// compiles an op's dtype groups side by side and an op's .cu file holds no
// kernels.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>

#include <vector>

#include "../engine/reduce_dtypes.h"
#include "../engine/reduce_family.h"
#include "../engine/reduce_plan.h"
#include "instance.h"
#include "policy.h"

namespace gpureduce {
namespace cuda {

// Whether a columns pass writes its output through a scratch buffer in its
// own order (HostPolicy::kStageTransposedMaxRows): its columns are many but
// not the output's unit-stride dim, another kept dim is, and its rows are few.
inline bool stages_transposed_output(const ReducePass& p, int64_t out_element_size) {
  if (p.kind != ReducePass::Kind::kColumns || p.out_col_stride == 1 ||
      p.n_cols < HostPolicy::kStageTransposedMinCols)
    return false;
  bool unit_elsewhere = false;
  for (int d = 0; d < p.outer.ndim; ++d)
    unit_elsewhere |= p.outer.out_strides[d] == 1 && p.outer.sizes[d].divisor > 1;
  return unit_elsewhere && p.n_reduce * p.n_reduce_outer <= HostPolicy::kStageTransposedMaxRows &&
         p.n_out * p.n_cols * out_element_size >= HostPolicy::kStageTransposedMinBytes;
}

// Runs run(pass, target) for pass p into out: as it is, or, where its
// output is better written in the pass's own order
// (stages_transposed_output), into a scratch laid out as the pass walks it
// (columns innermost, then the outer dims innermost first), then one copy.
template <class Run>
void with_staged_output(const ReducePass& p, const at::Tensor& out, Run&& run) {
  if (stages_transposed_output(p, out.element_size())) {
    ReducePass q = p;
    q.out_col_stride = 1;
    int64_t next = p.n_cols;
    for (int d = 0; d < q.outer.ndim; ++d) {
      q.outer.out_strides[d] = next;
      next *= static_cast<int64_t>(q.outer.sizes[d].divisor);
    }
    at::Tensor scratch = at::empty({p.n_out * p.n_cols}, out.options());
    run(q, scratch);
    std::vector<int64_t> sizes, out_strides, scratch_strides;
    for (int d = p.outer.ndim - 1; d >= 0; --d) {
      sizes.push_back(static_cast<int64_t>(p.outer.sizes[d].divisor));
      out_strides.push_back(p.outer.out_strides[d]);
      scratch_strides.push_back(q.outer.out_strides[d]);
    }
    sizes.push_back(p.n_cols);
    out_strides.push_back(p.out_col_stride);
    scratch_strides.push_back(1);
    out.as_strided(sizes, out_strides, out.storage_offset()).copy_(scratch.as_strided(sizes, scratch_strides));
    return;
  }
  run(p, out);
}

// The buffers of a pass from `in` into `out`.
inline PassBuffers pass_buffers(const at::Tensor& in, const at::Tensor& out) {
  PassBuffers b;
  b.in = in.const_data_ptr();
  b.out = out.data_ptr();
  b.in_dtype = in.scalar_type();
  b.out_dtype = out.scalar_type();
  b.in_bytes_to_end = static_cast<int64_t>(in.storage().nbytes()) - in.storage_offset() * int64_t(in.element_size());
  return b;
}

// mean's OpSpec (sum_cuda.cpp), which var_mean and std_mean run too.
const OpSpec& mean_spec();
// sum's (sum_cuda.cpp), which nansum runs for integer and bool inputs.
const OpSpec& sum_spec();

template <class Family>
void run_pass_cuda(const ReducePass& p, const at::Tensor& in, const at::Tensor& out) {
  with_pass_kernels<Family, Backend::kCuda>(p, in.scalar_type(), out.scalar_type(), [&](auto kernels, auto group) {
    using K = typename decltype(kernels)::type;
    with_staged_output(p, out, [&](const ReducePass& q, const at::Tensor& target) {
      run_pass_cuda_group<K, decltype(group)::value>(q, pass_buffers(in, target));
    });
  });
}

}  // namespace cuda
}  // namespace gpureduce
