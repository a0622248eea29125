/// @file
/// A dense matrix's nonzeros as a CSR matrix (cusparseDenseToSparse on CUDA, a scan on the CPU device), in two
/// requests like SpGemm (spgemm.hpp), since the caller allocates the CSR's indices and values once nnz is known:
///   DenseToCsrCount  writes the CSR's row offsets (rows + 1, the last one nnz)
///   DenseToCsr       fills indices and values (nnz each); it counts again, so that what it converts is what it
///                    counted: an out.nnz that is not the dense matrix's number of nonzeros is failed_precondition
/// An entry is a nonzero when it compares unequal to zero (NaN does, -0 does not). Within a row, the CPU device sorts
/// the columns; the CUDA device leaves them in cuSPARSE's order, which is not sorted (sort them before a request
/// that needs sorted columns, such as SpSV).
#pragma once

#include "accel/libs/sparse/sparse.hpp"

namespace accel::sparse {

/// Counts each row's nonzeros of a dense matrix into the CSR row offsets of its sparse form (the first of two steps).
struct DenseToCsrCount {
  static constexpr const char* kName = "sparse::DenseToCsrCount";
  using Response = Done;

  DenseMatrix a;             ///< read
  DType dtype = DType::f32;  ///< of a: f32 or f64
  DType index = DType::i32;  ///< of offsets: i32 or i64
  BufferHandle offsets;      ///< written: a.rows + 1
};

/// Fills the indices and values of a dense matrix's CSR form, sized by DenseToCsrCount's offsets (the second step).
struct DenseToCsr {
  static constexpr const char* kName = "sparse::DenseToCsr";
  using Response = Done;

  DenseMatrix a;  ///< read, in out's dtype
  Matrix out;     ///< CSR of a's shape: offsets (written again, the same), indices and values written
};

}  // namespace accel::sparse
