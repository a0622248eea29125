// SpMV of a CSR matrix on CUDA, which runs a kernel of the family's own (src/libs/sparse/spmv_kernel.hpp), against
// the CPU device (Eigen) and a dense reference on every kind of CUDA device. Skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "sparse_cases.hpp"
#include "testing/cuda_fixture.hpp"

namespace accel::sparse {
namespace {

using accel::testing::GpuTestTarget;
using accel::testing::IsOk;
using namespace testing;  // NOLINT(google-build-using-namespace): the sparse test helpers

class CudaSpmvKernelTest : public ::testing::TestWithParam<GpuTestTarget> {
 protected:
  void SetUp() override {
    ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), device);
    gpu_ = device;
  }

  System system_;
  Device cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::optional<Device> gpu_;
  std::mt19937_64 rng_{std::random_device{}()};
};

// SpMV of a CSR A (not transposed, f32 or f64) is our kernel's (spmv_kernel.hpp): a row summed by 1 to 32 threads,
// as many as the mean row length asks for, and a long row by its whole block. Every width, with empty rows and huge
// rows, both index and value types, against the CPU, and the same bits when run again; with beta 0 y is never read
// (the NaN there stays out of the result). The stream keeps no cuSPARSE state for any of it.
TEST_P(CudaSpmvKernelTest, MatchesTheCpuAtEveryWidth) {
  const Shape shapes[] = {{.rows = 3000, .cols = 1000, .density = 1e-3, .empty_every = 5, .huge_row = true},
                          {.rows = 3000, .cols = 4000, .density = 3.5 / 4000, .empty_every = 5},
                          {.rows = 3000, .cols = 4000, .density = 5.0 / 4000, .empty_every = 5, .huge_row = true},
                          {.rows = 3000, .cols = 4000, .density = 15.0 / 4000, .empty_every = 5},
                          {.rows = 3000, .cols = 4000, .density = 30.0 / 4000, .empty_every = 5},
                          {.rows = 3000, .cols = 12000, .density = 50.0 / 12000, .empty_every = 5, .huge_row = true}};
  for (const Shape& shape : shapes) {
    const Entries e = random_entries(shape, rng_);
    SCOPED_TRACE(fmt::format("{}x{} nnz={}", e.rows, e.cols, e.nnz()));
    const auto rows = static_cast<std::size_t>(e.rows), cols = static_cast<std::size_t>(e.cols);
    const std::vector<float> x = random_vector<float>(cols, rng_), y = random_vector<float>(rows, rng_);
    const Outcome gpu = run_spmv<std::int32_t, float>(*gpu_, e, Format::csr, Transpose::none, 0.75, -0.5, x, y);
    const Outcome cpu = run_spmv<std::int32_t, float>(cpu_, e, Format::csr, Transpose::none, 0.75, -0.5, x, y);
    ASSERT_THAT(gpu.status, IsOk());
    ASSERT_THAT(cpu.status, IsOk());
    EXPECT_LE(relative(gpu.out, cpu.out), 4 * tolerance<float>(e.cols));
    EXPECT_LE(spmv_error(gpu.out, e, Transpose::none, 0.75, -0.5, x, y), tolerance<float>(e.cols));
    const Outcome again = run_spmv<std::int32_t, float>(*gpu_, e, Format::csr, Transpose::none, 0.75, -0.5, x, y);
    ASSERT_THAT(again.status, IsOk());
    EXPECT_TRUE(again.out == gpu.out) << "the same product gave other bits";

    const std::vector<double> x64 = random_vector<double>(cols, rng_),
                              nan(rows, std::numeric_limits<double>::quiet_NaN()), zero(rows);
    const Outcome wide =
        run_spmv<std::int64_t, double>(*gpu_, e, Format::csr, Transpose::none, -1.25, 0.0, x64, nan, Structure::fixed);
    ASSERT_THAT(wide.status, IsOk());
    EXPECT_FALSE(wide.out.hasNaN());
    EXPECT_LE(spmv_error(wide.out, e, Transpose::none, -1.25, 0.0, x64, zero), tolerance<double>(e.cols));
  }
  Result<DeviceInfo> info = gpu_->info().wait();
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->cache("cusparse-analyses"), nullptr);
  EXPECT_NE(info->cache("sparse-structure-verdicts"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Targets, CudaSpmvKernelTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel::sparse
