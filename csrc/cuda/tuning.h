// The host policy's constants, each overridable for one process through the
// environment variable GPUREDUCE_TUNE_<NAME>, read once. This exists so that
// benchmarks/sweep.py can compare settings on the GPU without a rebuild per
// setting; it is not a user API, and the defaults are the measured choices.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

namespace gpureduce {
namespace cuda {

inline int64_t tuned(const char* name, int64_t fallback) {
  const std::string var = std::string("GPUREDUCE_TUNE_") + name;
  const char* text = std::getenv(var.c_str());
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  return (end != nullptr && *end == '\0' && v > 0) ? static_cast<int64_t>(v) : fallback;
}

}  // namespace cuda
}  // namespace gpureduce
