// The structural check of a sparse matrix's index arrays — offsets that start at 0, never decrease and end at nnz,
// indices inside the matrix (or -1, a blocked-ELL's padding block), COO rows sorted — the same on every device: the
// CPU device runs it on the host arrays (check_structure), CUDA as a kernel (structure_kernel.hpp) that fills the same
// report (structure_report.hpp).
#pragma once

#include <cstdint>
#include <string_view>

#include "accel/core/status.hpp"
#include "accel/libs/sparse/sparse.hpp"
#include "libs/sparse/structure_report.hpp"

namespace accel::sparse {

// The sizes the check needs from a matrix whose shape was validated.
struct StructureShape {
  Format format = Format::csr;
  std::int64_t outer = 0;  // compressed dimension (rows of CSR, cols of CSC); rows of COO; block rows of blocked ELL
  std::int64_t inner = 0;  // the range of the indices (column blocks of blocked ELL)
  std::int64_t nnz = 0;    // the indices (blocked ELL: block rows x blocks per block row)
};

[[nodiscard]] StructureShape structure_shape(const Matrix& m) noexcept;

// The check on host arrays of `index` type (i32 or i64).
[[nodiscard]] StructureReport check_structure(const StructureShape& shape, DType index, const void* offsets,
                                              const void* indices) noexcept;

// OK for a report without faults, else failed_precondition naming the first fault:
// "sparse::SpMV: a is malformed: row offsets decrease at row 7".
[[nodiscard]] Status structure_status(std::string_view request, std::string_view name, const StructureShape& shape,
                                      const StructureReport& report);

}  // namespace accel::sparse
