/// @file
/// Dense linear algebra requests (LAPACK's routines; LAPACKE on the CPU device, cuSOLVER on CUDA):
///   LU        Getrf (P A = L U, partial pivoting) and Getrs (solve with its factors)  f32, f64, c64, c128
///   Cholesky  Potrf (A = L Lᴴ or Uᴴ U) and Potrs (solve with its factor)              f32, f64, c64, c128
///   eigen     Syevd (eigenvalues, and eigenvectors when asked, of a symmetric or Hermitian matrix)
///                                                                                       f32, f64, c64, c128
///   QR        Geqrf (A = Q R, Householder), Orgqr (Q's columns from its reflectors) and Ormqr (Q or Qᵀ applied to C;
///             Qᴴ for complex Q)                                                       f32, f64, c64, c128
///   SVD       Gesvd (A = U Σ Vᵀ, or U Σ Vᴴ for complex A; LAPACK's QR iteration)      f32, f64, c64, c128
///             Gesvdj (the same by the Jacobi method, faster on GPUs)                 f32, f64, c64, c128
///   least squares  Gels (min ‖A X − B‖ for tall A of full rank, by QR)               f32, f64, c64, c128
///
/// Layout: matrices are column-major, as LAPACK and cuSOLVER store them: element (i, j) of matrix `b` of a batch
/// is at b * stride + j * ld + i. A leading dimension of 0 means packed (the number of rows), a batch stride of 0
/// means packed (ld * columns). A batch is `batch` independent problems in the same buffers; vectors (pivots,
/// eigenvalues, infos) are packed one after the other, one per matrix.
///
/// Factorisations are in place, as in LAPACK: Getrf, Potrf, Geqrf and Gels overwrite A with their factors, Orgqr with
/// Q, Syevd with the eigenvectors when asked (else with garbage), Gesvd destroys it, the solves overwrite B with X and
/// Ormqr overwrites C.
/// Every other output must be a buffer of its own: an output that shares a buffer with another operand is refused.
///
/// @code
///   accel::solver::Getrf lu{.dtype = accel::DType::f64, .n = 100, .a = a, .ipiv = pivots, .info = info};
///   accel::Status s = device.ask(lu).wait().status();
///   // s: OK, or failed_precondition "solver::Getrf: U(3,3) is exactly zero: the matrix is singular"
/// @endcode
///
/// The `info` of each factorisation (LAPACK's INFO, one i32 per matrix, written to `info` when a buffer is given)
/// is also the request's status: a matrix for which the factorisation fails (singular, not positive definite,
/// no convergence) completes with failed_precondition naming the first such matrix of the batch and the index
/// LAPACK reports (1-based, as in LAPACK); the other matrices of the batch are factored all the same. A request
/// is checked whole before anything runs: sizes, leading dimensions, strides, dtypes (the same for every
/// floating-point operand: f32 or f64, or also c64 or c128 for LU, Cholesky, eigen, QR and Gesvd — complex numbers of
/// two f32 or two f64, real part first, as std::complex stores them; eigenvalues and singular values are real, of the
/// real part's dtype), buffer
/// sizes and aliasing are refused with invalid_argument or not_supported, naming what was wrong. Sizes and leading
/// dimensions must fit LAPACK's 32-bit integers.
#pragma once

#include <cstdint>
#include <string_view>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/result.hpp"
#include "accel/libs/blas/gemm.hpp"  // Transpose

namespace accel::solver {

/// Which triangle of a symmetric (or, complex, Hermitian) matrix is read (and, for Potrf, written); the other is not
/// touched.
enum class Fill : std::uint8_t { lower, upper };
/// What Syevd computes.
enum class EigenJob : std::uint8_t { values, values_and_vectors };
/// Which singular vectors Gesvd computes, of U or of Vᵀ: none, the first min(m, n) (thin), or all of them (full).
enum class SvdJob : std::uint8_t { none, thin, full };
/// Which side of C Ormqr applies Q to: op(Q) C (left) or C op(Q) (right).
enum class Side : std::uint8_t { left, right };

/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(Fill fill) noexcept;
/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(EigenJob job) noexcept;
/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(SvdJob job) noexcept;
/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(Side side) noexcept;

/// P A = L U of n x n matrices, real or complex (f32, f64, c64, c128). A is replaced by L (below the diagonal, unit
/// diagonal implied) and U (on and above it); row i was interchanged with row ipiv[i] (1-based, as LAPACK's IPIV).
/// info = i > 0: U(i,i) is exactly zero (the factorisation is complete, but U is singular and cannot be used to solve).
struct Getrf {
  static constexpr const char* kName = "solver::Getrf";
  using Response = Done;

  DType dtype = DType::f32;   ///< element type of every matrix: f32, f64, c64 or c128
  std::int64_t n = 0;         ///< order of the n x n matrices A
  std::int64_t lda = 0;       ///< A's leading dimension; 0: packed
  std::int64_t batch = 1;     ///< independent problems in the same buffers
  std::int64_t stride_a = 0;  ///< elements between consecutive matrices of A; 0: packed
  BufferHandle a;             ///< read and written: in place
  BufferHandle ipiv;          ///< i32, n per matrix
  BufferHandle info;          ///< optional, i32, one per matrix
};

/// Solves op(A) X = B for n x nrhs B with the factors and pivots of a Getrf (of the same dtype: f32, f64, c64 or
/// c128); X replaces B.
struct Getrs {
  static constexpr const char* kName = "solver::Getrs";
  using Response = Done;

  DType dtype = DType::f32;               ///< element type of every matrix: f32, f64, c64 or c128
  Transpose transpose = Transpose::none;  ///< op(A): A or Aᵀ (complex A too: Aᵀ, not the conjugate Aᴴ)
  std::int64_t n = 0;                     ///< order of the n x n matrices A
  std::int64_t nrhs = 0;                  ///< columns of B and X (right-hand sides)
  std::int64_t lda = 0;                   ///< A's leading dimension; 0: packed
  std::int64_t ldb = 0;                   ///< B's leading dimension; 0: packed
  std::int64_t batch = 1;                 ///< independent problems in the same buffers
  std::int64_t stride_a = 0;              ///< elements between consecutive matrices of A; 0: packed
  std::int64_t stride_b = 0;              ///< elements between consecutive matrices of B; 0: packed
  BufferHandle a;                         ///< read: Getrf's factors
  /// read: Getrf's pivots, i32, n per matrix. Every device refuses pivots outside 1..n with invalid_argument before
  /// solving (CUDA checks them on the GPU and waits for the verdict).
  BufferHandle ipiv;
  BufferHandle b;  ///< read and written: B in, X out
};

/// Cholesky factorisation of symmetric (f32, f64) or Hermitian (c64, c128) positive definite n x n matrices, of which
/// only the `fill` triangle is read: A = L Lᴴ (lower) or Uᴴ U (upper), Lᴴ being Lᵀ for real A; the factor replaces
/// that triangle of A, the other is not touched. A Hermitian matrix's diagonal is real: give it zero imaginary parts.
/// info = i > 0: the leading minor of order i is not positive definite.
struct Potrf {
  static constexpr const char* kName = "solver::Potrf";
  using Response = Done;

  DType dtype = DType::f32;   ///< element type of every matrix: f32, f64, c64 or c128
  Fill fill = Fill::lower;    ///< the triangle read
  std::int64_t n = 0;         ///< order of the n x n matrices A
  std::int64_t lda = 0;       ///< A's leading dimension; 0: packed
  std::int64_t batch = 1;     ///< independent problems in the same buffers
  std::int64_t stride_a = 0;  ///< elements between consecutive matrices of A; 0: packed
  BufferHandle a;             ///< read and written: in place
  BufferHandle info;          ///< optional, i32, one per matrix
};

/// Solves A X = B for n x nrhs B with the Cholesky factor of a Potrf (same fill and dtype: f32, f64, c64 or c128); X
/// replaces B.
struct Potrs {
  static constexpr const char* kName = "solver::Potrs";
  using Response = Done;

  DType dtype = DType::f32;   ///< element type of every matrix: f32, f64, c64 or c128
  Fill fill = Fill::lower;    ///< the triangle read
  std::int64_t n = 0;         ///< order of the n x n matrices A
  std::int64_t nrhs = 0;      ///< columns of B and X (right-hand sides)
  std::int64_t lda = 0;       ///< A's leading dimension; 0: packed
  std::int64_t ldb = 0;       ///< B's leading dimension; 0: packed
  std::int64_t batch = 1;     ///< independent problems in the same buffers
  std::int64_t stride_a = 0;  ///< elements between consecutive matrices of A; 0: packed
  std::int64_t stride_b = 0;  ///< elements between consecutive matrices of B; 0: packed
  BufferHandle a;             ///< read: Potrf's factor
  BufferHandle b;             ///< read and written: B in, X out
};

/// Eigenvalues (ascending, into w) and, when asked, orthonormal eigenvectors (the columns of A, in the order of
/// the values) of symmetric (f32, f64) or Hermitian (c64, c128: LAPACK's heevd) n x n matrices, of which the `fill`
/// triangle is read (a Hermitian diagonal's imaginary parts are taken as zero). A is overwritten either way.
/// info = i > 0: the algorithm did not converge.
struct Syevd {
  static constexpr const char* kName = "solver::Syevd";
  using Response = Done;

  DType dtype = DType::f32;         ///< element type of every matrix: f32, f64, c64 or c128
  EigenJob job = EigenJob::values;  ///< what is computed
  Fill fill = Fill::lower;          ///< the triangle read
  std::int64_t n = 0;               ///< order of the n x n matrices A
  std::int64_t lda = 0;             ///< A's leading dimension; 0: packed
  std::int64_t batch = 1;           ///< independent problems in the same buffers
  std::int64_t stride_a = 0;        ///< elements between consecutive matrices of A; 0: packed
  BufferHandle a;                   ///< read and written: in place
  BufferHandle w;                   ///< written: n values per matrix, real: f32 for f32 and c64, f64 for f64 and c128
  BufferHandle info;                ///< optional, i32, one per matrix
};

/// QR factorisation of m x n matrices: R (min(m, n) x n, upper trapezoidal) replaces A on and above the diagonal,
/// the Householder reflectors that make Q lie below it, with their scalars in tau (min(m, n) per matrix). LAPACK's
/// info is only for illegal arguments, which are refused before anything runs.
struct Geqrf {
  static constexpr const char* kName = "solver::Geqrf";
  using Response = Done;

  DType dtype = DType::f32;   ///< element type of every matrix: f32, f64, c64 or c128
  std::int64_t m = 0;         ///< rows of A
  std::int64_t n = 0;         ///< columns of A
  std::int64_t lda = 0;       ///< A's leading dimension; 0: packed
  std::int64_t batch = 1;     ///< independent problems in the same buffers
  std::int64_t stride_a = 0;  ///< elements between consecutive matrices of A; 0: packed
  BufferHandle a;             ///< read and written: in place
  BufferHandle tau;           ///< written: min(m, n) per matrix, of the dtype
};

/// The first n columns of Q = H(1) … H(k) (m x n, m >= n >= k) from the first k reflectors and scalars of a Geqrf:
/// they replace A (for the thin Q of an m x n Geqrf with m >= n: n = k = n). For complex A, Q is unitary (LAPACK's
/// ungqr).
struct Orgqr {
  static constexpr const char* kName = "solver::Orgqr";
  using Response = Done;

  DType dtype = DType::f32;   ///< element type of every matrix: f32, f64, c64 or c128
  std::int64_t m = 0;         ///< rows of A and Q
  std::int64_t n = 0;         ///< columns of Q (n <= m)
  std::int64_t k = 0;         ///< reflectors that make Q (k <= n)
  std::int64_t lda = 0;       ///< A's leading dimension; 0: packed
  std::int64_t batch = 1;     ///< independent problems in the same buffers
  std::int64_t stride_a = 0;  ///< elements between consecutive matrices of A; 0: packed
  BufferHandle a;             ///< read and written: Geqrf's reflectors in, Q out
  BufferHandle tau;           ///< read: Geqrf's scalars, k per matrix (packed, k apart)
};

/// C (m x n) replaced by op(Q) C (side left) or C op(Q) (side right), where Q = H(1) … H(k) is made of the first k
/// reflectors and scalars of a Geqrf and op(Q) is Q or Qᵀ (transpose; for complex Q, its conjugate transpose Qᴴ, as
/// LAPACK's unmqr): Q is m x m (left) or n x n (right), so A, as Geqrf left it, is m x k (left) or n x k (right), with
/// k <= m (left) or k <= n (right). Qᵀ C of a tall Geqrf's A (left, transpose) puts Qᵀ b of a least squares problem
/// into C without forming Q. LAPACK's ormqr sets A's diagonal for a while and restores it, so A counts as written (a
/// buffer of its own, matrices that do not overlap); it comes back as it was. LAPACK's info is only for illegal
/// arguments, which are refused before anything runs.
struct Ormqr {
  static constexpr const char* kName = "solver::Ormqr";
  using Response = Done;

  DType dtype = DType::f32;               ///< element type of every matrix: f32, f64, c64 or c128
  Side side = Side::left;                 ///< whether Q multiplies C from the left or the right
  Transpose transpose = Transpose::none;  ///< op(Q): Q or Qᵀ (Qᴴ for complex Q)
  std::int64_t m = 0;                     ///< C's rows
  std::int64_t n = 0;                     ///< C's columns
  std::int64_t k = 0;                     ///< reflectors
  std::int64_t lda = 0;                   ///< A's leading dimension; 0: packed
  std::int64_t ldc = 0;                   ///< C's leading dimension; 0: packed
  std::int64_t batch = 1;                 ///< independent problems in the same buffers
  std::int64_t stride_a = 0;              ///< elements between consecutive matrices of A; 0: packed
  std::int64_t stride_c = 0;              ///< elements between consecutive matrices of C; 0: packed
  BufferHandle a;    ///< read (and restored): Geqrf's reflectors, below the diagonal of its first k columns
  BufferHandle tau;  ///< read: Geqrf's scalars, k per matrix (packed, k apart)
  BufferHandle c;    ///< read and written: C in, op(Q) C or C op(Q) out
};

/// Least squares: the n x nrhs X that minimises ‖A X − B‖ (each column of B on its own) for m x n A of full rank with
/// m >= n, by A's QR factorisation — LAPACK's gels, without its transposed case. A is replaced by its factorisation as
/// Geqrf leaves it, X replaces the first n rows of B (m x nrhs), and for n > 0 the rest of each column of B holds the
/// rest of Qᵀ B (Qᴴ B for complex A), whose norm is that column's residual. Nothing is computed when n or nrhs is 0: B
/// stays as it is. m < n (an underdetermined system's minimum-norm solution) is refused with not_supported on every
/// device: it needs an LQ factorisation, which cuSOLVER lacks. info = i > 0: R(i,i) is exactly zero, A is rank
/// deficient and has no unique solution — a failed_precondition naming the matrix, whose B then holds no solution (the
/// rest of the batch is solved). A nearly rank deficient A, with no exact zero on R's diagonal, is solved as LAPACK
/// solves it, as accurately as its condition allows: for those, take Gesvd's pseudo-inverse.
struct Gels {
  static constexpr const char* kName = "solver::Gels";
  using Response = Done;

  DType dtype = DType::f32;   ///< element type of every matrix: f32, f64, c64 or c128
  std::int64_t m = 0;         ///< rows of A and B (m >= n)
  std::int64_t n = 0;         ///< columns of A, rows of X
  std::int64_t nrhs = 0;      ///< columns of B and X (right-hand sides)
  std::int64_t lda = 0;       ///< A's leading dimension; 0: packed
  std::int64_t ldb = 0;       ///< at least max(1, m)
  std::int64_t batch = 1;     ///< independent problems in the same buffers
  std::int64_t stride_a = 0;  ///< elements between consecutive matrices of A; 0: packed
  std::int64_t stride_b = 0;  ///< elements between consecutive matrices of B; 0: packed
  BufferHandle a;             ///< read and written: A in, its QR factorisation out
  BufferHandle b;             ///< read and written: B in (m x nrhs), X in its first n rows out
  BufferHandle info;          ///< optional, i32, one per matrix
};

/// Singular value decomposition of m x n matrices, A = U Σ Vᵀ (U Σ Vᴴ for complex A, whose vt then holds Vᴴ): the
/// singular values, descending, into s (min(m, n) per matrix, real), U (m x m, or m x min(m, n) when thin) into u and
/// Vᵀ (n x n, or min(m, n) x n when thin) into vt, each when asked. A is destroyed. cuSOLVER's gesvd takes m >= n only:
/// for a wide matrix, decompose Aᵀ (whose U and Vᵀ are this one's V and Uᵀ); the CPU device takes both. info = i > 0: i
/// superdiagonals of an intermediate bidiagonal form did not converge to zero.
struct Gesvd {
  static constexpr const char* kName = "solver::Gesvd";
  using Response = Done;

  DType dtype = DType::f32;      ///< element type of every matrix: f32, f64, c64 or c128
  SvdJob job_u = SvdJob::thin;   ///< how much of U is computed
  SvdJob job_vt = SvdJob::thin;  ///< how much of Vᵀ is computed
  std::int64_t m = 0;            ///< rows of A
  std::int64_t n = 0;            ///< columns of A
  std::int64_t lda = 0;          ///< A's leading dimension; 0: packed
  std::int64_t ldu = 0;          ///< U's leading dimension; 0: packed
  std::int64_t ldvt = 0;         ///< Vᵀ's leading dimension; 0: packed
  std::int64_t batch = 1;        ///< independent problems in the same buffers
  std::int64_t stride_a = 0;     ///< elements between consecutive matrices of A; 0: packed
  std::int64_t stride_u = 0;     ///< elements between consecutive matrices of U; 0: packed
  std::int64_t stride_vt = 0;    ///< elements between consecutive matrices of Vᵀ; 0: packed
  BufferHandle a;                ///< read and destroyed
  BufferHandle s;                ///< written: min(m, n) per matrix, real: f32 for f32 and c64, f64 for f64 and c128
  BufferHandle u;                ///< written, unless job_u is none (then null)
  BufferHandle vt;               ///< written, unless job_vt is none (then null)
  BufferHandle info;             ///< optional, i32, one per matrix
};

/// Singular value decomposition of m x n matrices by the Jacobi method (on CUDA: real square matrices of at most
/// 256 x 256 by the family's own one-sided Jacobi kernels, whose pairs of columns count as orthogonal once
/// |a_pᵀ a_q| <= tolerance √n ‖a_p‖ ‖a_q‖; others by cuSOLVER's gesvdj, or gesvdjBatched for a batch of packed matrices
/// of at most 32 x 32 with their vectors), any shape: the singular values, descending and real (f32 for c64, f64 for
/// c128), into s (min(m, n) = k per matrix) and, unless job is none, U into u and V — not Vᵀ (nor Vᴴ): V, as cuSOLVER
/// gives it — into v: U m x k and V n x k when thin, U m x m and V n x n when full. A is destroyed. The sweeps stop
/// once the matrix is diagonal to `tolerance` (0: the dtype's machine precision) or after max_sweeps: info = k + 1
/// means it was not within them, a failed_precondition naming the matrix. The CPU device computes the decomposition
/// with LAPACK's gesvd, to LAPACK's precision whatever the tolerance and sweeps.
///
/// A request of its own rather than an algorithm of Gesvd's: its vectors (one job for both, V rather than Vᵀ), its
/// shapes (any, where cuSOLVER's gesvd takes m >= n), its info and its stopping rule are the Jacobi routine's.
struct Gesvdj {
  static constexpr const char* kName = "solver::Gesvdj";
  using Response = Done;

  DType dtype = DType::f32;       ///< element type of every matrix: f32, f64, c64 or c128
  SvdJob job = SvdJob::thin;      ///< which of U and V are computed (both, or neither)
  std::int32_t max_sweeps = 100;  ///< at least 1
  double tolerance = 0;           ///< finite, >= 0
  std::int64_t m = 0;             ///< rows of A
  std::int64_t n = 0;             ///< columns of A
  std::int64_t lda = 0;           ///< A's leading dimension; 0: packed
  std::int64_t ldu = 0;           ///< U's leading dimension; 0: packed
  std::int64_t ldv = 0;           ///< V's leading dimension; 0: packed
  std::int64_t batch = 1;         ///< independent problems in the same buffers
  std::int64_t stride_a = 0;      ///< elements between consecutive matrices of A; 0: packed
  std::int64_t stride_u = 0;      ///< elements between consecutive matrices of U; 0: packed
  std::int64_t stride_v = 0;      ///< elements between consecutive matrices of V; 0: packed
  BufferHandle a;                 ///< read and destroyed
  BufferHandle s;                 ///< written: min(m, n) per matrix, real: f32 for f32 and c64, f64 for f64 and c128
  BufferHandle u;                 ///< written, unless job is none (then null)
  BufferHandle v;                 ///< written, unless job is none (then null)
  BufferHandle info;              ///< optional, i32, one per matrix
};

}  // namespace accel::solver
