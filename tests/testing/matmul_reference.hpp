// A matmul with its epilogue written out in double precision, for the CPU kernel tests to check against.
#pragma once

#include <cstdint>
#include <vector>

#include "accel/core/epilogue.hpp"

namespace accel::graph::testing {

// y = act(x W + bias) in double, W stored [k, n] or, transposed, [n, k].
inline std::vector<double> matmul_reference(const std::vector<float>& x, const std::vector<float>& w, bool transpose_w,
                                            const float* bias, std::int64_t rows, std::int64_t k, std::int64_t n,
                                            Activation act) {
  std::vector<double> y(rows * n);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = bias ? bias[j] : 0.0;
      for (std::int64_t c = 0; c < k; ++c) sum += double{x[r * k + c]} * (transpose_w ? w[j * k + c] : w[c * n + j]);
      y[r * n + j] = activate(act, sum);
    }
  return y;
}

}  // namespace accel::graph::testing
