/// @file
/// Sparse linear algebra requests (cuSPARSE's generic API on CUDA, Eigen's sparse module on the CPU device):
///   SpMV  y = alpha op(A) x + beta y              (A sparse, x and y dense vectors)
///   SpMM  C = alpha op(A) op(B) + beta C          (A sparse, B and C dense matrices)
///   SpSV  op(A) y = alpha x, solved for y         (A sparse and triangular)
///   CsrToDense, CsrToCoo, CooToCsr                conversions between the formats and to dense
///
/// A sparse matrix (sparse::Matrix) is request data: its format, index and value types, shape and nnz, and the
/// accel buffers that hold its arrays, all zero-based:
///   csr  offsets: rows + 1 row offsets, indices: the column of each entry (sorted within a row), values: nnz
///   csc  offsets: cols + 1 column offsets, indices: the row of each entry — the CSR of Aᵀ, as cuSPARSE stores it
///   coo  offsets: the row of each entry, sorted, indices: its column, values: nnz
///   blocked_ell  (SpMM only; sparse::blocked_ell() makes one) square blocks of bs = ell_block_size, each block row
///        holding ell_cols / bs of them, where nnz = rows · ell_cols (the values stored, padding included) gives
///        ell_cols: indices: (rows / bs) x (ell_cols / bs) column-block indices, row-major, each in [0, cols / bs) or
///        -1 for a padding block, whose values must be zero (cuSPARSE reads them: on the H100 it added a padding
///        block's values at column block 0; the CPU skips them); values: rows x ell_cols, row-major, block (i, s) of
///        the index array at rows i·bs.., columns s·bs.. of it; offsets: none (null). rows, cols and ell_cols are
///        multiples of bs (so that every block is whole), ell_cols at most cols.
/// Index buffers hold i32 or i64 (the matrix's `index`), values f32 or f64 (and f16 or bf16 for SpMV and SpMM on
/// CUDA, computed in f32, as cuSPARSE allows; blocked-ELL products in f32 go through TF32 on the H100, about 2.5e-4
/// relative). Dense operands hold the values' dtype.
///
/// SpMV of a CSR matrix (not transposed, f32 or f64) runs on CUDA as a kernel of our own, not cuSPARSE's: it was faster
/// on every matrix measured on the H100 (docs/PERFORMANCE.md, section 26), and it sums every row in one fixed order, so
/// that the same request gives the same bits on every run.
///
/// Blocked-ELL SpMM on CUDA is cuSPARSE's CUSPARSE_SPMM_BLOCKED_ELL_ALG1, which allows less than the CPU device's
/// Eigen product. What cuSPARSE (CUDA 13.0) refuses, from its documentation and its own error messages: i64 indices
/// and a transposed A (both refused here before cuSPARSE is asked), compute capability below 7.0 (bf16: 8.0), and for
/// some value types a block size of 1 or some orders and op_b of B; the request then fails not_supported with
/// cuSPARSE's reason. Values f16, bf16, f32 or f64 (f16 and bf16 computed in f32); NVIDIA's own sample multiplies f16
/// blocks of 2 with column-major, non-transposed B and C.
///
/// Every request is checked whole before anything runs: shapes, nnz against the buffers' sizes, dtype combinations,
/// aliasing (invalid_argument or not_supported, naming what was wrong). The contents of the index buffers — offsets
/// that start at 0, never decrease and end at nnz, indices inside the matrix — are checked before any library reads
/// them, on every device: a malformed matrix is failed_precondition ("sparse::SpMV: a is malformed: row offsets
/// decrease at row 7"), never a read out of bounds. On the CPU device that check reads the host arrays; on CUDA it is
/// a kernel over the index arrays whose verdict the request waits for before cuSPARSE or the family's own kernel runs
/// (one stream round trip).
///
/// Analysis (cuSPARSE's buffer sizes, SpMV preprocessing, SpSV analysis) is kept per matrix structure — the index
/// buffers, shape and types — on each stream. What the caller promises about the index buffers' contents decides
/// how much of it is reused (Matrix::structure):
///   checked_each_use  (default) the contents may change between requests: they are checked and analysed again
///                     whenever they were written since the last check (on CUDA the device knows by the buffers'
///                     versions; the CPU device checks every time)
///   fixed             the caller does not write the index buffers while it uses the matrix: the first request checks
///                     and analyses the structure, later ones over the same buffers reuse both (no kernel, no wait).
///                     Writing them anyway leaves a stale analysis in use: results are then undefined.
///
/// @code
///   accel::sparse::Matrix a{.rows = n, .cols = n, .nnz = nnz, .offsets = offsets, .indices = columns, .values = v};
///   accel::Status s = device.ask(accel::sparse::SpMV{.a = a, .x = x, .y = y}).wait().status();
/// @endcode
#pragma once

#include <cstdint>
#include <string_view>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/result.hpp"
#include "accel/libs/blas/gemm.hpp"  // Transpose, MatrixOrder

namespace accel::sparse {

/// How a Matrix's arrays are laid out (see the file's description).
enum class Format : std::uint8_t { csr, csc, coo, blocked_ell };
/// What the caller promises about a Matrix's index buffers between requests (see the file's description).
enum class Structure : std::uint8_t { checked_each_use, fixed };
/// Which triangle of a triangular matrix is read (the other is ignored), and whether its diagonal is taken as ones.
enum class Fill : std::uint8_t { lower, upper };
/// Whether a triangular matrix's diagonal is read (non_unit) or taken as ones (unit).
enum class Diagonal : std::uint8_t { non_unit, unit };

/// The format's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(Format format) noexcept;

/// A sparse matrix as request data: its format, types, shape and the buffers of its arrays.
struct Matrix {
  Format format = Format::csr;                        ///< how the arrays are laid out
  DType index = DType::i32;                           ///< of offsets and indices: i32 or i64
  DType dtype = DType::f32;                           ///< of values
  Structure structure = Structure::checked_each_use;  ///< whether the index buffers may change between requests
  /// blocked_ell only (0 for the other formats). 32 bits, in what was padding: requests holding three matrices
  /// (SpGemm) fill the isolated worker's channel slot, so a Matrix cannot grow.
  std::int32_t ell_block_size = 0;
  std::int64_t rows = 0;  ///< rows of the matrix
  std::int64_t cols = 0;  ///< columns of the matrix
  std::int64_t nnz = 0;   ///< entries stored (blocked_ell: rows · ell_cols, padding included)
  BufferHandle offsets;   ///< csr/csc: the compressed offsets; coo: the row of each entry; blocked_ell: none
  BufferHandle indices;   ///< csr: columns; csc: rows; coo: columns; blocked_ell: column blocks
  BufferHandle values;    ///< nnz values of dtype
};

/// A blocked-ELL matrix of `ell_cols` stored columns over its column-block indices and values (nnz = rows · ell_cols).
[[nodiscard]] constexpr Matrix blocked_ell(std::int64_t rows, std::int64_t cols, std::int32_t block_size,
                                           std::int64_t ell_cols, BufferHandle column_blocks, BufferHandle values,
                                           DType dtype = DType::f32, DType index = DType::i32) noexcept {
  return Matrix{.format = Format::blocked_ell,
                .index = index,
                .dtype = dtype,
                .ell_block_size = block_size,
                .rows = rows,
                .cols = cols,
                .nnz = rows * ell_cols,
                .indices = column_blocks,
                .values = values};
}

/// The columns of a blocked-ELL matrix's values array (nnz / rows; 0 for a matrix without rows).
[[nodiscard]] constexpr std::int64_t ell_cols(const Matrix& m) noexcept { return m.rows == 0 ? 0 : m.nnz / m.rows; }

/// A dense matrix of the sparse matrix's dtype: element (i, j) at j * ld + i (column-major) or i * ld + j
/// (row-major); ld 0 means packed (rows for column-major, cols for row-major).
struct DenseMatrix {
  MatrixOrder order = MatrixOrder::column_major;  ///< column-major or row-major
  std::int64_t rows = 0;                          ///< rows of the matrix
  std::int64_t cols = 0;                          ///< columns of the matrix
  std::int64_t ld = 0;                            ///< leading dimension; 0: packed
  BufferHandle data;                              ///< the buffer holding the elements
};

/// y = alpha op(A) x + beta y; x has op(A)'s columns, y its rows. With beta = 0, y is not read.
struct SpMV {
  static constexpr const char* kName = "sparse::SpMV";
  using Response = Done;

  Transpose op = Transpose::none;  ///< op(A): A or Aᵀ
  double alpha = 1.0;              ///< scales the product
  double beta = 0.0;               ///< scales y; 0: y is not read
  Matrix a;                        ///< the sparse matrix A
  BufferHandle x;                  ///< read
  BufferHandle y;                  ///< read (unless beta = 0) and written; shares no buffer with A or x
};

/// C = alpha op(A) op(B) + beta C for dense B and C (both in the same order).
struct SpMM {
  static constexpr const char* kName = "sparse::SpMM";
  using Response = Done;

  Transpose op_a = Transpose::none;  ///< op(A): A or Aᵀ
  Transpose op_b = Transpose::none;  ///< op(B): B or Bᵀ
  double alpha = 1.0;                ///< scales the product
  double beta = 0.0;                 ///< scales C; 0: C is not read
  Matrix a;                          ///< the sparse matrix A
  DenseMatrix b;                     ///< read
  DenseMatrix c;                     ///< read (unless beta = 0) and written
};

/// Solves op(A) y = alpha x for a square CSR matrix A whose `fill` triangle is read. A zero on the diagonal of a
/// non-unit A gives infinities or NaNs in y, as with any triangular solve; it is not an error.
struct SpSV {
  static constexpr const char* kName = "sparse::SpSV";
  using Response = Done;

  Transpose op = Transpose::none;          ///< op(A): A or Aᵀ
  Fill fill = Fill::lower;                 ///< the triangle read
  Diagonal diagonal = Diagonal::non_unit;  ///< whether A's diagonal is read or taken as ones
  double alpha = 1.0;                      ///< scales x
  Matrix a;                                ///< the sparse matrix A
  BufferHandle x;                          ///< read
  BufferHandle y;                          ///< written; shares no buffer with A or x
};

/// The dense form of a CSR, CSC or COO matrix A (duplicates of a COO entry are summed).
struct ToDense {
  static constexpr const char* kName = "sparse::ToDense";
  using Response = Done;

  Matrix a;         ///< the matrix, CSR, CSC or COO
  DenseMatrix out;  ///< written: a.rows x a.cols
};

/// The COO row of each entry of CSR matrix `csr`, into `rows` (nnz of the index type). The COO matrix is then
/// {format coo, offsets = rows, indices = csr.indices, values = csr.values}: columns and values are shared.
struct CsrToCoo {
  static constexpr const char* kName = "sparse::CsrToCoo";
  using Response = Done;

  Matrix csr;         ///< the CSR matrix
  BufferHandle rows;  ///< written
};

/// The CSR row offsets of COO matrix `coo` (rows sorted), into `offsets` (rows + 1 of the index type). The CSR
/// matrix is then {format csr, offsets = offsets, indices = coo.indices, values = coo.values}; COO's columns must
/// be sorted within each row for it to be a well-formed CSR.
struct CooToCsr {
  static constexpr const char* kName = "sparse::CooToCsr";
  using Response = Done;

  Matrix coo;            ///< the COO matrix, rows sorted
  BufferHandle offsets;  ///< written
};

}  // namespace accel::sparse
