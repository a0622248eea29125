// solver::Gesvdj on CUDA (the family's Jacobi kernels for real square matrices up to 256 x 256, cuSOLVER's gesvdj,
// and gesvdjBatched for packed batches of small matrices; complex ones too) against the CPU device (LAPACK's gesvd),
// on fresh random inputs: singular values compared directly, U and V (whose signs differ between libraries) by the
// reconstruction ‖A − U Σ Vᴴ‖ / ‖A‖ and their orthonormality; ill-conditioned matrices of known singular values;
// sweeps that do not converge answered as a named error. On CUDA devices in process (each completion strategy) and
// isolated. Skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <complex>
#include <optional>
#include <random>
#include <vector>

#include "solver_cases.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/test_seed.hpp"

namespace accel::solver {
namespace {

using accel::testing::IsOk;
using accel::testing::relative_error;
using namespace testing;  // NOLINT(google-build-using-namespace): the solver test helpers

using accel::testing::GpuTestTarget;

// An n x n matrix with orthonormal columns (Gram-Schmidt, twice, of a random one), column-major.
Dense random_orthogonal(std::int64_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Dense q(static_cast<std::size_t>(n * n));
  for (double& x : q) x = normal(rng);
  for (std::int64_t j = 0; j < n; ++j)
    for (int pass = 0; pass < 2; ++pass) {
      for (std::int64_t p = 0; p < j; ++p) {
        double dot = 0;
        for (std::int64_t i = 0; i < n; ++i) dot += q[p * n + i] * q[j * n + i];
        for (std::int64_t i = 0; i < n; ++i) q[j * n + i] -= dot * q[p * n + i];
      }
      double norm = 0;
      for (std::int64_t i = 0; i < n; ++i) norm += q[j * n + i] * q[j * n + i];
      for (std::int64_t i = 0; i < n; ++i) q[j * n + i] /= std::sqrt(norm);
    }
  return q;
}

class CudaGesvdjTest : public ::testing::TestWithParam<GpuTestTarget> {
 protected:
  void SetUp() override {
    ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), device);
    gpu_ = device;
  }

  // The GPU's decomposition reproduces A and its values are the CPU's Gesvd's; for each job, U and V padded (the
  // looping gesvdj) and packed (gesvdjBatched where the shape allows).
  template <class T>
  void matches_the_cpu(std::int64_t m, std::int64_t n, std::int64_t batch, std::initializer_list<SvdJob> jobs) {
    SCOPED_TRACE(fmt::format("{} {}x{} batch={}", to_string(dtype_of<T>()), m, n, batch));
    const Layout la = Layout::padded(m, n, batch, 0);
    const std::vector<T> a = random_matrices<T>(la, rng_);
    const DecompositionResult<T> cpu = run_svd(cpu_, SvdJob::none, SvdJob::none, la, a);
    ASSERT_THAT(cpu.first, IsOk());
    for (SvdJob job : jobs)
      for (std::int64_t pad : {0, 1}) {
        SCOPED_TRACE(fmt::format("job={} pad={}", to_string(job), pad));
        const DecompositionResult<T> gpu = run_gesvdj(*gpu_, la, a, {.job = job, .pad = pad});
        ASSERT_THAT(gpu.first, IsOk());
        if (job != SvdJob::none) {
          EXPECT_LE(gpu.residual, tolerance<T>(std::max(m, n)));
        }
        EXPECT_TRUE(gpu.padding_intact);
        EXPECT_EQ(gpu.info, cpu.info);
        // Singular values are perfectly conditioned: every method finds the same ones.
        EXPECT_LE(relative_error(doubles(gpu.values), doubles(cpu.values)), tolerance<T>(std::max(m, n)));
      }
  }

  // A = Q₁ diag(σ) Q₂ᵀ with σ from 1 down to `smallest`, geometrically: the values within the backward-stable bound
  // |σ̂ − σ| <= 30 n ε σ₁, A reproduced and V orthonormal to 30 n ε, and U to 30 n ε / smallest (a Jacobi SVD may
  // form U as A V Σ⁻¹, whose columns of small σ carry the error of A V magnified by σ₁ / σᵢ).
  template <class T>
  void ill_conditioned(std::int64_t n, std::int64_t batch, double smallest) {
    SCOPED_TRACE(fmt::format("{} n={} batch={} condition={}", to_string(dtype_of<T>()), n, batch, 1 / smallest));
    const Layout la = Layout::padded(n, n, batch, 0);
    std::vector<T> a(la.size());
    Dense sigma(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
      sigma[i] = std::pow(smallest, static_cast<double>(i) / std::max<double>(n - 1, 1));
    for (std::int64_t b = 0; b < batch; ++b) {
      const Dense q1 = random_orthogonal(n, rng_), q2 = random_orthogonal(n, rng_);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i) {
          double sum = 0;
          for (std::int64_t p = 0; p < n; ++p) sum += q1[p * n + i] * sigma[p] * q2[p * n + j];
          a[la.at(b, i, j)] = static_cast<T>(sum);
        }
    }
    const DecompositionResult<T> gpu = run_gesvdj(*gpu_, la, a, {.job = SvdJob::thin, .pad = 0});
    ASSERT_THAT(gpu.first, IsOk());
    const double bound = tolerance<T>(n);
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t i = 0; i < n; ++i) {
        // The input was rounded to T: its values moved by up to about √n ε σ₁ already, well within the bound.
        EXPECT_NEAR(gpu.values[b * n + i], sigma[i], bound) << "matrix " << b << " value " << i;
      }
    EXPECT_LE(gpu.reconstruction, bound);
    EXPECT_LE(gpu.v_orthonormality, bound);
    EXPECT_LE(gpu.residual, bound / smallest);  // U's orthonormality, the loose part
    const DecompositionResult<T> cpu = run_gesvdj(cpu_, la, a, {.job = SvdJob::thin, .pad = 0});
    EXPECT_LE(relative_error(doubles(gpu.values), doubles(cpu.values)), bound);
  }

  System system_;
  Device cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::optional<Device> gpu_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

TEST_P(CudaGesvdjTest, SingleMatricesTallSquareAndWideMatchTheCpu) {
  for (std::int64_t n : {1, 16, 100, 512}) {
    matches_the_cpu<float>(n, n, 1, {SvdJob::thin, SvdJob::none});
    matches_the_cpu<double>(n, n, 1, {SvdJob::thin, SvdJob::none});
  }
  matches_the_cpu<float>(257, 31, 2, {SvdJob::thin, SvdJob::full});
  matches_the_cpu<double>(31, 257, 2, {SvdJob::thin, SvdJob::full});
  matches_the_cpu<double>(64, 63, 3, {SvdJob::thin, SvdJob::full, SvdJob::none});
}

// Square matrices of at most 32 x 32 take the family's Jacobi kernel (packed or padded); other packed batches of at
// most 32 x 32 take gesvdjBatched (pad 0) or gesvdj per matrix (pad 1).
TEST_P(CudaGesvdjTest, BatchesOfSmallMatricesMatchTheCpu) {
  matches_the_cpu<float>(16, 16, 4096, {SvdJob::thin});
  matches_the_cpu<double>(16, 16, 512, {SvdJob::thin, SvdJob::full});
  matches_the_cpu<float>(32, 32, 300, {SvdJob::thin, SvdJob::none});
  matches_the_cpu<double>(32, 20, 64, {SvdJob::full, SvdJob::thin});
  matches_the_cpu<float>(7, 30, 33, {SvdJob::full});
  matches_the_cpu<float>(33, 33, 5, {SvdJob::thin});  // one past gesvdjBatched's largest: the cluster kernel
}

// Square matrices of at most 256 x 256 take the family's Jacobi kernels, which must keep U orthogonal where columns
// become exactly zero: a zero matrix, a zero column, two equal columns, rank one; and a diagonal one with equal values.
TEST_P(CudaGesvdjTest, SingularMatricesKeepOrthonormalVectors) {
  auto singular = [&]<class T>(T, std::int64_t n) {
    SCOPED_TRACE(fmt::format("{} n={}", to_string(dtype_of<T>()), n));
    constexpr std::int64_t kForms = 5;
    const Layout la = Layout::padded(n, n, kForms, 0);
    std::vector<T> a = random_matrices<T>(la, rng_);
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        a[la.at(0, i, j)] = T(0);
        if (j == n / 2) a[la.at(1, i, j)] = T(0);
        if (n > 1 && j == n - 1) a[la.at(2, i, j)] = a[la.at(2, i, 0)];
        a[la.at(3, i, j)] = a[la.at(3, i, 0)] * a[la.at(3, 0, j)];
        a[la.at(4, i, j)] = T(i == j ? 2 : 0);
      }
    }
    const DecompositionResult<T> cpu = run_svd(cpu_, SvdJob::none, SvdJob::none, la, a);
    ASSERT_THAT(cpu.first, IsOk());
    for (SvdJob job : {SvdJob::thin, SvdJob::full, SvdJob::none})
      for (std::int64_t pad : {0, 1}) {
        SCOPED_TRACE(fmt::format("job={} pad={}", to_string(job), pad));
        const DecompositionResult<T> gpu = run_gesvdj(*gpu_, la, a, {.job = job, .pad = pad});
        ASSERT_THAT(gpu.first, IsOk());
        EXPECT_EQ(gpu.info, std::vector<std::int32_t>(kForms, 0));
        EXPECT_TRUE(gpu.padding_intact);
        if (job != SvdJob::none) {
          EXPECT_LE(gpu.residual, tolerance<T>(n));
        }
        for (std::size_t i = 0; i < cpu.values.size(); ++i) {
          EXPECT_NEAR(gpu.values[i], cpu.values[i], tolerance<T>(n) * std::max(1.0, double(cpu.values[i]))) << i;
        }
      }
  };
  for (std::int64_t n : {1, 2, 7, 16, 32, 33, 100, 256}) {
    singular(float{}, n);
    singular(double{}, n);
  }
}

// Square matrices from 33 x 33 to 256 x 256 take the family's cluster kernel: blocks of columns of every width (3 to
// 16), a last block short of columns (47, 255), single matrices and batches, packed and padded.
TEST_P(CudaGesvdjTest, MidSizedSquareMatricesMatchTheCpu) {
  for (std::int64_t n : {33, 47, 64, 128, 255, 256}) {
    matches_the_cpu<float>(n, n, 1, {SvdJob::thin, SvdJob::full, SvdJob::none});
    matches_the_cpu<double>(n, n, 1, {SvdJob::thin, SvdJob::full, SvdJob::none});
  }
  matches_the_cpu<float>(200, 200, 6, {SvdJob::thin, SvdJob::none});
  matches_the_cpu<double>(97, 97, 20, {SvdJob::full});
}

// Complex matrices take cuSOLVER's C and Z gesvdj (the family's kernels are real), and gesvdjBatched for a packed
// batch of at most 32 x 32 (pad 0): A = U Σ Vᴴ with U and V unitary, the real values as the CPU's.
TEST_P(CudaGesvdjTest, ComplexMatricesMatchTheCpu) {
  matches_the_cpu<std::complex<float>>(100, 100, 1, {SvdJob::thin, SvdJob::none});
  matches_the_cpu<std::complex<double>>(64, 63, 3, {SvdJob::thin, SvdJob::full});
  matches_the_cpu<std::complex<float>>(16, 16, 64, {SvdJob::full});
  matches_the_cpu<std::complex<double>>(31, 57, 2, {SvdJob::thin});
}

TEST_P(CudaGesvdjTest, IllConditionedMatricesKeepTheirSingularValues) {
  ill_conditioned<float>(64, 1, 1e-4);
  ill_conditioned<double>(64, 1, 1e-10);
  ill_conditioned<float>(24, 64, 1e-4);  // gesvdjBatched
  ill_conditioned<double>(200, 1, 1e-12);
  ill_conditioned<float>(256, 2, 1e-4);
}

// One sweep does not take a random matrix to machine precision: info min(m, n) + 1, a named error of the first such
// matrix of the batch; a loose tolerance converges within the sweeps allowed. Requests with different stopping
// rules in flight together each get their own (the stream's gesvdjInfo_t is set at each enqueue).
TEST_P(CudaGesvdjTest, SweepsThatDoNotConvergeAreANamedError) {
  const Layout la = Layout::padded(64, 64, 1, 0), lb = Layout::padded(16, 16, 8, 0);
  const std::vector<double> a = random_matrices<double>(la, rng_), b = random_matrices<double>(lb, rng_);
  const DecompositionResult<double> single = run_gesvdj(*gpu_, la, a, {.max_sweeps = 1, .pad = 0});
  EXPECT_THAT(single.first,
              accel::testing::StatusIs(Code::failed_precondition,
                                       "solver::Gesvdj: the Jacobi sweeps did not converge to the tolerance within "
                                       "max_sweeps (info 65)"));
  EXPECT_EQ(single.info, std::vector<std::int32_t>{65});
  // gesvdjBatched converged within one sweep on 16 x 16 matrices on the H100 (cuSOLVER 13): its infos and the
  // request's status must agree, whichever way it goes.
  const DecompositionResult<double> batched = run_gesvdj(*gpu_, lb, b, {.max_sweeps = 1, .pad = 0});
  const auto failed = std::find_if(batched.info.begin(), batched.info.end(), [](std::int32_t i) { return i != 0; });
  if (failed == batched.info.end()) {
    EXPECT_THAT(batched.first, IsOk());
  } else {
    EXPECT_EQ(*failed, 17);
    EXPECT_THAT(batched.first,
                accel::testing::StatusIs(Code::failed_precondition,
                                         fmt::format("solver::Gesvdj (matrix {} of the batch of 8, from 0): the Jacobi "
                                                     "sweeps did not converge",
                                                     failed - batched.info.begin())));
  }
  const DecompositionResult<double> loose = run_gesvdj(*gpu_, la, a, {.max_sweeps = 100, .tolerance = 1e-3, .pad = 0});
  EXPECT_THAT(loose.first, IsOk());
  // Each pair of U's columns within 1e-3 √64 of orthogonal, by the stopping rule: ‖UᵀU − I‖ / √64 <= 1e-3 · 64.
  EXPECT_LE(loose.residual, 1e-3 * 64);

  std::vector<Buffer<double>> buffers;
  std::vector<Future<Done>> pending;
  for (int i = 0; i < 8; ++i) {
    Buffer<double> da = upload(*gpu_, a), s = upload(*gpu_, std::vector<double>(64));
    pending.push_back(gpu_->ask(Gesvdj{.dtype = DType::f64,
                                       .job = SvdJob::none,
                                       .max_sweeps = i % 2 == 0 ? 1 : 100,
                                       .m = 64,
                                       .n = 64,
                                       .a = da,
                                       .s = s}));
    buffers.push_back(da);
    buffers.push_back(s);
  }
  for (int i = 0; i < 8; ++i) {
    const Status status = pending[i].wait().status();
    if (i % 2 == 0) {
      EXPECT_EQ(status.code(), Code::failed_precondition) << "request " << i;
    } else {
      EXPECT_THAT(status, IsOk()) << "request " << i;
    }
  }
}

TEST_P(CudaGesvdjTest, EmptyMatricesSucceedWithZeroInfos) {
  const Layout la = Layout::padded(0, 5, 3, 0);
  const DecompositionResult<float> r = run_gesvdj(*gpu_, la, std::vector<float>(la.size()), {.pad = 0});
  EXPECT_THAT(r.first, IsOk());
  EXPECT_EQ(r.info, std::vector<std::int32_t>(3, 0));
}

INSTANTIATE_TEST_SUITE_P(Devices, CudaGesvdjTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel::solver
