// The classic parallel-reduction progression (Harris, "Optimizing Parallel
// Reduction in CUDA"), kept apart from the production engine. Each is a full
// 1-D sum of every element of the input.
#pragma once

#include <string>
#include <vector>

namespace gpureduce {

inline std::vector<std::string> classic_kernel_names() {
  return {"reduce0", "reduce1", "reduce2", "reduce3", "reduce4", "reduce5",
          "reduce6", "reduce7", "tensorcore", "cpu"};
}

inline bool is_classic_kernel(const std::string& name) {
  for (const auto& k : classic_kernel_names())
    if (k == name) return true;
  return false;
}

}  // namespace gpureduce
