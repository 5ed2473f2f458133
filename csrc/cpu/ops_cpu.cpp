// The ops on the CPU key: each is the CPU engine (reduce_cpu.h) instantiated
// for its family and each dtype group (instances/<op>_<group>_avx2.cpp on
// x86-64, <op>_<group>.cpp elsewhere: cpu/isa.h), behind the shared entry
// points; or, on an x86-64 CPU without AVX2, ATen's op of the same name.
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "../engine/reduce_entry.h"
#include "../engine/reduce_family.h"
#include "isa.h"

namespace gpureduce {

bool cpu_runs_avx2() {
#if defined(GPUREDUCE_CPU_AVX2_ONLY)
  static const bool runs = [] {
    const char* baseline = std::getenv("GPUREDUCE_CPU_BASELINE");
    if (baseline != nullptr && std::strcmp(baseline, "1") == 0) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  }();
  return runs;
#else
  return false;
#endif
}

namespace {

// The ops are registered on this only where cpu_runs_engine().
template <class Family, InputGroup G>
void run_group(const ReducePass& pass, const at::Tensor& in, const at::Tensor& out) {
  CpuPassBuffers b;
  b.in = in.const_data_ptr();
  b.out = out.data_ptr();
  b.in_dtype = in.scalar_type();
  b.out_dtype = out.scalar_type();
#if defined(GPUREDUCE_CPU_AVX2_ONLY)
  cpu_avx2::run_pass_cpu<Family, G>(pass, b);
#else
  cpu::run_pass_cpu<Family, G>(pass, b);
#endif
}

template <class Family>
void run_pass_on_cpu(const ReducePass& pass, const at::Tensor& in, const at::Tensor& out) {
  with_pass_kernels<Family, Backend::kCpu>(pass, in.scalar_type(), out.scalar_type(), [&](auto kernels, auto group) {
    run_group<typename decltype(kernels)::type, decltype(group)::value>(pass, in, out);
  });
}

template <class Family>
const OpSpec& cpu_spec(const char* kernel_name) {
  static const OpSpec spec = op_spec<Family, Backend::kCpu>(&run_pass_on_cpu<Family>, kernel_name);
  return spec;
}
const OpSpec& sum_spec() { return cpu_spec<SumFamily>("sum_cpu"); }
// torch's CPU prod kernel is named "prod_out_cpu" in its dtype errors.
const OpSpec& prod_spec() { return cpu_spec<ProdFamily>("prod_out_cpu"); }
const OpSpec& nansum_spec() { return cpu_spec<NanSumFamily>("nansum_cpu"); }
// torch's CPU mean is its sum then a division: its errors name "sum_cpu".
const OpSpec& mean_spec() { return cpu_spec<MeanFamily>("sum_cpu"); }
const OpSpec& amax_spec() { return cpu_spec<AmaxFamily>("max_values_cpu"); }
const OpSpec& amin_spec() { return cpu_spec<AminFamily>("min_values_cpu"); }
constexpr char kMaxAllCpu[] = "max_all";
constexpr char kMinAllCpu[] = "min_all";
const OpSpec& logsumexp_spec() { return cpu_spec<LogSumExpFamily>("logsumexp_cpu"); }
// var's and std's kernels are one family; std's outputs are rooted. torch's
// errors name "std_cpu" for both.
const OpSpec& var_spec() { return cpu_spec<VarianceFamily>("std_cpu"); }
const OpSpec& std_spec() {
  static const OpSpec spec =
      op_spec<VarianceFamily, Backend::kCpu>(&run_pass_on_cpu<VarianceFamily>, "std_cpu", /*roots=*/true);
  return spec;
}

// vector_norm's kernels (orders 1, 2 rooted, and inf), and sum's and
// amin's for the orders it stages. torch's errors name "norm_cpu".
NormSpecs norm_specs() {
  static const OpSpec two =
      op_spec<NormTwoFamily, Backend::kCpu>(&run_pass_on_cpu<NormTwoFamily>, "norm_cpu", /*roots=*/true);
  return {cpu_spec<NormOneFamily>("norm_cpu"), two, cpu_spec<NormInfFamily>("norm_cpu"), sum_spec(), amin_spec()};
}

// ATen's op of the same name and overload as `op` (our schemas are
// torch's), called on the same stack: the CPU kernel of every op below on
// an x86-64 CPU that runs no engine (cpu/isa.h). torch's out= overloads
// return `out`, ours nothing.
void call_aten_op(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& ours = op.schema();
  const std::string& name = ours.name();
  const std::string aten_name = "aten" + name.substr(name.find("::"));
  const c10::OperatorHandle aten =
      c10::Dispatcher::singleton().findSchemaOrThrow(aten_name.c_str(), ours.overload_name().c_str());
  aten.callBoxed(stack);
  torch::jit::drop(*stack, aten.schema().returns().size() - ours.returns().size());
}

// Registers each overload's engine kernel, or where this CPU runs no engine,
// call_aten_op.
struct CpuKernels {
  torch::Library& m;
  bool engine;
  template <class Kernel>
  void impl(const char* name, Kernel&& kernel) {
    if (engine) {
      m.impl(name, std::forward<Kernel>(kernel));
    } else {
      m.impl(name, torch::CppFunction::makeFromBoxedFunction<&call_aten_op>());
    }
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(gpureduce, CPU, library) {
  CpuKernels m{library, cpu_runs_engine()};
  using Sum = SumLikeEntries<&sum_spec, NoGuard, /*NoneListsDims=*/true>;
  using Prod = SumLikeEntries<&prod_spec>;
  m.impl("sum", &Sum::all);
  m.impl("sum.dim_IntList", &Sum::dims);
  m.impl("sum.IntList_out", &Sum::dims_out);
  m.impl("prod", &Prod::all);
  m.impl("prod.dim_int", &Prod::one_dim);
  m.impl("prod.int_out", &Prod::one_dim_out);
  using NanSum = NanSumEntries<&nansum_spec, &sum_spec>;
  m.impl("nansum", &NanSum::dims);
  m.impl("nansum.out", &NanSum::dims_out);
  using Mean = MeanEntries<&mean_spec>;
  m.impl("mean", &Mean::all);
  m.impl("mean.dim", &Mean::dims);
  m.impl("mean.out", &Mean::dims_out);
  using Amax = ExtremumEntries<&amax_spec, kAmaxName>;
  using Amin = ExtremumEntries<&amin_spec, kAminName>;
  m.impl("amax", &Amax::dims);
  m.impl("amax.out", &Amax::dims_out);
  m.impl("amin", &Amin::dims);
  m.impl("amin.out", &Amin::dims_out);
  using MaxAll = ExtremumAllEntries<&amax_spec, kMaxAllName, kMaxAllCpu>;
  using MinAll = ExtremumAllEntries<&amin_spec, kMinAllName, kMinAllCpu>;
  m.impl("max", &MaxAll::all);
  m.impl("min", &MinAll::all);
  m.impl("max.unary_out", &MaxAll::all_out);
  m.impl("min.unary_out", &MinAll::all_out);
  using LogSumExp = LogSumExpEntries<&logsumexp_spec, kCpuName>;
  m.impl("logsumexp", &LogSumExp::dims);
  m.impl("logsumexp.out", &LogSumExp::dims_out);
  VarianceEntries<&var_spec, &std_spec, &mean_spec>::register_on(m);
  NormEntries<&norm_specs>::register_on(m);
}

}  // namespace gpureduce
