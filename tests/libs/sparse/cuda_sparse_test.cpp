// The sparse requests on CUDA (cuSPARSE) against the CPU device (Eigen) and dense references, on fresh random
// matrices of several densities and shapes — empty rows, one huge row, 64-bit indices (the CSR <-> COO conversions,
// the family's own kernels, with both index types) — in process and isolated; malformed matrices refused by the
// structural check kernel before cuSPARSE reads them, and a fixed structure's analysis reused; blocked-ELL SpMM (f16,
// bf16, f32, f64, padding blocks) against the CPU, and what cuSPARSE lacks refused by name; cuSPARSE's version
// reported once a request has loaded it. Skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>

#include "blocked_ell_cases.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/test_seed.hpp"

namespace accel::sparse {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using namespace testing;  // NOLINT(google-build-using-namespace): the sparse test helpers

using accel::testing::GpuTestTarget;

const GpuTestTarget kTargets[] = {{"poller", Isolation::in_process, CompletionStrategy::poller},
                                  {"blocking", Isolation::in_process, CompletionStrategy::blocking},
                                  {"isolated", Isolation::worker_process, CompletionStrategy::poller}};

const Shape kShapes[] = {{.rows = 1000, .cols = 800, .density = 1e-3},
                         {.rows = 300, .cols = 500, .density = 0.05, .empty_every = 3},
                         {.rows = 2000, .cols = 3000, .density = 1e-3, .huge_row = true},
                         {.rows = 64, .cols = 64, .density = 0.5},
                         {.rows = 100, .cols = 7, .density = 0.0}};

class CudaSparseTest : public ::testing::TestWithParam<GpuTestTarget> {
 protected:
  void SetUp() override {
    ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), device);
    gpu_ = device;
  }

  template <class I, class T>
  void spmv(const Shape& shape, Structure structure) {
    const Entries e = random_entries(shape, rng_);
    for (Format format : {Format::csr, Format::csc, Format::coo})
      for (Transpose op : {Transpose::none, Transpose::transpose}) {
        SCOPED_TRACE(fmt::format("{} {} {} {}x{} nnz={} op={}", to_string(dtype_of<I>()), to_string(dtype_of<T>()),
                                 to_string(format), e.rows, e.cols, e.nnz(), to_string(op)));
        const std::int64_t m = op == Transpose::none ? e.rows : e.cols, k = op == Transpose::none ? e.cols : e.rows;
        const std::vector<T> x = random_vector<T>(static_cast<std::size_t>(k), rng_),
                             y = random_vector<T>(static_cast<std::size_t>(m), rng_);
        const Outcome gpu = run_spmv<I, T>(*gpu_, e, format, op, 0.75, -0.5, x, y, structure);
        const Outcome cpu = run_spmv<I, T>(cpu_, e, format, op, 0.75, -0.5, x, y);
        ASSERT_THAT(gpu.status, IsOk());
        ASSERT_THAT(cpu.status, IsOk());
        EXPECT_LE(relative(gpu.out, cpu.out), 4 * tolerance<T>(k));
        EXPECT_LE(relative(gpu.out, spmv_reference(e, op, 0.75, -0.5, x, y)), tolerance<T>(k));
      }
  }

  template <class I, class T>
  void spmm(const Shape& shape, std::int64_t n) {
    const Entries e = random_entries(shape, rng_);
    for (MatrixOrder order : {MatrixOrder::column_major, MatrixOrder::row_major})
      for (Transpose op_a : {Transpose::none, Transpose::transpose})
        for (Transpose op_b : {Transpose::none, Transpose::transpose}) {
          SCOPED_TRACE(fmt::format("{} {} {}x{} nnz={} n={} {} op_a={} op_b={}", to_string(dtype_of<I>()),
                                   to_string(dtype_of<T>()), e.rows, e.cols, e.nnz(), n, to_string(order),
                                   to_string(op_a), to_string(op_b)));
          const std::int64_t m = op_a == Transpose::none ? e.rows : e.cols;
          const std::int64_t k = op_a == Transpose::none ? e.cols : e.rows;
          const std::vector<T> b = random_vector<T>(static_cast<std::size_t>(k * n), rng_),
                               c = random_vector<T>(static_cast<std::size_t>(m * n), rng_);
          const Outcome gpu = run_spmm<I, T>(*gpu_, e, Format::csr, op_a, op_b, order, n, 2.0, 0.5, b, c);
          const Outcome cpu = run_spmm<I, T>(cpu_, e, Format::csr, op_a, op_b, order, n, 2.0, 0.5, b, c);
          ASSERT_THAT(gpu.status, IsOk());
          ASSERT_THAT(cpu.status, IsOk());
          EXPECT_LE(relative(gpu.out, cpu.out), 4 * tolerance<T>(k));
        }
  }

  template <class I, class T>
  void spsv(std::int64_t n, Structure structure) {
    const Entries e =
        random_entries({.rows = n, .cols = n, .density = 4.0 / static_cast<double>(n), .unit_diagonal = true}, rng_);
    const std::vector<T> x = random_vector<T>(static_cast<std::size_t>(n), rng_);
    for (Fill fill : {Fill::lower, Fill::upper})
      for (Diagonal diagonal : {Diagonal::non_unit, Diagonal::unit})
        for (Transpose op : {Transpose::none, Transpose::transpose}) {
          SCOPED_TRACE(fmt::format("{} {} n={} fill={} unit={} op={}", to_string(dtype_of<I>()),
                                   to_string(dtype_of<T>()), n, static_cast<int>(fill), static_cast<int>(diagonal),
                                   to_string(op)));
          const Outcome gpu = run_spsv<I, T>(*gpu_, e, op, fill, diagonal, 1.5, x, structure);
          const Outcome cpu = run_spsv<I, T>(cpu_, e, op, fill, diagonal, 1.5, x);
          ASSERT_THAT(gpu.status, IsOk());
          ASSERT_THAT(cpu.status, IsOk());
          EXPECT_LE(relative(gpu.out, cpu.out), 100 * tolerance<T>(n));
        }
  }

  // CsrToCoo and back on both devices, from the same fresh matrix: the GPU's rows and offsets are the CPU's.
  template <class I>
  void conversions(const Shape& shape) {
    const Entries e = random_entries(shape, rng_);
    SCOPED_TRACE(fmt::format("{} {}x{} nnz={}", to_string(dtype_of<I>()), e.rows, e.cols, e.nnz()));
    auto convert = [&](Device& device) {
      DeviceMatrix<I, float> csr = upload_matrix<I, float>(device, e, Format::csr);
      // One element at least, written: an empty matrix's buffer would otherwise be a placeholder never written,
      // whose download compute-sanitizer's initcheck reported.
      Buffer<I> rows =
          upload(device, std::vector<I>(std::max<std::size_t>(static_cast<std::size_t>(e.nnz()), 1), I{-1}));
      EXPECT_THAT(device.ask(CsrToCoo{.csr = csr.matrix, .rows = rows}).wait(), IsOk());
      Matrix coo = csr.matrix;
      coo.format = Format::coo;
      const Buffer<I> sorted_rows = upload(device, arrays<I, float>(e, Format::coo).offsets);
      coo.offsets = sorted_rows;
      Buffer<I> offsets = upload(device, std::vector<I>(static_cast<std::size_t>(e.rows + 1), I{-1}));
      EXPECT_THAT(device.ask(CooToCsr{.coo = coo, .offsets = offsets}).wait(), IsOk());
      std::vector<I> coo_rows = download(device, rows);
      coo_rows.resize(static_cast<std::size_t>(e.nnz()));
      return std::pair(coo_rows, download(device, offsets));
    };
    const auto [gpu_rows, gpu_offsets] = convert(*gpu_);
    const auto [cpu_rows, cpu_offsets] = convert(cpu_);
    EXPECT_EQ(gpu_rows, cpu_rows);
    EXPECT_EQ(gpu_offsets, cpu_offsets);
    EXPECT_EQ(gpu_rows, (arrays<I, float>(e, Format::coo).offsets));
    EXPECT_EQ(gpu_offsets, (arrays<I, float>(e, Format::csr).offsets));
  }

  // Blocked-ELL SpMM on CUDA against the CPU device (f16 and bf16 against f32 on the same rounded values), over the
  // orders and op_b of B and C. A combination cuSPARSE refuses answers not_supported and is printed; the one that
  // NVIDIA documents and samples (f16 or f32, blocks of 2 or more, column-major B and C, op_b none) must run.
  template <class T>
  void blocked_spmm(std::int64_t block_rows, std::int64_t block_cols, std::int32_t block, std::int64_t slots,
                    std::int64_t n, Structure structure) {
    using Cpu = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const BlockedEll e = random_blocked_ell(block_rows, block_cols, block, slots, 0.3, rng_);
    BlockedEll rounded = e;
    for (double& v : rounded.values) v = to_double(value_of<T>(v));
    auto values = [&]<class U>(const std::vector<double>& from, U) {
      std::vector<U> out;
      for (double v : from) out.push_back(value_of<U>(to_double(value_of<T>(v))));
      return out;
    };
    // cuSPARSE's blocked-ELL product takes f32 through TF32 (10-bit fractions): 2.3e-4 to 3.1e-4 relative to the
    // f64 CPU on the H100, as f16 inputs would be.
    const double tolerance = std::is_same_v<T, Half> || std::is_same_v<T, float> ? 2e-3
                             : std::is_same_v<T, BFloat16>                       ? 1.6e-2
                                                                                 : 4 * testing::tolerance<T>(e.cols);
    for (MatrixOrder order : {MatrixOrder::column_major, MatrixOrder::row_major})
      for (Transpose op_b : {Transpose::none, Transpose::transpose}) {
        const std::string what = fmt::format("{} {}x{} block={} slots={} n={} {} op_b={}", to_string(dtype_of<T>()),
                                             e.rows, e.cols, block, slots, n, to_string(order), to_string(op_b));
        SCOPED_TRACE(what);
        const std::vector<double> b = random_vector<double>(static_cast<std::size_t>(e.cols * n), rng_),
                                  c = random_vector<double>(static_cast<std::size_t>(e.rows * n), rng_);
        const Outcome gpu = run_blocked_spmm<std::int32_t, T>(*gpu_, e, Transpose::none, op_b, order, n, 1.5, -0.5,
                                                              values(b, T{}), values(c, T{}), structure);
        const bool documented = (std::is_same_v<T, Half> || std::is_same_v<T, float>)&&block >= 2 &&
                                order == MatrixOrder::column_major && op_b == Transpose::none;
        if (gpu.status.code() == Code::not_supported && !documented) {
          fmt::print("cuSPARSE does not multiply blocked ELL {}: {}\n", what, gpu.status.to_string());
          continue;
        }
        const Outcome cpu = run_blocked_spmm<std::int32_t, Cpu>(cpu_, rounded, Transpose::none, op_b, order, n, 1.5,
                                                                -0.5, values(b, Cpu{}), values(c, Cpu{}));
        ASSERT_THAT(gpu.status, IsOk());
        ASSERT_THAT(cpu.status, IsOk());
        EXPECT_LE(relative(gpu.out, cpu.out), tolerance);
      }
  }

  System system_;
  Device cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::optional<Device> gpu_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

TEST_P(CudaSparseTest, SpmvMatchesTheCpu) {
  for (const Shape& shape : kShapes) {
    spmv<std::int32_t, float>(shape, Structure::checked_each_use);
    spmv<std::int64_t, double>(shape, Structure::fixed);
  }
}

TEST_P(CudaSparseTest, SpmmMatchesTheCpu) {
  spmm<std::int32_t, float>(kShapes[0], 16);
  spmm<std::int64_t, double>(kShapes[1], 5);
  spmm<std::int32_t, double>(kShapes[2], 3);
}

TEST_P(CudaSparseTest, SpsvMatchesTheCpu) {
  spsv<std::int32_t, double>(500, Structure::checked_each_use);
  spsv<std::int64_t, float>(200, Structure::fixed);
}

// A fixed structure is analysed once: repeated products over it, with new values, stay right.
TEST_P(CudaSparseTest, AFixedStructureIsAnalysedOnceAndTakesNewValues) {
  const Entries e = random_entries({.rows = 3000, .cols = 3000, .density = 2e-3, .empty_every = 7}, rng_);
  DeviceMatrix<std::int32_t, float> a = upload_matrix<std::int32_t, float>(*gpu_, e, Format::csr, Structure::fixed);
  const std::vector<float> x = random_vector<float>(3000, rng_);
  Buffer<float> dx = upload(*gpu_, x), dy = upload(*gpu_, std::vector<float>(3000));
  for (int round = 0; round < 3; ++round) {
    Entries scaled = e;
    for (double& v : scaled.value) v *= round + 1;
    ASSERT_THAT(
        gpu_->upload(std::span<const float>(arrays<std::int32_t, float>(scaled, Format::csr).values), a.values).wait(),
        IsOk());
    ASSERT_THAT(gpu_->ask(SpMV{.a = a.matrix, .x = dx, .y = dy}).wait(), IsOk());
    const auto n = static_cast<std::int64_t>(x.size());
    EXPECT_LE(relative(to_reference(download(*gpu_, dy), n, 1, n, MatrixOrder::column_major),
                       spmv_reference(scaled, Transpose::none, 1.0, 0.0, x, std::vector<float>(3000))),
              tolerance<float>(3000));
  }
}

// A checked matrix (the default) is checked again only after its index arrays were written: repeated products over
// it skip the check (hits of the stream's "sparse-structure-verdicts"), a malformed write of its offsets is checked
// and refused, and the good offsets written back are checked and used, with the right result.
TEST_P(CudaSparseTest, ACheckedStructureIsCheckedAgainOnlyAfterItsIndexArraysChange) {
  const Entries e = random_entries({.rows = 2000, .cols = 1500, .density = 3e-3, .empty_every = 9}, rng_);
  DeviceMatrix<std::int32_t, float> a = upload_matrix<std::int32_t, float>(*gpu_, e, Format::csr);
  const std::vector<float> x = random_vector<float>(1500, rng_);
  Buffer<float> dx = upload(*gpu_, x), dy = upload(*gpu_, std::vector<float>(2000));
  auto verdicts = [&] {
    const CacheStats stats = cache_stats(*gpu_, "sparse-structure-verdicts");
    return std::pair{stats.hits, stats.builds};
  };
  auto product_matches = [&] {
    ASSERT_THAT(gpu_->ask(SpMV{.a = a.matrix, .x = dx, .y = dy}).wait(), IsOk());
    EXPECT_LE(relative(to_reference(download(*gpu_, dy), 2000, 1, 2000, MatrixOrder::column_major),
                       spmv_reference(e, Transpose::none, 1.0, 0.0, x, std::vector<float>(2000))),
              tolerance<float>(1500));
  };
  product_matches();  // checked and analysed
  const auto [skipped, run] = verdicts();
  product_matches();
  product_matches();
  EXPECT_EQ(verdicts(), std::pair(skipped + 2, run));

  const std::vector<std::int32_t> offsets = arrays<std::int32_t, float>(e, Format::csr).offsets;
  std::vector<std::int32_t> malformed = offsets;
  malformed[3] = offsets.back() + 5;  // past nnz, and the offsets after it decrease
  ASSERT_THAT(gpu_->upload(std::span<const std::int32_t>(malformed), a.offsets).wait(), IsOk());
  EXPECT_EQ(gpu_->ask(SpMV{.a = a.matrix, .x = dx, .y = dy}).wait().status().code(), Code::failed_precondition);
  ASSERT_THAT(gpu_->upload(std::span<const std::int32_t>(offsets), a.offsets).wait(), IsOk());
  product_matches();
  EXPECT_EQ(verdicts(), std::pair(skipped + 2, run + 2));
}

// cuSPARSE is loaded by the first request that calls it, not linked: once one has run, the device names its version
// and reports the stream's analyses.
TEST_P(CudaSparseTest, ReportsCusparseOnceARequestHasLoadedIt) {
  const Entries e = random_entries({.rows = 50, .cols = 40, .density = 0.1}, rng_);
  DeviceMatrix<std::int32_t, float> a = upload_matrix<std::int32_t, float>(*gpu_, e, Format::csr);
  Buffer<float> x = upload(*gpu_, std::vector<float>(50, 1.0f)), y = upload(*gpu_, std::vector<float>(40));
  ASSERT_THAT(gpu_->ask(SpMV{.op = Transpose::transpose, .a = a.matrix, .x = x, .y = y}).wait(), IsOk());
  Result<DeviceInfo> info = gpu_->info().wait();
  ASSERT_THAT(info, IsOk());
  const LibraryVersion* cusparse = info->library("cuSPARSE");
  ASSERT_NE(cusparse, nullptr);
  EXPECT_NE(cusparse->version, "not loaded yet");
  EXPECT_NE(info->cache("cusparse-analyses"), nullptr);
}

TEST_P(CudaSparseTest, MalformedMatricesAreRefusedBeforeCusparseReadsThem) {
  Buffer<std::int32_t> offsets = upload(*gpu_, std::vector<std::int32_t>{0, 2, 2, 4});
  Buffer<std::int32_t> bad_offsets = upload(*gpu_, std::vector<std::int32_t>{0, 3, 2, 4});
  Buffer<std::int64_t> wild = upload(*gpu_, std::vector<std::int64_t>{0, 2, 1, std::int64_t{1} << 40});
  Buffer<std::int32_t> far = upload(*gpu_, std::vector<std::int32_t>{0, 2, 1, 1 << 30});
  Buffer<float> values = upload(*gpu_, std::vector<float>{1, 2, 3, 4}), x = upload(*gpu_, std::vector<float>(4, 1)),
                y = upload(*gpu_, std::vector<float>(3));
  const Matrix a{.rows = 3, .cols = 4, .nnz = 4, .offsets = bad_offsets, .indices = far, .values = values};
  EXPECT_THAT(gpu_->ask(SpMV{.a = a, .x = x, .y = y}).wait(),
              StatusIs(Code::failed_precondition, "sparse::SpMV: a is malformed: row offsets decrease at row 1"));
  Matrix columns = a;
  columns.offsets = offsets;
  EXPECT_THAT(gpu_->ask(SpMV{.a = columns, .x = x, .y = y}).wait(),
              StatusIs(Code::failed_precondition, "the column of entry 3 is outside [0, 4)"));
  columns.structure = Structure::fixed;
  EXPECT_THAT(gpu_->ask(SpMV{.a = columns, .x = x, .y = y}).wait(), StatusIs(Code::failed_precondition));
  Buffer<std::int64_t> offsets64 = upload(*gpu_, std::vector<std::int64_t>{0, 2, 2, 4});
  Buffer<double> values64 = upload(*gpu_, std::vector<double>{1, 2, 3, 4}),
                 x64 = upload(*gpu_, std::vector<double>(4, 1)), y64 = upload(*gpu_, std::vector<double>(3));
  const Matrix a64{.index = DType::i64,
                   .dtype = DType::f64,
                   .rows = 3,
                   .cols = 4,
                   .nnz = 4,
                   .offsets = offsets64,
                   .indices = wild,
                   .values = values64};
  EXPECT_THAT(
      gpu_->ask(SpMM{.a = a64, .b = {.rows = 4, .cols = 1, .data = x64}, .c = {.rows = 3, .cols = 1, .data = y64}})
          .wait(),
      StatusIs(Code::failed_precondition, "sparse::SpMM: a is malformed: the column of entry 3"));
  // The device is still healthy: a well-formed request runs.
  const Buffer<std::int32_t> good_columns = upload(*gpu_, std::vector<std::int32_t>{0, 2, 1, 3});
  columns.indices = good_columns;
  columns.structure = Structure::checked_each_use;
  ASSERT_THAT(gpu_->ask(SpMV{.a = columns, .x = x, .y = y}).wait(), IsOk());
  EXPECT_EQ(download(*gpu_, y), (std::vector<float>{3, 0, 7}));
}

TEST_P(CudaSparseTest, HalfPrecisionSpmvMatchesTheCpuInF32) {
  const Entries e = random_entries({.rows = 500, .cols = 400, .density = 0.01}, rng_);
  Entries rounded = e;
  for (double& v : rounded.value) v = static_cast<double>(to_float(to_half(static_cast<float>(v))));
  std::vector<Half> x(400);
  std::vector<float> x32(400);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = to_half(static_cast<float>(i % 7) / 7.0f);
    x32[i] = to_float(x[i]);
  }
  DeviceMatrix<std::int32_t, Half> a = upload_matrix<std::int32_t, Half>(*gpu_, rounded, Format::csr);
  Buffer<Half> dx = upload(*gpu_, x), dy = upload(*gpu_, std::vector<Half>(500));
  ASSERT_THAT(gpu_->ask(SpMV{.a = a.matrix, .x = dx, .y = dy}).wait(), IsOk());
  std::vector<float> y;
  for (Half h : download(*gpu_, dy)) y.push_back(to_float(h));
  const Outcome cpu = run_spmv<std::int32_t, float>(cpu_, rounded, Format::csr, Transpose::none, 1.0, 0.0, x32,
                                                    std::vector<float>(500));
  ASSERT_THAT(cpu.status, IsOk());
  EXPECT_LE(relative(to_reference(y, 500, 1, 500, MatrixOrder::column_major), cpu.out), 2e-3);
}

TEST_P(CudaSparseTest, ConversionsMatchTheCpu) {
  for (const Shape& shape : kShapes) {
    conversions<std::int32_t>(shape);
    conversions<std::int64_t>(shape);
  }
  conversions<std::int64_t>({.rows = 5000, .cols = 40000, .density = 1e-4, .empty_every = 2, .huge_row = true});
  const Entries e = random_entries({.rows = 700, .cols = 300, .density = 0.02, .empty_every = 4}, rng_);
  for (Format format : {Format::csr, Format::csc, Format::coo}) {
    DeviceMatrix<std::int64_t, double> a = upload_matrix<std::int64_t, double>(*gpu_, e, format);
    Buffer<double> dense = upload(*gpu_, std::vector<double>(static_cast<std::size_t>(e.rows * e.cols), 3.0));
    ASSERT_THAT(gpu_->ask(ToDense{.a = a.matrix, .out = {.rows = e.rows, .cols = e.cols, .data = dense}}).wait(),
                IsOk());
    EXPECT_LE(
        relative(to_reference(download(*gpu_, dense), e.rows, e.cols, e.rows, MatrixOrder::column_major), e.dense()),
        1e-12)
        << to_string(format);
  }
}

TEST_P(CudaSparseTest, BlockedEllSpmmMatchesTheCpu) {
  blocked_spmm<Half>(64, 48, 16, 6, 32, Structure::checked_each_use);
  blocked_spmm<float>(64, 48, 16, 6, 32, Structure::fixed);
  blocked_spmm<Half>(100, 70, 4, 5, 8, Structure::fixed);
  blocked_spmm<float>(100, 70, 4, 5, 8, Structure::checked_each_use);
  blocked_spmm<Half>(33, 20, 2, 20, 5, Structure::checked_each_use);
  blocked_spmm<float>(8, 8, 32, 3, 64, Structure::checked_each_use);
  blocked_spmm<BFloat16>(64, 48, 16, 6, 32, Structure::checked_each_use);
  blocked_spmm<double>(100, 70, 4, 5, 8, Structure::checked_each_use);
  blocked_spmm<float>(50, 40, 1, 7, 4, Structure::checked_each_use);
}

// What cuSPARSE's blocked-ELL SpMM cannot do is refused before it is asked; a wild column block before it reads it.
TEST_P(CudaSparseTest, BlockedEllSpmmRefusesWhatCusparseLacks) {
  Buffer<std::int64_t> wide = upload(*gpu_, std::vector<std::int64_t>{0, 2, 1, -1});
  Buffer<std::int32_t> wild = upload(*gpu_, std::vector<std::int32_t>{0, 3, 1, -1});
  Buffer<float> values = upload(*gpu_, std::vector<float>(16, 1.0f)), b = upload(*gpu_, std::vector<float>(6, 1.0f)),
                c = upload(*gpu_, std::vector<float>(6));
  auto spmm = [&](const Matrix& a, Transpose op_a) {
    const std::int64_t m = op_a == Transpose::none ? a.rows : a.cols, k = op_a == Transpose::none ? a.cols : a.rows;
    return gpu_
        ->ask(
            SpMM{.op_a = op_a, .a = a, .b = {.rows = k, .cols = 1, .data = b}, .c = {.rows = m, .cols = 1, .data = c}})
        .wait()
        .status();
  };
  EXPECT_THAT(spmm(blocked_ell(4, 6, 2, 4, wide, values, DType::f32, DType::i64), Transpose::none),
              StatusIs(Code::not_supported, "i32 indices only"));
  EXPECT_THAT(spmm(blocked_ell(4, 6, 2, 4, wild, values), Transpose::transpose),
              StatusIs(Code::not_supported, "op_a must be none"));
  EXPECT_THAT(spmm(blocked_ell(4, 6, 2, 4, wild, values), Transpose::none),
              StatusIs(Code::failed_precondition, "the column block of slot 1 is neither -1 nor inside [0, 3)"));
}

INSTANTIATE_TEST_SUITE_P(Targets, CudaSparseTest, ::testing::ValuesIn(kTargets), accel::testing::target_name);

}  // namespace
}  // namespace accel::sparse
