// The structural check of a sparse matrix's index arrays — offsets that start at 0, never decrease and end at nnz,
// indices inside the matrix, COO rows sorted — the same on every device: the CPU device runs it on the host arrays
// (check_structure), CUDA as a kernel (structure_kernel.cuh) that fills the same report. Plain data, so that the
// kernel and the host share it.
#pragma once

#include <cstdint>
#include <string_view>

#include "accel/core/status.hpp"
#include "accel/libs/sparse/sparse.hpp"

namespace accel::sparse {

enum StructureFault : std::uint32_t {
  kFirstOffsetNotZero = 1u << 0,
  kOffsetsDecrease = 1u << 1,
  kLastOffsetNotNnz = 1u << 2,
  kIndexOutOfRange = 1u << 3,  // an index (column of CSR or COO, row of CSC) outside the matrix
  kRowOutOfRange = 1u << 4,    // a COO row outside the matrix
  kRowsUnsorted = 1u << 5,     // COO rows that decrease
};

// What the check found: the faults, and the first position of each kind (the lowest offset or entry at fault).
struct StructureReport {
  std::uint32_t faults = 0;
  std::uint32_t reserved = 0;
  std::uint64_t first_offset = ~std::uint64_t{0};  // a row (CSR), column (CSC) or COO entry
  std::uint64_t first_index = ~std::uint64_t{0};   // an entry
};

// The sizes the check needs from a matrix whose shape was validated.
struct StructureShape {
  Format format = Format::csr;
  std::int64_t outer = 0;  // compressed dimension (rows of CSR, cols of CSC); rows of COO
  std::int64_t inner = 0;  // the range of the indices
  std::int64_t nnz = 0;
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
