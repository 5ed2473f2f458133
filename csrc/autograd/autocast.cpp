// Autocast (torch.autocast, automatic mixed precision): the ops whose aten
// namesakes autocast casts, cast the same way, so that a drop-in call gives
// torch's dtype inside an autocast region. torch registers (ATen's
// autocast_mode.h lists, as of 2.11-2.13):
// - on CUDA: sum, sum.dim_IntList, prod, prod.dim_int and linalg_vector_norm
//   run in float32 where no dtype= is given ("fp32_set_opt_dtype": a
//   float16, bfloat16 or float32 input gets dtype=float32); logsumexp runs
//   on its input cast to float32 ("fp32");
// - on the CPU: prod and prod.dim_int as on CUDA;
// - on both: conv1d on its floating arguments cast to the autocast dtype
//   ("lower_precision_fp"). Here that is _conv1d_padded, which conv1d and
//   its batching rule call.
// Every other op of the family (mean, nansum, amax, var, ...) is not cast by
// torch and has no kernel here: autocast falls through to it. The wrappers
// are ATen's own (at::autocast::WrapFunction): they exclude the autocast key
// while the op runs and call it again through the dispatcher.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace gpureduce {
namespace {

// The op kName.kOverload called through the dispatcher (from the top: the
// wrapper has excluded the autocast key).
template <const char* kName, const char* kOverload, class Sig>
struct Redispatch;
template <const char* kName, const char* kOverload, class Ret, class... Args>
struct Redispatch<kName, kOverload, Ret(Args...)> {
  static Ret call(Args... args) {
    static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow(kName, kOverload).typed<Ret(Args...)>();
    return op.call(args...);
  }
};

// kName.kOverload's autocast kernel for device D under policy P.
template <at::autocast::CastPolicy P, c10::DeviceType D, const char* kName, const char* kOverload, class Sig>
void cast_as_torch(torch::Library& m) {
  using Wrapped = at::autocast::WrapFunction<P, D, Sig, Sig, &Redispatch<kName, kOverload, Sig>::call>;
  const std::string name = std::string(kName) + (kOverload[0] == '\0' ? "" : std::string(".") + kOverload);
  m.impl(name.c_str(), &Wrapped::type::call);
}

constexpr char kSum[] = "gpureduce::sum";
constexpr char kProd[] = "gpureduce::prod";
constexpr char kLogsumexp[] = "gpureduce::logsumexp";
constexpr char kVectorNorm[] = "gpureduce::linalg_vector_norm";
constexpr char kConv1dPadded[] = "gpureduce::_conv1d_padded";
constexpr char kAll[] = "";
constexpr char kDimIntList[] = "dim_IntList";
constexpr char kDimInt[] = "dim_int";

using AllSig = at::Tensor(const at::Tensor&, std::optional<at::ScalarType>);
using DimsSig = at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>);
using DimIntSig = at::Tensor(const at::Tensor&, int64_t, bool, std::optional<at::ScalarType>);
using LogsumexpSig = at::Tensor(const at::Tensor&, at::IntArrayRef, bool);
using VectorNormSig =
    at::Tensor(const at::Tensor&, const at::Scalar&, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>);
using Conv1dPaddedSig =
    at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, c10::SymInt, c10::SymInt);

using at::autocast::CastPolicy;
constexpr auto kCuda = c10::DeviceType::CUDA;
constexpr auto kCpu = c10::DeviceType::CPU;

}  // namespace
}  // namespace gpureduce

TORCH_LIBRARY_IMPL(gpureduce, AutocastCUDA, m) {
  using namespace gpureduce;
  cast_as_torch<CastPolicy::fp32_set_opt_dtype, kCuda, kSum, kAll, AllSig>(m);
  cast_as_torch<CastPolicy::fp32_set_opt_dtype, kCuda, kSum, kDimIntList, DimsSig>(m);
  cast_as_torch<CastPolicy::fp32_set_opt_dtype, kCuda, kProd, kAll, AllSig>(m);
  cast_as_torch<CastPolicy::fp32_set_opt_dtype, kCuda, kProd, kDimInt, DimIntSig>(m);
  cast_as_torch<CastPolicy::fp32_set_opt_dtype, kCuda, kVectorNorm, kAll, VectorNormSig>(m);
  cast_as_torch<CastPolicy::fp32, kCuda, kLogsumexp, kAll, LogsumexpSig>(m);
  cast_as_torch<CastPolicy::lower_precision_fp, kCuda, kConv1dPadded, kAll, Conv1dPaddedSig>(m);
}

TORCH_LIBRARY_IMPL(gpureduce, AutocastCPU, m) {
  using namespace gpureduce;
  cast_as_torch<CastPolicy::fp32_set_opt_dtype, kCpu, kProd, kAll, AllSig>(m);
  cast_as_torch<CastPolicy::fp32_set_opt_dtype, kCpu, kProd, kDimInt, DimIntSig>(m);
  cast_as_torch<CastPolicy::lower_precision_fp, kCpu, kConv1dPadded, kAll, Conv1dPaddedSig>(m);
}
