// BLAS level 1 on complex vectors (c64, c128) on the CPU device against std::complex<double> references written here,
// over odd sizes and positive and negative increments: a complex alpha and a real one, Dot with and without x
// conjugated, the real results of Nrm2 and Asum, Iamax and Iamin by |Re| + |Im|, and what is refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "accel/libs/blas/level1.hpp"
#include "libs/blas/blas_testing.hpp"

namespace accel::blas {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using testing::vector_at;
using testing::vector_span;
using Exact = std::complex<double>;

constexpr std::int64_t kSizes[] = {1, 7, 33, 130};
constexpr std::int64_t kIncrements[] = {1, 2, -1, -3};
constexpr std::int64_t kPositiveIncrements[] = {1, 2, 5};

template <class C>
constexpr double kTolerance = sizeof(C) == 8 ? 2e-5 : 1e-12;

// sqrt(Σ |got - want|²) / sqrt(Σ |want|²).
template <class C>
double relative_error(const std::vector<C>& got, const std::vector<Exact>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const Exact g(got[i].real(), got[i].imag());
    if (!std::isfinite(g.real()) || !std::isfinite(g.imag())) return INFINITY;
    diff += std::norm(g - want[i]);
    norm += std::norm(want[i]);
  }
  return std::sqrt(diff / std::max(norm, 1e-300));
}

template <class C>
std::vector<Exact> exact(const std::vector<C>& values) {
  std::vector<Exact> out;
  for (const C& v : values) out.emplace_back(v.real(), v.imag());
  return out;
}

double magnitude_sum(Exact v) { return std::abs(v.real()) + std::abs(v.imag()); }

class Level1ComplexTest : public testing::BlasDeviceTest {
 protected:
  template <class C>
  std::vector<C> random_complex(std::uint64_t n) {
    std::uniform_real_distribution<double> dist(-1, 1);
    std::vector<C> v(std::max<std::uint64_t>(n, 1));
    for (C& x : v)
      x = C(static_cast<typename C::value_type>(dist(rng_)), static_cast<typename C::value_type>(dist(rng_)));
    return v;
  }

  template <class C>
  void check_axpy_scal(std::int64_t n, std::int64_t incx, std::int64_t incy, Exact alpha) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " incx=" << incx << " incy=" << incy << " alpha=" << alpha);
    const std::vector<C> x = random_complex<C>(vector_span(n, incx)), y = random_complex<C>(vector_span(n, incy) + 2);
    Buffer<C> dx = upload(x), dy = upload(y);
    ASSERT_THAT(run(Axpy{.dtype = dtype_of<C>(),
                         .n = n,
                         .incx = incx,
                         .incy = incy,
                         .alpha = alpha.real(),
                         .alpha_imag = alpha.imag(),
                         .x = dx,
                         .y = dy}),
                IsOk());
    const std::vector<Exact> ex = exact(x);
    std::vector<Exact> want = exact(y);  // elements outside the vector's steps stay as they were
    for (std::int64_t i = 0; i < n; ++i) want[vector_at(i, n, incy)] += alpha * ex[vector_at(i, n, incx)];
    EXPECT_LE(relative_error(download(dy), want), kTolerance<C>);
    if (incx < 0) return;  // Scal takes positive increments only
    ASSERT_THAT(
        run(Scal{
            .dtype = dtype_of<C>(), .n = n, .incx = incx, .alpha = alpha.real(), .alpha_imag = alpha.imag(), .x = dx}),
        IsOk());
    std::vector<Exact> scaled = ex;
    for (std::int64_t i = 0; i < n; ++i) scaled[i * incx] *= alpha;
    EXPECT_LE(relative_error(download(dx), scaled), kTolerance<C>);
  }

  template <class C>
  void check_reductions(std::int64_t n, std::int64_t incx, std::int64_t incy) {
    using Part = typename C::value_type;
    SCOPED_TRACE(::testing::Message() << "n=" << n << " incx=" << incx << " incy=" << incy);
    const std::vector<C> x = random_complex<C>(vector_span(n, incx)), y = random_complex<C>(vector_span(n, incy));
    Buffer<C> dx = upload(x), dy = upload(y);
    const DType dtype = dtype_of<C>();
    const std::vector<Exact> ex = exact(x), ey = exact(y);
    Exact dotu = 0, dotc = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const Exact xi = ex[vector_at(i, n, incx)], yi = ey[vector_at(i, n, incy)];
      dotu += xi * yi;
      dotc += std::conj(xi) * yi;
    }
    const Dot dot{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .x = dx, .y = dy};
    Dot conjugated = dot;
    conjugated.conjugate = true;
    EXPECT_LE(relative_error(std::vector<C>{reduce<C>(dot)}, {dotu}), kTolerance<C> * 4);
    EXPECT_LE(relative_error(std::vector<C>{reduce<C>(conjugated)}, {dotc}), kTolerance<C> * 4);
    if (incx < 0) return;  // the rest take positive increments only

    double sum_squares = 0, sum_magnitudes = 0, largest = -1, smallest = INFINITY;
    std::int32_t largest_at = 0, smallest_at = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const Exact v = ex[i * incx];
      sum_squares += std::norm(v);
      sum_magnitudes += magnitude_sum(v);
      if (magnitude_sum(v) > largest) largest = magnitude_sum(v), largest_at = static_cast<std::int32_t>(i + 1);
      if (magnitude_sum(v) < smallest) smallest = magnitude_sum(v), smallest_at = static_cast<std::int32_t>(i + 1);
    }
    EXPECT_NEAR(reduce<Part>(Nrm2{.dtype = dtype, .n = n, .incx = incx, .x = dx}), std::sqrt(sum_squares),
                kTolerance<C> * std::sqrt(sum_squares) * 4);
    EXPECT_NEAR(reduce<Part>(Asum{.dtype = dtype, .n = n, .incx = incx, .x = dx}), sum_magnitudes,
                kTolerance<C> * sum_magnitudes * 4);
    EXPECT_EQ(reduce<std::int32_t>(Iamax{.dtype = dtype, .n = n, .incx = incx, .x = dx}), largest_at);
    EXPECT_EQ(reduce<std::int32_t>(Iamin{.dtype = dtype, .n = n, .incx = incx, .x = dx}), smallest_at);
  }

  // Copy, Swap and Rot (real c and s) on the same x and y, each from fresh buffers.
  template <class C>
  void check_copy_swap_rot(std::int64_t n, std::int64_t incx, std::int64_t incy) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " incx=" << incx << " incy=" << incy);
    const std::vector<C> x = random_complex<C>(vector_span(n, incx) + 1),
                         y = random_complex<C>(vector_span(n, incy) + 2);
    const DType dtype = dtype_of<C>();
    const double c = 0.6, s = -0.8;
    const std::vector<Exact> ex = exact(x), ey = exact(y);
    std::vector<Exact> copied = ey, swapped_x = ex, swapped_y = ey, rotated_x = ex, rotated_y = ey;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t at_x = vector_at(i, n, incx), at_y = vector_at(i, n, incy);
      const Exact xi = ex[at_x], yi = ey[at_y];
      copied[at_y] = xi;
      swapped_x[at_x] = yi, swapped_y[at_y] = xi;
      rotated_x[at_x] = c * xi + s * yi, rotated_y[at_y] = c * yi - s * xi;
    }
    {
      Buffer<C> dx = upload(x), dy = upload(y);
      ASSERT_THAT(run(Copy{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .x = dx, .y = dy}), IsOk());
      EXPECT_EQ(relative_error(download(dy), copied), 0.0);
      EXPECT_EQ(download(dx), x);
    }
    {
      Buffer<C> dx = upload(x), dy = upload(y);
      ASSERT_THAT(run(Swap{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .x = dx, .y = dy}), IsOk());
      EXPECT_EQ(relative_error(download(dx), swapped_x), 0.0);
      EXPECT_EQ(relative_error(download(dy), swapped_y), 0.0);
    }
    Buffer<C> dx = upload(x), dy = upload(y);
    ASSERT_THAT(run(Rot{.dtype = dtype, .n = n, .incx = incx, .incy = incy, .c = c, .s = s, .x = dx, .y = dy}), IsOk());
    EXPECT_LE(relative_error(download(dx), rotated_x), kTolerance<C>);
    EXPECT_LE(relative_error(download(dy), rotated_y), kTolerance<C>);
  }
};

TEST_F(Level1ComplexTest, AxpyAndScalMatchTheReferenceForComplexAndRealFactors) {
  for (std::int64_t n : kSizes)
    for (std::int64_t incx : kIncrements)
      for (std::int64_t incy : kIncrements) {
        check_axpy_scal<std::complex<float>>(n, incx, incy, {0.75, -1.25});
        check_axpy_scal<std::complex<double>>(n, incx, incy, {-1.5, 0.5});
        check_axpy_scal<std::complex<double>>(n, incx, incy, {2.5, 0});  // a real factor: zdscal's path
      }
  for (std::int64_t incx : kPositiveIncrements) check_axpy_scal<std::complex<float>>(33, incx, 1, {-0.5, 0});
}

TEST_F(Level1ComplexTest, DotWithAndWithoutConjugateNrm2AsumIamaxIaminMatchTheReference) {
  for (std::int64_t n : kSizes)
    for (std::int64_t incx : kIncrements)
      for (std::int64_t incy : {std::int64_t{1}, std::int64_t{-2}}) {
        check_reductions<std::complex<float>>(n, incx, incy);
        check_reductions<std::complex<double>>(n, incx, incy);
      }
}

TEST_F(Level1ComplexTest, CopySwapAndRotMatchTheReferenceForEveryIncrementSign) {
  for (std::int64_t n : kSizes)
    for (std::int64_t incx : kIncrements)
      for (std::int64_t incy : kIncrements) {
        check_copy_swap_rot<std::complex<float>>(n, incx, incy);
        check_copy_swap_rot<std::complex<double>>(n, incx, incy);
      }
}

TEST_F(Level1ComplexTest, IamaxAndIaminCompareTheSumOfThePartsMagnitudesAsBlas) {
  // |3 + 0i| = 3 > |2 + 2i| = 2.83, but BLAS compares 3 against 4; the first of equal sums wins.
  using C = std::complex<double>;
  Buffer<C> x = upload(std::vector<C>{{3, 0}, {2, 2}, {0, -4}, {0.5, 0}, {0, 0.5}});
  EXPECT_EQ(reduce<std::int32_t>(Iamax{.dtype = DType::c128, .n = 5, .x = x}), 2);
  EXPECT_EQ(reduce<std::int32_t>(Iamin{.dtype = DType::c128, .n = 5, .x = x}), 4);
  EXPECT_EQ(reduce<double>(Asum{.dtype = DType::c128, .n = 5, .x = x}), 12.0);
}

TEST_F(Level1ComplexTest, RequestsCrossToAnIsolatedWorkerWithTheSameResults) {
  Result<Device> isolated = Device::open(system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  using C = std::complex<float>;
  const std::vector<C> x = random_complex<C>(9), y = random_complex<C>(5);
  auto run_on = [&](const Device& device) {
    Buffer<C> dx = upload(device, x), dy = upload(device, y), dot = upload(device, std::vector<C>{0});
    EXPECT_THAT(
        device.ask(Axpy{.dtype = DType::c64, .n = 5, .incx = -2, .alpha = 3, .alpha_imag = -1, .x = dx, .y = dy})
            .wait(),
        IsOk());
    EXPECT_THAT(
        device
            .ask(Dot{
                .dtype = DType::c64, .n = 5, .incx = 2, .incy = -1, .conjugate = true, .x = dx, .y = dy, .result = dot})
            .wait(),
        IsOk());
    std::vector<C> out = download(device, dy);
    out.push_back(download(device, dot)[0]);
    return out;
  };
  EXPECT_EQ(run_on(device_), run_on(*isolated));
}

TEST_F(Level1ComplexTest, ImaginaryScalesOnRealVectorsAndResultsOfTheWrongDtypeAreRefusedByName) {
  Buffer<float> real = upload(std::vector<float>(8));
  Buffer<std::complex<float>> x = upload(std::vector<std::complex<float>>(8));
  Buffer<std::complex<float>> y = upload(std::vector<std::complex<float>>(8));
  Buffer<std::complex<float>> complex_result = upload(std::vector<std::complex<float>>(1));
  EXPECT_THAT(
      run(Axpy{.n = 4, .alpha_imag = 1, .x = real, .y = real}),
      StatusIs(Code::invalid_argument, "blas::Axpy: alpha_imag = 1 needs a complex dtype (c64 or c128), not f32"));
  EXPECT_THAT(run(Scal{.dtype = DType::f64, .n = 4, .alpha_imag = -2, .x = real}),
              StatusIs(Code::invalid_argument, "blas::Scal: alpha_imag = -2"));
  EXPECT_THAT(run(Nrm2{.dtype = DType::c64, .n = 4, .x = x, .result = complex_result}),
              StatusIs(Code::invalid_argument, "operand 'result' holds c64"));
  EXPECT_THAT(run(Asum{.dtype = DType::c64, .n = 4, .x = x, .result = complex_result}),
              StatusIs(Code::invalid_argument, "operand 'result' holds c64"));
  EXPECT_THAT(run(Dot{.dtype = DType::c64, .n = 4, .x = x, .y = y, .result = real}),
              StatusIs(Code::invalid_argument, "operand 'result' holds f32"));
  EXPECT_THAT(run(Axpy{.dtype = DType::c64, .n = 4, .x = real, .y = y}),
              StatusIs(Code::invalid_argument, "operand 'x' holds f32"));
  EXPECT_THAT(run(Copy{.dtype = DType::c32, .n = 4, .x = x, .y = y}),
              StatusIs(Code::not_supported,
                       "blas::Copy: dtype c32 is not supported; it takes f32, f64, c64, c128, f16 or bf16"));
}

}  // namespace
}  // namespace accel::blas
