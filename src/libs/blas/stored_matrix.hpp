// A matrix as it lies in a buffer — rows x cols in an order, one row (or column) every `ld` elements — checked
// once for every request that names one: GEMMs through cuBLASLt and OpenBLAS, and the CUTLASS requests.
#pragma once

#include <cstdint>
#include <string_view>

#include "accel/core/result.hpp"
#include "accel/libs/blas/gemm.hpp"

namespace accel::blas {

struct StoredLayout {
  std::int64_t ld = 0;       // resolved: a packed (0) leading dimension becomes the smallest valid one
  std::uint64_t extent = 0;  // elements the matrix touches: (outer - 1) * ld + inner; 0 for an empty matrix
};

// invalid_argument naming the matrix for a negative or too small leading dimension, or an extent that
// overflows 64-bit element counts.
[[nodiscard]] Result<StoredLayout> check_stored_matrix(std::int64_t rows, std::int64_t cols, MatrixOrder order,
                                                       std::int64_t ld, std::string_view name);

}  // namespace accel::blas
