// Runs of Ormqr and Gels on a device, with the references that check them computed in double on the host: op(Q) C or
// C op(Q) with Q formed explicitly by Orgqr on the same device, and the least squares solution of the normal
// equations AᴴA X = AᴴB. What the CPU test asserts on the CPU device and the GPU test on CUDA devices.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <type_traits>
#include <vector>

#include "solver_cases.hpp"

namespace accel::solver::testing {

// ‖x − ref‖ / ‖ref‖ (or ‖x‖ when ref is zero).
template <class S>
double relative_difference(const std::vector<S>& x, const std::vector<S>& ref) {
  std::vector<S> diff = x;
  for (std::size_t i = 0; i < diff.size(); ++i) diff[i] -= ref[i];
  return norm(diff) / std::max(norm(ref), 1e-300);
}

// rows x inner times inner x cols, column-major and packed; `ta`/`tb` take the factors transposed (conjugated, for
// complex ones: Qᴴ, as Ormqr's transpose of a complex Q).
template <class S>
std::vector<S> multiply(const std::vector<S>& a, bool ta, const std::vector<S>& b, bool tb, std::int64_t rows,
                        std::int64_t inner, std::int64_t cols) {
  std::vector<S> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) {
      S sum = 0;
      for (std::int64_t p = 0; p < inner; ++p)
        sum +=
            (ta ? conjugate(a[i * inner + p]) : a[p * rows + i]) * (tb ? conjugate(b[p * cols + j]) : b[j * inner + p]);
      out[j * rows + i] = sum;
    }
  return out;
}

template <class T>
struct OrmqrResult {
  Status status;                // of Geqrf, Orgqr (the reference's), then Ormqr: the first that failed
  double error = INFINITY;      // ‖Ormqr's − the reference‖ / ‖the reference‖, the batch's largest
  bool a_restored = false;      // A after Ormqr is A as Geqrf left it
  bool padding_intact = false;  // C's
  std::vector<T> c;             // Ormqr's result
};

// Geqrf of the batch `a` (order x k, k <= order: the reflectors), then Ormqr of the batch `c` (m x n) with them, and
// the reference op(Q) C or C op(Q) with Q (order x order) from Orgqr of the reflectors.
template <class T>
OrmqrResult<T> run_ormqr(Device& device, Side side, Transpose transpose, const Layout& la, const std::vector<T>& a,
                         const Layout& lc, const std::vector<T>& c) {
  OrmqrResult<T> out;
  const std::int64_t order = la.rows, k = la.cols, m = lc.rows, n = lc.cols;
  Buffer<T> da = upload(device, a), tau = upload(device, std::vector<T>(static_cast<std::size_t>(k * la.batch + 1)));
  Buffer<T> dc = upload(device, c);
  out.status = device
                   .ask(Geqrf{.dtype = dtype_of<T>(),
                              .m = order,
                              .n = k,
                              .lda = la.ld,
                              .batch = la.batch,
                              .stride_a = la.stride,
                              .a = da,
                              .tau = tau})
                   .wait()
                   .status();
  if (!out.status.ok()) return out;
  const std::vector<T> reflectors = download(device, da);
  // Q in full: the reflectors in the first k columns of an order x order matrix.
  const Layout lq = Layout::padded(order, order, la.batch, 0);
  std::vector<T> q(lq.size(), T(0));
  for (std::int64_t b = 0; b < la.batch; ++b)
    for (std::int64_t j = 0; j < k; ++j)
      for (std::int64_t i = 0; i < order; ++i) q[lq.at(b, i, j)] = reflectors[la.at(b, i, j)];
  Buffer<T> dq = upload(device, q);
  out.status =
      device.ask(Orgqr{.dtype = dtype_of<T>(), .m = order, .n = order, .k = k, .batch = la.batch, .a = dq, .tau = tau})
          .wait()
          .status();
  if (!out.status.ok()) return out;
  q = download(device, dq);
  out.status = device
                   .ask(Ormqr{.dtype = dtype_of<T>(),
                              .side = side,
                              .transpose = transpose,
                              .m = m,
                              .n = n,
                              .k = k,
                              .lda = la.ld,
                              .ldc = lc.ld,
                              .batch = la.batch,
                              .stride_a = la.stride,
                              .stride_c = lc.stride,
                              .a = da,
                              .tau = tau,
                              .c = dc})
                   .wait()
                   .status();
  if (!out.status.ok()) return out;
  out.c = download(device, dc);
  out.a_restored = download(device, da) == reflectors;
  out.padding_intact = padding_intact(c, out.c, lc);
  const bool t = transpose == Transpose::transpose;
  out.error = worst(la.batch, [&](std::int64_t b) {
    const std::vector<Wide<T>> qb = matrix(q, lq, b), cb = matrix(c, lc, b);
    const std::vector<Wide<T>> ref =
        side == Side::left ? multiply(qb, t, cb, false, m, m, n) : multiply(cb, false, qb, t, m, n, n);
    return relative_difference(matrix(out.c, lc, b), ref);
  });
  return out;
}

// X of min ‖A X − B‖ from the normal equations AᴴA X = AᴴB (AᵀA for real A), by Cholesky: n x nrhs. They square
// A's condition, so they are solved in long double: in double, a random 5 x 5 matrix of condition 10⁴ left the
// reference 1e-8 off, more than the solution being checked.
template <class S>
std::vector<S> normal_equations(const std::vector<S>& a_in, const std::vector<S>& b_in, std::int64_t m, std::int64_t n,
                                std::int64_t nrhs) {
  using E = std::conditional_t<kComplex<S>, std::complex<long double>, long double>;
  const std::vector<E> a(a_in.begin(), a_in.end()), b(b_in.begin(), b_in.end());
  std::vector<E> g = multiply(a, true, a, false, n, m, n), x = multiply(a, true, b, false, n, m, nrhs);
  for (std::int64_t j = 0; j < n; ++j) {  // G = L Lᴴ, L in G's lower triangle
    for (std::int64_t p = 0; p < j; ++p) g[j * n + j] -= g[p * n + j] * conjugate(g[p * n + j]);
    g[j * n + j] = std::sqrt(std::real(g[j * n + j]));
    for (std::int64_t i = j + 1; i < n; ++i) {
      for (std::int64_t p = 0; p < j; ++p) g[j * n + i] -= g[p * n + i] * conjugate(g[p * n + j]);
      g[j * n + i] /= g[j * n + j];
    }
  }
  for (std::int64_t c = 0; c < nrhs; ++c) {
    E* col = x.data() + c * n;
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t p = 0; p < i; ++p) col[i] -= g[p * n + i] * col[p];
      col[i] /= g[i * n + i];
    }
    for (std::int64_t i = n - 1; i >= 0; --i) {
      for (std::int64_t p = i + 1; p < n; ++p) col[i] -= conjugate(g[i * n + p]) * col[p];
      col[i] /= g[i * n + i];
    }
  }
  std::vector<S> out(x.size());
  std::transform(x.begin(), x.end(), out.begin(), [](const E& v) { return static_cast<S>(v); });
  return out;
}

// ‖Aᴴ (A X − B)‖ / (‖A‖ (‖A‖ ‖X‖ + ‖B‖)): the least squares solution's optimality, small for a backward stable
// solver whatever A's condition.
template <class S>
double least_squares_residual(const std::vector<S>& a, const std::vector<S>& x, const std::vector<S>& b, std::int64_t m,
                              std::int64_t n, std::int64_t nrhs) {
  std::vector<S> r = multiply(a, false, x, false, m, n, nrhs);
  for (std::size_t i = 0; i < r.size(); ++i) r[i] -= b[i];
  return norm(multiply(a, true, r, false, n, m, nrhs)) / std::max(norm(a) * (norm(a) * norm(x) + norm(b)), 1e-300);
}

// The norms of the columns of B's rows n.. (for Gels, the residuals), matrix after matrix.
template <class T>
std::vector<double> tail_norms(const std::vector<T>& b, const Layout& lb, std::int64_t n) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < lb.batch; ++i)
    for (std::int64_t j = 0; j < lb.cols; ++j) {
      double sum = 0;
      for (std::int64_t r = n; r < lb.rows; ++r) sum += std::norm(std::complex<double>(b[lb.at(i, r, j)]));
      out.push_back(std::sqrt(sum));
    }
  return out;
}

template <class T>
struct GelsResult {
  Status status;
  double residual = INFINITY;     // least_squares_residual, the batch's largest
  double from_normal = INFINITY;  // X against normal_equations, the batch's largest relative difference
  bool padding_intact = false;    // B's
  // The norms of B's rows n.. (the rest of Qᵀ B) against those of A X − B's columns, the batch's largest relative
  // difference: what dense.hpp promises of them.
  double residual_norms = INFINITY;
  std::vector<std::int32_t> info;
  std::vector<T> x;  // the first n rows of each B, packed n x nrhs, one after the other
  std::vector<T> b;  // B after, whole
};

// Gels of the batches `a` (m x n) and `b` (m x nrhs), with an info buffer.
template <class T>
GelsResult<T> run_gels(Device& device, const Layout& la, const std::vector<T>& a, const Layout& lb,
                       const std::vector<T>& b) {
  GelsResult<T> out;
  const std::int64_t m = la.rows, n = la.cols, nrhs = lb.cols;
  Buffer<T> da = upload(device, a), db = upload(device, b);
  Buffer<std::int32_t> info = upload(device, std::vector<std::int32_t>(static_cast<std::size_t>(la.batch), -7));
  out.status = device
                   .ask(Gels{.dtype = dtype_of<T>(),
                             .m = m,
                             .n = n,
                             .nrhs = nrhs,
                             .lda = la.ld,
                             .ldb = lb.ld,
                             .batch = la.batch,
                             .stride_a = la.stride,
                             .stride_b = lb.stride,
                             .a = da,
                             .b = db,
                             .info = info})
                   .wait()
                   .status();
  out.info = download(device, info);
  out.b = download(device, db);
  const std::vector<T>& after = out.b;
  out.padding_intact = padding_intact(b, after, lb);
  const Layout lx{.rows = n, .cols = nrhs, .ld = lb.ld, .batch = lb.batch, .stride = lb.stride};
  for (std::int64_t i = 0; i < la.batch; ++i)
    for (const Wide<T>& v : matrix(after, lx, i)) out.x.push_back(static_cast<T>(v));
  if (!out.status.ok()) return out;
  out.residual = worst(la.batch, [&](std::int64_t i) {
    return least_squares_residual(matrix(a, la, i), matrix(after, lx, i), matrix(b, lb, i), m, n, nrhs);
  });
  out.residual_norms = worst(la.batch, [&](std::int64_t i) {
    const std::vector<Wide<T>> r = multiply(matrix(a, la, i), false, matrix(after, lx, i), false, m, n, nrhs);
    const std::vector<Wide<T>> bi = matrix(b, lb, i);
    Dense norms(static_cast<std::size_t>(nrhs)), tail(static_cast<std::size_t>(nrhs));
    for (std::int64_t j = 0; j < nrhs; ++j) {
      for (std::int64_t row = 0; row < m; ++row) {
        norms[j] += std::norm(std::complex<double>(r[j * m + row] - bi[j * m + row]));
        if (row >= n) tail[j] += std::norm(std::complex<double>(after[lb.at(i, row, j)]));
      }
      norms[j] = std::sqrt(norms[j]);
      tail[j] = std::sqrt(tail[j]);
    }
    return relative_difference(tail, norms);
  });
  out.from_normal = worst(la.batch, [&](std::int64_t i) {
    return relative_difference(matrix(after, lx, i), normal_equations(matrix(a, la, i), matrix(b, lb, i), m, n, nrhs));
  });
  return out;
}

// Geqrf then Orgqr of random tall, square and wide matrices, single and batched: A = Q R and Q's columns
// orthonormal by their residuals, nothing written outside the matrices.
template <class T>
void expect_qr_of_random_matrices(Device& device, std::mt19937_64& rng) {
  constexpr std::int64_t kShapes[][2] = {{1, 1}, {2, 2}, {17, 17}, {64, 64}, {40, 9}, {9, 40}, {23, 1}};
  for (const auto& [m, n] : kShapes)
    for (std::int64_t batch : {1, 3}) {
      SCOPED_TRACE(::testing::Message() << m << "x" << n << " batch=" << batch);
      const Layout la = Layout::padded(m, n, batch, 2);
      const DecompositionResult<T> r = run_qr(device, la, random_matrices<T>(la, rng));
      ASSERT_THAT(r.first, accel::testing::IsOk());
      ASSERT_THAT(r.second, accel::testing::IsOk());
      EXPECT_LE(r.residual, tolerance<T>(std::max(m, n)));
      EXPECT_TRUE(r.padding_intact);
    }
}

// Q applied from Geqrf's reflectors, against Q formed by Orgqr and multiplied: both sides, both transposes (Qᴴ for a
// complex Q, which a plain transpose would not match), k reflectors of a taller A (k < order) as well as a full set,
// padded and batched; A comes back as Geqrf left it.
template <class T>
void expect_ormqr_applies_orgqrs_q(Device& device, std::mt19937_64& rng) {
  constexpr std::int64_t kCases[][3] = {{1, 1, 1}, {6, 4, 3}, {17, 9, 17}, {40, 23, 9}, {33, 1, 5}};  // m, n, k
  for (const auto& [m, n, k_limit] : kCases)
    for (Side side : {Side::left, Side::right})
      for (Transpose transpose : {Transpose::none, Transpose::transpose})
        for (std::int64_t batch : {1, 3}) {
          const std::int64_t order = side == Side::left ? m : n, k = std::min(k_limit, order);
          SCOPED_TRACE(::testing::Message() << m << "x" << n << " k=" << k << " " << to_string(side) << " "
                                            << accel::to_string(transpose) << " batch=" << batch);
          const Layout la = Layout::padded(order, k, batch, 2), lc = Layout::padded(m, n, batch, 1);
          const OrmqrResult<T> r =
              run_ormqr(device, side, transpose, la, random_matrices<T>(la, rng), lc, random_matrices<T>(lc, rng));
          ASSERT_THAT(r.status, accel::testing::IsOk());
          EXPECT_LE(r.error, tolerance<T>(order));
          EXPECT_TRUE(r.a_restored);
          EXPECT_TRUE(r.padding_intact);
        }
}

// Square and tall random A, single and batched; the normal equations' solution in double agrees as far as A's
// condition squared lets it (tall random matrices are well conditioned, square ones less so), the optimality residual
// is the strict check.
template <class T>
void expect_gels_solves_random_systems(Device& device, std::mt19937_64& rng) {
  constexpr std::int64_t kCases[][3] = {{1, 1, 1}, {5, 5, 2}, {7, 3, 1}, {40, 9, 4}, {64, 17, 3}, {23, 1, 5}};
  for (const auto& [m, n, nrhs] : kCases)
    for (std::int64_t batch : {1, 4}) {
      SCOPED_TRACE(::testing::Message() << m << "x" << n << " nrhs=" << nrhs << " batch=" << batch);
      const Layout la = Layout::padded(m, n, batch, 3), lb = Layout::padded(m, nrhs, batch, 1);
      const GelsResult<T> r = run_gels(device, la, random_matrices<T>(la, rng), lb, random_matrices<T>(lb, rng));
      ASSERT_THAT(r.status, accel::testing::IsOk());
      EXPECT_LE(r.residual, tolerance<T>(m));
      if (m > n) {
        EXPECT_LE(r.residual_norms, tolerance<T>(m));
      }
      EXPECT_LE(r.from_normal, m >= 2 * n ? 10 * tolerance<T>(m) : (std::is_same_v<Real<T>, float> ? 1e-2 : 1e-8));
      EXPECT_TRUE(r.padding_intact);
      EXPECT_EQ(r.info, std::vector<std::int32_t>(static_cast<std::size_t>(batch), 0));
    }
}

// A zero column makes R's diagonal exactly zero there (Householder leaves a zero column zero below the rows already
// reduced): LAPACK's info, named with its matrix; the rest of the batch is solved, as each matrix alone.
template <class T>
void expect_rank_deficient_gels_named(Device& device, std::mt19937_64& rng) {
  const Layout la = Layout::padded(9, 4, 3, 0), lb = Layout::padded(9, 2, 3, 0);
  std::vector<T> a = random_matrices<T>(la, rng);
  for (std::int64_t i = 0; i < 9; ++i) a[la.at(1, i, 2)] = T(0);
  const std::vector<T> b = random_matrices<T>(lb, rng);
  const GelsResult<T> r = run_gels(device, la, a, lb, b);
  EXPECT_THAT(r.status, accel::testing::StatusIs(Code::failed_precondition,
                                                 "solver::Gels (matrix 1 of the batch of 3, from 0): R(3,3) is exactly "
                                                 "zero: A is rank deficient, so the least squares solution is not "
                                                 "unique"));
  EXPECT_THAT(r.info, ::testing::ElementsAre(0, 3, 0));
  const Layout one = Layout::padded(9, 4, 1, 0), one_b = Layout::padded(9, 2, 1, 0);
  const std::vector<T> first(a.begin(), a.begin() + 36), first_b(b.begin(), b.begin() + 18);
  const GelsResult<T> alone = run_gels(device, one, first, one_b, first_b);
  ASSERT_THAT(alone.status, accel::testing::IsOk());
  const Layout lx = Layout::padded(4, 2, 1, 0);
  EXPECT_LE(relative_difference(matrix(std::vector<T>(r.x.begin(), r.x.begin() + 8), lx, 0), matrix(alone.x, lx, 0)),
            tolerance<T>(9));
}

}  // namespace accel::solver::testing
