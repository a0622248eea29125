// The dense solver requests on CUDA (cuSOLVER, and the family's kernels) against the CPU device (LAPACKE), on fresh
// random inputs over a grid of sizes: each device's results checked by their residuals, the solutions, eigenvalues and
// singular values of both compared, and failed factorisations answered with the same named error and infos (the
// complex dtypes: cuda_complex_solver_test.cpp). On CUDA devices in process (each completion strategy, since the infos
// become the status at completion) and isolated. Skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <vector>

#include "cuda_solver_fixture.hpp"

namespace accel::solver {
namespace {

using accel::testing::IsOk;
using accel::testing::relative_error;
using namespace testing;  // NOLINT(google-build-using-namespace): the solver test helpers

TEST_P(CudaSolverTest, LuMatchesTheCpuByResiduals) {
  for (std::int64_t n : kSizes) {
    lu<float>(n, 1);
    lu<double>(n, 1);
  }
  lu<float>(33, 4);
  lu<double>(7, 9);
}

TEST_P(CudaSolverTest, CholeskyMatchesTheCpuByResiduals) {
  for (std::int64_t n : kSizes) {
    cholesky<float>(n, 1);
    cholesky<double>(n, 1);
  }
  cholesky<float>(20, 5);
  cholesky<double>(3, 8);
}

TEST_P(CudaSolverTest, EigenMatchesTheCpuByResiduals) {
  for (std::int64_t n : kSizes) {
    eigen<float>(n, 1);
    eigen<double>(n, 1);
  }
  eigen<float>(31, 3);
  eigen<double>(12, 4);
}

TEST_P(CudaSolverTest, QrOfTallSquareAndWideMatricesIsRightByResiduals) {
  for (std::int64_t n : kSizes) {
    qr<float>(n, n, 1);
    qr<double>(n, n, 1);
  }
  qr<float>(300, 41, 2);
  qr<double>(17, 90, 3);
}

TEST_P(CudaSolverTest, OrmqrMatchesOrgqrsQAndTheCpu) {
  expect_ormqr_matches<float>(*gpu_, cpu_, rng_, 1, 1, 1, 1);
  expect_ormqr_matches<double>(*gpu_, cpu_, rng_, 16, 16, 16, 1);
  expect_ormqr_matches<float>(*gpu_, cpu_, rng_, 100, 37, 20, 1);
  expect_ormqr_matches<double>(*gpu_, cpu_, rng_, 512, 64, 64, 1);
  expect_ormqr_matches<float>(*gpu_, cpu_, rng_, 300, 41, 41, 2);
  expect_ormqr_matches<double>(*gpu_, cpu_, rng_, 17, 90, 9, 3);
}

TEST_P(CudaSolverTest, GelsMatchesTheNormalEquationsAndTheCpu) {
  for (std::int64_t n : kSizes) {
    gels<float>(n, n, 3, 1);
    gels<double>(2 * n, n, 1, 1);
  }
  gels<float>(300, 41, 5, 2);
  gels<double>(1000, 100, 7, 1);
  gels<double>(23, 1, 2, 5);
  gels<float>(17, 9, 1, 3);
}

// Empty problems: nothing computed, infos zero, B as it was, as on the CPU.
TEST_P(CudaSolverTest, EmptyGelsLeavesBAndZeroesTheInfos) {
  const Layout la = Layout::padded(5, 0, 2, 0), lb = Layout::padded(5, 2, 2, 0);
  const std::vector<float> b = random_matrices<float>(lb, rng_);
  const GelsResult<float> gpu = run_gels(*gpu_, la, std::vector<float>(la.size()), lb, b);
  EXPECT_THAT(gpu.status, IsOk());
  EXPECT_THAT(gpu.info, ::testing::ElementsAre(0, 0));
  EXPECT_EQ(gpu.b, b);
}

TEST_P(CudaSolverTest, SvdMatchesTheCpuByResidualsAndValues) {
  for (std::int64_t n : kSizes) {
    svd<float>(n, n, 1);
    svd<double>(n, n, 1);
  }
  svd<float>(257, 31, 2);
  svd<double>(64, 63, 3);
}

// cuSOLVER's gesvd takes m >= n only; the request says so before anything runs, and the CPU device decomposes it.
TEST_P(CudaSolverTest, SvdOfAWideMatrixIsNotSupportedOnCuda) {
  const Layout la = Layout::padded(8, 12, 1, 0);
  const std::vector<float> a = random_matrices<float>(la, rng_);
  EXPECT_THAT(run_svd(*gpu_, SvdJob::thin, SvdJob::thin, la, a).first,
              accel::testing::StatusIs(Code::not_supported, "cuSOLVER's gesvd takes m >= n, not m = 8 < n = 12"));
  EXPECT_THAT(run_svd(cpu_, SvdJob::thin, SvdJob::thin, la, a).first, IsOk());
}

// LU: matrix 2 of 4 has a zero column 5 (U(6,6) = 0 exactly); Cholesky: matrix 1 of 3 has a negative pivot.
TEST_P(CudaSolverTest, FailedFactorisationsAreTheSameNamedErrorsAsOnTheCpu) { failed_factorisations<double, float>(); }

// A zero column of matrix 2 of 4 leaves R(4,4) exactly zero: the same named error and infos as LAPACK's gels, and
// the other matrices solved.
TEST_P(CudaSolverTest, ARankDeficientGelsIsTheSameNamedErrorAsOnTheCpu) {
  const Layout la = Layout::padded(12, 6, 4, 1), lb = Layout::padded(12, 2, 4, 0);
  std::vector<double> a = random_matrices<double>(la, rng_);
  for (std::int64_t i = 0; i < 12; ++i) a[la.at(2, i, 3)] = 0;
  const std::vector<double> b = random_matrices<double>(lb, rng_);
  const GelsResult<double> gpu = run_gels(*gpu_, la, a, lb, b), cpu = run_gels(cpu_, la, a, lb, b);
  EXPECT_EQ(gpu.status.code(), Code::failed_precondition);
  EXPECT_EQ(gpu.status.message(), cpu.status.message());
  EXPECT_EQ(gpu.status.message(),
            "solver::Gels (matrix 2 of the batch of 4, from 0): R(4,4) is exactly zero: A is rank deficient, so the "
            "least squares solution is not unique");
  EXPECT_THAT(gpu.info, ::testing::ElementsAre(0, 0, 4, 0));
  EXPECT_EQ(gpu.info, cpu.info);
  for (std::int64_t i : {0, 1, 3}) {
    const auto x = [&](const GelsResult<double>& r) {
      return std::vector<double>(r.x.begin() + i * 12, r.x.begin() + (i + 1) * 12);
    };
    EXPECT_LE(relative_error(x(gpu), x(cpu)), 1e-9) << "matrix " << i;
  }
}

// cuSOLVER's getrs trusts its pivots; the CUDA device checks them on the GPU first and refuses one outside 1..n as
// the CPU does, naming the first (in the batch's order), before getrs touches B. The stream serves on after.
TEST_P(CudaSolverTest, BadPivotsAreRefusedAsOnTheCpuAndBIsUntouched) {
  const std::int64_t n = 6, batch = 3;
  const Layout la = Layout::padded(n, n, batch, 0), lb = Layout::padded(n, 2, batch, 1);
  const std::vector<double> a = random_matrices<double>(la, rng_), b = random_matrices<double>(lb, rng_);
  for (std::int32_t bad : {0, -1, 7, 1 << 30}) {
    SCOPED_TRACE(fmt::format("bad pivot {}", bad));
    std::vector<std::int32_t> pivots(static_cast<std::size_t>(n * batch), static_cast<std::int32_t>(n));
    pivots[n + 4] = bad;  // matrix 1, row 4: the first bad one
    pivots[2 * n + 1] = 0;
    Status answers[2];
    for (int d = 0; d < 2; ++d) {
      Device& device = d == 0 ? *gpu_ : cpu_;
      Buffer<double> da = upload(device, a), db = upload(device, b);
      Buffer<std::int32_t> ipiv = upload(device, pivots);
      answers[d] = device
                       .ask(Getrs{.dtype = DType::f64,
                                  .n = n,
                                  .nrhs = lb.cols,
                                  .ldb = lb.ld,
                                  .batch = batch,
                                  .stride_b = lb.stride,
                                  .a = da,
                                  .ipiv = ipiv,
                                  .b = db})
                       .wait()
                       .status();
      EXPECT_EQ(download(device, db), b);
    }
    EXPECT_THAT(answers[0], accel::testing::StatusIs(Code::invalid_argument,
                                                     fmt::format("solver::Getrs (matrix 1 of the batch of 3, from 0): "
                                                                 "ipiv[10] = {} is not a row of A (1 to 6)",
                                                                 bad)));
    EXPECT_EQ(answers[0].message(), answers[1].message());
  }
  // Only the last pivot of a batch larger than the check's grid is bad; then Getrf's own pivots solve.
  const std::int64_t many = 5000;
  const Layout lm = Layout::padded(2, 2, many, 0), lr = Layout::padded(2, 1, many, 0);
  std::vector<std::int32_t> pivots(static_cast<std::size_t>(2 * many), 2);
  pivots.back() = 3;
  Buffer<float> da = upload(*gpu_, random_matrices<float>(lm, rng_)),
                db = upload(*gpu_, random_matrices<float>(lr, rng_));
  Buffer<std::int32_t> ipiv = upload(*gpu_, pivots);
  EXPECT_THAT(gpu_->ask(Getrs{.n = 2, .nrhs = 1, .batch = many, .a = da, .ipiv = ipiv, .b = db}).wait().status(),
              accel::testing::StatusIs(Code::invalid_argument, "ipiv[9999] = 3 is not a row of A (1 to 2)"));
  const FactorResult<double> after = run_lu(*gpu_, la, a, lb, b);
  EXPECT_THAT(after.solve, IsOk());
  EXPECT_LE(after.solve_residual, tolerance<double>(n));
}

// Requests in flight together each get their own infos' status (the check travels with its request's completion).
TEST_P(CudaSolverTest, ManyRequestsInFlightEachGetTheirOwnStatus) {
  constexpr int kRequests = 24;
  const std::int64_t n = 32;
  std::vector<Buffer<float>> matrices;
  std::vector<Buffer<std::int32_t>> pivots;
  std::vector<Future<Done>> pending;
  for (int i = 0; i < kRequests; ++i) {
    const Layout la = Layout::padded(n, n, 1, 0);
    std::vector<float> a = random_matrices<float>(la, rng_);
    if (i % 3 == 1)
      for (std::int64_t r = 0; r < n; ++r) a[la.at(0, r, i % n)] = 0;
    matrices.push_back(upload(*gpu_, a));
    pivots.push_back(upload(*gpu_, std::vector<std::int32_t>(n)));
  }
  for (int i = 0; i < kRequests; ++i) pending.push_back(gpu_->ask(Getrf{.n = n, .a = matrices[i], .ipiv = pivots[i]}));
  for (int i = 0; i < kRequests; ++i) {
    const Status status = pending[i].wait().status();
    if (i % 3 == 1) {
      EXPECT_EQ(status.message(),
                fmt::format("solver::Getrf: U({0},{0}) is exactly zero: the matrix is singular", i % n + 1));
    } else {
      EXPECT_THAT(status, IsOk()) << "request " << i;
    }
  }
}

// Of cuSOLVER's potrf: n beyond kSmallCholeskyMaxN, which the family's own kernels (no work area) take.
TEST_P(CudaSolverTest, WorkspaceSizesAreAskedOncePerShape) {
  const Layout la = Layout::padded(300, 300, 1, 0), lb = Layout::padded(300, 1, 1, 0);
  for (int i = 0; i < 3; ++i) {
    const std::vector<double> a = random_symmetric<double>(la, rng_, true), b = random_matrices<double>(lb, rng_);
    ASSERT_THAT(run_cholesky(*gpu_, Fill::upper, la, a, lb, b).factor, IsOk());
  }
  Result<DeviceInfo> info = gpu_->info().wait();
  ASSERT_THAT(info, IsOk());
  ASSERT_NE(info->library("cuSOLVER"), nullptr);
  const CacheStats* sizes = info->cache("cusolver-workspace-sizes");
  ASSERT_NE(sizes, nullptr);
  EXPECT_GE(sizes->hits, 2u);
  EXPECT_GE(sizes->entries, 1u);
}

INSTANTIATE_TEST_SUITE_P(Devices, CudaSolverTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel::solver
