// Gemv on the CPU device against a float64 reference written here: both transposes, odd sizes, padded leading
// dimensions, negative increments, alpha and beta, strided batches; and the checks that refuse a request before it
// runs.
#include "accel/libs/blas/level2.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "libs/blas/blas_testing.hpp"

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
  EXPECT_THAT(with([](Gemv& r) { r.dtype = DType::bf16; }), StatusIs(Code::not_supported, "f32 or f64"));
}

}  // namespace
}  // namespace accel::blas
