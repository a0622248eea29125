// SDDMM, the two-phase SpGEMM and the dense-to-CSR conversion on CUDA (cuSPARSE) against the CPU device (Eigen) and
// dense references, on fresh random matrices of several shapes and densities — empty rows, one huge row, an empty
// matrix — in process and isolated; SpGEMM's count state and C's handover, and the structure checks that SpGEMM and
// the CSR <-> COO conversions skip. Skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <optional>
#include <ostream>

#include "sparse_product_cases.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/test_seed.hpp"

namespace accel::sparse {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using namespace testing;  // NOLINT(google-build-using-namespace): the sparse test helpers

using accel::testing::GpuTestTarget;

const GpuTestTarget kTargets[] = {{"poller", Isolation::in_process, CompletionStrategy::poller},
                                  {"isolated", Isolation::worker_process, CompletionStrategy::poller}};

const Shape kShapes[] = {{.rows = 1000, .cols = 800, .density = 2e-3},
                         {.rows = 300, .cols = 500, .density = 0.02, .empty_every = 3},
                         {.rows = 2000, .cols = 1500, .density = 1e-3, .huge_row = true},
                         {.rows = 64, .cols = 64, .density = 0.5},
                         {.rows = 100, .cols = 7, .density = 0.0}};

class CudaSparseProductTest : public ::testing::TestWithParam<GpuTestTarget> {
 protected:
  void SetUp() override {
    ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), device);
    gpu_ = device;
  }

  template <class I, class T>
  void sddmm(const Shape& shape, std::int64_t k, Structure structure) {
    const Entries c = random_entries(shape, rng_);
    for (MatrixOrder order : {MatrixOrder::column_major, MatrixOrder::row_major})
      for (Transpose op_a : {Transpose::none, Transpose::transpose})
        for (Transpose op_b : {Transpose::none, Transpose::transpose}) {
          SCOPED_TRACE(fmt::format("{} {} {}x{} nnz={} k={} {} op_a={} op_b={}", to_string(dtype_of<I>()),
                                   to_string(dtype_of<T>()), c.rows, c.cols, c.nnz(), k, to_string(order),
                                   to_string(op_a), to_string(op_b)));
          const std::vector<T> a = random_dense<T>(c.rows, k, rng_), b = random_dense<T>(k, c.cols, rng_);
          const Outcome gpu = run_sddmm<I, T>(*gpu_, c, op_a, op_b, order, k, 1.5, -0.5, a, b, structure);
          const Outcome cpu = run_sddmm<I, T>(cpu_, c, op_a, op_b, order, k, 1.5, -0.5, a, b);
          ASSERT_THAT(gpu.status, IsOk());
          ASSERT_THAT(cpu.status, IsOk());
          EXPECT_LE(relative(gpu.out, cpu.out), 4 * tolerance<T>(k));
          EXPECT_LE(relative(gpu.out, sddmm_reference(c, op_a, op_b, order, k, 1.5, -0.5, a, b)), tolerance<T>(k));
        }
  }

  template <class T>
  void spgemm(const Shape& a_shape, std::int64_t n, double b_density, Structure structure, int rounds) {
    const Entries a = random_entries(a_shape, rng_);
    const Entries b = random_entries({.rows = a_shape.cols, .cols = n, .density = b_density, .empty_every = 4}, rng_);
    SCOPED_TRACE(fmt::format("{} {}x{} nnz={} times {}x{} nnz={} rounds={}", to_string(dtype_of<T>()), a.rows, a.cols,
                             a.nnz(), b.rows, b.cols, b.nnz(), rounds));
    const Csr<std::int32_t> gpu = run_spgemm<std::int32_t, T>(*gpu_, a, b, 0.5, structure, rounds);
    Entries last = a;
    for (double& v : last.value) v *= rounds;
    const Csr<std::int32_t> cpu = run_spgemm<std::int32_t, T>(cpu_, last, b, 0.5);
    ASSERT_THAT(gpu.count, IsOk());
    ASSERT_THAT(gpu.fill, IsOk());
    ASSERT_THAT(cpu.fill, IsOk());
    EXPECT_EQ(gpu.offsets, cpu.offsets);
    EXPECT_EQ(gpu.indices, cpu.indices);
    EXPECT_LE(relative(gpu.dense, cpu.dense), 4 * tolerance<T>(a.cols));
    EXPECT_LE(relative(gpu.dense, 0.5 * last.dense() * b.dense()), tolerance<T>(a.cols));
  }

  template <class I, class T>
  void dense_to_csr(const Shape& shape) {
    const Entries e = random_entries(shape, rng_);
    for (MatrixOrder order : {MatrixOrder::column_major, MatrixOrder::row_major}) {
      SCOPED_TRACE(fmt::format("{} {} {}x{} nnz={} {}", to_string(dtype_of<I>()), to_string(dtype_of<T>()), e.rows,
                               e.cols, e.nnz(), to_string(order)));
      const Csr<I> gpu = run_dense_to_csr<I, T>(*gpu_, e, order);
      const Csr<I> cpu = run_dense_to_csr<I, T>(cpu_, e, order);
      ASSERT_THAT(gpu.count, IsOk());
      ASSERT_THAT(gpu.fill, IsOk());
      ASSERT_THAT(cpu.fill, IsOk());
      EXPECT_EQ(gpu.offsets, cpu.offsets);
      // cuSPARSE leaves a row's columns in its own order (measured on the H100); the values went with them, which
      // the dense matrices rebuilt from each CSR show.
      EXPECT_EQ(columns_sorted_in_rows(gpu), columns_sorted_in_rows(cpu));
      EXPECT_EQ(gpu.dense, cpu.dense);
    }
  }

  template <class I>
  static std::vector<I> columns_sorted_in_rows(const Csr<I>& csr) {
    std::vector<I> columns = csr.indices;
    for (std::size_t row = 0; row + 1 < csr.offsets.size(); ++row)
      std::sort(columns.begin() + csr.offsets[row], columns.begin() + csr.offsets[row + 1]);
    return columns;
  }

  System system_;
  Device cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::optional<Device> gpu_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

TEST_P(CudaSparseProductTest, SddmmMatchesTheCpu) {
  for (const Shape& shape : kShapes) {
    sddmm<std::int32_t, float>(shape, 16, Structure::checked_each_use);
    sddmm<std::int64_t, double>(shape, 5, Structure::fixed);
  }
}

TEST_P(CudaSparseProductTest, SpgemmMatchesTheCpu) {
  for (const Shape& shape : kShapes) {
    spgemm<float>(shape, 600, 4e-3, Structure::checked_each_use, 1);
    spgemm<double>(shape, 300, 0.01, Structure::fixed, 1);
  }
}

// Over fixed structures, later SpGemm requests reuse the count's state and compute new values alone.
TEST_P(CudaSparseProductTest, SpgemmOverAFixedStructureTakesNewValues) {
  spgemm<float>(kShapes[1], 400, 0.02, Structure::fixed, 3);
  spgemm<double>(kShapes[2], 200, 0.01, Structure::checked_each_use, 2);
}

// Without its count (nothing cached for these offsets), SpGemm counts again; a wrong nnz is named.
TEST_P(CudaSparseProductTest, SpgemmWithoutItsCountCountsAgain) {
  const Entries a = random_entries({.rows = 300, .cols = 200, .density = 0.02, .empty_every = 6}, rng_);
  const Entries b = random_entries({.rows = 200, .cols = 250, .density = 0.02}, rng_);
  const auto [offsets, indices] = product_structure(a, b);
  const auto nnz = static_cast<std::int64_t>(indices.size());
  for (Structure structure : {Structure::checked_each_use, Structure::fixed}) {
    DeviceMatrix<std::int32_t, float> da = upload_matrix<std::int32_t, float>(*gpu_, a, Format::csr, structure);
    DeviceMatrix<std::int32_t, float> db = upload_matrix<std::int32_t, float>(*gpu_, b, Format::csr, structure);
    Buffer<std::int32_t> c_offsets = upload(*gpu_, std::vector<std::int32_t>(301, 0));
    Buffer<std::int32_t> c_indices = upload(*gpu_, std::vector<std::int32_t>(static_cast<std::size_t>(nnz + 1)));
    Buffer<float> c_values = upload(*gpu_, std::vector<float>(static_cast<std::size_t>(nnz + 1)));
    Matrix c{.structure = structure,
             .rows = 300,
             .cols = 250,
             .nnz = nnz + 1,
             .offsets = c_offsets,
             .indices = c_indices,
             .values = c_values};
    EXPECT_THAT(gpu_->ask(SpGemm{.a = da.matrix, .b = db.matrix, .c = c}).wait(),
                StatusIs(Code::failed_precondition, fmt::format("c.nnz = {}, but the result has {}", nnz + 1, nnz)));
    c.nnz = nnz;
    ASSERT_THAT(gpu_->ask(SpGemm{.a = da.matrix, .b = db.matrix, .c = c}).wait(), IsOk());
    EXPECT_EQ(widened(download(*gpu_, c_offsets)), offsets);
    std::vector<std::int32_t> columns = download(*gpu_, c_indices);
    columns.resize(static_cast<std::size_t>(nnz));
    EXPECT_LE(relative(dense_of(300, 250, download(*gpu_, c_offsets), columns, download(*gpu_, c_values)),
                       a.dense() * b.dense()),
              tolerance<float>(200));
  }
}

// An SpGemm right after its count copies the counted product (a hit of the stream's "cusparse-spgemm-counts");
// one after a write of A's values, of C's offsets, or after another count multiplies again, and each result is A·B
// as A is when the SpGemm runs.
TEST_P(CudaSparseProductTest, SpgemmFillsFromItsCountUnlessSomethingChangedSince) {
  const Entries a = random_entries({.rows = 400, .cols = 300, .density = 0.02, .empty_every = 5}, rng_);
  const Entries b = random_entries({.rows = 300, .cols = 350, .density = 0.015}, rng_);
  const Entries other = random_entries({.rows = 400, .cols = 300, .density = 0.01}, rng_);
  const auto nnz = static_cast<std::int64_t>(product_structure(a, b).second.size());
  DeviceMatrix<std::int32_t, double> da = upload_matrix<std::int32_t, double>(*gpu_, a, Format::csr);
  DeviceMatrix<std::int32_t, double> db = upload_matrix<std::int32_t, double>(*gpu_, b, Format::csr);
  DeviceMatrix<std::int32_t, double> d_other = upload_matrix<std::int32_t, double>(*gpu_, other, Format::csr);
  Buffer<std::int32_t> c_offsets = upload(*gpu_, std::vector<std::int32_t>(401));
  Buffer<std::int32_t> other_offsets = upload(*gpu_, std::vector<std::int32_t>(401));
  Buffer<std::int32_t> c_indices = upload(*gpu_, std::vector<std::int32_t>(static_cast<std::size_t>(nnz)));
  Buffer<double> c_values = upload(*gpu_, std::vector<double>(static_cast<std::size_t>(nnz)));
  const Matrix c{.index = DType::i32,
                 .dtype = DType::f64,
                 .rows = 400,
                 .cols = 350,
                 .nnz = nnz,
                 .offsets = c_offsets,
                 .indices = c_indices,
                 .values = c_values};
  auto hits = [&] { return cache_stats(*gpu_, "cusparse-spgemm-counts").hits; };
  auto count = [&] { return gpu_->ask(SpGemmCount{.a = da.matrix, .b = db.matrix, .c_offsets = c_offsets}).wait(); };
  auto fill_matches = [&](const Entries& now, double alpha) {
    ASSERT_THAT(gpu_->ask(SpGemm{.alpha = alpha, .a = da.matrix, .b = db.matrix, .c = c}).wait(), IsOk());
    EXPECT_LE(
        relative(dense_of(400, 350, download(*gpu_, c_offsets), download(*gpu_, c_indices), download(*gpu_, c_values)),
                 alpha * now.dense() * b.dense()),
        tolerance<double>(300));
  };
  auto scaled_values = [&](double factor) {
    Entries scaled = a;
    for (double& v : scaled.value) v *= factor;
    return scaled;
  };

  ASSERT_THAT(count(), IsOk());
  const std::uint64_t before = hits();
  fill_matches(a, 1.0);
  EXPECT_EQ(hits(), before + 1) << "the SpGemm after its count copies the counted product";

  ASSERT_THAT(count(), IsOk());
  fill_matches(a, -2.5);
  EXPECT_EQ(hits(), before + 2) << "alpha scales the counted values";

  ASSERT_THAT(count(), IsOk());
  const Entries doubled = scaled_values(2.0);
  ASSERT_THAT(
      gpu_->upload(std::span<const double>(arrays<std::int32_t, double>(doubled, Format::csr).values), da.values)
          .wait(),
      IsOk());
  fill_matches(doubled, 1.0);
  EXPECT_EQ(hits(), before + 2) << "A's values were written after the count";

  ASSERT_THAT(count(), IsOk());
  ASSERT_THAT(gpu_->upload(std::span<const std::int32_t>(std::vector<std::int32_t>(401)), c_offsets).wait(), IsOk());
  fill_matches(doubled, 1.0);
  EXPECT_EQ(hits(), before + 2) << "C's offsets were written after the count";

  ASSERT_THAT(count(), IsOk());
  ASSERT_THAT(gpu_->ask(SpGemmCount{.a = d_other.matrix, .b = db.matrix, .c_offsets = other_offsets}).wait(), IsOk());
  fill_matches(doubled, 0.5);
  EXPECT_EQ(hits(), before + 2) << "another count replaced the product";

  ASSERT_THAT(count(), IsOk());
  Matrix wrong = c;
  wrong.nnz = nnz - 1;
  EXPECT_THAT(gpu_->ask(SpGemm{.a = da.matrix, .b = db.matrix, .c = wrong}).wait(),
              StatusIs(Code::failed_precondition, fmt::format("c.nnz = {}, but the result has {}", nnz - 1, nnz)));
}

// An SpGemm after its count moves C's columns and values buffers into the counted product when no request has used
// them and they hold exactly nnz entries (hits of the stream's "cusparse-spgemm-handovers"), and copies into them
// otherwise (misses). Every C is A·B times alpha, the device's memory in use stays as it was, and moved buffers serve
// later requests like any other.
TEST_P(CudaSparseProductTest, SpgemmMovesFreshBuffersOfCIntoItsCountedProduct) {
  const Entries a = random_entries({.rows = 500, .cols = 400, .density = 0.02, .empty_every = 6}, rng_);
  const Entries b = random_entries({.rows = 400, .cols = 300, .density = 0.02}, rng_);
  const std::size_t nnz = product_structure(a, b).second.size();
  ASSERT_GT(nnz, 0u);
  DeviceMatrix<std::int32_t, float> da = upload_matrix<std::int32_t, float>(*gpu_, a, Format::csr);
  DeviceMatrix<std::int32_t, float> db = upload_matrix<std::int32_t, float>(*gpu_, b, Format::csr);
  Buffer<std::int32_t> offsets = upload(*gpu_, std::vector<std::int32_t>(501));
  auto handovers = [&] {
    const CacheStats stats = cache_stats(*gpu_, "cusparse-spgemm-handovers");
    return std::pair(stats.hits, stats.misses);
  };
  auto in_use = [&] {
    Result<DeviceInfo> info = gpu_->info().wait();
    EXPECT_THAT(info, IsOk());
    return info.ok() ? info->memory.in_use_bytes : 0;
  };
  // A count, then C into `columns` and `values`, checked against A·B.
  auto product = [&](double alpha, const Buffer<std::int32_t>& columns, const Buffer<float>& values) {
    ASSERT_THAT(gpu_->ask(SpGemmCount{.a = da.matrix, .b = db.matrix, .c_offsets = offsets}).wait(), IsOk());
    const std::uint64_t memory = in_use();
    const Matrix c{.rows = 500,
                   .cols = 300,
                   .nnz = static_cast<std::int64_t>(nnz),
                   .offsets = offsets,
                   .indices = columns,
                   .values = values};
    ASSERT_THAT(gpu_->ask(SpGemm{.alpha = alpha, .a = da.matrix, .b = db.matrix, .c = c}).wait(), IsOk());
    EXPECT_EQ(in_use(), memory);
    std::vector<std::int32_t> host_columns = download(*gpu_, columns);
    std::vector<float> host_values = download(*gpu_, values);
    host_columns.resize(nnz);
    host_values.resize(nnz);
    EXPECT_LE(relative(dense_of(500, 300, download(*gpu_, offsets), host_columns, host_values),
                       alpha * a.dense() * b.dense()),
              tolerance<float>(400));
  };
  const auto before = handovers();
  const Buffer<std::int32_t> columns = allocated<std::int32_t>(*gpu_, nnz);
  const Buffer<float> values = allocated<float>(*gpu_, nnz);
  product(1.0, columns, values);
  EXPECT_EQ(handovers(), std::pair(before.first + 2, before.second)) << "fresh buffers of nnz entries are moved";
  product(-1.5, allocated<std::int32_t>(*gpu_, nnz), allocated<float>(*gpu_, nnz));
  EXPECT_EQ(handovers(), std::pair(before.first + 4, before.second)) << "moved values are scaled where they lie";
  product(1.0, allocated<std::int32_t>(*gpu_, nnz + 3), allocated<float>(*gpu_, nnz + 3));
  EXPECT_EQ(handovers(), std::pair(before.first + 4, before.second + 2)) << "longer buffers are copied into";
  product(2.0, upload(*gpu_, std::vector<std::int32_t>(nnz)), upload(*gpu_, std::vector<float>(nnz)));
  EXPECT_EQ(handovers(), std::pair(before.first + 4, before.second + 4)) << "used buffers are copied into";
  product(0.5, columns, values);
  EXPECT_EQ(handovers(), std::pair(before.first + 4, before.second + 6)) << "the moved buffers, used since";
}

// A count checks A and B once; a later count over the same unwritten arrays skips the checks (hits of the stream's
// "sparse-structure-verdicts"), and a write of A's columns brings the check back: a malformed upload is refused,
// the good columns written back are checked and used.
TEST_P(CudaSparseProductTest, SpgemmChecksAFactorAgainOnlyAfterItWasWritten) {
  const Entries a = random_entries({.rows = 300, .cols = 200, .density = 0.03, .empty_every = 7}, rng_);
  const Entries b = random_entries({.rows = 200, .cols = 250, .density = 0.02}, rng_);
  DeviceMatrix<std::int32_t, float> da = upload_matrix<std::int32_t, float>(*gpu_, a, Format::csr);
  DeviceMatrix<std::int32_t, float> db = upload_matrix<std::int32_t, float>(*gpu_, b, Format::csr);
  Buffer<std::int32_t> c_offsets = upload(*gpu_, std::vector<std::int32_t>(301));
  auto skipped = [&] { return cache_stats(*gpu_, "sparse-structure-verdicts").hits; };
  auto count = [&] { return gpu_->ask(SpGemmCount{.a = da.matrix, .b = db.matrix, .c_offsets = c_offsets}).wait(); };

  ASSERT_THAT(count(), IsOk());
  const std::uint64_t before = skipped();
  ASSERT_THAT(count(), IsOk());
  EXPECT_EQ(skipped(), before + 2) << "A and B were checked by the first count and not written since";

  const std::vector<std::int32_t> columns = arrays<std::int32_t, float>(a, Format::csr).indices;
  ASSERT_FALSE(columns.empty());
  std::vector<std::int32_t> out_of_range = columns;
  out_of_range.back() = 200;
  ASSERT_THAT(gpu_->upload(std::span<const std::int32_t>(out_of_range), da.indices).wait(), IsOk());
  EXPECT_THAT(count(), StatusIs(Code::failed_precondition, "sparse::SpGemmCount: a is malformed"));

  ASSERT_THAT(gpu_->upload(std::span<const std::int32_t>(columns), da.indices).wait(), IsOk());
  ASSERT_THAT(count(), IsOk());
  EXPECT_EQ(skipped(), before + 3) << "only B was skipped: A's columns were written";
  EXPECT_EQ(widened(download(*gpu_, c_offsets)), product_structure(a, b).first);
}

// CSR -> COO and back check a matrix's index arrays once: a conversion over arrays the stream has passed and nothing
// has written since skips the check (hits of the stream's "sparse-structure-verdicts"); a malformed upload is checked
// and refused, and the good arrays written back are checked and converted.
TEST_P(CudaSparseProductTest, ConversionsCheckAStructureAgainOnlyAfterItWasWritten) {
  const Entries e = random_entries({.rows = 600, .cols = 500, .density = 0.01, .empty_every = 5}, rng_);
  DeviceMatrix<std::int32_t, float> a = upload_matrix<std::int32_t, float>(*gpu_, e, Format::csr);
  const std::vector<std::int32_t> csr_offsets = arrays<std::int32_t, float>(e, Format::csr).offsets;
  const std::vector<std::int32_t> coo_rows = arrays<std::int32_t, float>(e, Format::coo).offsets;
  Buffer<std::int32_t> rows = allocated<std::int32_t>(*gpu_, coo_rows.size()),
                       offsets = allocated<std::int32_t>(*gpu_, csr_offsets.size());
  Matrix coo = a.matrix;
  coo.format = Format::coo;
  coo.offsets = rows;
  auto skipped = [&] { return cache_stats(*gpu_, "sparse-structure-verdicts").hits; };
  auto to_coo = [&] { return gpu_->ask(CsrToCoo{.csr = a.matrix, .rows = rows}).wait(); };
  auto to_csr = [&] { return gpu_->ask(CooToCsr{.coo = coo, .offsets = offsets}).wait(); };
  ASSERT_THAT(to_coo(), IsOk());
  const std::uint64_t before = skipped();
  ASSERT_THAT(to_coo(), IsOk());
  EXPECT_EQ(skipped(), before + 1) << "the CSR's arrays were checked by the first conversion and not written since";
  ASSERT_THAT(to_csr(), IsOk());
  ASSERT_THAT(to_csr(), IsOk());
  EXPECT_EQ(skipped(), before + 2) << "the COO's rows were checked once after the conversion wrote them";
  EXPECT_EQ(download(*gpu_, rows), coo_rows);
  EXPECT_EQ(download(*gpu_, offsets), csr_offsets);

  std::vector<std::int32_t> malformed = csr_offsets;
  malformed[3] = csr_offsets.back() + 5;  // past nnz, and the offsets after it decrease
  ASSERT_THAT(gpu_->upload(std::span<const std::int32_t>(malformed), a.offsets).wait(), IsOk());
  EXPECT_THAT(to_coo(), StatusIs(Code::failed_precondition, "sparse::CsrToCoo: csr is malformed"));
  ASSERT_THAT(gpu_->upload(std::span<const std::int32_t>(csr_offsets), a.offsets).wait(), IsOk());
  ASSERT_THAT(to_coo(), IsOk());
  EXPECT_EQ(skipped(), before + 2) << "the CSR's offsets were written: checked again";
  EXPECT_EQ(download(*gpu_, rows), coo_rows);
}

TEST_P(CudaSparseProductTest, SpgemmOfI64IndicesIsNotSupportedOnCuda) {
  const Entries a = random_entries({.rows = 10, .cols = 10, .density = 0.3}, rng_);
  const Csr<std::int64_t> c = run_spgemm<std::int64_t, double>(*gpu_, a, a, 1.0);
  EXPECT_THAT(c.count, StatusIs(Code::not_supported, "sparse::SpGemmCount: cuSPARSE's SpGEMM takes i32 indices only"));
}

TEST_P(CudaSparseProductTest, MalformedFactorsAreRefusedBeforeCusparseReadsThem) {
  Buffer<std::int32_t> bad_offsets = upload(*gpu_, std::vector<std::int32_t>{0, 3, 2, 4});
  Buffer<std::int32_t> columns = upload(*gpu_, std::vector<std::int32_t>{0, 2, 1, 3});
  Buffer<float> values = upload(*gpu_, std::vector<float>{1, 2, 3, 4});
  Buffer<std::int32_t> c_offsets = upload(*gpu_, std::vector<std::int32_t>(4));
  const Matrix a{.rows = 3, .cols = 4, .nnz = 4, .offsets = bad_offsets, .indices = columns, .values = values};
  Buffer<std::int32_t> b_offsets = upload(*gpu_, std::vector<std::int32_t>{0, 1, 2, 3, 4});
  const Matrix b{.rows = 4, .cols = 4, .nnz = 4, .offsets = b_offsets, .indices = columns, .values = values};
  EXPECT_THAT(
      gpu_->ask(SpGemmCount{.a = a, .b = b, .c_offsets = c_offsets}).wait(),
      StatusIs(Code::failed_precondition, "sparse::SpGemmCount: a is malformed: row offsets decrease at row 1"));
  Buffer<float> dense = upload(*gpu_, std::vector<float>(16, 1));
  EXPECT_THAT(
      gpu_->ask(SDDMM{.a = {.rows = 3, .cols = 4, .data = dense}, .b = {.rows = 4, .cols = 4, .data = dense}, .c = a})
          .wait(),
      StatusIs(Code::failed_precondition, "sparse::SDDMM: c is malformed: row offsets decrease at row 1"));
}

TEST_P(CudaSparseProductTest, DenseToCsrMatchesTheCpu) {
  for (const Shape& shape : kShapes) {
    dense_to_csr<std::int32_t, float>(shape);
    dense_to_csr<std::int64_t, double>(shape);
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, CudaSparseProductTest, ::testing::ValuesIn(kTargets), accel::testing::target_name);

}  // namespace
}  // namespace accel::sparse
