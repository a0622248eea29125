// BLAS levels 2 and 3 (Gemv, Ger, Trsv, Symv, Trsm, Syrk, Symm, Trmm, Geam) through cuBLAS and accel's kernels
// against the CPU device (OpenBLAS, itself checked against float64 references in level{2,3}_test) on the same fresh
// random inputs, over small odd shapes and large ones, negative increments, every side, triangle, transpose and
// diagonal, strided batches, and Gemv on f16 and bf16; on every way a CUDA device runs requests (each completion
// strategy, and isolated); and requests of every level refused by name. Level 1 is cuda_blas_level1_test's; the
// kernels accel runs instead of cuBLAS's have tests of their own (cuda_blas_kernels_test.cpp). Skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>

#include "accel/libs/blas/level1.hpp"
#include "accel/libs/blas/level2.hpp"
#include "accel/libs/blas/level3.hpp"
#include "libs/blas/cuda_blas_fixture.hpp"
#include "libs/blas/level3_operation_cuda.hpp"

namespace accel::blas {
namespace {

using accel::testing::HostArray;
using accel::testing::IsOk;
using accel::testing::StatusIs;

// A well-conditioned triangular factor in every order x order matrix `stride` apart: a diagonal of 2 to 3 and
// off-diagonal values of at most 1/order.
std::function<void(HostArray&)> well_conditioned(std::int64_t order, std::int64_t ld, std::int64_t stride,
                                                 std::int64_t batch) {
  return [=](HostArray& a) {
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t j = 0; j < order; ++j)
        for (std::int64_t i = 0; i < order; ++i) {
          const std::size_t at = static_cast<std::size_t>(b * stride + j * ld + i);
          a.set(at, i == j ? 2.5 + 0.5 * a.values[at] : a.values[at] / static_cast<double>(order));
        }
  };
}

class CudaBlasTest : public CudaBlasFixture {
 protected:
  template <class T>
  void gemv(Gemv r) {
    r.dtype = dtype_of<T>();
    SCOPED_TRACE(fmt::format("gemv {} {} m={} n={} incx={} incy={} batch={} beta={}", to_string(r.dtype),
                             to_string(r.transpose), r.m, r.n, r.incx, r.incy, r.batch, r.beta));
    const bool t = r.transpose == Transpose::transpose;
    const std::int64_t lda = r.lda == 0 ? std::max<std::int64_t>(1, r.m) : r.lda;
    const std::uint64_t xs = span(t ? r.m : r.n, r.incx), ys = span(t ? r.n : r.m, r.incy);
    compare(r,
            {{&Gemv::a, r.dtype, static_cast<std::uint64_t>(lda * std::max<std::int64_t>(r.n, 1) * r.batch)},
             {&Gemv::x, r.dtype, xs * r.batch},
             {&Gemv::y, r.dtype, ys * r.batch, true}},
            tolerance<T>() * 10);
  }

  // Ger, Trsv and Symv on packed operands of one shape.
  template <class T>
  void level2_more(Fill fill, Transpose transpose, Diagonal diagonal, std::int64_t m, std::int64_t n, std::int64_t incx,
                   std::int64_t incy, std::int64_t batch) {
    const DType d = dtype_of<T>();
    SCOPED_TRACE(fmt::format("ger/trsv/symv {} fill={} {} diagonal={} m={} n={} incx={} incy={} batch={}", to_string(d),
                             to_string(fill), to_string(transpose), to_string(diagonal), m, n, incx, incy, batch));
    const double tol = tolerance<T>() * 10;
    const auto count = [&](std::int64_t one) { return static_cast<std::uint64_t>(std::max<std::int64_t>(1, one)); };
    const auto b = static_cast<std::uint64_t>(batch);
    compare(
        Ger{.dtype = d, .m = m, .n = n, .incx = incx, .incy = incy, .batch = batch, .alpha = -0.5},
        {{&Ger::a, d, count(m * n * batch), true}, {&Ger::x, d, span(m, incx) * b}, {&Ger::y, d, span(n, incy) * b}},
        tol);
    compare(Trsv{.dtype = d,
                 .fill = fill,
                 .transpose = transpose,
                 .diagonal = diagonal,
                 .n = n,
                 .incx = incx,
                 .batch = batch},
            {{&Trsv::a, d, count(n * n * batch), false, well_conditioned(n, n, n * n, batch)},
             {&Trsv::x, d, span(n, incx) * b, true}},
            tol);
    compare(
        Symv{.dtype = d, .fill = fill, .n = n, .incx = incx, .incy = incy, .batch = batch, .alpha = 1.5, .beta = -0.25},
        {{&Symv::a, d, count(n * n * batch)}, {&Symv::x, d, span(n, incx) * b}, {&Symv::y, d, span(n, incy) * b, true}},
        tol);
  }

  template <class T>
  void trsm(Trsm r) {
    r.dtype = dtype_of<T>();
    SCOPED_TRACE(fmt::format("trsm {} side={} fill={} {} diagonal={} m={} n={} batch={}", to_string(r.dtype),
                             to_string(r.side), to_string(r.fill), to_string(r.transpose), to_string(r.diagonal), r.m,
                             r.n, r.batch));
    const std::int64_t order = r.side == Side::left ? r.m : r.n;
    const std::int64_t lda = r.lda == 0 ? order : r.lda, ldb = r.ldb == 0 ? r.m : r.ldb;
    const std::int64_t a_stride = lda * order, b_stride = ldb * r.n;
    compare(r,
            {{&Trsm::a, r.dtype, static_cast<std::uint64_t>(std::max<std::int64_t>(1, a_stride * r.batch)), false,
              well_conditioned(order, lda, a_stride, r.batch)},
             {&Trsm::b, r.dtype, static_cast<std::uint64_t>(std::max<std::int64_t>(1, b_stride * r.batch)), true}},
            tolerance<T>() * 10);
  }

  // Symm, Trmm and Geam on packed m x n operands; A is triangular for Trmm (random in both triangles: only one is
  // read).
  template <class T>
  void level3_more(Side side, Fill fill, Transpose transpose, Diagonal diagonal, std::int64_t m, std::int64_t n,
                   std::int64_t batch) {
    const DType d = dtype_of<T>();
    SCOPED_TRACE(fmt::format("symm/trmm/geam {} side={} fill={} {} diagonal={} m={} n={} batch={}", to_string(d),
                             to_string(side), to_string(fill), to_string(transpose), to_string(diagonal), m, n, batch));
    const double tol = tolerance<T>() * 10;
    const std::int64_t order = side == Side::left ? m : n;
    const auto count = [](std::int64_t elements) {
      return static_cast<std::uint64_t>(std::max<std::int64_t>(1, elements));
    };
    compare(Symm{.dtype = d, .side = side, .fill = fill, .m = m, .n = n, .batch = batch, .alpha = 0.5, .beta = 1.5},
            {{&Symm::a, d, count(order * order * batch)},
             {&Symm::b, d, count(m * n * batch)},
             {&Symm::c, d, count(m * n * batch), true}},
            tol);
    compare(Trmm{.dtype = d,
                 .side = side,
                 .fill = fill,
                 .transpose = transpose,
                 .diagonal = diagonal,
                 .m = m,
                 .n = n,
                 .batch = batch,
                 .alpha = -1.25},
            {{&Trmm::a, d, count(order * order * batch)}, {&Trmm::b, d, count(m * n * batch), true}}, tol);
    const Transpose other = transpose == Transpose::none ? Transpose::transpose : Transpose::none;
    compare(Geam{.dtype = d,
                 .transpose_a = transpose,
                 .transpose_b = other,
                 .m = m,
                 .n = n,
                 .batch = batch,
                 .alpha = 2,
                 .beta = -0.5},
            {{&Geam::a, d, count(m * n * batch)},
             {&Geam::b, d, count(m * n * batch)},
             {&Geam::c, d, count(m * n * batch), true}},
            tol);
  }

  template <class T>
  void syrk(Syrk r) {
    r.dtype = dtype_of<T>();
    SCOPED_TRACE(fmt::format("syrk {} fill={} {} n={} k={} batch={}", to_string(r.dtype), to_string(r.fill),
                             to_string(r.transpose), r.n, r.k, r.batch));
    compare(r,
            {{&Syrk::a, r.dtype, static_cast<std::uint64_t>(std::max<std::int64_t>(1, r.n * r.k * r.batch))},
             {&Syrk::c, r.dtype, static_cast<std::uint64_t>(std::max<std::int64_t>(1, r.n * r.n * r.batch)), true}},
            tolerance<T>() * 10);
  }
};

TEST_P(CudaBlasTest, GemvMatchesTheCpuDeviceForBothTransposesIncrementsAndBatches) {
  // Shapes of accel's small kernel (up to 2^20 elements, sums up to 4,096 terms: 8 rows a block where few blocks of
  // 32 would run, as at 1,000 x 777 and 1,024 x 1,024) and, at 4,096 x 333, cuBLAS's.
  const std::int64_t shapes[][2] = {{1, 1}, {37, 19}, {1000, 777}, {1024, 1024}, {4096, 256}, {4096, 333}};
  for (const auto& [m, n] : shapes)
    for (Transpose transpose : {Transpose::none, Transpose::transpose}) {
      gemv<float>({.transpose = transpose, .m = m, .n = n, .alpha = 0.5});
      gemv<double>({.transpose = transpose, .m = m, .n = n, .incx = -2, .incy = 3, .beta = -1.5});
    }
  for (Transpose transpose : {Transpose::none, Transpose::transpose}) {
    gemv<float>({.transpose = transpose, .m = 33, .n = 17, .incy = -1, .batch = 64, .beta = 0.5});
    gemv<double>({.transpose = transpose, .m = 8, .n = 8, .incx = 2, .batch = 1000});
    gemv<float>({.transpose = transpose, .m = 300, .n = 200, .lda = 301, .batch = 30});  // 300 blocks of 32 rows
    gemv<double>({.transpose = transpose, .m = 7, .n = 0, .beta = 0.5});  // empty product: y scaled by beta
    gemv<float>({.transpose = transpose, .m = 0, .n = 9, .beta = 0});
    gemv<float>({.transpose = transpose, .m = 40, .n = 30, .lda = 50, .alpha = 0, .beta = 2});  // A's rows past m
    // f16 and bf16 on the small kernel (sums in f32, y rounded once), both of its plain forms and padded rows.
    gemv<Half>({.transpose = transpose, .m = 1000, .n = 777, .incx = -2, .alpha = 0.5, .beta = -1.5});
    gemv<BFloat16>({.transpose = transpose, .m = 1000, .n = 777, .incy = 2, .alpha = -1, .beta = 0.25});
    gemv<BFloat16>({.transpose = transpose, .m = 33, .n = 17, .incy = -1, .batch = 64, .beta = 0.5});
    gemv<Half>({.transpose = transpose, .m = 300, .n = 200, .lda = 301, .batch = 30});
    gemv<BFloat16>({.transpose = transpose, .m = 40, .n = 30, .lda = 50, .alpha = 0, .beta = 2});
    gemv<Half>({.transpose = transpose, .m = 7, .n = 0, .beta = 0.5});
    // Beyond its bounds, the streamed kernels (launch_streamed_gemv): sums split over blocks and added by a second
    // kernel, or not split; rows and terms past the last whole 16-byte load; x backwards, strided or contiguous; a
    // batch; alpha 0.
    gemv<Half>({.transpose = transpose, .m = 4096, .n = 333, .incx = -1, .beta = -0.5});
    gemv<BFloat16>({.transpose = transpose, .m = 2000, .n = 700, .batch = 3, .alpha = 0.75});
    gemv<Half>({.transpose = transpose, .m = 2003, .n = 1001, .lda = 2008, .incx = 3, .incy = -2, .alpha = -1});
    gemv<BFloat16>({.transpose = transpose, .m = 65536, .n = 20, .beta = 1});
    gemv<Half>({.transpose = transpose, .m = 4096, .n = 333, .alpha = 0, .beta = 2});
    // And cuBLAS's HSH and TST strided-batched gemv where A's columns are not 16-byte aligned, or A is large (past
    // 4,096² for A x, 50M elements for Aᵀ x: level2_operation_cuda.hpp).
    gemv<BFloat16>({.transpose = transpose, .m = 4100, .n = 300, .lda = 4101, .beta = 0.5});
    gemv<Half>({.transpose = transpose, .m = 8192, .n = 8192, .incy = -1, .alpha = 0.5, .beta = 0.25});
    // f32 on the streamed kernels (4 elements a load, a plain block's 128 rows): the same forms, columns aligned at 4
    // elements that 16-bit ones would not be, and cuBLAS's sgemv where they are not.
    gemv<float>({.transpose = transpose, .m = 2003, .n = 1001, .lda = 2004, .incx = 3, .incy = -2, .alpha = -1});
    gemv<float>({.transpose = transpose, .m = 2000, .n = 700, .batch = 3, .alpha = 0.75, .beta = -0.5});
    gemv<float>({.transpose = transpose, .m = 65536, .n = 20, .incx = -1, .beta = 1});
    gemv<float>({.transpose = transpose, .m = 4096, .n = 333, .alpha = 0, .beta = 2});
    gemv<float>({.transpose = transpose, .m = 4100, .n = 300, .lda = 4101, .beta = 0.5});
  }
}

TEST_P(CudaBlasTest, GerTrsvSymvMatchTheCpuDeviceForEveryTriangleTransposeDiagonalAndIncrementSign) {
  for (Fill fill : {Fill::lower, Fill::upper})
    for (Transpose transpose : {Transpose::none, Transpose::transpose})
      for (Diagonal diagonal : {Diagonal::non_unit, Diagonal::unit}) {
        level2_more<float>(fill, transpose, diagonal, 37, 19, 1, -2, 1);
        level2_more<double>(fill, transpose, diagonal, 1000, 777, -1, 3, 1);
        level2_more<float>(fill, transpose, diagonal, 2048, 1024, 1, 1, 1);
        level2_more<double>(fill, transpose, diagonal, 9, 8, 2, -1, 12);
      }
  level2_more<double>(Fill::lower, Transpose::none, Diagonal::non_unit, 0, 5, 1, 1, 1);  // empty
  level2_more<float>(Fill::upper, Transpose::none, Diagonal::unit, 4, 0, 1, 1, 2);
}

TEST_P(CudaBlasTest, TrsmMatchesTheCpuDeviceForEverySideTriangleTransposeAndDiagonal) {
  for (Side side : {Side::left, Side::right})
    for (Fill fill : {Fill::lower, Fill::upper})
      for (Transpose transpose : {Transpose::none, Transpose::transpose})
        for (Diagonal diagonal : {Diagonal::non_unit, Diagonal::unit}) {
          const Trsm r{.side = side, .fill = fill, .transpose = transpose, .diagonal = diagonal, .alpha = 0.75};
          Trsm small = r, large = r, batched = r;
          small.m = 37, small.n = 13;
          // By blocks (CudaOperation<Trsm>::by_blocks): splits down to partial blocks on both of
          // launch_triangular_solve's kernels (f32 order 356: 100 rows on the 16 warps'; 2,067: 19 on the 8 warps'),
          // padded leading dimensions, coupling products on cuBLAS's GEMM and (f32, 256 right-hand sides) on
          // launch_small_gemm; a batch of two; and at alpha 0 or with fewer right-hand sides, cuBLAS's trsm.
          const auto blocked = [&](DType dtype, std::int64_t order,
                                   std::int64_t other = CudaOperation<Trsm>::kByBlocksRhsFrom + 45) {
            Trsm out = r;
            out.dtype = dtype;
            out.m = side == Side::left ? order : other;
            out.n = side == Side::left ? other : order;
            out.lda = order + 3, out.ldb = out.m + 5;
            return out;
          };
          const Trsm blocked_f64 = blocked(DType::f64, CudaOperation<Trsm>::kByBlocksFrom * 4 + 76);
          const Trsm blocked_f32 = blocked(DType::f32, 2067),
                     blocked_f32_small = blocked(DType::f32, 356, CudaOperation<Trsm>::kByBlocksRhsFrom);
          Trsm blocked_batch = blocked_f64, large_zero = blocked_f64;
          blocked_batch.m = blocked_batch.n = CudaOperation<Trsm>::kByBlocksFrom;
          blocked_batch.lda = blocked_batch.ldb = 0, blocked_batch.batch = 2;
          large_zero.alpha = 0;
          large.m = 1024, large.n = CudaOperation<Trsm>::kByBlocksRhsFrom - 56;
          for (const Trsm& each : {blocked_f64, blocked_f32, blocked_f32_small, blocked_batch})
            ASSERT_TRUE(CudaOperation<Trsm>::by_blocks(each));
          for (const Trsm& each : {large_zero, large}) ASSERT_FALSE(CudaOperation<Trsm>::by_blocks(each));
          batched.m = 16, batched.n = 8, batched.batch = 20;
          trsm<float>(small);
          trsm<double>(small);
          trsm<float>(large);
          trsm<double>(blocked_f64);
          trsm<float>(blocked_f32);
          trsm<float>(blocked_f32_small);
          trsm<double>(large_zero);
          trsm<double>(blocked_batch);
          trsm<double>(batched);
        }
}

TEST_P(CudaBlasTest, SyrkMatchesTheCpuDeviceForEveryTriangleAndTranspose) {
  for (Fill fill : {Fill::lower, Fill::upper})
    for (Transpose transpose : {Transpose::none, Transpose::transpose}) {
      syrk<float>({.fill = fill, .transpose = transpose, .n = 37, .k = 19, .alpha = 1.5, .beta = -0.5});
      syrk<double>({.fill = fill, .transpose = transpose, .n = 1024, .k = 512, .alpha = 1, .beta = 0.25});
      syrk<double>({.fill = fill, .transpose = transpose, .n = 12, .k = 5, .batch = 10});
      syrk<float>({.fill = fill, .transpose = transpose, .n = 9, .k = 0, .beta = 2});  // empty sum: C scaled by beta
    }
}

TEST_P(CudaBlasTest, SymmTrmmGeamMatchTheCpuDeviceForEverySideTriangleTransposeAndDiagonal) {
  for (Side side : {Side::left, Side::right})
    for (Fill fill : {Fill::lower, Fill::upper})
      for (Transpose transpose : {Transpose::none, Transpose::transpose})
        for (Diagonal diagonal : {Diagonal::non_unit, Diagonal::unit}) {
          level3_more<float>(side, fill, transpose, diagonal, 37, 13, 1);
          level3_more<double>(side, fill, transpose, diagonal, 1024, 256, 1);
          level3_more<double>(side, fill, transpose, diagonal, 9, 16, 7);
        }
  level3_more<float>(Side::left, Fill::lower, Transpose::none, Diagonal::unit, 0, 8, 1);  // empty
}

TEST_P(CudaBlasTest, RequestsAreRefusedByNameBeforeAnythingRuns) {
  Result<BufferHandle> x = gpu_->ask(Allocate{.dtype = DType::f32, .count = 8}).wait();
  Result<BufferHandle> r = gpu_->ask(Allocate{.dtype = DType::f32, .count = 1}).wait();
  ASSERT_THAT(x, IsOk());
  ASSERT_THAT(r, IsOk());
  EXPECT_THAT(gpu_->ask(Dot{.n = 4, .incx = 0, .x = *x, .y = *x, .result = *r}).wait(),
              StatusIs(Code::invalid_argument, "incx = 0"));
  EXPECT_THAT(gpu_->ask(Iamax{.n = 4, .x = *x, .result = *r}).wait(),
              StatusIs(Code::invalid_argument, "operand 'result' holds f32"));
  EXPECT_THAT(gpu_->ask(Swap{.n = 4, .x = *x, .y = *x}).wait(), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(gpu_->ask(Iamin{.n = 4, .incx = -1, .x = *x, .result = *r}).wait(),
              StatusIs(Code::invalid_argument, "incx = -1 must be positive"));
  EXPECT_THAT(gpu_->ask(Trsv{.n = 3, .incx = -4, .a = *x, .x = *r}).wait(),
              StatusIs(Code::invalid_argument, "operand 'a'"));
  // Every operand in range, so that the alias of a and x is what is refused.
  Result<BufferHandle> y = gpu_->ask(Allocate{.dtype = DType::f32, .count = 2}).wait();
  ASSERT_THAT(y, IsOk());
  EXPECT_THAT(gpu_->ask(Ger{.m = 2, .n = 2, .a = *x, .x = *x, .y = *y}).wait(),
              StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(gpu_->ask(Trsm{.m = 3, .n = 3, .a = *x, .b = *r}).wait(),
              StatusIs(Code::invalid_argument, "operand 'a'"));
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, CudaBlasTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel::blas
