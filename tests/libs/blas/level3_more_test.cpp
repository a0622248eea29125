// Symm, Trmm and Geam on the CPU device against float64 references written here, for every side, triangle,
// transpose and diagonal, odd sizes, padded leading dimensions and strided batches; the triangle a routine must not
// read (and a unit diagonal) holds NaNs. Then the checks that refuse a request before it runs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "accel/libs/blas/level3.hpp"
#include "libs/blas/blas_testing.hpp"

namespace accel::blas {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using testing::kTolerance;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool in_triangle(Fill fill, std::int64_t row, std::int64_t col) {
  return fill == Fill::lower ? row >= col : row <= col;
}

std::int64_t packed(std::int64_t ld, std::int64_t rows) { return ld == 0 ? std::max<std::int64_t>(1, rows) : ld; }

class Level3MoreTest : public testing::BlasDeviceTest {
 protected:
  // `batch` order x order matrices `stride` apart holding random values in the `fill` triangle (the diagonal too
  // unless `unit_diagonal`) and NaN everywhere else.
  template <class T>
  std::vector<T> triangle(Fill fill, bool unit_diagonal, std::int64_t order, std::int64_t lda, std::int64_t stride,
                          std::int64_t batch) {
    std::vector<T> a = random<T>(stride * batch);
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t j = 0; j < order; ++j)
        for (std::int64_t i = 0; i < order; ++i)
          if (!in_triangle(fill, i, j) || (i == j && unit_diagonal)) a[b * stride + j * lda + i] = static_cast<T>(kNaN);
    return a;
  }

  template <class T>
  void check_symm(Symm r) {
    SCOPED_TRACE(::testing::Message() << "symm side=" << to_string(r.side) << " fill=" << to_string(r.fill)
                                      << " m=" << r.m << " n=" << r.n << " batch=" << r.batch << " beta=" << r.beta);
    r.dtype = dtype_of<T>();
    const bool left = r.side == Side::left;
    const std::int64_t order = left ? r.m : r.n;
    const std::int64_t lda = packed(r.lda, order), ldb = packed(r.ldb, r.m), ldc = packed(r.ldc, r.m);
    const std::int64_t sa = lda * order, sb = ldb * r.n, sc = ldc * r.n;
    const std::vector<T> a = triangle<T>(r.fill, false, order, lda, sa, r.batch), b = random<T>(sb * r.batch);
    std::vector<T> c = random<T>(sc * r.batch + 1);
    if (r.beta == 0)  // every element of every C: none may be read
      for (std::int64_t batch = 0; batch < r.batch; ++batch)
        for (std::int64_t j = 0; j < r.n; ++j)
          for (std::int64_t i = 0; i < r.m; ++i) c[batch * sc + j * ldc + i] = static_cast<T>(kNaN);
    Buffer<T> da = upload(a), dbuf = upload(b), dc = upload(c);
    r.a = da, r.b = dbuf, r.c = dc;
    ASSERT_THAT(run(r), IsOk());
    auto a_at = [&](std::int64_t batch, std::int64_t i, std::int64_t j) -> double {
      return in_triangle(r.fill, i, j) ? a[batch * sa + j * lda + i] : a[batch * sa + i * lda + j];
    };
    std::vector<double> want(c.begin(), c.end());
    for (std::int64_t batch = 0; batch < r.batch; ++batch)
      for (std::int64_t j = 0; j < r.n; ++j)
        for (std::int64_t i = 0; i < r.m; ++i) {
          double sum = 0;
          for (std::int64_t p = 0; p < order; ++p)
            sum += left ? a_at(batch, i, p) * b[batch * sb + j * ldb + p]
                        : b[batch * sb + p * ldb + i] * a_at(batch, p, j);
          double& out = want[batch * sc + j * ldc + i];
          out = r.alpha * sum + (r.beta == 0 ? 0.0 : r.beta * out);
        }
    EXPECT_LE(testing::relative_error(download(dc), want), kTolerance<T>);
  }

  template <class T>
  void check_trmm(Trmm r) {
    SCOPED_TRACE(::testing::Message() << "trmm side=" << to_string(r.side) << " fill=" << to_string(r.fill) << " "
                                      << to_string(r.transpose) << " diagonal=" << to_string(r.diagonal) << " m=" << r.m
                                      << " n=" << r.n << " batch=" << r.batch);
    r.dtype = dtype_of<T>();
    const bool left = r.side == Side::left, unit = r.diagonal == Diagonal::unit;
    const std::int64_t order = left ? r.m : r.n;
    const std::int64_t lda = packed(r.lda, order), ldb = packed(r.ldb, r.m), sa = lda * order, sb = ldb * r.n;
    const std::vector<T> a = triangle<T>(r.fill, unit, order, lda, sa, r.batch), b = random<T>(sb * r.batch + 1);
    Buffer<T> da = upload(a), dbuf = upload(b);
    r.a = da, r.b = dbuf;
    ASSERT_THAT(run(r), IsOk());
    auto a_at = [&](std::int64_t batch, std::int64_t i, std::int64_t j) -> double {  // op(A)'s element
      if (r.transpose == Transpose::transpose) std::swap(i, j);
      if (i == j && unit) return 1.0;
      return in_triangle(r.fill, i, j) ? static_cast<double>(a[batch * sa + j * lda + i]) : 0.0;
    };
    std::vector<double> want(b.begin(), b.end());  // padding and the spare element stay as they were
    for (std::int64_t batch = 0; batch < r.batch; ++batch)
      for (std::int64_t j = 0; j < r.n; ++j)
        for (std::int64_t i = 0; i < r.m; ++i) {
          double sum = 0;
          for (std::int64_t p = 0; p < order; ++p)
            sum += left ? a_at(batch, i, p) * b[batch * sb + j * ldb + p]
                        : b[batch * sb + p * ldb + i] * a_at(batch, p, j);
          want[batch * sb + j * ldb + i] = r.alpha * sum;
        }
    EXPECT_LE(testing::relative_error(download(dbuf), want), kTolerance<T>);
  }

  template <class T>
  void check_geam(Geam r) {
    SCOPED_TRACE(::testing::Message() << "geam " << to_string(r.transpose_a) << " " << to_string(r.transpose_b)
                                      << " m=" << r.m << " n=" << r.n << " batch=" << r.batch << " beta=" << r.beta);
    r.dtype = dtype_of<T>();
    const bool ta = r.transpose_a == Transpose::transpose, tb = r.transpose_b == Transpose::transpose;
    const std::int64_t lda = packed(r.lda, ta ? r.n : r.m), ldb = packed(r.ldb, tb ? r.n : r.m);
    const std::int64_t ldc = packed(r.ldc, r.m);
    const std::int64_t sa = lda * (ta ? r.m : r.n), sb = ldb * (tb ? r.m : r.n), sc = ldc * r.n;
    const std::vector<T> a = random<T>(sa * r.batch), c = random<T>(sc * r.batch + 1);
    std::vector<T> b = random<T>(sb * r.batch);
    if (r.beta == 0) std::fill(b.begin(), b.end(), static_cast<T>(kNaN));  // not read
    Buffer<T> da = upload(a), dbuf = upload(b), dc = upload(c);
    r.a = da, r.b = dbuf, r.c = dc;
    ASSERT_THAT(run(r), IsOk());
    std::vector<double> want(c.begin(), c.end());
    for (std::int64_t batch = 0; batch < r.batch; ++batch)
      for (std::int64_t j = 0; j < r.n; ++j)
        for (std::int64_t i = 0; i < r.m; ++i) {
          const double from_a = ta ? a[batch * sa + i * lda + j] : a[batch * sa + j * lda + i];
          const double from_b = tb ? b[batch * sb + i * ldb + j] : b[batch * sb + j * ldb + i];
          want[batch * sc + j * ldc + i] = r.alpha * from_a + (r.beta == 0 ? 0.0 : r.beta * from_b);
        }
    EXPECT_LE(testing::relative_error(download(dc), want), kTolerance<T>);
  }
};

TEST_F(Level3MoreTest, SymmReadsOnlyItsTriangleForEverySideTriangleAndBatch) {
  for (Side side : {Side::left, Side::right})
    for (Fill fill : {Fill::lower, Fill::upper}) {
      check_symm<float>({.side = side, .fill = fill, .m = 17, .n = 9, .alpha = 1.5, .beta = -0.5});
      check_symm<double>({.side = side, .fill = fill, .m = 5, .n = 13, .lda = 14, .ldb = 7, .ldc = 6, .alpha = -1});
      check_symm<double>({.side = side, .fill = fill, .m = 4, .n = 3, .batch = 5, .alpha = 0.5, .beta = 2});
    }
  check_symm<float>({.m = 0, .n = 3, .beta = 1});  // empty: C untouched
}

TEST_F(Level3MoreTest, TrmmMatchesTheReferenceForEverySideTriangleTransposeAndDiagonal) {
  for (Side side : {Side::left, Side::right})
    for (Fill fill : {Fill::lower, Fill::upper})
      for (Transpose transpose : {Transpose::none, Transpose::transpose})
        for (Diagonal diagonal : {Diagonal::non_unit, Diagonal::unit}) {
          const Trmm r{.side = side, .fill = fill, .transpose = transpose, .diagonal = diagonal, .alpha = 0.75};
          Trmm odd = r, padded = r, batched = r;
          odd.m = 19, odd.n = 7;
          padded.m = 6, padded.n = 11, padded.lda = 12, padded.ldb = 9;
          batched.m = 5, batched.n = 4, batched.batch = 3;
          check_trmm<float>(odd);
          check_trmm<double>(odd);
          check_trmm<double>(padded);
          check_trmm<float>(batched);
        }
  check_trmm<double>({.m = 3, .n = 0});
}

TEST_F(Level3MoreTest, GeamMatchesTheReferenceForEveryTransposePairPaddingAndBatch) {
  for (Transpose ta : {Transpose::none, Transpose::transpose})
    for (Transpose tb : {Transpose::none, Transpose::transpose}) {
      check_geam<float>({.transpose_a = ta, .transpose_b = tb, .m = 17, .n = 9, .alpha = 0.5, .beta = -1.5});
      check_geam<double>(
          {.transpose_a = ta, .transpose_b = tb, .m = 6, .n = 13, .lda = 15, .ldb = 14, .ldc = 8, .beta = 1});
      check_geam<double>({.transpose_a = ta, .transpose_b = tb, .m = 3, .n = 5, .batch = 4, .alpha = 2, .beta = 0});
    }
  check_geam<float>({.m = 0, .n = 4, .beta = 1});
}

TEST_F(Level3MoreTest, SymmTrmmAndGeamAreRefusedByNameBeforeRunning) {
  const std::vector<float> values = random<float>(24);
  Buffer<float> a = upload(values), b = upload(values), c = upload(values);
  Buffer<double> d = upload(std::vector<double>(24));
  EXPECT_THAT(run(Symm{.side = static_cast<Side>(2), .m = 2, .n = 2, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "blas::Symm: side = 2"));
  EXPECT_THAT(run(Symm{.m = 4, .n = 6, .ldc = 5, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "operand 'c'"));
  EXPECT_THAT(run(Symm{.side = Side::right, .m = 2, .n = 5, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "operand 'a'"));
  EXPECT_THAT(run(Symm{.m = 2, .n = 2, .a = a, .b = b, .c = b}), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(run(Symm{.m = 2, .n = 2, .ldc = 1, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "blas::Symm: ldc = 1 is less than"));
  EXPECT_THAT(run(Trmm{.diagonal = static_cast<Diagonal>(9), .m = 2, .n = 2, .a = a, .b = b}),
              StatusIs(Code::invalid_argument, "blas::Trmm: diagonal = 9"));
  EXPECT_THAT(run(Trmm{.m = 5, .n = 2, .a = a, .b = b}), StatusIs(Code::invalid_argument, "operand 'a'"));
  EXPECT_THAT(run(Trmm{.m = 2, .n = 2, .a = b, .b = b}), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(run(Trmm{.m = 2, .n = 2, .batch = 2, .stride_b = 3, .a = a, .b = b}),
              StatusIs(Code::invalid_argument, "stride_b = 3 makes the 2 matrices b overlap"));
  EXPECT_THAT(run(Geam{.transpose_b = static_cast<Transpose>(6), .m = 2, .n = 2, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "blas::Geam: transpose = 6"));
  EXPECT_THAT(run(Geam{.transpose_a = Transpose::transpose, .m = 2, .n = 3, .lda = 2, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "blas::Geam: lda = 2 is less than max(1, 3)"));
  EXPECT_THAT(run(Geam{.m = 2, .n = 2, .a = a, .b = d, .c = c}),
              StatusIs(Code::invalid_argument, "operand 'b' holds f64"));
  EXPECT_THAT(run(Geam{.m = 2, .n = 2, .a = a, .b = b, .c = a}), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(run(Geam{.m = -1, .n = 2, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "m = -1 is negative"));
  EXPECT_THAT(run(Geam{.dtype = DType::f16, .m = 2, .n = 2, .a = a, .b = b, .c = c}),
              StatusIs(Code::not_supported, "f32 or f64"));
  EXPECT_EQ(download(a), values);  // nothing ran
  EXPECT_EQ(download(b), values);
  EXPECT_EQ(download(c), values);
}

}  // namespace
}  // namespace accel::blas
