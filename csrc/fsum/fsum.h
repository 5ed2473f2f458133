// gpureduce::fsum's host side shared by the CPU and CUDA kernels: the
// result's dtype and shape, and the input laid out as rows (one per output
// element) of the reduced elements, contiguous.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <vector>

namespace gpureduce {
namespace fsum {

// The format a result is rounded to: significant bits and the exponent of
// its smallest subnormal.
struct Format {
  int precision, min_exp;
};

struct FsumRows {
  at::Tensor rows;            // [rows, length], contiguous
  int64_t count = 0, length = 0;
  std::vector<int64_t> out_sizes;
  at::ScalarType out_type;
  Format format;
};

// Checks the arguments (torch's errors for dims; floating types only) and
// moves the reduced dims last.
FsumRows fsum_rows(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype);

}  // namespace fsum
}  // namespace gpureduce
