// SpMV of a CSR matrix on CUDA, which runs a kernel of the family's own (src/libs/sparse/spmv_kernel.hpp), against
// the CPU device (Eigen) and a dense reference on every kind of CUDA device. Skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "sparse_cases.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/test_seed.hpp"

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
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

// Entries whose rows have the given lengths, each row's columns spread over `cols`, values in [-1, 1).
Entries with_row_lengths(const std::vector<std::int64_t>& lengths, std::int64_t cols, std::mt19937_64& rng) {
  Entries e{.rows = static_cast<std::int64_t>(lengths.size()), .cols = cols};
  std::uniform_real_distribution<double> value(-1, 1);
  for (std::int64_t r = 0; r < e.rows; ++r) {
    const std::int64_t n = lengths[static_cast<std::size_t>(r)], step = n == 0 ? 1 : cols / n;
    const std::int64_t start = n == 0 ? 0 : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(step));
    for (std::int64_t t = 0; t < n; ++t) {
      e.row.push_back(r);
      e.col.push_back(start + t * step);
      e.value.push_back(value(rng));
    }
  }
  return e;
}

// One matrix through our kernel: f32 with i32 indices against the CPU and a sum in double, the same bits when run
// again; f64 with i64 indices and beta 0 over a y of NaN, which must not reach the result.
void expect_kernel_matches(Device& gpu, Device& cpu, const Entries& e, std::int64_t longest, std::mt19937_64& rng) {
  SCOPED_TRACE(fmt::format("{}x{} nnz={} longest={}", e.rows, e.cols, e.nnz(), longest));
  const auto rows = static_cast<std::size_t>(e.rows), cols = static_cast<std::size_t>(e.cols);
  const std::vector<float> x = random_vector<float>(cols, rng), y = random_vector<float>(rows, rng);
  const Outcome out = run_spmv<std::int32_t, float>(gpu, e, Format::csr, Transpose::none, 0.75, -0.5, x, y);
  const Outcome reference = run_spmv<std::int32_t, float>(cpu, e, Format::csr, Transpose::none, 0.75, -0.5, x, y);
  ASSERT_THAT(out.status, IsOk());
  ASSERT_THAT(reference.status, IsOk());
  EXPECT_LE(relative(out.out, reference.out), 4 * tolerance<float>(longest));
  EXPECT_LE(spmv_error(out.out, e, Transpose::none, 0.75, -0.5, x, y), tolerance<float>(longest));
  const Outcome again = run_spmv<std::int32_t, float>(gpu, e, Format::csr, Transpose::none, 0.75, -0.5, x, y);
  ASSERT_THAT(again.status, IsOk());
  EXPECT_TRUE(again.out == out.out) << "the same product gave other bits";

  const std::vector<double> x64 = random_vector<double>(cols, rng), nan(rows, std::numeric_limits<double>::quiet_NaN()),
                            zero(rows);
  const Outcome wide =
      run_spmv<std::int64_t, double>(gpu, e, Format::csr, Transpose::none, -1.25, 0.0, x64, nan, Structure::fixed);
  ASSERT_THAT(wide.status, IsOk());
  EXPECT_FALSE(wide.out.hasNaN());
  EXPECT_LE(spmv_error(wide.out, e, Transpose::none, -1.25, 0.0, x64, zero), tolerance<double>(longest));
}

// SpMV of a CSR A (not transposed, f32 or f64) is our kernel's (spmv_kernel.hpp): a row summed by 1 to 32 threads,
// as many as the mean row length asks for, and a long row by its whole block. Every width, with empty rows and huge
// rows, both index and value types. The stream keeps no cuSPARSE state for any of it.
TEST_P(CudaSpmvKernelTest, MatchesTheCpuAtEveryWidth) {
  const Shape shapes[] = {{.rows = 3000, .cols = 1000, .density = 1e-3, .empty_every = 5, .huge_row = true},
                          {.rows = 3000, .cols = 4000, .density = 3.5 / 4000, .empty_every = 5},
                          {.rows = 3000, .cols = 4000, .density = 5.0 / 4000, .empty_every = 5, .huge_row = true},
                          {.rows = 3000, .cols = 4000, .density = 15.0 / 4000, .empty_every = 5},
                          {.rows = 3000, .cols = 4000, .density = 30.0 / 4000, .empty_every = 5},
                          {.rows = 3000, .cols = 12000, .density = 50.0 / 12000, .empty_every = 5, .huge_row = true}};
  for (const Shape& shape : shapes) expect_kernel_matches(*gpu_, cpu_, random_entries(shape, rng_), shape.cols, rng_);
  Result<DeviceInfo> info = gpu_->info().wait();
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->cache("cusparse-analyses"), nullptr);
  EXPECT_NE(info->cache("sparse-structure-verdicts"), nullptr);
}

// Rows longer than kSplitRowsAbove (8192) are summed in chunks of 8192 entries, a block each, then added up in
// order. The edges: a split row first, at a chunk's start, and last; rows of exactly 8192 (not split) and 8193;
// two split rows sharing a chunk; one of 100,000 entries over 13 chunks; hubs among short rows (one thread a row)
// and among rows of 40 (a warp a row).
TEST_P(CudaSpmvKernelTest, HubRowsAreSummedInChunks) {
  constexpr std::int64_t kCols = 131072;
  const std::vector<std::vector<std::int64_t>> cases = {{8193, 5, 0, 8192, 20000, 8193, 0, 0, 1, 100000, 3},
                                                        {8192, 8200, 9000, 9000, 9000, 0, 16384, 8193},
                                                        {0, 0, 7, 1, 0, 50000}};
  for (const std::vector<std::int64_t>& lengths : cases) {
    const std::int64_t longest = *std::max_element(lengths.begin(), lengths.end());
    expect_kernel_matches(*gpu_, cpu_, with_row_lengths(lengths, kCols, rng_), longest, rng_);
  }
  // Hub rows of 12,000 to 112,000 entries among 300,000 rows, a seventh of them empty.
  for (const std::int64_t short_row : {1, 40}) {
    std::vector<std::int64_t> lengths(300000, short_row);
    for (std::size_t r = 0; r < lengths.size(); r += 7) lengths[r] = 0;
    std::int64_t longest = 0;
    for (const std::size_t hub : {0, 255, 256, 150001, 299999}) {
      lengths[hub] = 12000 + static_cast<std::int64_t>(hub % 100000);
      longest = std::max(longest, lengths[hub]);
    }
    expect_kernel_matches(*gpu_, cpu_, with_row_lengths(lengths, kCols, rng_), longest, rng_);
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, CudaSpmvKernelTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel::sparse
