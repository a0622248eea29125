// LU, Cholesky and QR of fresh random matrices on a GPU device against the CPU device (LAPACKE), as the CUDA solver
// tests run them: residuals of the factors and of the solves with them, the padding (and, for Cholesky, the triangle
// the fill does not name) left as it was, the same infos, and solutions (QR: R, the reflectors, Q and Q applied) that
// agree as far as the matrices allow.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <random>
#include <type_traits>
#include <vector>

#include "least_squares_cases.hpp"
#include "solver_cases.hpp"
#include "testing/cuda_fixture.hpp"

namespace accel::solver::testing {

// Solutions of both devices agree as far as A's condition lets them. Random n x n matrices have a condition number
// of about n, with a tail P(κ > t n) ≈ 1/t: these bounds fail for κ beyond about 1e6 (f32) or 1e9 (f64), which
// for n <= 512 is rarer than one run in a thousand. The residuals are the strict check.
template <class T>
double agreement() {
  return std::is_same_v<Real<T>, float> ? 0.1 : 1e-6;
}

// What both factorisations check of a GPU run against the CPU's: factored and solved, by their residuals, outside
// the matrices (and the triangle a Cholesky does not name) nothing written, the same infos, and solutions within
// `agreement` of each other.
template <class T>
void expect_same_results(const FactorResult<T>& on_gpu, const FactorResult<T>& on_cpu, std::int64_t n,
                         double agreement) {
  ASSERT_NO_FATAL_FAILURE(expect_factored_and_solved(on_gpu, n));
  ASSERT_THAT(on_cpu.solve, accel::testing::IsOk());
  EXPECT_TRUE(on_gpu.other_triangle_intact);
  EXPECT_EQ(on_gpu.info, on_cpu.info);
  EXPECT_LE(accel::testing::relative_error(doubles(on_gpu.x), doubles(on_cpu.x)), agreement);
}

// Getrf then Getrs (of both transposes) of `batch` random n x n matrices, `pad` rows and elements between them.
template <class T>
void expect_lu_matches(Device& gpu, Device& cpu, std::mt19937_64& rng, std::int64_t n, std::int64_t batch,
                       std::int64_t pad) {
  SCOPED_TRACE(fmt::format("LU {} n={} batch={} pad={}", to_string(dtype_of<T>()), n, batch, pad));
  const Layout la = Layout::padded(n, n, batch, pad), lb = Layout::padded(n, 7, batch, 1);
  const std::vector<T> a = random_matrices<T>(la, rng), b = random_matrices<T>(lb, rng);
  for (Transpose transpose : {Transpose::none, Transpose::transpose}) {
    const FactorResult<T> on_gpu = run_lu(gpu, la, a, lb, b, transpose), on_cpu = run_lu(cpu, la, a, lb, b, transpose);
    expect_same_results(on_gpu, on_cpu, n, agreement<T>());
  }
}

// Potrf then Potrs (of both fills) of `batch` random positive definite n x n matrices (M Mᴴ / n + I).
template <class T>
void expect_cholesky_matches(Device& gpu, Device& cpu, std::mt19937_64& rng, std::int64_t n, std::int64_t batch,
                             std::int64_t pad) {
  SCOPED_TRACE(fmt::format("Cholesky {} n={} batch={} pad={}", to_string(dtype_of<T>()), n, batch, pad));
  const Layout la = Layout::padded(n, n, batch, pad), lb = Layout::padded(n, 4, batch, 0);
  const std::vector<T> a = random_symmetric<T>(la, rng, true), b = random_matrices<T>(lb, rng);
  for (Fill fill : {Fill::lower, Fill::upper}) {
    SCOPED_TRACE(to_string(fill));
    const FactorResult<T> on_gpu = run_cholesky(gpu, fill, la, a, lb, b),
                          on_cpu = run_cholesky(cpu, fill, la, a, lb, b);
    expect_same_results(on_gpu, on_cpu, n, 10 * tolerance<T>(n));  // well conditioned: the solutions agree closely
  }
}

// Geqrf then Orgqr (the thin Q) of `batch` m x n matrices, `pad` rows and elements between them, with columns
// `zero_columns` of each set to zero (a column already reduced: tau = 0 on both devices). Both devices make LAPACK's
// reflectors, so R and the reflectors, tau and Q agree as far as A's condition allows, beside each one's residuals.
template <class T>
void expect_qr_matches(Device& gpu, Device& cpu, std::mt19937_64& rng, std::int64_t m, std::int64_t n,
                       std::int64_t batch, std::int64_t pad, std::initializer_list<std::int64_t> zero_columns = {}) {
  SCOPED_TRACE(fmt::format("QR {} {}x{} batch={} pad={}", to_string(dtype_of<T>()), m, n, batch, pad));
  const Layout la = Layout::padded(m, n, batch, pad);
  std::vector<T> a = random_matrices<T>(la, rng);
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t j : zero_columns)
      for (std::int64_t i = 0; i < m; ++i) a[la.at(b, i, j)] = T(0);
  const DecompositionResult<T> on_gpu = run_qr(gpu, la, a), on_cpu = run_qr(cpu, la, a);
  ASSERT_THAT(on_gpu.first, accel::testing::IsOk());
  ASSERT_THAT(on_gpu.second, accel::testing::IsOk());
  ASSERT_THAT(on_cpu.second, accel::testing::IsOk());
  EXPECT_LE(on_gpu.residual, tolerance<T>(std::max(m, n)));
  EXPECT_TRUE(on_gpu.padding_intact);
  using accel::testing::relative_error;
  EXPECT_LE(relative_error(doubles(on_gpu.factors), doubles(on_cpu.factors)), agreement<T>());
  EXPECT_LE(relative_error(doubles(on_gpu.tau), doubles(on_cpu.tau)), agreement<T>());
  EXPECT_LE(relative_error(doubles(on_gpu.q), doubles(on_cpu.q)), agreement<T>());
}

// Ormqr of `batch` random m x n matrices C with k reflectors of a random matrix, from both sides and with both
// transposes: each device against the Q its own Orgqr forms, and the two devices' results against each other (both
// make LAPACK's reflectors).
template <class T>
void expect_ormqr_matches(Device& gpu, Device& cpu, std::mt19937_64& rng, std::int64_t m, std::int64_t n,
                          std::int64_t k, std::int64_t batch) {
  for (Side side : {Side::left, Side::right})
    for (Transpose transpose : {Transpose::none, Transpose::transpose}) {
      const std::int64_t order = side == Side::left ? m : n, reflectors = std::min(k, order);
      SCOPED_TRACE(fmt::format("Ormqr {} C {}x{} k={} {} {} batch={}", to_string(dtype_of<T>()), m, n, reflectors,
                               to_string(side), accel::to_string(transpose), batch));
      const Layout la = Layout::padded(order, reflectors, batch, 2), lc = Layout::padded(m, n, batch, 1);
      const std::vector<T> a = random_matrices<T>(la, rng), c = random_matrices<T>(lc, rng);
      const OrmqrResult<T> on_gpu = run_ormqr(gpu, side, transpose, la, a, lc, c);
      const OrmqrResult<T> on_cpu = run_ormqr(cpu, side, transpose, la, a, lc, c);
      ASSERT_THAT(on_gpu.status, accel::testing::IsOk());
      ASSERT_THAT(on_cpu.status, accel::testing::IsOk());
      EXPECT_LE(on_gpu.error, tolerance<T>(order));
      EXPECT_LE(on_cpu.error, tolerance<T>(order));
      EXPECT_TRUE(on_gpu.a_restored);
      EXPECT_TRUE(on_gpu.padding_intact);
      EXPECT_LE(accel::testing::relative_error(doubles(on_gpu.c), doubles(on_cpu.c)), agreement<T>());
    }
}

}  // namespace accel::solver::testing
