// BLAS level 1 (Axpy, Scal, Dot, Nrm2, Asum, Iamax, Copy, Swap, Rot, Iamin) on the CPU device against float64
// references written here, over odd sizes and positive and negative increments; and the checks that refuse a request
// before it runs.
#include "accel/libs/blas/level1.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "libs/blas/blas_testing.hpp"

namespace accel::blas {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using testing::kTolerance;
using testing::vector_at;
using testing::vector_span;

constexpr std::int64_t kSizes[] = {1, 7, 33, 130};
constexpr std::int64_t kIncrements[] = {1, 2, -1, -3};
constexpr std::int64_t kPositiveIncrements[] = {1, 2, 5};

class Level1Test : public testing::BlasDeviceTest {
 protected:
  template <class T>
  void check_axpy(std::int64_t n, std::int64_t incx, std::int64_t incy, double alpha) {
    SCOPED_TRACE(::testing::Message() << "axpy n=" << n << " incx=" << incx << " incy=" << incy);
    const std::vector<T> x = random<T>(vector_span(n, incx)), y = random<T>(vector_span(n, incy) + 2);
    Buffer<T> dx = upload(x), dy = upload(y);
    ASSERT_THAT(run(Axpy{.dtype = dtype_of<T>(), .n = n, .incx = incx, .incy = incy, .alpha = alpha, .x = dx, .y = dy}),
                IsOk());
    std::vector<double> want(y.begin(), y.end());  // elements outside the vector's steps stay as they were
    for (std::int64_t i = 0; i < n; ++i) want[vector_at(i, n, incy)] += alpha * x[vector_at(i, n, incx)];
    EXPECT_LE(testing::relative_error(download(dy), want), kTolerance<T>);
  }

  template <class T>
  void check_scal(std::int64_t n, std::int64_t incx, double alpha) {
    SCOPED_TRACE(::testing::Message() << "scal n=" << n << " incx=" << incx);
    const std::vector<T> x = random<T>(vector_span(n, incx) + 1);
    Buffer<T> dx = upload(x);
    ASSERT_THAT(run(Scal{.dtype = dtype_of<T>(), .n = n, .incx = incx, .alpha = alpha, .x = dx}), IsOk());
    std::vector<double> want(x.begin(), x.end());
    for (std::int64_t i = 0; i < n; ++i) want[i * incx] *= alpha;
    EXPECT_LE(testing::relative_error(download(dx), want), kTolerance<T>);
  }

  // Copy, Swap and Rot on the same x and y, each from fresh buffers; elements outside the vectors' steps stay put.
  template <class T>
  void check_copy_swap_rot(std::int64_t n, std::int64_t incx, std::int64_t incy) {
    SCOPED_TRACE(::testing::Message() << "copy/swap/rot n=" << n << " incx=" << incx << " incy=" << incy);
    const std::vector<T> x = random<T>(vector_span(n, incx) + 1), y = random<T>(vector_span(n, incy) + 2);
    const DType dtype = dtype_of<T>();
    const double c = 0.6, s = -0.8;
    std::vector<double> copied(y.begin(), y.end()), swapped_x(x.begin(), x.end()), swapped_y(y.begin(), y.end());
    std::vector<double> rotated_x(x.begin(), x.end()), rotated_y(y.begin(), y.end());
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t at_x = vector_at(i, n, incx), at_y = vector_at(i, n, incy);
      const double xi = x[at_x], yi = y[at_y];
      copied[at_y] = xi;
      swapped_x[at_x] = yi, swapped_y[at_y] = xi;
      rotated_x[at_x] = c * xi + s * yi, rotated_y[at_y] = c * yi - s * xi;
    }
    {
      Buffer<T> dx = upload(x), dy = upload(y);
      ASSERT_THAT(run(Copy{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .x = dx, .y = dy}), IsOk());
      EXPECT_EQ(testing::relative_error(download(dy), copied), 0.0);
      EXPECT_EQ(download(dx), x);
    }
    {
      Buffer<T> dx = upload(x), dy = upload(y);
      ASSERT_THAT(run(Swap{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .x = dx, .y = dy}), IsOk());
      EXPECT_EQ(testing::relative_error(download(dx), swapped_x), 0.0);
      EXPECT_EQ(testing::relative_error(download(dy), swapped_y), 0.0);
    }
    Buffer<T> dx = upload(x), dy = upload(y);
    ASSERT_THAT(run(Rot{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .c = c, .s = s, .x = dx, .y = dy}), IsOk());
    EXPECT_LE(testing::relative_error(download(dx), rotated_x), kTolerance<T>);
    EXPECT_LE(testing::relative_error(download(dy), rotated_y), kTolerance<T>);
  }

  template <class T>
  void check_iamin(std::int64_t n, std::int64_t incx) {
    SCOPED_TRACE(::testing::Message() << "iamin n=" << n << " incx=" << incx);
    const std::vector<T> x = random<T>(vector_span(n, incx));
    double smallest = INFINITY;
    std::int32_t smallest_at = 0;
    for (std::int64_t i = 0; i < n; ++i)
      if (std::abs(double(x[i * incx])) < smallest)
        smallest = std::abs(double(x[i * incx])), smallest_at = static_cast<std::int32_t>(i + 1);
    Buffer<T> dx = upload(x);
    EXPECT_EQ(reduce<std::int32_t>(Iamin{.dtype = dtype_of<T>(), .n = n, .incx = incx, .x = dx}), smallest_at);
  }

  template <class T>
  void check_reductions(std::int64_t n, std::int64_t incx, std::int64_t incy) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " incx=" << incx << " incy=" << incy);
    const std::vector<T> x = random<T>(vector_span(n, incx)), y = random<T>(vector_span(n, incy));
    Buffer<T> dx = upload(x), dy = upload(y);
    const DType dtype = dtype_of<T>();
    double dot = 0;
    for (std::int64_t i = 0; i < n; ++i) dot += double(x[vector_at(i, n, incx)]) * double(y[vector_at(i, n, incy)]);
    const double got_dot = reduce<T>(Dot{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .x = dx, .y = dy});
    EXPECT_NEAR(got_dot, dot, kTolerance<T> * (1 + std::abs(dot)) * 4);
    if (incx < 0) return;  // the rest take positive increments only

    double sum_squares = 0, sum_abs = 0, largest = -1;
    std::int32_t largest_at = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double v = x[i * incx];
      sum_squares += v * v;
      sum_abs += std::abs(v);
      if (std::abs(v) > largest) largest = std::abs(v), largest_at = static_cast<std::int32_t>(i + 1);
    }
    EXPECT_NEAR(reduce<T>(Nrm2{.dtype = dtype, .n = n, .incx = incx, .x = dx}), std::sqrt(sum_squares),
                kTolerance<T> * std::sqrt(sum_squares) * 4);
    EXPECT_NEAR(reduce<T>(Asum{.dtype = dtype, .n = n, .incx = incx, .x = dx}), sum_abs, kTolerance<T> * sum_abs * 4);
    EXPECT_EQ(reduce<std::int32_t>(Iamax{.dtype = dtype, .n = n, .incx = incx, .x = dx}), largest_at);
  }
};

TEST_F(Level1Test, AxpyMatchesTheReferenceForOddSizesAndEveryIncrementSign) {
  for (std::int64_t n : kSizes)
    for (std::int64_t incx : kIncrements)
      for (std::int64_t incy : kIncrements) {
        check_axpy<float>(n, incx, incy, 0.75);
        check_axpy<double>(n, incx, incy, -1.5);
      }
}

TEST_F(Level1Test, ScalMatchesTheReference) {
  for (std::int64_t n : kSizes)
    for (std::int64_t incx : kPositiveIncrements) {
      check_scal<float>(n, incx, -2.5);
      check_scal<double>(n, incx, 0.125);
    }
}

TEST_F(Level1Test, ReductionsMatchTheReferenceAndGoIntoTheResultBuffer) {
  for (std::int64_t n : kSizes)
    for (std::int64_t incx : kIncrements)
      for (std::int64_t incy : {std::int64_t{1}, std::int64_t{-2}}) {
        check_reductions<float>(n, incx, incy);
        check_reductions<double>(n, incx, incy);
      }
}

TEST_F(Level1Test, CopySwapAndRotMatchTheReferenceForOddSizesAndEveryIncrementSign) {
  for (std::int64_t n : kSizes)
    for (std::int64_t incx : kIncrements)
      for (std::int64_t incy : kIncrements) {
        check_copy_swap_rot<float>(n, incx, incy);
        check_copy_swap_rot<double>(n, incx, incy);
      }
}

TEST_F(Level1Test, IaminMatchesTheReference) {
  for (std::int64_t n : kSizes)
    for (std::int64_t incx : kPositiveIncrements) {
      check_iamin<float>(n, incx);
      check_iamin<double>(n, incx);
    }
}

TEST_F(Level1Test, IaminCountsFromOneAndTakesTheFirstOfEqualMagnitudes) {
  Buffer<double> x = upload(std::vector<double>{0.5, -3, -0.25, 3, 0.25, 1});
  EXPECT_EQ(reduce<std::int32_t>(Iamin{.dtype = DType::f64, .n = 6, .x = x}), 3);
  EXPECT_EQ(reduce<std::int32_t>(Iamin{.dtype = DType::f64, .n = 3, .incx = 2, .x = x}), 2);  // 0.5, -0.25, 0.25
}

TEST_F(Level1Test, IamaxCountsFromOneAndTakesTheFirstOfEqualMagnitudes) {
  Buffer<double> x = upload(std::vector<double>{0.5, -3, 1, 3, -3});
  EXPECT_EQ(reduce<std::int32_t>(Iamax{.dtype = DType::f64, .n = 5, .x = x}), 2);
  EXPECT_EQ(reduce<std::int32_t>(Iamax{.dtype = DType::f64, .n = 3, .incx = 2, .x = x}), 3);  // 0.5, 1, -3
}

TEST_F(Level1Test, EmptyVectorsGiveZeroResultsAndLeaveVectorsAlone) {
  Buffer<float> x = upload(std::vector<float>{1, 2}), y = upload(std::vector<float>{3, 4});
  EXPECT_EQ(reduce<float>(Dot{.n = 0, .x = x, .y = y}), 0.0f);
  EXPECT_EQ(reduce<float>(Nrm2{.n = 0, .x = x}), 0.0f);
  EXPECT_EQ(reduce<float>(Asum{.n = 0, .x = x}), 0.0f);
  EXPECT_EQ(reduce<std::int32_t>(Iamax{.n = 0, .x = x}), 0);
  EXPECT_EQ(reduce<std::int32_t>(Iamin{.n = 0, .x = x}), 0);
  EXPECT_THAT(run(Copy{.n = 0, .x = x, .y = y}), IsOk());
  EXPECT_THAT(run(Swap{.n = 0, .x = x, .y = y}), IsOk());
  EXPECT_THAT(run(Rot{.n = 0, .c = 0, .s = 1, .x = x, .y = y}), IsOk());
  EXPECT_THAT(run(Axpy{.n = 0, .alpha = 2, .x = x, .y = y}), IsOk());
  EXPECT_THAT(run(Scal{.n = 0, .alpha = 2, .x = x}), IsOk());
  EXPECT_EQ(download(x), (std::vector<float>{1, 2}));
  EXPECT_EQ(download(y), (std::vector<float>{3, 4}));
}

TEST_F(Level1Test, RequestsCrossToAnIsolatedWorkerWithTheSameResults) {
  Result<Device> isolated = Device::open(system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  const std::vector<double> x = random<double>(9), y = random<double>(5);
  auto run_on = [&](const Device& device) {
    Buffer<double> dx = upload(device, x), dy = upload(device, y), dot = upload(device, std::vector<double>{0});
    EXPECT_THAT(device.ask(Axpy{.dtype = DType::f64, .n = 5, .incx = -2, .alpha = 3, .x = dx, .y = dy}).wait(), IsOk());
    EXPECT_THAT(
        device.ask(Dot{.dtype = DType::f64, .n = 5, .incx = 2, .incy = -1, .x = dx, .y = dy, .result = dot}).wait(),
        IsOk());
    EXPECT_THAT(device.ask(Rot{.dtype = DType::f64, .n = 4, .incy = -1, .c = 0.8, .s = 0.6, .x = dx, .y = dy}).wait(),
                IsOk());
    std::vector<double> out = download(device, dy);
    const std::vector<double> moved_x = download(device, dx);
    out.insert(out.end(), moved_x.begin(), moved_x.end());
    out.push_back(download(device, dot)[0]);
    return out;
  };
  EXPECT_EQ(run_on(device_), run_on(*isolated));
  EXPECT_THAT(isolated->ask(Dot{.dtype = DType::f64, .n = 5, .incx = 0}).wait(),
              StatusIs(Code::invalid_argument, "incx = 0"));
}

class Level1ValidationTest : public Level1Test {};

TEST_F(Level1ValidationTest, IncrementsSizesAndDtypesAreRefusedByName) {
  Buffer<float> x = upload(std::vector<float>(8)), y = upload(std::vector<float>(8));
  Buffer<float> r = upload(std::vector<float>(1));
  EXPECT_THAT(run(Axpy{.n = 4, .incx = 0, .x = x, .y = y}), StatusIs(Code::invalid_argument, "blas::Axpy: incx = 0"));
  EXPECT_THAT(run(Axpy{.n = 4, .incy = 0, .x = x, .y = y}), StatusIs(Code::invalid_argument, "incy = 0"));
  EXPECT_THAT(run(Nrm2{.n = 4, .incx = -1, .x = x, .result = r}),
              StatusIs(Code::invalid_argument, "incx = -1 must be positive"));
  EXPECT_THAT(run(Scal{.n = 4, .incx = -2, .x = x}), StatusIs(Code::invalid_argument, "blas::Scal: incx = -2"));
  EXPECT_THAT(run(Asum{.n = -1, .x = x, .result = r}), StatusIs(Code::invalid_argument, "n = -1 is negative"));
  EXPECT_THAT(run(Dot{.n = std::int64_t{1} << 31, .x = x, .y = y, .result = r}),
              StatusIs(Code::not_supported, "32-bit"));
  EXPECT_THAT(run(Iamax{.dtype = DType::fp8_e4m3, .n = 4, .x = x, .result = r}),
              StatusIs(Code::not_supported, "f32, f64, c64, c128, f16 or bf16"));
  EXPECT_THAT(run(Copy{.n = 4, .incx = 0, .x = x, .y = y}), StatusIs(Code::invalid_argument, "blas::Copy: incx = 0"));
  EXPECT_THAT(run(Swap{.n = 4, .incy = 0, .x = x, .y = y}), StatusIs(Code::invalid_argument, "blas::Swap: incy = 0"));
  EXPECT_THAT(run(Rot{.n = -3, .x = x, .y = y}), StatusIs(Code::invalid_argument, "blas::Rot: n = -3 is negative"));
  EXPECT_THAT(run(Iamin{.n = 4, .incx = -1, .x = x, .result = r}),
              StatusIs(Code::invalid_argument, "blas::Iamin: incx = -1 must be positive"));
  EXPECT_THAT(run(Rot{.dtype = DType::i32, .n = 4, .x = x, .y = y}),
              StatusIs(Code::not_supported, "f32, f64, c64, c128, f16 or bf16"));
}

TEST_F(Level1ValidationTest, BuffersAreCheckedAgainstTheIncrementsBeforeRunning) {
  const std::vector<float> values = random<float>(8);
  Buffer<float> x = upload(values), y = upload(values), r = upload(std::vector<float>(1));
  Buffer<double> wrong = upload(std::vector<double>(8));
  EXPECT_THAT(run(Axpy{.n = 4, .incx = 3, .x = x, .y = y}), StatusIs(Code::invalid_argument, "operand 'x'"));
  EXPECT_THAT(run(Axpy{.n = 4, .incy = -3, .x = x, .y = y}), StatusIs(Code::invalid_argument, "operand 'y'"));
  EXPECT_THAT(run(Axpy{.n = 4, .x = x, .y = x}), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(run(Dot{.n = 4, .x = x, .y = y, .result = x}), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(run(Dot{.n = 4, .x = x, .y = wrong, .result = r}),
              StatusIs(Code::invalid_argument, "operand 'y' holds f64"));
  EXPECT_THAT(run(Iamax{.n = 4, .x = x, .result = r}), StatusIs(Code::invalid_argument, "operand 'result' holds f32"));
  EXPECT_THAT(run(Nrm2{.n = 4, .x = x}), StatusIs(Code::invalid_argument, "operand 'result'"));
  EXPECT_THAT(run(Copy{.n = 4, .incy = 3, .x = x, .y = y}), StatusIs(Code::invalid_argument, "operand 'y'"));
  EXPECT_THAT(run(Swap{.n = 4, .incx = -3, .x = x, .y = y}), StatusIs(Code::invalid_argument, "operand 'x'"));
  EXPECT_THAT(run(Swap{.n = 4, .x = x, .y = x}), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(run(Rot{.n = 4, .x = y, .y = y}), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(run(Copy{.n = 4, .x = x, .y = x}), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(run(Rot{.n = 4, .x = x, .y = wrong}), StatusIs(Code::invalid_argument, "operand 'y' holds f64"));
  EXPECT_THAT(run(Iamin{.n = 4, .x = x, .result = r}), StatusIs(Code::invalid_argument, "operand 'result' holds f32"));
  EXPECT_EQ(download(x), values);  // nothing ran
  EXPECT_EQ(download(y), values);
}

}  // namespace
}  // namespace accel::blas
