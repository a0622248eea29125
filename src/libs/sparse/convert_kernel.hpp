// The CSR <-> COO row conversions as kernels of our own (cuSPARSE's Xcsr2coo and Xcoo2csr take i32 indices only):
// each output element is found by a binary search over the input's sorted array, so that every thread writes one
// element, a huge row costs no more than many small ones, and the result is the same on every run (no atomics).
// The input was checked first (structure.hpp): offsets that never decrease, COO rows sorted.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace accel::sparse {

// The row of each of the nnz entries of a CSR matrix of `rows` rows, from its rows + 1 offsets. `wide`: i64
// indices, else i32 (offsets and the rows written alike).
[[nodiscard]] cudaError_t launch_csr_to_coo(bool wide, std::int64_t rows, std::int64_t nnz, const void* offsets,
                                            void* coo_rows, cudaStream_t stream);

// The rows + 1 CSR offsets of a COO matrix from its nnz sorted rows: offsets[r] = the first entry of row r or after.
[[nodiscard]] cudaError_t launch_coo_to_csr(bool wide, std::int64_t rows, std::int64_t nnz, const void* coo_rows,
                                            void* offsets, cudaStream_t stream);

}  // namespace accel::sparse
