// Trsm and Syrk on the CPU device against float64 references written here, for every side, triangle, transpose and
// diagonal, odd sizes, padded leading dimensions and strided batches; the triangle a routine must not read holds
// NaNs, and what it must not write is compared bit for bit. Then the checks that refuse a request before it runs.
#include "accel/libs/blas/level3.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

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

class Level3Test : public testing::BlasDeviceTest {
 protected:
  // A batch of order x order triangular matrices, well conditioned (a diagonal of 2 to 3, off-diagonal values small
  // enough), with NaN wherever the routine must not read: the other triangle, and the diagonal when it is unit.
  template <class T>
  std::vector<T> triangular(const Trsm& r, std::int64_t order, std::int64_t lda, std::int64_t stride) {
    std::uniform_real_distribution<double> off(-1, 1), diagonal(2, 3);
    std::vector<T> a(std::max<std::int64_t>(1, stride * r.batch), static_cast<T>(kNaN));
    for (std::int64_t b = 0; b < r.batch; ++b)
      for (std::int64_t j = 0; j < order; ++j)
        for (std::int64_t i = 0; i < order; ++i) {
          T& v = a[b * stride + j * lda + i];
          if (i == j) v = static_cast<T>(r.diagonal == Diagonal::unit ? kNaN : diagonal(rng_));
          if (i != j && in_triangle(r.fill, i, j)) v = static_cast<T>(off(rng_) / static_cast<double>(order));
        }
    return a;
  }

  // Solves, then checks that op(A) X (or X op(A)) gives alpha B back, and that B's padding is untouched.
  template <class T>
  void check_trsm(Trsm r) {
    SCOPED_TRACE(::testing::Message() << "trsm side=" << to_string(r.side) << " fill=" << to_string(r.fill)
                                      << " transpose=" << (r.transpose == Transpose::none ? "N" : "T") << " diagonal="
                                      << to_string(r.diagonal) << " m=" << r.m << " n=" << r.n << " batch=" << r.batch);
    r.dtype = dtype_of<T>();
    const bool left = r.side == Side::left;
    const std::int64_t order = left ? r.m : r.n;
    const std::int64_t lda = r.lda == 0 ? std::max<std::int64_t>(1, order) : r.lda;
    const std::int64_t ldb = r.ldb == 0 ? std::max<std::int64_t>(1, r.m) : r.ldb;
    const std::int64_t sa = r.stride_a == 0 ? lda * order : r.stride_a;
    const std::int64_t sb = r.stride_b == 0 ? ldb * r.n : r.stride_b;
    const std::vector<T> a = triangular<T>(r, order, lda, sa), b = random<T>(sb * r.batch + 1);
    Buffer<T> da = upload(a), db = upload(b);
    r.a = da, r.b = db;
    ASSERT_THAT(run(r), IsOk());
    const std::vector<T> x = download(db);

    // A's element (i, j) as the routine sees it: its triangle, and ones on a unit diagonal.
    auto a_at = [&](std::int64_t batch, std::int64_t i, std::int64_t j) -> double {
      if (r.transpose == Transpose::transpose) std::swap(i, j);
      if (i == j && r.diagonal == Diagonal::unit) return 1.0;
      return in_triangle(r.fill, i, j) ? static_cast<double>(a[batch * sa + j * lda + i]) : 0.0;
    };
    std::vector<double> got_b(x.begin(), x.end()), want_b(b.begin(), b.end());
    for (std::int64_t batch = 0; batch < r.batch; ++batch)
      for (std::int64_t i = 0; i < r.m; ++i)
        for (std::int64_t j = 0; j < r.n; ++j) {
          double sum = 0;
          if (left) {
            for (std::int64_t p = 0; p < r.m; ++p) sum += a_at(batch, i, p) * x[batch * sb + j * ldb + p];
          } else {
            for (std::int64_t p = 0; p < r.n; ++p) sum += x[batch * sb + p * ldb + i] * a_at(batch, p, j);
          }
          got_b[batch * sb + j * ldb + i] = sum;
          want_b[batch * sb + j * ldb + i] *= r.alpha;
        }
    EXPECT_LE(testing::relative_error(got_b, want_b), kTolerance<T> * 10);
  }

  // C = alpha op(A) op(A)ᵀ + beta C on the `fill` triangle; the other triangle and the padding bit for bit as they
  // were.
  template <class T>
  void check_syrk(Syrk r) {
    SCOPED_TRACE(::testing::Message() << "syrk fill=" << to_string(r.fill)
                                      << " transpose=" << (r.transpose == Transpose::none ? "N" : "T") << " n=" << r.n
                                      << " k=" << r.k << " batch=" << r.batch);
    r.dtype = dtype_of<T>();
    const bool t = r.transpose == Transpose::transpose;
    const std::int64_t a_rows = t ? r.k : r.n, a_cols = t ? r.n : r.k;
    const std::int64_t lda = r.lda == 0 ? std::max<std::int64_t>(1, a_rows) : r.lda;
    const std::int64_t ldc = r.ldc == 0 ? std::max<std::int64_t>(1, r.n) : r.ldc;
    const std::int64_t sa = r.stride_a == 0 ? lda * a_cols : r.stride_a;
    const std::int64_t sc = r.stride_c == 0 ? ldc * r.n : r.stride_c;
    const std::vector<T> a = random<T>(sa * r.batch), c = random<T>(sc * r.batch + 1);
    Buffer<T> da = upload(a), dc = upload(c);
    r.a = da, r.c = dc;
    ASSERT_THAT(run(r), IsOk());
    const std::vector<T> got = download(dc);

    auto op_a = [&](std::int64_t batch, std::int64_t i, std::int64_t p) -> double {
      return t ? a[batch * sa + i * lda + p] : a[batch * sa + p * lda + i];
    };
    std::vector<double> want(c.begin(), c.end());
    for (std::int64_t batch = 0; batch < r.batch; ++batch)
      for (std::int64_t j = 0; j < r.n; ++j)
        for (std::int64_t i = 0; i < r.n; ++i) {
          if (!in_triangle(r.fill, i, j)) continue;
          double sum = 0;
          for (std::int64_t p = 0; p < r.k; ++p) sum += op_a(batch, i, p) * op_a(batch, j, p);
          double& out = want[batch * sc + j * ldc + i];
          out = r.alpha * sum + (r.beta == 0 ? 0.0 : r.beta * out);
        }
    EXPECT_LE(testing::relative_error(got, want), kTolerance<T>);
    for (std::size_t i = 0; i < got.size(); ++i)
      if (want[i] == static_cast<double>(c[i]) && !std::isnan(want[i])) {
        // Untouched by the reference: the other triangle, the padding (or an element beta left as it was).
        ASSERT_EQ(got[i], c[i]) << "element " << i << " outside the triangle was written";
      }
  }
};

TEST_F(Level3Test, TrsmMatchesTheReferenceForEverySideTriangleTransposeAndDiagonal) {
  std::uniform_int_distribution<std::int64_t> size(1, 37);
  for (Side side : {Side::left, Side::right})
    for (Fill fill : {Fill::lower, Fill::upper})
      for (Transpose transpose : {Transpose::none, Transpose::transpose})
        for (Diagonal diagonal : {Diagonal::non_unit, Diagonal::unit}) {
          const Trsm r{.side = side,
                       .fill = fill,
                       .transpose = transpose,
                       .diagonal = diagonal,
                       .m = size(rng_),
                       .n = size(rng_),
                       .alpha = 0.75};
          check_trsm<float>(r);
          check_trsm<double>(r);
        }
}

TEST_F(Level3Test, TrsmPaddedLeadingDimensionsAndStridedBatchesMatchTheReference) {
  for (Side side : {Side::left, Side::right}) {
    check_trsm<double>({.side = side, .fill = Fill::upper, .m = 13, .n = 7, .lda = 15, .ldb = 16, .batch = 3});
    check_trsm<float>({.side = side,
                       .transpose = Transpose::transpose,
                       .m = 5,
                       .n = 6,
                       .batch = 4,
                       .stride_a = 40,
                       .stride_b = 33,
                       .alpha = -2});
  }
  check_trsm<double>({.m = 0, .n = 5});
  check_trsm<double>({.side = Side::right, .m = 4, .n = 0});
}

TEST_F(Level3Test, SyrkMatchesTheReferenceForEveryTriangleAndTranspose) {
  std::uniform_int_distribution<std::int64_t> size(1, 41);
  for (Fill fill : {Fill::lower, Fill::upper})
    for (Transpose transpose : {Transpose::none, Transpose::transpose}) {
      const Syrk r{.fill = fill, .transpose = transpose, .n = size(rng_), .k = size(rng_), .alpha = 1.5, .beta = -0.5};
      check_syrk<float>(r);
      check_syrk<double>(r);
      check_syrk<double>({.fill = fill, .transpose = transpose, .n = 9, .k = 4, .lda = 12, .ldc = 11, .batch = 3});
      check_syrk<float>({.fill = fill,
                         .transpose = transpose,
                         .n = 6,
                         .k = 7,
                         .batch = 2,
                         .stride_a = 50,
                         .stride_c = 40,
                         .beta = 1});
    }
}

TEST_F(Level3Test, SyrkWithAnEmptySumScalesTheTriangleByBeta) {
  check_syrk<double>({.fill = Fill::upper, .n = 5, .k = 0, .alpha = 2, .beta = 0.25});
  check_syrk<float>({.n = 4, .k = 0, .beta = 0});
}

TEST_F(Level3Test, ShapesSidesTrianglesAndBuffersAreRefusedByNameBeforeRunning) {
  const std::vector<double> values = random<double>(64);
  Buffer<double> a = upload(values), b = upload(values);
  Buffer<float> f = upload(std::vector<float>(64));
  const Trsm trsm{.dtype = DType::f64, .side = Side::right, .m = 8, .n = 4, .a = a, .b = b};
  auto with = [&](auto change) {
    auto r = trsm;
    change(r);
    return run(r);
  };
  EXPECT_THAT(with([](Trsm& r) { r.lda = 3; }), StatusIs(Code::invalid_argument, "blas::Trsm: lda = 3 is less than"));
  EXPECT_THAT(with([](Trsm& r) { r.ldb = 7; }), StatusIs(Code::invalid_argument, "ldb = 7"));
  EXPECT_THAT(with([](Trsm& r) { r.side = Side::left, r.m = 9; }), StatusIs(Code::invalid_argument, "operand 'a'"));
  EXPECT_THAT(with([](Trsm& r) { r.n = 9; }), StatusIs(Code::invalid_argument, "operand 'a'"));
  EXPECT_THAT(with([](Trsm& r) { r.batch = 3; }), StatusIs(Code::invalid_argument, "operand 'b'"));
  EXPECT_THAT(with([](Trsm& r) { r.batch = 2, r.stride_b = 16; }),
              StatusIs(Code::invalid_argument, "stride_b = 16 makes the 2 matrices b overlap"));
  EXPECT_THAT(with([](Trsm& r) { r.side = static_cast<Side>(2); }), StatusIs(Code::invalid_argument, "side = 2"));
  EXPECT_THAT(with([](Trsm& r) { r.fill = static_cast<Fill>(3); }), StatusIs(Code::invalid_argument, "fill = 3"));
  EXPECT_THAT(with([](Trsm& r) { r.diagonal = static_cast<Diagonal>(4); }),
              StatusIs(Code::invalid_argument, "diagonal = 4"));
  EXPECT_THAT(with([](Trsm& r) { r.transpose = static_cast<Transpose>(9); }),
              StatusIs(Code::invalid_argument, "transpose = 9"));
  EXPECT_THAT(with([&](Trsm& r) { r.b = a; }), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(with([&](Trsm& r) { r.a = f; }), StatusIs(Code::invalid_argument, "operand 'a' holds f32"));
  EXPECT_THAT(with([](Trsm& r) { r.dtype = DType::c64; }), StatusIs(Code::not_supported, "f32 or f64"));
  EXPECT_EQ(download(b), values);  // nothing ran

  const Syrk syrk{.dtype = DType::f64, .transpose = Transpose::transpose, .n = 8, .k = 4, .a = a, .c = b};
  EXPECT_THAT(run(syrk), IsOk());
  auto syrk_with = [&](auto change) {
    auto r = syrk;
    change(r);
    return run(r);
  };
  EXPECT_THAT(syrk_with([](Syrk& r) { r.lda = 3; }), StatusIs(Code::invalid_argument, "blas::Syrk: lda = 3"));
  EXPECT_THAT(syrk_with([](Syrk& r) { r.ldc = 7; }), StatusIs(Code::invalid_argument, "ldc = 7"));
  EXPECT_THAT(syrk_with([](Syrk& r) { r.k = 9; }), StatusIs(Code::invalid_argument, "operand 'a'"));
  EXPECT_THAT(syrk_with([](Syrk& r) { r.n = 9; }), StatusIs(Code::invalid_argument, "operand 'c'"));
  EXPECT_THAT(syrk_with([](Syrk& r) { r.k = -1; }), StatusIs(Code::invalid_argument, "k = -1 is negative"));
  EXPECT_THAT(syrk_with([](Syrk& r) { r.fill = static_cast<Fill>(2); }), StatusIs(Code::invalid_argument, "fill = 2"));
  EXPECT_THAT(syrk_with([&](Syrk& r) { r.c = a; }), StatusIs(Code::invalid_argument, "alias"));
}

}  // namespace
}  // namespace accel::blas
