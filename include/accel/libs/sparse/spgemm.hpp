/// @file
/// The product of two sparse matrices, C = alpha A·B (A and B CSR; cuSPARSE's SpGEMM on CUDA, Eigen's sparse product
/// on the CPU device), in two requests, because C's size is known only once its structure is:
///   SpGemmCount  writes C's row offsets (a.rows + 1 of them, the last one C's nnz) into a buffer of the caller's
///   SpGemm       the caller has read nnz and allocated C's indices and values (nnz each); fills them
///
/// @code
///   device.ask(sparse::SpGemmCount{.a = a, .b = b, .c_offsets = offsets}).wait();
///   nnz = last entry of offsets;  allocate columns and values of nnz entries
///   device.ask(sparse::SpGemm{.a = a, .b = b, .c = {.rows = a.rows, .cols = b.cols, .nnz = nnz, .offsets = offsets,
///                                                   .indices = columns, .values = values}}).wait();
/// @endcode
///
/// C holds every entry of the product's structure — an entry whose terms cancel is kept, as an explicit zero — with
/// its columns sorted within each row. Both requests check A's and B's structures (sparse.hpp) before any library
/// reads them; on CUDA a stream skips the check of index arrays it has passed and nothing has written since.
///
/// On CUDA the count multiplies in full (cuSPARSE's work estimation, compute and copy steps) into scratch columns and
/// values, to learn C's offsets, and the stream keeps that product. The SpGemm after it takes C's columns and values
/// from there (the values times alpha) when nothing has written A's or B's arrays or C's offsets since the count; the
/// device tells by the versions it gives each write of a buffer. C's columns and values buffers that no request has
/// used since they were allocated, of exactly nnz entries (as above), are moved into that memory instead of copied
/// into, so the whole product costs one multiplication and no copy. Otherwise, or on another stream, the SpGemm
/// multiplies in full again. The stream holds one counted product (nnz × (4 + value size) bytes of device memory)
/// until an SpGemm uses it or the next count replaces it. cuSPARSE's structure-reuse steps, which would keep less,
/// did not give C's offsets on the H100 (see spgemm_operation_cuda.cpp). An SpGemm whose c.nnz is not the product's
/// nnz is failed_precondition, before C's indices and values are written. On CUDA, cuSPARSE's SpGEMM takes i32
/// indices only (i64 is not supported there; the CPU device takes both).
#pragma once

#include "accel/libs/sparse/sparse.hpp"

namespace accel::sparse {

/// C's row offsets of A·B: a.rows + 1 of a's index type.
struct SpGemmCount {
  static constexpr const char* kName = "sparse::SpGemmCount";
  using Response = Done;

  Matrix a;                ///< CSR m x k, f32 or f64
  Matrix b;                ///< CSR k x n, of a's index and value types
  BufferHandle c_offsets;  ///< written; shares no buffer with A or B
};

/// C = alpha A·B into C's indices and values, C's offsets being SpGemmCount's.
struct SpGemm {
  static constexpr const char* kName = "sparse::SpGemm";
  using Response = Done;

  double alpha = 1.0;  ///< scales the product
  Matrix a;            ///< CSR m x k, f32 or f64
  Matrix b;            ///< CSR k x n, of a's index and value types
  Matrix c;            ///< CSR m x n of a's types, nnz the product's; offsets, indices and values written
};

}  // namespace accel::sparse
