// The ops on the CPU key: each is the CPU engine (reduce_cpu.h) instantiated
// for its family, behind the shared entry points.
#include <torch/library.h>

#include "../engine/reduce_entry.h"
#include "../engine/reduce_family.h"
#include "reduce_cpu.h"

namespace gpureduce {
namespace {

template <class Family>
const OpSpec& cpu_spec(const char* kernel_name) {
  static const OpSpec spec = op_spec<Family>(&cpu::run_pass_cpu<Family>, kernel_name);
  return spec;
}
const OpSpec& sum_spec() { return cpu_spec<SumFamily>("sum_cpu"); }
const OpSpec& prod_spec() { return cpu_spec<ProdFamily>("prod_cpu"); }

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CPU, m) {
  using Sum = SumLikeEntries<&sum_spec>;
  using Prod = SumLikeEntries<&prod_spec>;
  m.impl("sum", &Sum::all);
  m.impl("sum.dim_IntList", &Sum::dims);
  m.impl("sum.IntList_out", &Sum::dims_out);
  m.impl("prod", &Prod::all);
  m.impl("prod.dim_int", &Prod::one_dim);
}

}  // namespace gpureduce
