// What the structural check of a sparse matrix found (structure.hpp): plain data that the host and the check's
// kernel (compiled as C++17 by nvcc, so this header includes nothing of C++20) share.
#pragma once

#include <cstdint>

namespace accel::sparse {

enum StructureFault : std::uint32_t {
  kFirstOffsetNotZero = 1u << 0,
  kOffsetsDecrease = 1u << 1,
  kLastOffsetNotNnz = 1u << 2,
  kIndexOutOfRange = 1u << 3,  // an index (column of CSR or COO, row of CSC) outside the matrix
  kRowOutOfRange = 1u << 4,    // a COO row outside the matrix
  kRowsUnsorted = 1u << 5,     // COO rows that decrease
};

// What the check found: the faults, and the first position of each kind (the lowest offset or entry at fault); and
// the most entries of one row (CSR) or column (CSC), which the SpMV kernel plans its long rows by (spmv_kernel.hpp).
struct StructureReport {
  std::uint32_t faults = 0;
  std::uint32_t reserved = 0;
  std::uint64_t longest = 0;                       // 0 for COO and blocked ELL
  std::uint64_t first_offset = ~std::uint64_t{0};  // a row (CSR), column (CSC) or COO entry
  std::uint64_t first_index = ~std::uint64_t{0};   // an entry
};

}  // namespace accel::sparse
