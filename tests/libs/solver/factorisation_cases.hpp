// LU and Cholesky of fresh random matrices on a GPU device against the CPU device (LAPACKE), as the CUDA solver tests
// run them: residuals of the factors and of the solves with them, the padding (and, for Cholesky, the triangle the
// fill does not name) left as it was, the same infos, and solutions that agree as far as the matrices allow.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

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

}  // namespace accel::solver::testing
