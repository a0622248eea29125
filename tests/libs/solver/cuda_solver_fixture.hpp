// The fixture of the dense solver tests on CUDA (cuda_solver_test.cpp, real; cuda_complex_solver_test.cpp, c64 and
// c128): a CUDA device (each completion strategy, and isolated) beside the CPU device, and the comparisons each test
// runs over its sizes: residuals on each device, solutions, eigenvalues and singular values of both compared, failed
// factorisations as the same named errors and infos.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <complex>
#include <optional>
#include <random>

#include "factorisation_cases.hpp"
#include "least_squares_cases.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/test_seed.hpp"

namespace accel::solver::testing {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

class CudaSolverTest : public ::testing::TestWithParam<accel::testing::GpuTestTarget> {
 protected:
  void SetUp() override {
    ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), device);
    gpu_ = device;
  }

  template <class T>
  void lu(std::int64_t n, std::int64_t batch) {
    expect_lu_matches<T>(*gpu_, cpu_, rng_, n, batch, batch == 1 ? 0 : 5);
  }

  template <class T>
  void cholesky(std::int64_t n, std::int64_t batch) {
    expect_cholesky_matches<T>(*gpu_, cpu_, rng_, n, batch, 3);
  }

  template <class T>
  void eigen(std::int64_t n, std::int64_t batch) {
    SCOPED_TRACE(fmt::format("{} n={} batch={}", to_string(dtype_of<T>()), n, batch));
    const Layout la = Layout::padded(n, n, batch, 2);
    const std::vector<T> a = random_symmetric<T>(la, rng_, false);
    for (Fill fill : {Fill::lower, Fill::upper}) {
      const EigenResult<T> gpu = run_eigen(*gpu_, EigenJob::values_and_vectors, fill, la, a);
      const EigenResult<T> values = run_eigen(*gpu_, EigenJob::values, fill, la, a);
      const EigenResult<T> cpu = run_eigen(cpu_, EigenJob::values, fill, la, a);
      ASSERT_THAT(gpu.status, accel::testing::IsOk());
      ASSERT_THAT(values.status, accel::testing::IsOk());
      EXPECT_LE(gpu.residual, tolerance<T>(n));
      EXPECT_TRUE(gpu.padding_intact);
      // Eigenvalues of symmetric matrices are perfectly conditioned: every library finds the same ones.
      EXPECT_LE(accel::testing::relative_error(doubles(gpu.w), doubles(cpu.w)), tolerance<T>(n));
      EXPECT_LE(accel::testing::relative_error(doubles(values.w), doubles(cpu.w)), tolerance<T>(n));
    }
  }

  template <class T>
  void qr(std::int64_t m, std::int64_t n, std::int64_t batch) {
    SCOPED_TRACE(fmt::format("{} {}x{} batch={}", to_string(dtype_of<T>()), m, n, batch));
    const Layout la = Layout::padded(m, n, batch, 1);
    const DecompositionResult<T> gpu = run_qr(*gpu_, la, random_matrices<T>(la, rng_));
    ASSERT_THAT(gpu.first, accel::testing::IsOk());
    ASSERT_THAT(gpu.second, accel::testing::IsOk());
    EXPECT_LE(gpu.residual, tolerance<T>(std::max(m, n)));
    EXPECT_TRUE(gpu.padding_intact);
  }

  template <class T>
  void gels(std::int64_t m, std::int64_t n, std::int64_t nrhs, std::int64_t batch) {
    SCOPED_TRACE(fmt::format("{} {}x{} nrhs={} batch={}", to_string(dtype_of<T>()), m, n, nrhs, batch));
    const Layout la = Layout::padded(m, n, batch, 3), lb = Layout::padded(m, nrhs, batch, 1);
    const std::vector<T> a = random_matrices<T>(la, rng_), b = random_matrices<T>(lb, rng_);
    const GelsResult<T> gpu = run_gels(*gpu_, la, a, lb, b), cpu = run_gels(cpu_, la, a, lb, b);
    ASSERT_THAT(gpu.status, accel::testing::IsOk());
    ASSERT_THAT(cpu.status, accel::testing::IsOk());
    EXPECT_LE(gpu.residual, tolerance<T>(m));
    if (m > n) {
      EXPECT_LE(gpu.residual_norms, tolerance<T>(m));
    }
    EXPECT_TRUE(gpu.padding_intact);
    EXPECT_EQ(gpu.info, cpu.info);
    // Tall random matrices are well conditioned; square ones as agreement() allows.
    const double bound = m >= 2 * n ? 10 * tolerance<T>(m) : agreement<T>();
    EXPECT_LE(gpu.from_normal, bound);
    EXPECT_LE(accel::testing::relative_error(doubles(gpu.x), doubles(cpu.x)), bound);
    // Below X, the rest of Qᵀ B (signs are each library's): its column norms, the residuals, agree.
    EXPECT_LE(accel::testing::relative_error(tail_norms(gpu.b, lb, n), tail_norms(cpu.b, lb, n)), bound);
  }

  template <class T>
  void svd(std::int64_t m, std::int64_t n, std::int64_t batch) {
    SCOPED_TRACE(fmt::format("{} {}x{} batch={}", to_string(dtype_of<T>()), m, n, batch));
    const Layout la = Layout::padded(m, n, batch, 2);
    const std::vector<T> a = random_matrices<T>(la, rng_);
    const DecompositionResult<T> cpu = run_svd(cpu_, SvdJob::none, SvdJob::none, la, a);
    ASSERT_THAT(cpu.first, accel::testing::IsOk());
    for (SvdJob job : {SvdJob::thin, SvdJob::full}) {
      const DecompositionResult<T> gpu = run_svd(*gpu_, job, job, la, a);
      ASSERT_THAT(gpu.first, accel::testing::IsOk());
      EXPECT_LE(gpu.residual, tolerance<T>(std::max(m, n)));
      EXPECT_TRUE(gpu.padding_intact);
      EXPECT_EQ(gpu.info, cpu.info);
      // Singular values are perfectly conditioned: every library finds the same ones.
      EXPECT_LE(accel::testing::relative_error(doubles(gpu.values), doubles(cpu.values)), tolerance<T>(std::max(m, n)));
    }
  }

  // An LU of element type L and a Cholesky of element type C that fail in one matrix of a batch: the same named
  // errors and infos on the GPU as on the CPU.
  template <class L, class C>
  void failed_factorisations() {
    const Layout la = Layout::padded(9, 9, 4, 2), lb = Layout::padded(9, 2, 4, 0);
    std::vector<L> a = random_matrices<L>(la, rng_);
    for (std::int64_t i = 0; i < 9; ++i) a[la.at(2, i, 5)] = L(0);
    const std::vector<L> b = random_matrices<L>(lb, rng_);
    const FactorResult<L> gpu = run_lu(*gpu_, la, a, lb, b), cpu = run_lu(cpu_, la, a, lb, b);
    EXPECT_EQ(gpu.factor.code(), Code::failed_precondition);
    EXPECT_EQ(gpu.factor.message(), cpu.factor.message());
    EXPECT_EQ(gpu.factor.message(),
              "solver::Getrf (matrix 2 of the batch of 4, from 0): U(6,6) is exactly zero: the matrix is singular");
    EXPECT_EQ(gpu.info, cpu.info);

    const Layout ls = Layout::padded(6, 6, 3, 0), lr = Layout::padded(6, 1, 3, 0);
    std::vector<C> s = random_symmetric<C>(ls, rng_, true);
    s[ls.at(1, 2, 2)] = C(-1);
    for (Fill fill : {Fill::lower, Fill::upper}) {
      const std::vector<C> r = random_matrices<C>(lr, rng_);
      const FactorResult<C> g = run_cholesky(*gpu_, fill, ls, s, lr, r), c = run_cholesky(cpu_, fill, ls, s, lr, r);
      EXPECT_EQ(g.factor.code(), Code::failed_precondition);
      EXPECT_EQ(g.factor.message(), c.factor.message());
      EXPECT_EQ(g.info, c.info);
      EXPECT_EQ(g.info[0], 0);
      EXPECT_EQ(g.info[2], 0);
    }
  }

  System system_;
  Device cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::optional<Device> gpu_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

inline constexpr std::int64_t kSizes[] = {1, 16, 100, 512};

}  // namespace accel::solver::testing
