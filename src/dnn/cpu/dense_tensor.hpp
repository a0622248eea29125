// The one tensor type of the CPU reference kernels: dense, row-major over the logical dims, in double.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "accel/core/result.hpp"

namespace accel::dnn::cpu {

using DenseDims = std::span<const std::int64_t>;

struct DenseTensor {
  std::vector<std::int64_t> dims;
  std::vector<double> values;
};

[[nodiscard]] std::int64_t volume(DenseDims dims) noexcept;
[[nodiscard]] std::vector<std::int64_t> row_major_strides(DenseDims dims);
// Row-major strides of `dims` read as `out_dims`: 0 where `dims` has extent 1 and `out_dims` does not.
// invalid_argument if the ranks differ or an extent is neither 1 nor the output's.
[[nodiscard]] Result<std::vector<std::int64_t>> broadcast_strides(DenseDims dims, DenseDims out_dims);

// Calls visit(offsets) for every index of `dims` in row-major order; offsets[i] is the index's offset under
// strides[i]. Incremental, so a walk costs O(1) per element rather than O(rank).
template <std::size_t N, class Visit>
void for_each_index(DenseDims dims, const std::array<std::span<const std::int64_t>, N>& strides, Visit&& visit) {
  for (std::int64_t dim : dims)
    if (dim == 0) return;
  std::vector<std::int64_t> index(dims.size(), 0);
  std::array<std::int64_t, N> offsets{};
  for (;;) {
    visit(offsets);
    std::size_t d = dims.size();
    for (;;) {
      if (d == 0) return;
      --d;
      for (std::size_t s = 0; s < N; ++s) offsets[s] += strides[s][d];
      if (++index[d] < dims[d]) break;
      for (std::size_t s = 0; s < N; ++s) offsets[s] -= strides[s][d] * dims[d];
      index[d] = 0;
    }
  }
}

}  // namespace accel::dnn::cpu
