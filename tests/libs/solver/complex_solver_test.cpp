// LU, Cholesky, Hermitian eigen, QR and SVD of complex matrices (c64 and c128) on the CPU device (LAPACKE's C and Z
// routines): factorisations, solves, eigenpairs, Q, Q applied and U Σ Vᴴ checked by their residuals in complex double
// on fresh random inputs, the Hermitian fill convention on a matrix whose factor is exact, eigenvalues known in closed
// form, failed factorisations as the same named errors as the real ones, least squares against the normal equations
// and the Jacobi SVD's U and V.
//
// Tolerances are tolerance<T>(n) = 30 n ε of the element's real type (ε = 1.2e-7 for c64, 2.2e-16 for c128), on
// ‖P A − L U‖ / ‖A‖, ‖A − L Lᴴ‖ / ‖A‖ and the solve's backward error ‖op(A) X − B‖ / (‖A‖ ‖X‖ + ‖B‖).
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "least_squares_cases.hpp"
#include "solver_cases.hpp"
#include "testing/test_seed.hpp"

namespace accel::solver {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using namespace testing;  // NOLINT(google-build-using-namespace): the solver test helpers

template <class T>
class ComplexSolverTest : public ::testing::Test {
 protected:
  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

using Types = ::testing::Types<std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(ComplexSolverTest, Types);

constexpr std::int64_t kSizes[] = {1, 2, 7, 17, 64, 101};

// Diagonally dominant matrices (well conditioned, no row exchanged) and general ones (rows exchanged by the partial
// pivoting, which the residual of P A = L U checks), each solved as A X = B and Aᵀ X = B.
TYPED_TEST(ComplexSolverTest, LuFactorsAndSolvesRandomMatrices) {
  using T = TypeParam;
  for (std::int64_t n : kSizes)
    for (std::int64_t batch : {1, 3})
      for (bool dominant : {true, false})
        for (Transpose transpose : {Transpose::none, Transpose::transpose}) {
          SCOPED_TRACE(::testing::Message() << "n=" << n << " batch=" << batch << " dominant=" << dominant
                                            << " transpose=" << accel::to_string(transpose));
          const Layout la = Layout::padded(n, n, batch, batch == 1 ? 0 : 3), lb = Layout::padded(n, 5, batch, 2);
          const std::vector<T> a = dominant ? random_dominant<T>(la, this->rng_) : random_matrices<T>(la, this->rng_);
          const FactorResult<T> r = run_lu(this->device_, la, a, lb, random_matrices<T>(lb, this->rng_), transpose);
          ASSERT_NO_FATAL_FAILURE(expect_factored_and_solved(r, n));
          EXPECT_EQ(r.info, std::vector<std::int32_t>(static_cast<std::size_t>(batch), 0));
        }
}

// Hermitian positive definite M Mᴴ / n + I, both fills, single and batched.
TYPED_TEST(ComplexSolverTest, CholeskyFactorsAndSolvesRandomHermitianPositiveDefiniteMatrices) {
  using T = TypeParam;
  for (std::int64_t n : kSizes)
    for (Fill fill : {Fill::lower, Fill::upper})
      for (std::int64_t batch : {1, 4}) {
        SCOPED_TRACE(::testing::Message() << "n=" << n << " fill=" << to_string(fill) << " batch=" << batch);
        const Layout la = Layout::padded(n, n, batch, 1), lb = Layout::padded(n, 3, batch, 0);
        const FactorResult<T> r = run_cholesky(this->device_, fill, la, random_symmetric<T>(la, this->rng_, true), lb,
                                               random_matrices<T>(lb, this->rng_));
        ASSERT_NO_FATAL_FAILURE(expect_factored_and_solved(r, n));
        EXPECT_EQ(r.info, std::vector<std::int32_t>(static_cast<std::size_t>(batch), 0));
      }
}

// The convention, on A = L Lᴴ with L = [2 0; 1+i 1], factored exactly: lower leaves L (1+i below the diagonal),
// upper leaves U = Lᴴ (1-i above it: conjugated, not merely transposed); the other triangle is not touched.
TYPED_TEST(ComplexSolverTest, CholeskyOfAHermitianMatrixIsLTimesLConjugateTransposed) {
  using T = TypeParam;
  const T untouched(7, 7);
  for (Fill fill : {Fill::lower, Fill::upper}) {
    SCOPED_TRACE(to_string(fill));
    // Column-major; the triangle not read holds a value no factorisation would leave.
    std::vector<T> a = {T(4), T(2, 2), T(2, -2), T(3)};
    a[fill == Fill::lower ? 2 : 1] = untouched;
    Buffer<T> da = upload(this->device_, a);
    ASSERT_THAT(this->device_.ask(Potrf{.dtype = dtype_of<T>(), .fill = fill, .n = 2, .a = da}).wait(), IsOk());
    const std::vector<T> f = download(this->device_, da);
    if (fill == Fill::lower) {
      EXPECT_EQ(f, (std::vector<T>{T(2), T(1, 1), untouched, T(1)}));
    } else {
      EXPECT_EQ(f, (std::vector<T>{T(2), untouched, T(1, -1), T(1)}));
    }
  }
}

// Hermitian matrices, both fills, single and batched: eigenvalues real and ascending, eigenvectors unitary with
// ‖A V − V Λ‖ small, the values alone as with the vectors.
TYPED_TEST(ComplexSolverTest, EigenOfRandomHermitianMatricesIsRightByResiduals) {
  using T = TypeParam;
  for (std::int64_t n : kSizes)
    for (Fill fill : {Fill::lower, Fill::upper})
      for (std::int64_t batch : {1, 3}) {
        SCOPED_TRACE(::testing::Message() << "n=" << n << " fill=" << to_string(fill) << " batch=" << batch);
        const Layout la = Layout::padded(n, n, batch, 2);
        const std::vector<T> a = random_symmetric<T>(la, this->rng_, false);
        const EigenResult<T> both = run_eigen(this->device_, EigenJob::values_and_vectors, fill, la, a);
        const EigenResult<T> values = run_eigen(this->device_, EigenJob::values, fill, la, a);
        ASSERT_THAT(both.status, IsOk());
        ASSERT_THAT(values.status, IsOk());
        EXPECT_LE(both.residual, tolerance<T>(n));
        EXPECT_TRUE(both.padding_intact);
        std::vector<double> difference = doubles(values.w);
        for (std::size_t k = 0; k < difference.size(); ++k) difference[k] -= static_cast<double>(both.w[k]);
        EXPECT_LE(norm(difference), tolerance<T>(n) * std::max(norm(doubles(both.w)), 1.0));
        EXPECT_EQ(both.info, std::vector<std::int32_t>(static_cast<std::size_t>(batch), 0));
      }
}

// [[2, i], [-i, 2]] has eigenvalues 1 and 3, read from either triangle; the other triangle is never read.
TYPED_TEST(ComplexSolverTest, EigenvaluesOfAKnownHermitianMatrix) {
  using T = TypeParam;
  using R = Real<T>;
  for (Fill fill : {Fill::lower, Fill::upper}) {
    SCOPED_TRACE(to_string(fill));
    std::vector<T> a = {T(2), T(0, -1), T(0, 1), T(2)};
    a[fill == Fill::lower ? 2 : 1] = T(99, 99);
    Buffer<T> da = upload(this->device_, a);
    Buffer<R> w = upload(this->device_, std::vector<R>(2));
    ASSERT_THAT(this->device_.ask(Syevd{.dtype = dtype_of<T>(), .fill = fill, .n = 2, .a = da, .w = w}).wait(), IsOk());
    const std::vector<R> values = download(this->device_, w);
    EXPECT_NEAR(values[0], 1, 10 * std::numeric_limits<R>::epsilon());
    EXPECT_NEAR(values[1], 3, 10 * std::numeric_limits<R>::epsilon());
  }
}

TYPED_TEST(ComplexSolverTest, QrOfRandomMatricesIsRightByResiduals) {
  expect_qr_of_random_matrices<TypeParam>(this->device_, this->rng_);
}

TYPED_TEST(ComplexSolverTest, OrmqrAppliesQAndItsConjugateTransposeFromEitherSide) {
  expect_ormqr_applies_orgqrs_q<TypeParam>(this->device_, this->rng_);
}

// Tall, square and wide matrices, thin and full, single and batched: A = U Σ Vᴴ (vt holds Vᴴ) with U and V unitary,
// the values real, non-negative and descending, and the values alone as with the vectors.
TYPED_TEST(ComplexSolverTest, SvdOfRandomMatricesIsRightByResiduals) {
  using T = TypeParam;
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {7, 3}, {17, 17}, {64, 20}, {5, 9}})
    for (SvdJob job : {SvdJob::thin, SvdJob::full})
      for (std::int64_t batch : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << m << "x" << n << " job=" << static_cast<int>(job) << " batch=" << batch);
        const Layout la = Layout::padded(m, n, batch, 2);
        const std::vector<T> a = random_matrices<T>(la, this->rng_);
        const DecompositionResult<T> both = run_svd(this->device_, job, job, la, a);
        const DecompositionResult<T> values = run_svd(this->device_, SvdJob::none, SvdJob::none, la, a);
        ASSERT_THAT(both.first, IsOk());
        ASSERT_THAT(values.first, IsOk());
        EXPECT_LE(both.residual, tolerance<T>(std::max(m, n)));
        EXPECT_TRUE(both.padding_intact);
        std::vector<double> difference = doubles(values.values);
        for (std::size_t k = 0; k < difference.size(); ++k) difference[k] -= static_cast<double>(both.values[k]);
        EXPECT_LE(norm(difference), tolerance<T>(std::max(m, n)) * std::max(norm(doubles(both.values)), 1.0));
      }
}

// The eigenvalues of a Hermitian matrix are real: a complex buffer for them is refused, naming the dtype it needs.
TYPED_TEST(ComplexSolverTest, HermitianEigenvaluesTakeTheRealDtype) {
  using T = TypeParam;
  Buffer<T> a = upload(this->device_, std::vector<T>(4, T(1))), w = upload(this->device_, std::vector<T>(2));
  const std::string real(to_string(dtype_of<Real<T>>()));
  EXPECT_THAT(this->device_.ask(Syevd{.dtype = dtype_of<T>(), .n = 2, .a = a, .w = w}).wait(),
              StatusIs(Code::invalid_argument, "operand 'w' holds " + std::string(to_string(dtype_of<T>())) +
                                                   " but the request needs " + real));
}

// A zero column k (0-based) stays exactly zero through elimination: U(k+1,k+1) = 0, LAPACK's info k + 1, the same
// error as for real matrices; in a batch, the matrix is named and the others are factored.
TYPED_TEST(ComplexSolverTest, ASingularMatrixIsANamedErrorWithItsIndex) {
  using T = TypeParam;
  const Layout la = Layout::padded(6, 6, 1, 0), lb = Layout::padded(6, 1, 1, 0);
  std::vector<T> a = random_matrices<T>(la, this->rng_);
  for (std::int64_t i = 0; i < 6; ++i) a[la.at(0, i, 2)] = T(0);
  const FactorResult<T> r = run_lu(this->device_, la, a, lb, random_matrices<T>(lb, this->rng_));
  EXPECT_THAT(r.factor,
              StatusIs(Code::failed_precondition, "solver::Getrf: U(3,3) is exactly zero: the matrix is singular"));
  EXPECT_THAT(r.info, ::testing::ElementsAre(3));

  const Layout lbatch = Layout::padded(5, 5, 3, 1), lr = Layout::padded(5, 1, 3, 0);
  std::vector<T> batch = random_dominant<T>(lbatch, this->rng_);
  for (std::int64_t i = 0; i < 5; ++i) batch[lbatch.at(1, i, 0)] = T(0);
  const FactorResult<T> named = run_lu(this->device_, lbatch, batch, lr, random_matrices<T>(lr, this->rng_));
  EXPECT_THAT(named.factor, StatusIs(Code::failed_precondition,
                                     "solver::Getrf (matrix 1 of the batch of 3, from 0): U(1,1) is exactly zero"));
  EXPECT_THAT(named.info, ::testing::ElementsAre(0, 1, 0));
}

// Hermitian with complex elements off the diagonal, positive definite but for row and column 3, whose diagonal is
// -1 and which is otherwise zero: the leading minor of order 4 is the first that is not positive definite.
TYPED_TEST(ComplexSolverTest, AHermitianMatrixThatIsNotPositiveDefiniteIsANamedErrorWithItsIndex) {
  using T = TypeParam;
  const Layout la = Layout::padded(5, 5, 2, 0), lb = Layout::padded(5, 1, 2, 0);
  std::vector<T> a(la.size(), T(0));
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t i = 0; i < 5; ++i) {
      a[la.at(b, i, i)] = b == 1 && i == 3 ? T(-1) : T(2);
      for (std::int64_t j = 0; j < i; ++j) {
        if (i == 3 || j == 3) continue;
        a[la.at(b, i, j)] = T(0.25, 0.125 * static_cast<double>(i - j));
        a[la.at(b, j, i)] = std::conj(a[la.at(b, i, j)]);
      }
    }
  for (Fill fill : {Fill::lower, Fill::upper}) {
    SCOPED_TRACE(to_string(fill));
    const FactorResult<T> r = run_cholesky(this->device_, fill, la, a, lb, random_matrices<T>(lb, this->rng_));
    EXPECT_THAT(r.factor,
                StatusIs(Code::failed_precondition,
                         "solver::Potrf (matrix 1 of the batch of 2, from 0): the leading minor of order 4 is "
                         "not positive definite: the matrix is not positive definite"));
    EXPECT_THAT(r.info, ::testing::ElementsAre(0, 4));
  }
}

// Least squares of complex systems: LAPACK's gels, Qᴴ B; checked against the normal equations AᴴA X = AᴴB.
TYPED_TEST(ComplexSolverTest, GelsSolvesLeastSquaresAsTheNormalEquationsDo) {
  expect_gels_solves_random_systems<TypeParam>(this->device_, this->rng_);
}

TYPED_TEST(ComplexSolverTest, ARankDeficientGelsIsANamedError) {
  expect_rank_deficient_gels_named<TypeParam>(this->device_, this->rng_);
}

// The Jacobi SVD's vectors are U and V (not Vᴴ): A = U Σ Vᴴ with U and V unitary, its values Gesvd's, real, for tall,
// square and wide matrices, each job, single and batched.
TYPED_TEST(ComplexSolverTest, GesvdjGivesUAndVOfRandomMatrices) {
  using T = TypeParam;
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {7, 3}, {17, 17}, {5, 9}})
    for (SvdJob job : {SvdJob::thin, SvdJob::full, SvdJob::none})
      for (std::int64_t batch : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << m << "x" << n << " job=" << static_cast<int>(job) << " batch=" << batch);
        const Layout la = Layout::padded(m, n, batch, 2);
        const std::vector<T> a = random_matrices<T>(la, this->rng_);
        const DecompositionResult<T> jacobi = run_gesvdj(this->device_, la, a, {.job = job});
        const DecompositionResult<T> values = run_svd(this->device_, SvdJob::none, SvdJob::none, la, a);
        ASSERT_THAT(jacobi.first, IsOk());
        ASSERT_THAT(values.first, IsOk());
        if (job != SvdJob::none) {
          EXPECT_LE(jacobi.residual, tolerance<T>(std::max(m, n)));
        }
        EXPECT_TRUE(jacobi.padding_intact);
        EXPECT_EQ(jacobi.info, std::vector<std::int32_t>(static_cast<std::size_t>(batch), 0));
        EXPECT_LE(relative_difference(doubles(jacobi.values), doubles(values.values)), tolerance<T>(std::max(m, n)));
      }
}

// Complex requests cross to an isolated worker byte for byte: the same factors, solutions and named errors.
TYPED_TEST(ComplexSolverTest, AnIsolatedCpuDeviceGivesTheSameResultsAndErrors) {
  using T = TypeParam;
  Result<Device> isolated =
      Device::open(this->system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  const Layout la = Layout::padded(13, 13, 2, 1), lb = Layout::padded(13, 2, 2, 0);
  std::vector<T> a = random_matrices<T>(la, this->rng_);
  const std::vector<T> b = random_matrices<T>(lb, this->rng_);
  const FactorResult<T> here = run_lu(this->device_, la, a, lb, b), there = run_lu(*isolated, la, a, lb, b);
  ASSERT_THAT(there.solve, IsOk());
  EXPECT_EQ(there.x, here.x);
  const std::vector<T> h = random_symmetric<T>(la, this->rng_, true);
  const FactorResult<T> chol_here = run_cholesky(this->device_, Fill::upper, la, h, lb, b);
  const FactorResult<T> chol_there = run_cholesky(*isolated, Fill::upper, la, h, lb, b);
  ASSERT_THAT(chol_there.solve, IsOk());
  EXPECT_EQ(chol_there.x, chol_here.x);
  const EigenResult<T> eigen_here = run_eigen(this->device_, EigenJob::values_and_vectors, Fill::lower, la, h);
  const EigenResult<T> eigen_there = run_eigen(*isolated, EigenJob::values_and_vectors, Fill::lower, la, h);
  ASSERT_THAT(eigen_there.status, IsOk());
  EXPECT_EQ(eigen_there.w, eigen_here.w);
  for (std::int64_t i = 0; i < 13; ++i) a[la.at(1, i, 4)] = T(0);
  const FactorResult<T> singular = run_lu(*isolated, la, a, lb, b);
  EXPECT_THAT(singular.factor, StatusIs(Code::failed_precondition,
                                        "solver::Getrf (matrix 1 of the batch of 2, from 0): U(5,5) is exactly zero"));
  EXPECT_THAT(singular.info, ::testing::ElementsAre(0, 5));
}

}  // namespace
}  // namespace accel::solver
