// The dense solver requests on the CPU device (LAPACKE): factorisations and solves checked by their residuals on
// fresh random inputs, failed factorisations as named errors, and requests refused before anything runs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>

#include "least_squares_cases.hpp"
#include "testing/test_seed.hpp"

namespace accel::solver {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using namespace testing;  // NOLINT(google-build-using-namespace): the solver test helpers

template <class T>
class SolverTest : public ::testing::Test {
 protected:
  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SolverTest, Types);

constexpr std::int64_t kSizes[] = {1, 2, 17, 64};

TYPED_TEST(SolverTest, LuFactorsAndSolvesRandomMatrices) {
  using T = TypeParam;
  for (std::int64_t n : kSizes)
    for (std::int64_t batch : {1, 3})
      for (Transpose transpose : {Transpose::none, Transpose::transpose}) {
        SCOPED_TRACE(::testing::Message() << "n=" << n << " batch=" << batch);
        const Layout la = Layout::padded(n, n, batch, batch == 1 ? 0 : 3), lb = Layout::padded(n, 5, batch, 2);
        const FactorResult<T> r = run_lu(this->device_, la, random_matrices<T>(la, this->rng_), lb,
                                         random_matrices<T>(lb, this->rng_), transpose);
        ASSERT_NO_FATAL_FAILURE(expect_factored_and_solved(r, n));
        EXPECT_EQ(r.info, std::vector<std::int32_t>(static_cast<std::size_t>(batch), 0));
      }
}

TYPED_TEST(SolverTest, CholeskyFactorsAndSolvesRandomPositiveDefiniteMatrices) {
  using T = TypeParam;
  for (std::int64_t n : kSizes)
    for (Fill fill : {Fill::lower, Fill::upper})
      for (std::int64_t batch : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << "n=" << n << " fill=" << to_string(fill) << " batch=" << batch);
        const Layout la = Layout::padded(n, n, batch, 1), lb = Layout::padded(n, 3, batch, 0);
        const FactorResult<T> r = run_cholesky(this->device_, fill, la, random_symmetric<T>(la, this->rng_, true), lb,
                                               random_matrices<T>(lb, this->rng_));
        ASSERT_NO_FATAL_FAILURE(expect_factored_and_solved(r, n));
      }
}

TYPED_TEST(SolverTest, EigenDecomposesRandomSymmetricMatrices) {
  using T = TypeParam;
  for (std::int64_t n : kSizes)
    for (Fill fill : {Fill::lower, Fill::upper}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " fill=" << to_string(fill));
      const Layout la = Layout::padded(n, n, 2, 2);
      const std::vector<T> a = random_symmetric<T>(la, this->rng_, false);
      const EigenResult<T> vectors = run_eigen(this->device_, EigenJob::values_and_vectors, fill, la, a);
      const EigenResult<T> values = run_eigen(this->device_, EigenJob::values, fill, la, a);
      ASSERT_THAT(vectors.status, IsOk());
      ASSERT_THAT(values.status, IsOk());
      EXPECT_LE(vectors.residual, tolerance<T>(n));
      EXPECT_TRUE(vectors.padding_intact);
      for (std::size_t i = 0; i < static_cast<std::size_t>(2 * n); ++i)
        EXPECT_NEAR(values.w[i], vectors.w[i], tolerance<T>(n) * std::sqrt(static_cast<double>(n)));
    }
}

constexpr std::int64_t kShapes[][2] = {{1, 1}, {2, 2}, {17, 17}, {64, 64}, {40, 9}, {9, 40}, {23, 1}};

TYPED_TEST(SolverTest, QrFactorsRandomTallSquareAndWideMatrices) {
  expect_qr_of_random_matrices<TypeParam>(this->device_, this->rng_);
}

TYPED_TEST(SolverTest, OrmqrAppliesTheQThatOrgqrForms) {
  expect_ormqr_applies_orgqrs_q<TypeParam>(this->device_, this->rng_);
}

TYPED_TEST(SolverTest, GelsSolvesLeastSquaresAsTheNormalEquationsDo) {
  expect_gels_solves_random_systems<TypeParam>(this->device_, this->rng_);
}

TYPED_TEST(SolverTest, ARankDeficientGelsIsANamedError) {
  expect_rank_deficient_gels_named<TypeParam>(this->device_, this->rng_);
}

TYPED_TEST(SolverTest, SvdDecomposesRandomTallSquareAndWideMatrices) {
  using T = TypeParam;
  for (const auto& [m, n] : kShapes)
    for (SvdJob job : {SvdJob::thin, SvdJob::full}) {
      SCOPED_TRACE(::testing::Message() << m << "x" << n << " " << to_string(job));
      const Layout la = Layout::padded(m, n, 2, 1);
      const std::vector<T> a = random_matrices<T>(la, this->rng_);
      const DecompositionResult<T> vectors = run_svd(this->device_, job, job, la, a);
      const DecompositionResult<T> values = run_svd(this->device_, SvdJob::none, SvdJob::none, la, a);
      ASSERT_THAT(vectors.first, IsOk());
      ASSERT_THAT(values.first, IsOk());
      EXPECT_LE(vectors.residual, tolerance<T>(std::max(m, n)));
      EXPECT_TRUE(vectors.padding_intact);
      EXPECT_TRUE(values.padding_intact);
      EXPECT_EQ(vectors.info, std::vector<std::int32_t>(2, 0));
      for (std::size_t i = 0; i < values.values.size(); ++i)
        EXPECT_NEAR(values.values[i], vectors.values[i], tolerance<T>(std::max(m, n)) * std::sqrt(double(m * n)));
    }
}

// The Jacobi SVD on the CPU is LAPACK's gesvd with V transposed: its values are Gesvd's (to rounding: with vectors
// LAPACK takes another path), its vectors reproduce A.
TYPED_TEST(SolverTest, JacobiSvdDecomposesRandomTallSquareAndWideMatrices) {
  using T = TypeParam;
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {17, 5}, {5, 17}, {64, 64}})
    for (std::int64_t batch : {1, 3})
      for (SvdJob job : {SvdJob::thin, SvdJob::full, SvdJob::none}) {
        SCOPED_TRACE(::testing::Message() << m << "x" << n << " batch=" << batch << " job=" << to_string(job));
        const Layout la = Layout::padded(m, n, batch, 2);
        const std::vector<T> a = random_matrices<T>(la, this->rng_);
        const DecompositionResult<T> r = run_gesvdj(this->device_, la, a, {.job = job});
        const DecompositionResult<T> values = run_svd(this->device_, SvdJob::none, SvdJob::none, la, a);
        ASSERT_THAT(r.first, IsOk());
        if (job != SvdJob::none) {
          EXPECT_LE(r.residual, tolerance<T>(std::max(m, n)));
        }
        ASSERT_EQ(r.values.size(), values.values.size());
        for (std::size_t i = 0; i < r.values.size(); ++i)
          EXPECT_NEAR(r.values[i], values.values[i], tolerance<T>(std::max(m, n)) * (1 + std::abs(values.values[i])));
        EXPECT_TRUE(r.padding_intact);
        EXPECT_EQ(r.info, std::vector<std::int32_t>(static_cast<std::size_t>(batch), 0));
      }
}

TYPED_TEST(SolverTest, EmptyMatricesSucceedWithZeroInfos) {
  using T = TypeParam;
  const Layout la = Layout::padded(0, 0, 2, 0), lb = Layout::padded(0, 2, 2, 0);
  const std::vector<T> a(la.size()), b(lb.size());
  EXPECT_THAT(run_lu(this->device_, la, a, lb, b).info, ::testing::ElementsAre(0, 0));
  EXPECT_THAT(run_cholesky(this->device_, Fill::lower, la, a, lb, b).info, ::testing::ElementsAre(0, 0));
  EXPECT_THAT(run_eigen(this->device_, EigenJob::values_and_vectors, Fill::upper, la, a).info,
              ::testing::ElementsAre(0, 0));
  // Nothing to solve: B stays as it is.
  const Layout tall = Layout::padded(3, 0, 2, 0), rhs = Layout::padded(3, 2, 2, 0);
  const std::vector<T> kept = random_matrices<T>(rhs, this->rng_);
  const GelsResult<T> gels = run_gels(this->device_, tall, std::vector<T>(tall.size()), rhs, kept);
  EXPECT_THAT(gels.status, IsOk());
  EXPECT_THAT(gels.info, ::testing::ElementsAre(0, 0));
  EXPECT_EQ(gels.b, kept);
}

// A zero column k (0-based) stays exactly zero through elimination: U(k+1,k+1) = 0, LAPACK's info k + 1.
TYPED_TEST(SolverTest, ASingularMatrixIsANamedError) {
  using T = TypeParam;
  const Layout la = Layout::padded(6, 6, 1, 0), lb = Layout::padded(6, 1, 1, 0);
  std::vector<T> a = random_matrices<T>(la, this->rng_);
  for (std::int64_t i = 0; i < 6; ++i) a[la.at(0, i, 2)] = 0;
  const FactorResult<T> r = run_lu(this->device_, la, a, lb, random_matrices<T>(lb, this->rng_));
  EXPECT_THAT(r.factor,
              StatusIs(Code::failed_precondition, "solver::Getrf: U(3,3) is exactly zero: the matrix is singular"));
  EXPECT_THAT(r.info, ::testing::ElementsAre(3));
}

TYPED_TEST(SolverTest, ASingularMatrixOfABatchIsNamedAndTheOthersAreFactored) {
  using T = TypeParam;
  const Layout la = Layout::padded(5, 5, 3, 1), lb = Layout::padded(5, 1, 3, 0);
  std::vector<T> a = random_matrices<T>(la, this->rng_);
  for (std::int64_t i = 0; i < 5; ++i) a[la.at(1, i, 0)] = 0;
  const FactorResult<T> r = run_lu(this->device_, la, a, lb, random_matrices<T>(lb, this->rng_));
  EXPECT_THAT(r.factor, StatusIs(Code::failed_precondition,
                                 "solver::Getrf (matrix 1 of the batch of 3, from 0): U(1,1) is exactly zero"));
  EXPECT_THAT(r.info, ::testing::ElementsAre(0, 1, 0));
}

TYPED_TEST(SolverTest, AMatrixThatIsNotPositiveDefiniteIsANamedError) {
  using T = TypeParam;
  for (Fill fill : {Fill::lower, Fill::upper}) {
    const Layout la = Layout::padded(5, 5, 1, 0), lb = Layout::padded(5, 1, 1, 0);
    std::vector<T> a(la.size(), T(0));
    for (std::int64_t i = 0; i < 5; ++i) a[la.at(0, i, i)] = i == 3 ? T(-1) : T(2);
    const FactorResult<T> r = run_cholesky(this->device_, fill, la, a, lb, random_matrices<T>(lb, this->rng_));
    EXPECT_THAT(r.factor, StatusIs(Code::failed_precondition,
                                   "solver::Potrf: the leading minor of order 4 is not positive definite"));
    EXPECT_THAT(r.info, ::testing::ElementsAre(4));
  }
}

// The requests cross to an isolated worker byte for byte; results and named errors come back the same.
TYPED_TEST(SolverTest, AnIsolatedCpuDeviceGivesTheSameResultsAndErrors) {
  using T = TypeParam;
  Result<Device> isolated =
      Device::open(this->system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  const Layout la = Layout::padded(12, 12, 2, 1), lb = Layout::padded(12, 2, 2, 0);
  std::vector<T> a = random_matrices<T>(la, this->rng_);
  const std::vector<T> b = random_matrices<T>(lb, this->rng_);
  const FactorResult<T> here = run_lu(this->device_, la, a, lb, b), there = run_lu(*isolated, la, a, lb, b);
  ASSERT_THAT(there.solve, IsOk());
  EXPECT_EQ(there.x, here.x);
  const std::vector<T> s = random_symmetric<T>(la, this->rng_, false);
  EXPECT_EQ(run_eigen(*isolated, EigenJob::values, Fill::lower, la, s).w,
            run_eigen(this->device_, EigenJob::values, Fill::lower, la, s).w);
  for (std::int64_t i = 0; i < 12; ++i) a[la.at(1, i, 4)] = 0;
  const FactorResult<T> singular = run_lu(*isolated, la, a, lb, b);
  EXPECT_THAT(singular.factor, StatusIs(Code::failed_precondition,
                                        "solver::Getrf (matrix 1 of the batch of 2, from 0): U(5,5) is exactly zero"));
  EXPECT_THAT(singular.info, ::testing::ElementsAre(0, 5));
  // Ormqr and Gels cross the same way: the same Q applied, the same solutions, the same rank error.
  const Layout lt = Layout::padded(12, 5, 2, 1), lc = Layout::padded(12, 3, 2, 0);
  const std::vector<T> t = random_matrices<T>(lt, this->rng_), c = random_matrices<T>(lc, this->rng_);
  EXPECT_EQ(run_ormqr(*isolated, Side::left, Transpose::transpose, lt, t, lc, c).c,
            run_ormqr(this->device_, Side::left, Transpose::transpose, lt, t, lc, c).c);
  EXPECT_EQ(run_gels(*isolated, lt, t, lc, c).b, run_gels(this->device_, lt, t, lc, c).b);
  std::vector<T> deficient = t;
  for (std::int64_t i = 0; i < 12; ++i) deficient[lt.at(0, i, 4)] = 0;
  const GelsResult<T> rank = run_gels(*isolated, lt, deficient, lc, c);
  EXPECT_THAT(rank.status, StatusIs(Code::failed_precondition,
                                    "solver::Gels (matrix 0 of the batch of 2, from 0): R(5,5) is exactly zero"));
  EXPECT_THAT(rank.info, ::testing::ElementsAre(5, 0));
}

}  // namespace
}  // namespace accel::solver
