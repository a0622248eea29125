// solver::Getrf of real matrices of n <= 256, solver::Potrf of real matrices and batches of n <= 256 and solver::Geqrf
// and solver::Orgqr of real matrices of at most 256 rows on CUDA, which run the family's own panel kernels
// (lu_kernel.cu, cholesky_kernel.cu, qr_kernel.cu) rather than cuSOLVER: against the CPU device (LAPACKE) on fresh
// random inputs, at every panel boundary (panels of 32 columns, tiles of 16), padded and strided batches, the issue's
// 64 x (32 x 32), both fills, both sides of the switch to cuSOLVER, tall and wide QR, rank-deficient matrices whose
// zero pivot lies in a later panel, matrices that stop being positive definite there and columns a QR finds already
// reduced. Each result checked by its residuals, its solve (Getrs and Potrs, cuSOLVER's, with these factors) or its R
// and Q, and its infos. On CUDA devices in process (each completion strategy) and isolated. Skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include "factorisation_cases.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/test_seed.hpp"

namespace accel::solver {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace): the solver test helpers

using accel::testing::GpuTestTarget;

class CudaSmallFactorisationTest : public ::testing::TestWithParam<GpuTestTarget> {
 protected:
  void SetUp() override {
    ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), device);
    gpu_ = device;
  }

  // The shapes of the batched tests: the 64 x (32 x 32), padded ones, at the largest n, many tiny ones.
  template <class Check>
  static void on_batches(Check&& check) {
    check.template operator()<float>(32, 64, 0);
    check.template operator()<double>(32, 64, 0);
    check.template operator()<float>(70, 5, 4);
    check.template operator()<double>(256, 3, 1);
    check.template operator()<float>(3, 1000, 2);
  }

  // Zero columns at `zeros` in matrix 1 of 3: U(j+1, j+1) of the first is exactly zero on every device, the
  // factorisation goes on past it, and both devices name the same column.
  template <class T>
  void singular(std::int64_t n, std::initializer_list<std::int64_t> zeros) {
    const std::int64_t first = std::min(zeros);
    SCOPED_TRACE(fmt::format("{} n={} first zero column {}", to_string(dtype_of<T>()), n, first));
    const Layout la = Layout::padded(n, n, 3, 2), lb = Layout::padded(n, 1, 3, 0);
    std::vector<T> a = random_matrices<T>(la, rng_);
    for (std::int64_t j : zeros)
      for (std::int64_t i = 0; i < n; ++i) a[la.at(1, i, j)] = T(0);
    const std::vector<T> b = random_matrices<T>(lb, rng_);
    const FactorResult<T> gpu = run_lu(*gpu_, la, a, lb, b), cpu = run_lu(cpu_, la, a, lb, b);
    EXPECT_EQ(gpu.factor.code(), Code::failed_precondition);
    EXPECT_EQ(gpu.factor.message(), cpu.factor.message());
    EXPECT_EQ(gpu.info, cpu.info);
    EXPECT_EQ(gpu.info[1], first + 1);
    EXPECT_TRUE(gpu.padding_intact);
  }

  // A diagonal element of the middle matrix of `batch` made negative at `column`: the leading minor of order
  // column + 1 is not positive definite, on every device, and both name it; the other matrices are factored.
  template <class T>
  void not_positive_definite(std::int64_t n, std::int64_t column, std::int64_t batch = 3) {
    for (Fill fill : {Fill::lower, Fill::upper}) {
      SCOPED_TRACE(
          fmt::format("{} n={} column {} batch {} {}", to_string(dtype_of<T>()), n, column, batch, to_string(fill)));
      const Layout la = Layout::padded(n, n, batch, 1), lb = Layout::padded(n, 1, batch, 0);
      std::vector<T> a = random_symmetric<T>(la, rng_, true);
      const std::int64_t failing = batch / 2;
      a[la.at(failing, column, column)] = T(-1);
      const std::vector<T> b = random_matrices<T>(lb, rng_);
      const FactorResult<T> gpu = run_cholesky(*gpu_, fill, la, a, lb, b), cpu = run_cholesky(cpu_, fill, la, a, lb, b);
      EXPECT_EQ(gpu.factor.code(), Code::failed_precondition);
      EXPECT_EQ(gpu.factor.message(), cpu.factor.message());
      EXPECT_EQ(gpu.info, cpu.info);
      for (std::int64_t i = 0; i < batch; ++i) EXPECT_EQ(gpu.info[i], i == failing ? column + 1 : 0);
      EXPECT_TRUE(gpu.other_triangle_intact);
    }
  }

  System system_;
  Device cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::optional<Device> gpu_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

// Every panel boundary (32 columns) and tile boundary (16), and both sides of the switch to cuSOLVER at 256.
constexpr std::int64_t kBoundaries[] = {1, 2, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 97, 128, 200, 255, 256, 257};

TEST_P(CudaSmallFactorisationTest, LuMatchesTheCpuAtEveryPanelBoundary) {
  for (std::int64_t n : kBoundaries) {
    expect_lu_matches<float>(*gpu_, cpu_, rng_, n, 1, 0);
    expect_lu_matches<double>(*gpu_, cpu_, rng_, n, 1, 3);
  }
}

TEST_P(CudaSmallFactorisationTest, LuBatchesMatchTheCpu) {
  on_batches([&]<class T>(std::int64_t n, std::int64_t batch, std::int64_t pad) {
    expect_lu_matches<T>(*gpu_, cpu_, rng_, n, batch, pad);
  });
}

TEST_P(CudaSmallFactorisationTest, AZeroPivotInALaterPanelIsNamedAsOnTheCpu) {
  singular<float>(70, {40});
  singular<double>(70, {33, 12});  // the first in the order of the columns, not of the list
  singular<float>(256, {255});
  singular<double>(100, {0});
}

// Batches and single matrices, which take the panel kernels up to n = 256 (cuSOLVER beyond).
TEST_P(CudaSmallFactorisationTest, CholeskyMatchesTheCpuAtEveryPanelBoundary) {
  for (std::int64_t n : kBoundaries) {
    expect_cholesky_matches<float>(*gpu_, cpu_, rng_, n, 2, 0);
    expect_cholesky_matches<double>(*gpu_, cpu_, rng_, n, 2, 2);
  }
  for (std::int64_t n : kBoundaries) {
    expect_cholesky_matches<float>(*gpu_, cpu_, rng_, n, 1, 1);
    expect_cholesky_matches<double>(*gpu_, cpu_, rng_, n, 1, 0);
  }
}

TEST_P(CudaSmallFactorisationTest, CholeskyBatchesMatchTheCpu) {
  on_batches([&]<class T>(std::int64_t n, std::int64_t batch, std::int64_t pad) {
    expect_cholesky_matches<T>(*gpu_, cpu_, rng_, n, batch, pad);
  });
}

TEST_P(CudaSmallFactorisationTest, ALaterPanelThatIsNotPositiveDefiniteIsNamedAsOnTheCpu) {
  not_positive_definite<float>(70, 40);
  not_positive_definite<double>(100, 0);
  not_positive_definite<float>(256, 255);
  not_positive_definite<double>(64, 32);
  // One matrix: in the first panel, a later one, the last one's last column.
  not_positive_definite<float>(200, 3, 1);
  not_positive_definite<double>(97, 64, 1);
  not_positive_definite<float>(256, 255, 1);
  not_positive_definite<double>(33, 32, 1);
}

TEST_P(CudaSmallFactorisationTest, QrMatchesTheCpuAtEveryPanelBoundary) {
  for (std::int64_t n : kBoundaries) {
    expect_qr_matches<float>(*gpu_, cpu_, rng_, n, n, 1, 0);
    expect_qr_matches<double>(*gpu_, cpu_, rng_, n, n, 1, 2);
  }
}

TEST_P(CudaSmallFactorisationTest, QrOfTallAndWideMatricesMatchesTheCpu) {
  expect_qr_matches<float>(*gpu_, cpu_, rng_, 256, 17, 1, 1);
  expect_qr_matches<double>(*gpu_, cpu_, rng_, 200, 100, 2, 0);
  expect_qr_matches<float>(*gpu_, cpu_, rng_, 65, 64, 1, 0);
  expect_qr_matches<double>(*gpu_, cpu_, rng_, 17, 90, 3, 1);   // R right of the reflectors, by one update
  expect_qr_matches<float>(*gpu_, cpu_, rng_, 40, 200, 1, 0);   // wider than the panels reach
  expect_qr_matches<double>(*gpu_, cpu_, rng_, 33, 256, 1, 0);  // the widest these kernels take
  expect_qr_matches<float>(*gpu_, cpu_, rng_, 300, 41, 1, 0);   // taller: cuSOLVER
}

TEST_P(CudaSmallFactorisationTest, QrBatchesMatchTheCpu) {
  on_batches([&]<class T>(std::int64_t n, std::int64_t batch, std::int64_t pad) {
    expect_qr_matches<T>(*gpu_, cpu_, rng_, n, n, batch, pad);
  });
}

// Q applied from the left runs these kernels (from the right, cuSOLVER): panels of reflectors up to 256 rows.
TEST_P(CudaSmallFactorisationTest, OrmqrMatchesTheCpuAcrossPanels) {
  expect_ormqr_matches<float>(*gpu_, cpu_, rng_, 256, 40, 256, 1);
  expect_ormqr_matches<double>(*gpu_, cpu_, rng_, 97, 33, 65, 2);
  expect_ormqr_matches<float>(*gpu_, cpu_, rng_, 32, 32, 32, 64);
  expect_ormqr_matches<double>(*gpu_, cpu_, rng_, 200, 1, 100, 1);
}

TEST_P(CudaSmallFactorisationTest, QrOfColumnsAlreadyReducedMatchesTheCpu) {
  expect_qr_matches<float>(*gpu_, cpu_, rng_, 70, 70, 2, 1, {0, 40});
  expect_qr_matches<double>(*gpu_, cpu_, rng_, 100, 64, 1, 0, {63});
}

INSTANTIATE_TEST_SUITE_P(Devices, CudaSmallFactorisationTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel::solver
