// BLAS level 1 (Axpy, Scal, Dot, Nrm2, Asum, Iamax, Copy, Swap, Rot, Iamin) through cuBLAS against the CPU device on
// the same fresh random inputs: f32 and f64 (OpenBLAS on the CPU, itself checked against float64 references in
// level1_test), c64 and c128 (level1_complex_test), f16 and bf16 (cuBLAS's Ex routines against the CPU's f32 loops,
// narrow_float_test); odd and large sizes, every increment sign, empty vectors; on every way a CUDA device runs
// requests (each completion strategy, and isolated), so that the results written by cuBLAS's device pointer mode are
// seen to arrive in the result buffers. Skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <complex>
#include <initializer_list>
#include <utility>

#include "accel/libs/blas/level1.hpp"
#include "libs/blas/cuda_blas_fixture.hpp"
#include "operation/complex_dtypes.hpp"

namespace accel::blas {
namespace {

using accel::testing::HostArray;

// Dot's operands in [0.5, 1.5): with signs drawn at random the sum cancels (about 300 from terms summing 260,000 in
// magnitude at n = 2^20), and two correct f32 sums in different orders then differ by more than any fixed relative
// tolerance for some seeds (ACCEL_TEST_SEED=6021170081589239919: 1.2e-4).
void positive(HostArray& v) {
  for (std::size_t i = 0; i < v.values.size(); ++i) v.set(i, 1.0 + 0.5 * v.values[i]);
}

class CudaBlasLevel1Test : public CudaBlasFixture {
 protected:
  // Axpy, Dot, Scal, Nrm2, Asum and Iamax on real vectors: `tol` for what is written element by element, `sum_tol`
  // for the reductions.
  void level1(DType d, double tol, double sum_tol, std::int64_t n, std::int64_t incx, std::int64_t incy) {
    SCOPED_TRACE(fmt::format("level 1 {} n={} incx={} incy={}", to_string(d), n, incx, incy));
    compare(Axpy{.dtype = d, .n = n, .incx = incx, .incy = incy, .alpha = -0.75},
            {{&Axpy::x, d, span(n, incx)}, {&Axpy::y, d, span(n, incy), true}}, tol);
    compare(Dot{.dtype = d, .n = n, .incx = incx, .incy = incy},
            {{&Dot::x, d, span(n, incx), false, positive},
             {&Dot::y, d, span(n, incy), false, positive},
             {&Dot::result, d, 1, true}},
            sum_tol);
    if (incx < 0) return;
    compare(Scal{.dtype = d, .n = n, .incx = incx, .alpha = 1.5}, {{&Scal::x, d, span(n, incx), true}}, tol);
    compare(Nrm2{.dtype = d, .n = n, .incx = incx}, {{&Nrm2::x, d, span(n, incx)}, {&Nrm2::result, d, 1, true}},
            sum_tol);
    compare(Asum{.dtype = d, .n = n, .incx = incx}, {{&Asum::x, d, span(n, incx)}, {&Asum::result, d, 1, true}},
            sum_tol);
    compare(Iamax{.dtype = d, .n = n, .incx = incx},
            {{&Iamax::x, d, span(n, incx)}, {&Iamax::result, DType::i32, 1, true}}, 0);
  }
  template <class T>
  void level1(std::int64_t n, std::int64_t incx, std::int64_t incy) {
    level1(dtype_of<T>(), tolerance<T>(), tolerance<T>() * 10, n, incx, incy);
  }

  // Copy, Swap, Rot and Iamin; Swap and Rot compare both vectors.
  void level1_more(DType d, double tol, std::int64_t n, std::int64_t incx, std::int64_t incy) {
    SCOPED_TRACE(fmt::format("level 1 copy/swap/rot/iamin {} n={} incx={} incy={}", to_string(d), n, incx, incy));
    compare(Copy{.dtype = d, .n = n, .incx = incx, .incy = incy},
            {{&Copy::x, d, span(n, incx)}, {&Copy::y, d, span(n, incy), true}}, 0);
    compare(Swap{.dtype = d, .n = n, .incx = incx, .incy = incy},
            {{&Swap::x, d, span(n, incx), true}, {&Swap::y, d, span(n, incy), true}}, 0);
    compare(Rot{.dtype = d, .n = n, .incx = incx, .incy = incy, .c = 0.6, .s = -0.8},
            {{&Rot::x, d, span(n, incx), true}, {&Rot::y, d, span(n, incy), true}}, tol);
    if (incx < 0) return;
    compare(Iamin{.dtype = d, .n = n, .incx = incx},
            {{&Iamin::x, d, span(n, incx)}, {&Iamin::result, DType::i32, 1, true}}, 0);
  }
  template <class T>
  void level1_more(std::int64_t n, std::int64_t incx, std::int64_t incy) {
    level1_more(dtype_of<T>(), tolerance<T>(), n, incx, incy);
  }

  // Every level-1 routine on complex vectors: a complex alpha and a real one (the routines that scale by a real
  // factor), Dot with and without x conjugated, the real results of Nrm2 and Asum; Copy, Swap, Rot and Iamin as on
  // real vectors.
  template <class C>
  void level1_complex(std::int64_t n, std::int64_t incx, std::int64_t incy) {
    const DType d = dtype_of<C>(), part = real_dtype(d);
    SCOPED_TRACE(fmt::format("level 1 {} n={} incx={} incy={}", to_string(d), n, incx, incy));
    const double tol = d == DType::c64 ? 1e-5 : 1e-12;
    compare(Axpy{.dtype = d, .n = n, .incx = incx, .incy = incy, .alpha = -0.75, .alpha_imag = 0.5},
            {{&Axpy::x, d, span(n, incx)}, {&Axpy::y, d, span(n, incy), true}}, tol);
    for (const bool conjugate : {false, true})
      compare(Dot{.dtype = d, .n = n, .incx = incx, .incy = incy, .conjugate = conjugate},
              {{&Dot::x, d, span(n, incx), false, positive},
               {&Dot::y, d, span(n, incy), false, positive},
               {&Dot::result, d, 1, true}},
              tol * 10);
    level1_more(d, tol, n, incx, incy);  // Rot by real c and s, as csrot/zdrot
    if (incx < 0) return;
    for (const double imag : {0.0, 2.0})
      compare(Scal{.dtype = d, .n = n, .incx = incx, .alpha = 1.5, .alpha_imag = imag},
              {{&Scal::x, d, span(n, incx), true}}, tol);
    compare(Nrm2{.dtype = d, .n = n, .incx = incx}, {{&Nrm2::x, d, span(n, incx)}, {&Nrm2::result, part, 1, true}},
            tol * 10);
    compare(Asum{.dtype = d, .n = n, .incx = incx}, {{&Asum::x, d, span(n, incx)}, {&Asum::result, part, 1, true}},
            tol * 10);
    compare(Iamax{.dtype = d, .n = n, .incx = incx},
            {{&Iamax::x, d, span(n, incx)}, {&Iamax::result, DType::i32, 1, true}}, 0);
  }

  // Every level-1 routine on f16 or bf16 (cuBLAS's Ex routines against the CPU device's f32 loops): one rounding
  // apart at most, so a relative error of about the element type's unit in the last place; Copy, Swap and the indices
  // exactly.
  void level1_narrow(DType d, std::int64_t n, std::int64_t incx, std::int64_t incy) {
    const double tol = d == DType::f16 ? 1e-3 : 8e-3;
    level1(d, tol, tol, n, incx, incy);
    level1_more(d, tol, n, incx, incy);
  }
};

// Every shape of a test: each size with x's increment 1, 3 or -2 and y's 1 or -1.
template <class Check>
void for_every_shape(std::initializer_list<std::int64_t> sizes, Check check) {
  for (std::int64_t n : sizes)
    for (std::int64_t incx : {1, 3, -2})
      for (std::int64_t incy : {1, -1}) check(n, incx, incy);
}

TEST_P(CudaBlasLevel1Test, Level1MatchesTheCpuDeviceOnOddAndLargeSizesAndEveryIncrementSign) {
  for_every_shape({1, 37, 1000, 1 << 20}, [&](std::int64_t n, std::int64_t incx, std::int64_t incy) {
    level1<float>(n, incx, incy);
    level1<double>(n, incx, incy);
  });
  level1<float>(0, 1, 1);  // empty: zero results, written by the GPU too
}

TEST_P(CudaBlasLevel1Test, CopySwapRotIaminMatchTheCpuDeviceOnOddAndLargeSizesAndEveryIncrementSign) {
  for_every_shape({1, 37, 1000, 1 << 20}, [&](std::int64_t n, std::int64_t incx, std::int64_t incy) {
    level1_more<float>(n, incx, incy);
    level1_more<double>(n, incx, incy);
  });
  level1_more<double>(0, 1, 1);  // empty: nothing moves, and Iamin's result is 0 on the GPU too
}

TEST_P(CudaBlasLevel1Test, ComplexLevel1MatchesTheCpuDeviceOnOddAndLargeSizesAndEveryIncrementSign) {
  for_every_shape({1, 37, 1000, 1 << 19}, [&](std::int64_t n, std::int64_t incx, std::int64_t incy) {
    level1_complex<std::complex<float>>(n, incx, incy);
    level1_complex<std::complex<double>>(n, incx, incy);
  });
  level1_complex<std::complex<float>>(0, 1, 1);  // empty: zero results, written by the GPU too
}

TEST_P(CudaBlasLevel1Test, NarrowLevel1MatchesTheCpuDeviceOnOddAndLargeSizesAndEveryIncrementSign) {
  // Up to 2^15 elements: Asum of more values in [-1, 1] would pass f16's largest, 65,504.
  for_every_shape({1, 37, 1000, 1 << 15}, [&](std::int64_t n, std::int64_t incx, std::int64_t incy) {
    for (DType d : {DType::f16, DType::bf16}) level1_narrow(d, n, incx, incy);
  });
  level1_narrow(DType::bf16, 0, 1, 1);  // empty: zero results, written by the GPU too
}

TEST_P(CudaBlasLevel1Test, NarrowAsumAndDotOfManyBlocksMatchTheCpuDevice) {
  // Up to 65,536 elements the 16-bit sum kernel runs one block; from 65,537 blocks that each leave an f32 sum, added by
  // a second kernel: whole and partial 16-byte loads (n = 2^20, 3,000,001) and strided vectors, Dot's running backwards
  // too. Asum's f16 values scaled by 1/64 keep its sum far below f16's largest (about n / 128), Dot's positive ones by
  // 1/16 (about n / 256).
  const auto small = [](HostArray& v) {
    for (std::size_t i = 0; i < v.values.size(); ++i) v.set(i, v.values[i] / 64);
  };
  const auto small_positive = [](HostArray& v) {
    for (std::size_t i = 0; i < v.values.size(); ++i) v.set(i, (1.0 + 0.5 * v.values[i]) / 16);
  };
  for (std::int64_t n : {std::int64_t{65536}, std::int64_t{65537}, std::int64_t{1} << 20, std::int64_t{3'000'001}}) {
    for (std::int64_t incx : {1, 3}) {
      SCOPED_TRACE(fmt::format("asum n={} incx={}", n, incx));
      compare(Asum{.dtype = DType::bf16, .n = n, .incx = incx},
              {{&Asum::x, DType::bf16, span(n, incx)}, {&Asum::result, DType::bf16, 1, true}}, 8e-3);
      if (n < 3'000'000)
        compare(Asum{.dtype = DType::f16, .n = n, .incx = incx},
                {{&Asum::x, DType::f16, span(n, incx), false, small}, {&Asum::result, DType::f16, 1, true}}, 1e-3);
    }
    for (const auto& [incx, incy] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, -1}, {-2, 1}}) {
      SCOPED_TRACE(fmt::format("dot n={} incx={} incy={}", n, incx, incy));
      for (const DType d : {DType::f16, DType::bf16})
        compare(Dot{.dtype = d, .n = n, .incx = incx, .incy = incy},
                {{&Dot::x, d, span(n, incx), false, small_positive},
                 {&Dot::y, d, span(n, incy), false, small_positive},
                 {&Dot::result, d, 1, true}},
                d == DType::f16 ? 1e-3 : 8e-3);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, CudaBlasLevel1Test, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel::blas
