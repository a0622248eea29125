// Gemv, Ger, Trsv and Symv on the CPU device against float64 references written here: both transposes, every
// triangle and diagonal, odd sizes, padded leading dimensions, negative increments, alpha and beta, strided batches;
// and the checks that refuse a request before it runs; and how the CUDA device's streamed 16-bit Gemv splits its sums.
#include "accel/libs/blas/level2.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "libs/blas/blas_testing.hpp"
#include "libs/blas/streamed_gemv_split.hpp"

namespace accel::blas {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using testing::kTolerance;
using testing::vector_at;
using testing::vector_span;

class GemvTest : public testing::BlasDeviceTest {
 protected:
  // Runs `r` (its sizes, increments and scalars; buffers made here, with strides packed unless given) on fresh random
  // inputs and compares every element of y's buffer with the reference.
  template <class T>
  void check(Gemv r) {
    SCOPED_TRACE(::testing::Message() << "gemv " << (r.transpose == Transpose::none ? "N" : "T") << " m=" << r.m
                                      << " n=" << r.n << " lda=" << r.lda << " incx=" << r.incx << " incy=" << r.incy
                                      << " batch=" << r.batch);
    r.dtype = dtype_of<T>();
    const bool t = r.transpose == Transpose::transpose;
    const std::int64_t xn = t ? r.m : r.n, yn = t ? r.n : r.m;
    const std::int64_t lda = r.lda == 0 ? std::max<std::int64_t>(1, r.m) : r.lda;
    const std::int64_t sa = r.stride_a == 0 ? lda * r.n : r.stride_a;
    const std::int64_t sx = r.stride_x == 0 ? static_cast<std::int64_t>(vector_span(xn, r.incx)) : r.stride_x;
    const std::int64_t sy = r.stride_y == 0 ? static_cast<std::int64_t>(vector_span(yn, r.incy)) : r.stride_y;
    const std::vector<T> a = random<T>(sa * r.batch), x = random<T>(sx * r.batch), y = random<T>(sy * r.batch + 1);
    Buffer<T> da = upload(a), dx = upload(x), dy = upload(y);
    r.a = da, r.x = dx, r.y = dy;
    ASSERT_THAT(run(r), IsOk());

    std::vector<double> want(y.begin(), y.end());
    for (std::int64_t b = 0; b < r.batch; ++b)
      for (std::int64_t i = 0; i < yn; ++i) {
        double sum = 0;
        for (std::int64_t j = 0; j < xn; ++j) {
          const double aij = t ? a[b * sa + i * lda + j] : a[b * sa + j * lda + i];
          sum += aij * x[b * sx + vector_at(j, xn, r.incx)];
        }
        double& out = want[b * sy + vector_at(i, yn, r.incy)];
        out = r.alpha * sum + (r.beta == 0 ? 0.0 : r.beta * out);
      }
    EXPECT_LE(testing::relative_error(download(dy), want), kTolerance<T>);
  }
};

TEST_F(GemvTest, BothTransposesOddSizesAndIncrementsOfEverySignMatchTheReference) {
  std::uniform_int_distribution<std::int64_t> size(1, 70);
  for (Transpose transpose : {Transpose::none, Transpose::transpose})
    for (std::int64_t incx : {1, -1, 3})
      for (std::int64_t incy : {1, 2, -2}) {
        const Gemv r{.transpose = transpose, .m = size(rng_), .n = size(rng_), .incx = incx, .incy = incy};
        check<float>(r);
        check<double>(r);
      }
}

TEST_F(GemvTest, AlphaBetaPaddedLeadingDimensionsAndStridedBatchesMatchTheReference) {
  for (Transpose transpose : {Transpose::none, Transpose::transpose}) {
    check<float>({.transpose = transpose, .m = 17, .n = 9, .lda = 20, .alpha = -0.5, .beta = 1.25});
    check<double>({.transpose = transpose, .m = 5, .n = 31, .lda = 7, .incx = -2, .batch = 4, .alpha = 2, .beta = -1});
    check<double>({.transpose = transpose,
                   .m = 3,
                   .n = 4,
                   .incy = -1,
                   .batch = 3,
                   .stride_a = 15,
                   .stride_x = 6,
                   .stride_y = 5,
                   .beta = 0.5});
  }
}

TEST_F(GemvTest, AnEmptyProductScalesYByBetaAndAnEmptyYIsANoOp) {
  check<double>({.m = 6, .n = 0, .incy = -1, .beta = 0.5});
  check<float>({.transpose = Transpose::transpose, .m = 0, .n = 5, .beta = 0});
  check<double>({.m = 0, .n = 4, .beta = 3});
}

TEST_F(GemvTest, ShapesIncrementsAndBuffersAreRefusedByNameBeforeRunning) {
  const std::vector<float> values = random<float>(24);
  Buffer<float> a = upload(values), x = upload(std::vector<float>(6)), y = upload(values);
  Buffer<double> d = upload(std::vector<double>(24));
  const Gemv ok{.m = 4, .n = 6, .a = a, .x = x, .y = y};
  EXPECT_THAT(run(ok), IsOk());
  auto with = [&](auto change) {
    Gemv r = ok;
    change(r);
    return run(r);
  };
  EXPECT_THAT(with([](Gemv& r) { r.lda = 3; }), StatusIs(Code::invalid_argument, "blas::Gemv: lda = 3 is less than"));
  EXPECT_THAT(with([](Gemv& r) { r.incx = 0; }), StatusIs(Code::invalid_argument, "incx = 0"));
  EXPECT_THAT(with([](Gemv& r) { r.n = 7; }), StatusIs(Code::invalid_argument, "operand 'a'"));
  EXPECT_THAT(with([](Gemv& r) { r.incx = -2; }), StatusIs(Code::invalid_argument, "operand 'x'"));
  EXPECT_THAT(with([](Gemv& r) { r.transpose = Transpose::transpose, r.m = 7, r.lda = 7; }),
              StatusIs(Code::invalid_argument, "operand 'a'"));
  EXPECT_THAT(with([](Gemv& r) { r.m = -4; }), StatusIs(Code::invalid_argument, "m = -4 is negative"));
  EXPECT_THAT(with([](Gemv& r) { r.batch = 0; }), StatusIs(Code::invalid_argument, "batch = 0"));
  EXPECT_THAT(with([](Gemv& r) { r.batch = 2, r.n = 3, r.stride_y = 2; }),
              StatusIs(Code::invalid_argument, "stride_y = 2 makes the 2 vectors y overlap"));
  EXPECT_THAT(with([](Gemv& r) { r.stride_a = -1; }), StatusIs(Code::invalid_argument, "stride_a = -1"));
  EXPECT_THAT(with([](Gemv& r) { r.transpose = static_cast<Transpose>(5); }),
              StatusIs(Code::invalid_argument, "transpose = 5"));
  EXPECT_THAT(with([&](Gemv& r) { r.y = a; }), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(with([&](Gemv& r) { r.x = d; }), StatusIs(Code::invalid_argument, "operand 'x' holds f64"));
  EXPECT_THAT(with([](Gemv& r) { r.dtype = DType::c64; }), StatusIs(Code::not_supported, "f32, f64, f16 or bf16"));
}

// Ger, Trsv and Symv: each runs on fresh random buffers (the triangle of A not named by `fill`, and a unit diagonal,
// hold random values that must not be read) and is compared with a float64 reference over every element.
class Level2MoreTest : public testing::BlasDeviceTest {
 protected:
  // Element (i, j) of the matrix a request sees in A (column-major at `at`): the `fill` triangle, mirrored when
  // `symmetric`, else 0 outside it; 1 on a unit diagonal.
  template <class T>
  static double seen(const std::vector<T>& a, std::int64_t at, std::int64_t lda, std::int64_t i, std::int64_t j,
                     Fill fill, Diagonal diagonal, bool symmetric) {
    if (i == j && diagonal == Diagonal::unit) return 1;
    const bool inside = fill == Fill::lower ? i >= j : i <= j;
    if (!inside && !symmetric) return 0;
    return inside ? a[at + j * lda + i] : a[at + i * lda + j];
  }

  template <class T>
  void check_ger(Ger r) {
    SCOPED_TRACE(::testing::Message() << "ger m=" << r.m << " n=" << r.n << " lda=" << r.lda << " incx=" << r.incx
                                      << " incy=" << r.incy << " batch=" << r.batch);
    r.dtype = dtype_of<T>();
    const std::int64_t lda = r.lda == 0 ? std::max<std::int64_t>(1, r.m) : r.lda, sa = lda * r.n;
    const auto sx = static_cast<std::int64_t>(vector_span(r.m, r.incx));
    const auto sy = static_cast<std::int64_t>(vector_span(r.n, r.incy));
    const std::vector<T> a = random<T>(sa * r.batch + 1), x = random<T>(sx * r.batch), y = random<T>(sy * r.batch);
    Buffer<T> da = upload(a), dx = upload(x), dy = upload(y);
    r.a = da, r.x = dx, r.y = dy;
    ASSERT_THAT(run(r), IsOk());
    std::vector<double> want(a.begin(), a.end());
    for (std::int64_t b = 0; b < r.batch; ++b)
      for (std::int64_t j = 0; j < r.n; ++j)
        for (std::int64_t i = 0; i < r.m; ++i)
          want[b * sa + j * lda + i] +=
              r.alpha * x[b * sx + vector_at(i, r.m, r.incx)] * y[b * sy + vector_at(j, r.n, r.incy)];
    EXPECT_LE(testing::relative_error(download(da), want), kTolerance<T>);
  }

  // x_true is random; b = op(A) x_true goes in, x_true should come out.
  template <class T>
  void check_trsv(Trsv r) {
    SCOPED_TRACE(::testing::Message() << "trsv fill=" << to_string(r.fill) << " " << to_string(r.transpose)
                                      << " diagonal=" << to_string(r.diagonal) << " n=" << r.n << " lda=" << r.lda
                                      << " incx=" << r.incx << " batch=" << r.batch);
    r.dtype = dtype_of<T>();
    const std::int64_t lda = r.lda == 0 ? std::max<std::int64_t>(1, r.n) : r.lda, sa = lda * r.n;
    const auto sx = static_cast<std::int64_t>(vector_span(r.n, r.incx));
    std::vector<T> a = random<T>(sa * r.batch);
    for (std::int64_t b = 0; b < r.batch; ++b)  // well conditioned: a diagonal of 2 to 3, the rest at most 1/n
      for (std::int64_t j = 0; j < r.n; ++j)
        for (std::int64_t i = 0; i < r.n; ++i) {
          T& v = a[b * sa + j * lda + i];
          v = i == j ? static_cast<T>(2.5 + 0.5 * v) : static_cast<T>(v / static_cast<double>(r.n));
        }
    const std::vector<T> truth = random<T>(sx * r.batch);
    std::vector<T> rhs = truth;
    const bool t = r.transpose == Transpose::transpose;
    for (std::int64_t b = 0; b < r.batch; ++b)
      for (std::int64_t i = 0; i < r.n; ++i) {
        double sum = 0;
        for (std::int64_t j = 0; j < r.n; ++j)
          sum += seen(a, b * sa, lda, t ? j : i, t ? i : j, r.fill, r.diagonal, false) *
                 truth[b * sx + vector_at(j, r.n, r.incx)];
        rhs[b * sx + vector_at(i, r.n, r.incx)] = static_cast<T>(sum);
      }
    Buffer<T> da = upload(a), dx = upload(rhs);
    r.a = da, r.x = dx;
    ASSERT_THAT(run(r), IsOk());
    std::vector<double> want(truth.begin(), truth.end());
    EXPECT_LE(testing::relative_error(download(dx), want), kTolerance<T> * 10);
  }

  template <class T>
  void check_symv(Symv r, bool nan_in_y = false) {
    SCOPED_TRACE(::testing::Message() << "symv fill=" << to_string(r.fill) << " n=" << r.n << " lda=" << r.lda
                                      << " incx=" << r.incx << " incy=" << r.incy << " batch=" << r.batch);
    r.dtype = dtype_of<T>();
    const std::int64_t lda = r.lda == 0 ? std::max<std::int64_t>(1, r.n) : r.lda, sa = lda * r.n;
    const auto sx = static_cast<std::int64_t>(vector_span(r.n, r.incx));
    const auto sy = static_cast<std::int64_t>(vector_span(r.n, r.incy));
    const std::vector<T> a = random<T>(sa * r.batch), x = random<T>(sx * r.batch);
    std::vector<T> y = random<T>(sy * r.batch + 1);
    if (nan_in_y)  // every element of every y: none may be read
      for (std::int64_t b = 0; b < r.batch; ++b)
        for (std::int64_t i = 0; i < r.n; ++i) y[b * sy + vector_at(i, r.n, r.incy)] = NAN;
    Buffer<T> da = upload(a), dx = upload(x), dy = upload(y);
    r.a = da, r.x = dx, r.y = dy;
    ASSERT_THAT(run(r), IsOk());
    std::vector<double> want(y.begin(), y.end());
    for (std::int64_t b = 0; b < r.batch; ++b)
      for (std::int64_t i = 0; i < r.n; ++i) {
        double sum = 0;
        for (std::int64_t j = 0; j < r.n; ++j)
          sum += seen(a, b * sa, lda, i, j, r.fill, Diagonal::non_unit, true) * x[b * sx + vector_at(j, r.n, r.incx)];
        double& out = want[b * sy + vector_at(i, r.n, r.incy)];
        out = r.alpha * sum + (r.beta == 0 ? 0.0 : r.beta * out);
      }
    EXPECT_LE(testing::relative_error(download(dy), want), kTolerance<T>);
  }
};

TEST_F(Level2MoreTest, GerMatchesTheReferenceForOddSizesIncrementsPaddingAndBatches) {
  for (std::int64_t incx : {1, -1, 3})
    for (std::int64_t incy : {1, -2}) {
      check_ger<float>({.m = 17, .n = 9, .incx = incx, .incy = incy, .alpha = -0.75});
      check_ger<double>({.m = 1, .n = 33, .lda = 4, .incx = incx, .incy = incy, .alpha = 1.5});
      check_ger<double>({.m = 7, .n = 5, .lda = 9, .incx = incx, .incy = incy, .batch = 3, .alpha = 0.5});
    }
  check_ger<float>({.m = 0, .n = 4});  // empty: A untouched
  check_ger<double>({.m = 3, .n = 0, .alpha = 2});
}

TEST_F(Level2MoreTest, TrsvSolvesForEveryTriangleTransposeDiagonalAndIncrement) {
  for (Fill fill : {Fill::lower, Fill::upper})
    for (Transpose transpose : {Transpose::none, Transpose::transpose})
      for (Diagonal diagonal : {Diagonal::non_unit, Diagonal::unit})
        for (std::int64_t incx : {1, -2}) {
          const Trsv r{.fill = fill, .transpose = transpose, .diagonal = diagonal, .n = 37, .incx = incx};
          Trsv padded = r, batched = r;
          padded.n = 13, padded.lda = 16;
          batched.n = 6, batched.batch = 4;
          check_trsv<float>(r);
          check_trsv<double>(r);
          check_trsv<double>(padded);
          check_trsv<float>(batched);
        }
  check_trsv<double>({.n = 0});
}

TEST_F(Level2MoreTest, SymvReadsOnlyItsTriangleForEveryIncrementAlphaBetaAndBatch) {
  for (Fill fill : {Fill::lower, Fill::upper})
    for (std::int64_t incx : {1, -1, 2})
      for (std::int64_t incy : {1, -3}) {
        check_symv<float>({.fill = fill, .n = 29, .incx = incx, .incy = incy, .alpha = 0.5, .beta = -1.25});
        check_symv<double>({.fill = fill, .n = 11, .lda = 13, .incx = incx, .incy = incy, .alpha = -2});
        check_symv<double>({.fill = fill, .n = 5, .incx = incx, .incy = incy, .batch = 3, .beta = 0.5});
      }
  check_symv<float>({.n = 0, .beta = 3});
}

TEST_F(Level2MoreTest, SymvWithBetaZeroDoesNotReadY) {
  check_symv<double>({.fill = Fill::upper, .n = 9, .incy = 2, .beta = 0}, /*nan_in_y=*/true);
  check_symv<float>({.fill = Fill::lower, .n = 4, .beta = 0}, /*nan_in_y=*/true);
}

TEST_F(Level2MoreTest, GerTrsvAndSymvAreRefusedByNameBeforeRunning) {
  const std::vector<float> values = random<float>(24);
  Buffer<float> a = upload(values), x = upload(values), y = upload(values);
  Buffer<double> d = upload(std::vector<double>(24));
  EXPECT_THAT(run(Ger{.m = 4, .n = 6, .lda = 3, .a = a, .x = x, .y = y}),
              StatusIs(Code::invalid_argument, "blas::Ger: lda = 3 is less than"));
  EXPECT_THAT(run(Ger{.m = 4, .n = 6, .incy = 0, .a = a, .x = x, .y = y}),
              StatusIs(Code::invalid_argument, "blas::Ger: incy = 0"));
  EXPECT_THAT(run(Ger{.m = 5, .n = 6, .a = a, .x = x, .y = y}), StatusIs(Code::invalid_argument, "operand 'a'"));
  EXPECT_THAT(run(Ger{.m = 4, .n = 6, .a = a, .x = a, .y = y}), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(run(Ger{.m = 2, .n = 3, .batch = 2, .stride_a = 3, .a = a, .x = x, .y = y}),
              StatusIs(Code::invalid_argument, "stride_a = 3 makes the 2 matrices a overlap"));
  EXPECT_THAT(run(Trsv{.n = -2, .a = a, .x = x}), StatusIs(Code::invalid_argument, "blas::Trsv: n = -2 is negative"));
  EXPECT_THAT(run(Trsv{.diagonal = static_cast<Diagonal>(4), .n = 2, .a = a, .x = x}),
              StatusIs(Code::invalid_argument, "blas::Trsv: diagonal = 4"));
  EXPECT_THAT(run(Trsv{.transpose = static_cast<Transpose>(7), .n = 2, .a = a, .x = x}),
              StatusIs(Code::invalid_argument, "transpose = 7"));
  EXPECT_THAT(run(Trsv{.fill = static_cast<Fill>(3), .n = 2, .a = a, .x = x}),
              StatusIs(Code::invalid_argument, "fill = 3"));
  EXPECT_THAT(run(Trsv{.n = 4, .incx = -8, .a = a, .x = x}), StatusIs(Code::invalid_argument, "operand 'x'"));
  EXPECT_THAT(run(Trsv{.n = 4, .a = a, .x = a}), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(run(Symv{.n = 4, .incx = 0, .a = a, .x = x, .y = y}),
              StatusIs(Code::invalid_argument, "blas::Symv: incx = 0"));
  EXPECT_THAT(run(Symv{.n = 4, .a = a, .x = x, .y = d}), StatusIs(Code::invalid_argument, "operand 'y' holds f64"));
  EXPECT_THAT(run(Symv{.n = 4, .a = a, .x = x, .y = x}), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(run(Symv{.n = 5, .lda = 5, .a = a, .x = x, .y = y}), StatusIs(Code::invalid_argument, "operand 'a'"));
  EXPECT_THAT(run(Symv{.dtype = DType::i32, .n = 4, .a = a, .x = x, .y = y}),
              StatusIs(Code::not_supported, "f32 or f64"));
  EXPECT_EQ(download(a), values);  // nothing ran
  EXPECT_EQ(download(x), values);
  EXPECT_EQ(download(y), values);
}

// The split of the CUDA device's streamed Gemv (streamed_gemv_split.hpp) is host arithmetic: checked here, where no GPU
// is needed, for 16-bit elements (8 a load) and f32 (4 a load).
TEST(StreamedGemvSplitTest, SplitsCoverEveryTermOnceAlignedWithinTheirWorkspace) {
  struct Shape {
    std::int64_t m, n;
    bool transpose;
    std::int64_t batch, lda;
  };
  for (const std::int64_t element_bytes : {2, 4}) {
    for (const Shape& s : std::vector<Shape>{{4096, 4096, false, 1, 4096},
                                             {4096, 4096, true, 1, 4096},
                                             {2003, 1001, false, 1, 2008},
                                             {2003, 1001, true, 1, 2008},
                                             {65536, 20, true, 1, 65536},
                                             {65536, 20, false, 1, 65536},
                                             {256, 1 << 20, false, 1, 256},
                                             {4096, 333, true, 4, 4096},
                                             {1 << 20, 64, false, 65535, 1 << 20},
                                             {100003, 17, true, 1, 100008}}) {
      SCOPED_TRACE(fmt::format("{}-byte elements, m={} n={} transpose={} batch={} lda={}", element_bytes, s.m, s.n,
                               s.transpose, s.batch, s.lda));
      const StreamedGemvSplit split =
          streamed_gemv_split(element_bytes, s.m, s.n, s.transpose, s.batch, s.lda, s.lda * s.n);
      const std::int64_t terms = s.transpose ? s.m : s.n, length = s.transpose ? s.n : s.m;
      ASSERT_GE(split.splits, 1);
      EXPECT_LE(split.splits, 65535);
      EXPECT_GE(split.span * split.splits, terms);        // every term in a split
      EXPECT_LT(split.span * (split.splits - 1), terms);  // no split empty
      if (s.transpose) {
        EXPECT_EQ(split.span * element_bytes % 16, 0);  // each split starts on a 16-byte load
      }
      const std::uint64_t slots = static_cast<std::uint64_t>(length * s.batch) * 4;
      EXPECT_EQ(split.workspace_bytes, split.splits == 1 ? 0 : slots * static_cast<std::uint64_t>(split.splits));
      EXPECT_LE(split.workspace_bytes, std::uint64_t{64} << 20);
    }
  }
  // A 4,096² product: 16-bit, 16 row tiles x 32 splits, f32, 32 row tiles x 16 splits (512 blocks); transposed, 512
  // column groups, unsplit. f32 2,048²: 16 row tiles x 32 splits; transposed, 256 column groups, unsplit.
  EXPECT_EQ(streamed_gemv_split(2, 4096, 4096, false, 1, 4096, 0).splits, 32);
  EXPECT_EQ(streamed_gemv_split(2, 4096, 4096, true, 1, 4096, 0).splits, 1);
  EXPECT_EQ(streamed_gemv_split(4, 4096, 4096, false, 1, 4096, 0).splits, 16);
  EXPECT_EQ(streamed_gemv_split(4, 4096, 4096, true, 1, 4096, 0).splits, 1);
  EXPECT_EQ(streamed_gemv_split(4, 2048, 2048, false, 1, 2048, 0).splits, 32);
  EXPECT_EQ(streamed_gemv_split(4, 2048, 2048, true, 1, 2048, 0).splits, 1);
  EXPECT_EQ(streamed_gemv_split(4, 4096, 512, true, 1, 4096, 0).splits, 4);  // 64 column groups, 1,024 terms a split
  // Columns that a 16-byte load could straddle, a batch too large for a grid, fewer rows than a warp covers, elements
  // of another width: none.
  EXPECT_EQ(streamed_gemv_split(2, 4096, 4096, false, 1, 4100, 0).splits, 0);
  EXPECT_EQ(streamed_gemv_split(4, 4096, 4096, false, 1, 4100, 0).splits, 16);  // 4,100 floats stay aligned
  EXPECT_EQ(streamed_gemv_split(4, 4096, 4096, false, 1, 4098, 0).splits, 0);
  EXPECT_EQ(streamed_gemv_split(2, 4096, 4096, true, 2, 4096, 4096 * 4096 + 4).splits, 0);
  EXPECT_EQ(streamed_gemv_split(4, 4096, 4096, true, 2, 4096, 4096 * 4096 + 2).splits, 0);
  EXPECT_EQ(streamed_gemv_split(2, 4096, 300, true, 65536, 4096, 4096 * 300).splits, 0);
  EXPECT_EQ(streamed_gemv_split(2, 200, 1 << 20, false, 1, 200, 0).splits, 0);
  EXPECT_EQ(streamed_gemv_split(4, 100, 1 << 20, false, 1, 100, 0).splits, 0);
  EXPECT_GT(streamed_gemv_split(4, 200, 1 << 20, false, 1, 200, 0).splits, 0);
  EXPECT_GT(streamed_gemv_split(2, 200, 1 << 20, true, 1, 200, 0).splits, 0);
  EXPECT_EQ(streamed_gemv_split(8, 4096, 4096, false, 1, 4096, 0).splits, 0);
}

}  // namespace
}  // namespace accel::blas
