// The BLAS requests a CUDA device runs by kernels of its own or by a GEMM rather than cuBLAS's routine of their
// name (src/libs/blas/blas_kernels.hpp), against the CPU device on the same fresh random inputs: Symv with leading
// dimensions, strides and batches larger than one launch takes; Ger past its grid's extents; Swap and Copy off
// 16-byte alignment; Trmm on both sides of its GEMM threshold; a 16-bit Gemv whose A is not 16-byte aligned. On every
// way a CUDA device runs requests; skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "accel/libs/blas/level1.hpp"
#include "accel/libs/blas/level2.hpp"
#include "accel/libs/blas/level3.hpp"
#include "libs/blas/cuda_blas_fixture.hpp"

namespace accel::blas {
namespace {

using accel::testing::HostArray;
using accel::testing::IsOk;

class CudaBlasKernelsTest : public CudaBlasFixture {};

TEST_P(CudaBlasKernelsTest, SymvMatchesTheCpuDeviceWithLeadingDimensionStridesAndBetaZero) {
  // A's unread triangle and the gaps past its rows hold random values, and y is not read where beta is 0: a Symv that
  // read either would differ. Orders run by rows (up to 512) and by 64-row tiles (a partial one at 700), and batches.
  for (Fill fill : {Fill::lower, Fill::upper})
    for (std::int64_t n : {63, 64, 65, 130, 512, 700, 4096}) {
      SCOPED_TRACE(fmt::format("symv fill={} n={}", to_string(fill), n));
      const std::int64_t lda = n + 3, batch = n > 1000 ? 1 : 3, stride_a = lda * n + 5, stride_x = 2 * n + 1;
      const std::int64_t stride_y = n + 7;
      const auto b = static_cast<std::uint64_t>(batch);
      for (double beta : {0.0, 0.5}) {
        compare(Symv{.dtype = DType::f32,
                     .fill = fill,
                     .n = n,
                     .lda = lda,
                     .incx = -2,
                     .batch = batch,
                     .stride_a = stride_a,
                     .stride_x = stride_x,
                     .stride_y = stride_y,
                     .alpha = -0.75,
                     .beta = beta},
                {{&Symv::a, DType::f32, static_cast<std::uint64_t>(stride_a) * b},
                 {&Symv::x, DType::f32, static_cast<std::uint64_t>(stride_x) * b},
                 {&Symv::y, DType::f32, static_cast<std::uint64_t>(stride_y) * b, true}},
                1e-4);
      }
    }
}

TEST_P(CudaBlasKernelsTest, SymvOfABatchLargerThanOneLaunchComputesEveryMember) {
  // A grid takes at most 65,535 members: a larger batch of small matrices runs in several launches.
  compare(Symv{.dtype = DType::f32, .fill = Fill::upper, .n = 3, .batch = 70'000, .alpha = 2.0, .beta = 1.0},
          {{&Symv::a, DType::f32, 9 * 70'000},
           {&Symv::x, DType::f32, 3 * 70'000},
           {&Symv::y, DType::f32, 3 * 70'000, true}},
          1e-5);
}

TEST_P(CudaBlasKernelsTest, GerPastItsGridsExtentsWithLeadingDimensionAndStridesMatchesTheCpuDevice) {
  // A grid spans at most 65,535 x 4 columns and 65,535 members: wider matrices and larger batches take its strides.
  // The rows of A past m hold random values that an update of them would change.
  struct Shape {
    std::int64_t m, n, lda, incx, incy, batch;
  };
  for (const Shape& s : {Shape{2, 600'000, 3, 1, -1, 1}, Shape{3, 2, 5, -2, 1, 70'000}, Shape{300, 200, 301, 3, 2, 4}})
    for (DType d : {DType::f32, DType::f64}) {
      SCOPED_TRACE(fmt::format("ger {} m={} n={} batch={}", to_string(d), s.m, s.n, s.batch));
      const std::int64_t stride_a = s.lda * s.n + 1, stride_x = (s.m - 1) * std::abs(s.incx) + 2;
      const std::int64_t stride_y = (s.n - 1) * std::abs(s.incy) + 1;
      const auto b = static_cast<std::uint64_t>(s.batch);
      compare(Ger{.dtype = d,
                  .m = s.m,
                  .n = s.n,
                  .lda = s.lda,
                  .incx = s.incx,
                  .incy = s.incy,
                  .batch = s.batch,
                  .stride_a = stride_a,
                  .stride_x = stride_x,
                  .stride_y = stride_y,
                  .alpha = 1.25},
              {{&Ger::a, d, static_cast<std::uint64_t>(stride_a) * b, true},
               {&Ger::x, d, static_cast<std::uint64_t>(stride_x) * b},
               {&Ger::y, d, static_cast<std::uint64_t>(stride_y) * b}},
              1e-5);
    }
  // alpha 0 leaves A as it was, whatever x and y hold.
  compare(Ger{.dtype = DType::f32, .m = 40, .n = 30, .alpha = 0.0},
          {{&Ger::a, DType::f32, 1200, true}, {&Ger::x, DType::f32, 40}, {&Ger::y, DType::f32, 30}}, 0);
}

TEST_P(CudaBlasKernelsTest, SwapAndCopyOfVectorsNotSixteenByteAlignedMoveEveryElement) {
  // Memory adopted from another library (ShareMemory, DLPack) may start at any element: here one past an allocation's
  // start, so the kernels cannot move 16 bytes at a time.
  if (GetParam().isolation != Isolation::in_process) GTEST_SKIP() << "an isolated device adopts no memory";
  constexpr std::int64_t n = 1001;
  Result<BufferHandle> whole = gpu_->ask(Allocate{.dtype = DType::f32, .count = n + 1}).wait();
  Result<BufferHandle> y = gpu_->ask(Allocate{.dtype = DType::f32, .count = n}).wait();
  ASSERT_THAT(whole, IsOk());
  ASSERT_THAT(y, IsOk());
  Result<SharedMemory> exported = gpu_->ask(ShareMemory{.buffer = *whole}).wait();
  ASSERT_THAT(exported, IsOk());
  Result<SharedMemory> shifted =
      gpu_->ask(ShareMemory{.address = exported->address + 4, .dtype = DType::f32, .count = n}).wait();
  ASSERT_THAT(shifted, IsOk());
  HostArray xs(DType::f32, n + 1), ys(DType::f32, n);
  xs.fill_uniform(rng_);
  ys.fill_uniform(rng_);
  ASSERT_THAT(gpu_->ask(CopyToDevice{.source = xs.source(), .destination = *whole}).wait(), IsOk());
  ASSERT_THAT(gpu_->ask(CopyToDevice{.source = ys.source(), .destination = *y}).wait(), IsOk());
  ASSERT_THAT(gpu_->ask(Swap{.n = n, .x = shifted->buffer, .y = *y}).wait(), IsOk());
  HostArray got_x(DType::f32, n + 1), got_y(DType::f32, n);
  ASSERT_THAT(gpu_->ask(CopyToHost{.source = *whole, .destination = got_x.destination()}).wait(), IsOk());
  ASSERT_THAT(gpu_->ask(CopyToHost{.source = *y, .destination = got_y.destination()}).wait(), IsOk());
  got_x.decode();
  got_y.decode();
  EXPECT_EQ(got_x.values[0], xs.values[0]);  // the element before the adopted memory is untouched
  EXPECT_EQ(std::vector<double>(got_x.values.begin() + 1, got_x.values.end()), ys.values);
  EXPECT_EQ(got_y.values, std::vector<double>(xs.values.begin() + 1, xs.values.end()));
  // Copy back from the shifted vector: a copy engine's copy, alignment or not.
  ASSERT_THAT(gpu_->ask(Copy{.n = n, .x = shifted->buffer, .y = *y}).wait(), IsOk());
  ASSERT_THAT(gpu_->ask(CopyToHost{.source = *y, .destination = got_y.destination()}).wait(), IsOk());
  got_y.decode();
  EXPECT_EQ(got_y.values, ys.values);
  EXPECT_THAT(gpu_->free(shifted->buffer).wait(), IsOk());
  EXPECT_THAT(gpu_->free(*whole).wait(), IsOk());
  EXPECT_THAT(gpu_->free(*y).wait(), IsOk());
}

TEST_P(CudaBlasKernelsTest, TrmmWithLeadingDimensionsMatchesTheCpuDeviceOnBothSidesOfItsGemmThreshold) {
  // Orders below 3072 run as a GEMM on A made whole, the others as cuBLAS's trmm; the gaps past A's and B's rows and
  // A's other triangle hold random values that neither may read (B's gaps are compared: they must not change).
  const auto trmm = [&](std::int64_t order, Side side, Fill fill, Transpose transpose, Diagonal diagonal) {
    const std::int64_t m = side == Side::left ? order : 24, n = side == Side::left ? 17 : order;
    const std::int64_t lda = order + 3, ldb = m + 5, batch = order > 1000 ? 1 : 2;
    SCOPED_TRACE(fmt::format("trmm order={} side={} fill={} {} diagonal={}", order, to_string(side), to_string(fill),
                             to_string(transpose), to_string(diagonal)));
    compare(Trmm{.dtype = DType::f32,
                 .side = side,
                 .fill = fill,
                 .transpose = transpose,
                 .diagonal = diagonal,
                 .m = m,
                 .n = n,
                 .lda = lda,
                 .ldb = ldb,
                 .batch = batch,
                 .alpha = 0.75},
            {{&Trmm::a, DType::f32, static_cast<std::uint64_t>(lda * order * batch)},
             {&Trmm::b, DType::f32, static_cast<std::uint64_t>(ldb * n * batch), true}},
            1e-4);
  };
  for (Side side : {Side::left, Side::right})
    for (Fill fill : {Fill::lower, Fill::upper}) {
      for (Transpose transpose : {Transpose::none, Transpose::transpose})
        for (Diagonal diagonal : {Diagonal::non_unit, Diagonal::unit}) trmm(100, side, fill, transpose, diagonal);
      // cuBLAS's side of the threshold, each transpose and diagonal once.
      trmm(3072, side, fill, fill == Fill::upper ? Transpose::transpose : Transpose::none,
           side == Side::right ? Diagonal::unit : Diagonal::non_unit);
    }
}

TEST_P(CudaBlasKernelsTest, GemvOfAMatrixNotSixteenByteAlignedRunsOnCublasAndMatchesAReference) {
  // A adopted one element past an allocation's start: the streamed kernels, which load 16 bytes of a column at once,
  // must leave it to cuBLAS's HSH gemv (f16) or sgemv (f32). 2,048 x 600 is beyond the small kernel's bounds.
  if (GetParam().isolation != Isolation::in_process) GTEST_SKIP() << "an isolated device adopts no memory";
  constexpr std::int64_t m = 2048, n = 600;
  for (const DType dtype : {DType::f16, DType::f32}) {
    SCOPED_TRACE(to_string(dtype));
    Result<BufferHandle> whole = gpu_->ask(Allocate{.dtype = dtype, .count = m * n + 1}).wait();
    ASSERT_THAT(whole, IsOk());
    Result<SharedMemory> exported = gpu_->ask(ShareMemory{.buffer = *whole}).wait();
    ASSERT_THAT(exported, IsOk());
    Result<SharedMemory> a =
        gpu_->ask(ShareMemory{.address = exported->address + size_of(dtype), .dtype = dtype, .count = m * n}).wait();
    ASSERT_THAT(a, IsOk());
    HostArray as(dtype, m * n + 1);
    as.fill_uniform(rng_);
    ASSERT_THAT(gpu_->ask(CopyToDevice{.source = as.source(), .destination = *whole}).wait(), IsOk());
    for (Transpose transpose : {Transpose::none, Transpose::transpose}) {
      SCOPED_TRACE(to_string(transpose));
      const bool t = transpose == Transpose::transpose;
      const std::int64_t x_length = t ? m : n, y_length = t ? n : m;
      HostArray xs(dtype, x_length);
      xs.fill_uniform(rng_);
      Result<BufferHandle> x =
          gpu_->ask(Allocate{.dtype = dtype, .count = static_cast<std::uint64_t>(x_length)}).wait();
      Result<BufferHandle> y =
          gpu_->ask(Allocate{.dtype = dtype, .count = static_cast<std::uint64_t>(y_length)}).wait();
      ASSERT_THAT(x, IsOk());
      ASSERT_THAT(y, IsOk());
      ASSERT_THAT(gpu_->ask(CopyToDevice{.source = xs.source(), .destination = *x}).wait(), IsOk());
      ASSERT_THAT(gpu_->ask(Gemv{.dtype = dtype,
                                 .transpose = transpose,
                                 .m = m,
                                 .n = n,
                                 .alpha = 0.5,
                                 .a = a->buffer,
                                 .x = *x,
                                 .y = *y})
                      .wait(),
                  IsOk());
      HostArray got(dtype, y_length);
      ASSERT_THAT(gpu_->ask(CopyToHost{.source = *y, .destination = got.destination()}).wait(), IsOk());
      got.decode();
      for (std::int64_t i = 0; i < y_length; ++i) {
        double sum = 0, magnitude = 0;
        for (std::int64_t k = 0; k < x_length; ++k) {
          const double term = as.values[static_cast<std::size_t>(1 + (t ? i * m + k : k * m + i))] *
                              xs.values[static_cast<std::size_t>(k)];
          sum += term;
          magnitude += std::abs(term);
        }
        // A half's rounding of the result, and f32 sums: a few parts in 1e3 of the terms' magnitude at most.
        ASSERT_NEAR(got.values[static_cast<std::size_t>(i)], 0.5 * sum, 2e-3 * (0.5 * magnitude) + 1e-3)
            << "y[" << i << "]";
      }
      EXPECT_THAT(gpu_->free(*x).wait(), IsOk());
      EXPECT_THAT(gpu_->free(*y).wait(), IsOk());
    }
    EXPECT_THAT(gpu_->free(a->buffer).wait(), IsOk());
    EXPECT_THAT(gpu_->free(*whole).wait(), IsOk());
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, CudaBlasKernelsTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel::blas
