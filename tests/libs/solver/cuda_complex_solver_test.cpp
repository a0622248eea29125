// The dense solver requests on complex matrices (c64 and c128) on CUDA (cuSOLVER's C and Z routines) against the CPU
// device (LAPACKE's), on fresh random inputs: LU, Cholesky, Hermitian eigen, QR, Gesvd and least squares, checked as
// the real ones are (cuda_solver_fixture.hpp). On CUDA devices in process (each completion strategy) and isolated.
// Skipped without a GPU.
#include <gtest/gtest.h>

#include "cuda_solver_fixture.hpp"

namespace accel::solver {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace): the solver test helpers

class CudaComplexSolverTest : public CudaSolverTest {};

// cuSOLVER's C and Z routines against LAPACKE's: general random matrices (rows exchanged), odd sizes, batches.
TEST_P(CudaComplexSolverTest, ComplexLuMatchesTheCpuByResiduals) {
  for (std::int64_t n : {1, 16, 33, 100, 512}) {
    lu<c64>(n, 1);
    lu<c128>(n, 1);
  }
  lu<c64>(33, 4);
  lu<c128>(7, 9);
}

// Hermitian positive definite M Mᴴ / n + I; the batches go through potrfBatched (C and Z).
TEST_P(CudaComplexSolverTest, ComplexCholeskyMatchesTheCpuByResiduals) {
  for (std::int64_t n : {1, 16, 33, 100, 512}) {
    cholesky<c64>(n, 1);
    cholesky<c128>(n, 1);
  }
  cholesky<c64>(20, 5);
  cholesky<c128>(3, 8);
}

// Hermitian matrices (cuSOLVER's heevd): real eigenvalues, unitary eigenvectors.
TEST_P(CudaComplexSolverTest, HermitianEigenMatchesTheCpuByResiduals) {
  for (std::int64_t n : {1, 2, 17, 64, 200}) {
    eigen<c64>(n, 1);
    eigen<c128>(n, 1);
  }
  eigen<c64>(33, 3);
  eigen<c128>(9, 5);
}

// Complex QR (cuSOLVER's geqrf, ungqr and unmqr; the family's own kernels are real): R, tau and Q as the CPU's and
// right by residuals, tall, square and wide, and Q or Qᴴ applied from either side.
TEST_P(CudaComplexSolverTest, ComplexQrMatchesTheCpu) {
  expect_qr_matches<c64>(*gpu_, cpu_, rng_, 100, 37, 1, 0);
  expect_qr_matches<c128>(*gpu_, cpu_, rng_, 17, 90, 3, 2);
  expect_qr_matches<c64>(*gpu_, cpu_, rng_, 64, 64, 2, 1);
  expect_qr_matches<c128>(*gpu_, cpu_, rng_, 300, 41, 1, 0);
  expect_ormqr_matches<c64>(*gpu_, cpu_, rng_, 30, 30, 30, 1);
  expect_ormqr_matches<c128>(*gpu_, cpu_, rng_, 100, 37, 20, 2);
}

// cuSOLVER's C and Z gesvd: A = U Σ Vᴴ, U and V unitary, the real values as the CPU's.
TEST_P(CudaComplexSolverTest, ComplexSvdMatchesTheCpuByResidualsAndValues) {
  for (std::int64_t n : {1, 16, 100}) {
    svd<c64>(n, n, 1);
    svd<c128>(n, n, 1);
  }
  svd<c64>(257, 31, 2);
  svd<c128>(64, 63, 3);
}

// The complex factorisations fail as the real ones do: the same named errors and infos as LAPACKE's, one matrix of a
// batch (Cholesky's through potrfBatched).
TEST_P(CudaComplexSolverTest, FailedComplexFactorisationsAreTheSameNamedErrorsAsOnTheCpu) {
  failed_factorisations<c64, c128>();
}

// Complex least squares (cuSOLVER's geqrf, unmqr for Qᴴ B, getrs on R): against the normal equations and the CPU.
TEST_P(CudaComplexSolverTest, GelsMatchesTheNormalEquationsAndTheCpu) {
  gels<c64>(16, 16, 3, 1);
  gels<c128>(100, 50, 2, 1);
  gels<c64>(300, 41, 5, 2);
  gels<c128>(23, 1, 2, 5);
}

TEST_P(CudaComplexSolverTest, ARankDeficientGelsIsTheSameNamedErrorAsOnTheCpu) {
  expect_rank_deficient_gels_named<c64>(*gpu_, rng_);
  expect_rank_deficient_gels_named<c128>(*gpu_, rng_);
}

INSTANTIATE_TEST_SUITE_P(Devices, CudaComplexSolverTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel::solver
