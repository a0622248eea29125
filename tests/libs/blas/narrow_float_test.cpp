// BLAS level 1 and Gemv on 16-bit floats (f16, bf16) on the CPU device against double-precision references written
// here, over odd sizes and positive and negative increments: each written element within one unit in the last place
// of the exact value, the reductions' results of the element type, Iamax and Iamin's first-of-equals rule (16-bit
// values repeat often), Copy and Swap moving NaN payloads and negative zeros bit for bit, Gemv's transposes, batches
// and empty product, the isolated worker giving the same bytes, and what is refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "accel/libs/blas/level1.hpp"
#include "accel/libs/blas/level2.hpp"
#include "libs/blas/blas_testing.hpp"
#include "libs/blas/narrow_floats.hpp"

namespace accel::blas {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using testing::vector_at;
using testing::vector_span;

// 2,500 crosses the CPU loops' chunks of 1,024 elements (narrow_floats.hpp) twice.
constexpr std::int64_t kSizes[] = {1, 7, 33, 1000, 2500};
constexpr std::int64_t kIncrements[] = {1, 2, -1, -3};
constexpr std::int64_t kPositiveIncrements[] = {1, 3};

template <class N>
double wide(N value) {
  return to_float(value);
}
// The spacing of N's values relative to their magnitude, at its widest (one unit in the last place over 1.0).
template <class N>
constexpr double kUlp = std::is_same_v<N, Half> ? 0x1p-10 : 0x1p-7;

template <class N>
std::vector<std::uint16_t> bits_of(const std::vector<N>& values) {
  std::vector<std::uint16_t> bits;
  for (const N& v : values) bits.push_back(v.bits);
  return bits;
}

class NarrowFloatTest : public testing::BlasDeviceTest {
 protected:
  template <class N>
  std::vector<N> random_narrow(std::uint64_t n) {
    std::uniform_real_distribution<double> dist(-1, 1);
    std::vector<N> v(std::max<std::uint64_t>(n, 1));
    for (N& x : v) x = narrow<N>(static_cast<float>(dist(rng_)));
    return v;
  }

  // Every element of `got` within one unit in the last place of `want` (plus `slack`: f16's spacing near zero, or the
  // f32 rounding of a sum that cancels), elements outside the vector included (they must be untouched).
  template <class N>
  void expect_near(const std::vector<N>& got, const std::vector<double>& want, double slack = 1e-7) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_LE(std::abs(wide(got[i]) - want[i]), kUlp<N> * std::abs(want[i]) + slack) << "element " << i;
  }

  template <class N>
  std::vector<double> widened(const std::vector<N>& values) {
    std::vector<double> out;
    for (const N& v : values) out.push_back(wide(v));
    return out;
  }

  template <class N>
  N reduce_narrow(auto request) {
    Buffer<N> result = upload(std::vector<N>{narrow<N>(-7.0f)});
    request.result = result;
    EXPECT_THAT(run(request), IsOk());
    return download(result)[0];
  }

  template <class N>
  void check_elementwise(std::int64_t n, std::int64_t incx, std::int64_t incy) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " incx=" << incx << " incy=" << incy);
    const DType dtype = dtype_of<N>();
    const std::vector<N> x = random_narrow<N>(vector_span(n, incx) + 1), y = random_narrow<N>(vector_span(n, incy) + 2);
    const std::vector<double> ex = widened(x), ey = widened(y);
    const double alpha = -1.75, c = 0.6, s = -0.8;
    // Rot takes c and s rounded to the element type.
    const double cn = wide(narrow<N>(static_cast<float>(c))), sn = wide(narrow<N>(static_cast<float>(s)));
    std::vector<double> axpy = ey, rotated_x = ex, rotated_y = ey;
    std::vector<N> copied = y, swapped_x = x, swapped_y = y;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t at_x = vector_at(i, n, incx), at_y = vector_at(i, n, incy);
      axpy[at_y] += alpha * ex[at_x];
      rotated_x[at_x] = cn * ex[at_x] + sn * ey[at_y];
      rotated_y[at_y] = cn * ey[at_y] - sn * ex[at_x];
      copied[at_y] = x[at_x];
      swapped_x[at_x] = y[at_y], swapped_y[at_y] = x[at_x];
    }
    {
      Buffer<N> dx = upload(x), dy = upload(y);
      ASSERT_THAT(run(Axpy{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .alpha = alpha, .x = dx, .y = dy}),
                  IsOk());
      expect_near(download(dy), axpy, 1e-6);
      EXPECT_EQ(bits_of(download(dx)), bits_of(x));
    }
    {
      Buffer<N> dx = upload(x), dy = upload(y);
      ASSERT_THAT(run(Rot{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .c = c, .s = s, .x = dx, .y = dy}),
                  IsOk());
      expect_near(download(dx), rotated_x, 1e-6);
      expect_near(download(dy), rotated_y, 1e-6);
    }
    {
      Buffer<N> dx = upload(x), dy = upload(y);
      ASSERT_THAT(run(Copy{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .x = dx, .y = dy}), IsOk());
      EXPECT_EQ(bits_of(download(dy)), bits_of(copied));
      EXPECT_EQ(bits_of(download(dx)), bits_of(x));
    }
    {
      Buffer<N> dx = upload(x), dy = upload(y);
      ASSERT_THAT(run(Swap{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .x = dx, .y = dy}), IsOk());
      EXPECT_EQ(bits_of(download(dx)), bits_of(swapped_x));
      EXPECT_EQ(bits_of(download(dy)), bits_of(swapped_y));
    }
    if (incx < 0) return;  // Scal takes positive increments only
    Buffer<N> dx = upload(x);
    ASSERT_THAT(run(Scal{.dtype = dtype, .n = n, .incx = incx, .alpha = alpha, .x = dx}), IsOk());
    std::vector<double> scaled = ex;
    for (std::int64_t i = 0; i < n; ++i) scaled[i * incx] *= alpha;
    expect_near(download(dx), scaled);
  }

  template <class N>
  void check_reductions(std::int64_t n, std::int64_t incx, std::int64_t incy) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " incx=" << incx << " incy=" << incy);
    const DType dtype = dtype_of<N>();
    const std::vector<N> x = random_narrow<N>(vector_span(n, incx)), y = random_narrow<N>(vector_span(n, incy));
    const std::vector<double> ex = widened(x), ey = widened(y);
    Buffer<N> dx = upload(x), dy = upload(y);
    double dot = 0;
    for (std::int64_t i = 0; i < n; ++i) dot += ex[vector_at(i, n, incx)] * ey[vector_at(i, n, incy)];
    expect_near(
        std::vector<N>{reduce_narrow<N>(Dot{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .x = dx, .y = dy})},
        {dot});
    if (incx < 0) return;  // the rest take positive increments only

    double squares = 0, magnitudes = 0, largest = -1, smallest = INFINITY;
    std::int32_t largest_at = 0, smallest_at = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double v = std::abs(ex[i * incx]);
      squares += v * v, magnitudes += v;
      if (v > largest) largest = v, largest_at = static_cast<std::int32_t>(i + 1);
      if (v < smallest) smallest = v, smallest_at = static_cast<std::int32_t>(i + 1);
    }
    expect_near(std::vector<N>{reduce_narrow<N>(Nrm2{.dtype = dtype, .n = n, .incx = incx, .x = dx})},
                {std::sqrt(squares)});
    expect_near(std::vector<N>{reduce_narrow<N>(Asum{.dtype = dtype, .n = n, .incx = incx, .x = dx})}, {magnitudes});
    EXPECT_EQ(reduce<std::int32_t>(Iamax{.dtype = dtype, .n = n, .incx = incx, .x = dx}), largest_at);
    EXPECT_EQ(reduce<std::int32_t>(Iamin{.dtype = dtype, .n = n, .incx = incx, .x = dx}), smallest_at);
  }

  // y = alpha op(A) x + beta y on packed A (m x n column-major) over a batch.
  template <class N>
  void check_gemv(Gemv r) {
    r.dtype = dtype_of<N>();
    SCOPED_TRACE(::testing::Message() << to_string(r.dtype) << " " << to_string(r.transpose) << " m=" << r.m
                                      << " n=" << r.n << " incx=" << r.incx << " incy=" << r.incy
                                      << " batch=" << r.batch << " beta=" << r.beta);
    const bool transposed = r.transpose == Transpose::transpose;
    const std::int64_t xs = transposed ? r.m : r.n, ys = transposed ? r.n : r.m, lda = std::max<std::int64_t>(r.m, 1);
    const std::uint64_t a_one = lda * r.n, x_one = vector_span(xs, r.incx), y_one = vector_span(ys, r.incy);
    const std::vector<N> a = random_narrow<N>(a_one * r.batch), x = random_narrow<N>(x_one * r.batch);
    std::vector<N> y = random_narrow<N>(y_one * r.batch);
    const std::vector<double> ea = widened(a), ex = widened(x);
    std::vector<double> want = widened(y);
    if (r.beta == 0) {  // y is not read: NaNs in its elements must not survive
      for (std::int64_t b = 0; b < r.batch; ++b)
        for (std::int64_t j = 0; j < ys; ++j) y[b * y_one + vector_at(j, ys, r.incy)] = narrow<N>(NAN);
    }
    for (std::int64_t b = 0; b < r.batch; ++b)
      for (std::int64_t j = 0; j < ys; ++j) {
        double sum = 0;
        for (std::int64_t i = 0; i < xs; ++i) {
          const std::int64_t row = transposed ? i : j, column = transposed ? j : i;
          sum += ea[b * a_one + column * lda + row] * ex[b * x_one + vector_at(i, xs, r.incx)];
        }
        double& out = want[b * y_one + vector_at(j, ys, r.incy)];
        out = r.alpha * sum + (r.beta == 0 ? 0 : r.beta * out);
      }
    Buffer<N> da = upload(a), dx = upload(x), dy = upload(y);
    r.a = da, r.x = dx, r.y = dy;
    ASSERT_THAT(run(r), IsOk());
    expect_near(download(dy), want);
  }
};

TEST_F(NarrowFloatTest, GemvMatchesTheReferenceForBothTransposesIncrementsBatchesAndAnEmptyProduct) {
  for (Transpose transpose : {Transpose::none, Transpose::transpose})
    for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {37, 19}, {200, 301}, {2100, 37}})
      for (double beta : {0.0, -0.5}) {
        check_gemv<Half>({.transpose = transpose, .m = m, .n = n, .incx = -2, .incy = 3, .alpha = 0.75, .beta = beta});
        check_gemv<BFloat16>({.transpose = transpose, .m = m, .n = n, .batch = 3, .alpha = -1.25, .beta = beta});
      }
  check_gemv<Half>({.m = 9, .n = 0, .beta = -0.5});  // nothing to sum: y = beta y
  check_gemv<BFloat16>({.transpose = Transpose::transpose, .m = 0, .n = 5, .beta = 0});
}

TEST_F(NarrowFloatTest, AxpyRotCopySwapAndScalMatchTheReferenceForEveryIncrementSign) {
  for (std::int64_t n : kSizes)
    for (std::int64_t incx : kIncrements)
      for (std::int64_t incy : kIncrements) {
        check_elementwise<Half>(n, incx, incy);
        check_elementwise<BFloat16>(n, incx, incy);
      }
}

TEST_F(NarrowFloatTest, DotNrm2AsumIamaxAndIaminMatchTheReference) {
  for (std::int64_t n : kSizes)
    for (std::int64_t incx : kIncrements)
      for (std::int64_t incy : kPositiveIncrements) {
        check_reductions<Half>(n, incx, incy);
        check_reductions<BFloat16>(n, incx, incy);
      }
}

TEST_F(NarrowFloatTest, EmptyVectorsReduceToZeroAndLeaveTheirOperandsAlone) {
  const std::vector<Half> x = random_narrow<Half>(4);
  Buffer<Half> dx = upload(x), dy = upload(x);
  EXPECT_EQ(reduce_narrow<Half>(Dot{.dtype = DType::f16, .n = 0, .x = dx, .y = dy}).bits, 0);
  EXPECT_EQ(reduce_narrow<Half>(Nrm2{.dtype = DType::f16, .n = 0, .x = dx}).bits, 0);
  EXPECT_EQ(reduce<std::int32_t>(Iamax{.dtype = DType::f16, .n = 0, .x = dx}), 0);
  ASSERT_THAT(run(Axpy{.dtype = DType::f16, .n = 0, .alpha = 2, .x = dx, .y = dy}), IsOk());
  EXPECT_EQ(bits_of(download(dy)), bits_of(x));
}

TEST_F(NarrowFloatTest, IamaxAndIaminTakeTheFirstOfEqualMagnitudesAndCopyKeepsNanPayloadsAndSignedZeros) {
  // |−0.5| equals |0.5|: the first wins; so does the first of the two zeros for Iamin.
  const std::vector<BFloat16> x = {narrow<BFloat16>(0.25f), narrow<BFloat16>(-0.5f), narrow<BFloat16>(0.5f),
                                   narrow<BFloat16>(-0.0f), narrow<BFloat16>(0.0f)};
  Buffer<BFloat16> dx = upload(x);
  EXPECT_EQ(reduce<std::int32_t>(Iamax{.dtype = DType::bf16, .n = 5, .x = dx}), 2);
  EXPECT_EQ(reduce<std::int32_t>(Iamin{.dtype = DType::bf16, .n = 5, .x = dx}), 4);
  EXPECT_EQ(wide(reduce_narrow<BFloat16>(Asum{.dtype = DType::bf16, .n = 5, .x = dx})), 1.25);

  const std::vector<Half> odd = {Half{0x7e01}, Half{0x8000}, Half{0xfc00}, Half{0x0001}};  // NaN, -0, -inf, subnormal
  Buffer<Half> from = upload(odd), to = upload(std::vector<Half>(4, Half{0x3c00}));
  ASSERT_THAT(run(Copy{.dtype = DType::f16, .n = 4, .x = from, .y = to}), IsOk());
  EXPECT_EQ(bits_of(download(to)), bits_of(odd));
}

TEST_F(NarrowFloatTest, RequestsCrossToAnIsolatedWorkerWithTheSameResults) {
  Result<Device> isolated = Device::open(system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  const std::vector<Half> x = random_narrow<Half>(9), y = random_narrow<Half>(5);
  auto run_on = [&](const Device& device) {
    Buffer<Half> dx = upload(device, x), dy = upload(device, y), dot = upload(device, std::vector<Half>(1));
    EXPECT_THAT(device.ask(Axpy{.dtype = DType::f16, .n = 5, .incx = -2, .alpha = 3, .x = dx, .y = dy}).wait(), IsOk());
    EXPECT_THAT(
        device.ask(Dot{.dtype = DType::f16, .n = 5, .incx = 2, .incy = -1, .x = dx, .y = dy, .result = dot}).wait(),
        IsOk());
    std::vector<Half> out = download(device, dy);
    out.push_back(download(device, dot)[0]);
    return bits_of(out);
  };
  EXPECT_EQ(run_on(device_), run_on(*isolated));
}

TEST_F(NarrowFloatTest, ImaginaryScalesAndResultsOfAnotherDtypeAreRefusedByName) {
  Buffer<Half> x = upload(std::vector<Half>(8)), y = upload(std::vector<Half>(8));
  Buffer<float> wide_result = upload(std::vector<float>(1));
  EXPECT_THAT(
      run(Scal{.dtype = DType::f16, .n = 8, .alpha = 1, .alpha_imag = 1, .x = x}),
      StatusIs(Code::invalid_argument, "blas::Scal: alpha_imag = 1 needs a complex dtype (c64 or c128), not f16"));
  EXPECT_THAT(run(Dot{.dtype = DType::f16, .n = 8, .x = x, .y = y, .result = wide_result}),
              StatusIs(Code::invalid_argument, "operand 'result' holds f32"));
  EXPECT_THAT(run(Nrm2{.dtype = DType::bf16, .n = 8, .x = x, .result = wide_result}),
              StatusIs(Code::invalid_argument, "operand 'x' holds f16"));
  EXPECT_THAT(run(Gemv{.dtype = DType::bf16, .m = 2, .n = 4, .a = x, .x = y, .y = wide_result}),
              StatusIs(Code::invalid_argument, "operand 'a' holds f16"));
}

}  // namespace
}  // namespace accel::blas
