// The BLAS family's request examples (request_examples.hpp says what they are for and how they are built).
#pragma once

#include "accel/libs/blas/requests.hpp"
#include "request_example_basics.hpp"

namespace accel::fuzzing {

// blas levels 1-3: odd sizes, a negative increment, strided batches.
inline blas::Axpy example(For<blas::Axpy>) {
  auto r = blas::Axpy();
  r.n = 5, r.incx = -2, r.alpha = 0.5, r.x = buffer(1, DType::f32, 9), r.y = buffer(2, DType::f32, 5);
  return r;
}
inline blas::Scal example(For<blas::Scal>) {
  auto r = blas::Scal();
  r.dtype = DType::f64, r.n = 3, r.incx = 2, r.alpha = 2, r.x = buffer(1, DType::f64, 5);
  return r;
}
inline blas::Dot example(For<blas::Dot>) {
  auto r = blas::Dot();
  r.n = 4, r.incy = -1, r.x = buffer(1, DType::f32, 4), r.y = buffer(2, DType::f32, 4);
  r.result = buffer(3, DType::f32, 1);
  return r;
}
inline blas::Nrm2 example(For<blas::Nrm2>) {
  auto r = blas::Nrm2();
  r.dtype = DType::f64, r.n = 6, r.x = buffer(1, DType::f64, 6), r.result = buffer(2, DType::f64, 1);
  return r;
}
inline blas::Asum example(For<blas::Asum>) {
  auto r = blas::Asum();
  r.n = 3, r.incx = 3, r.x = buffer(1, DType::f32, 7), r.result = buffer(2, DType::f32, 1);
  return r;
}
inline blas::Iamax example(For<blas::Iamax>) {
  auto r = blas::Iamax();
  r.n = 5, r.x = buffer(1, DType::f32, 5), r.result = buffer(2, DType::i32, 1);
  return r;
}
inline blas::Copy example(For<blas::Copy>) {
  auto r = blas::Copy();
  r.dtype = DType::f64, r.n = 4, r.incy = -2, r.x = buffer(1, DType::f64, 4), r.y = buffer(2, DType::f64, 7);
  return r;
}
inline blas::Swap example(For<blas::Swap>) {
  auto r = blas::Swap();
  r.n = 3, r.incx = 3, r.incy = -1, r.x = buffer(1, DType::f32, 7), r.y = buffer(2, DType::f32, 3);
  return r;
}
inline blas::Rot example(For<blas::Rot>) {
  auto r = blas::Rot();
  r.dtype = DType::f64, r.n = 5, r.incx = -1, r.c = 0.6, r.s = 0.8;
  r.x = buffer(1, DType::f64, 5), r.y = buffer(2, DType::f64, 5);
  return r;
}
inline blas::Iamin example(For<blas::Iamin>) {
  auto r = blas::Iamin();
  r.dtype = DType::f64, r.n = 4, r.incx = 2, r.x = buffer(1, DType::f64, 7), r.result = buffer(2, DType::i32, 1);
  return r;
}
inline blas::Gemv example(For<blas::Gemv>) {
  auto r = blas::Gemv();
  r.transpose = Transpose::transpose, r.m = 5, r.n = 3, r.incx = -1, r.batch = 2, r.beta = 1;
  r.a = buffer(1, DType::f32, 30), r.x = buffer(2, DType::f32, 10), r.y = buffer(3, DType::f32, 6);
  return r;
}
inline blas::Ger example(For<blas::Ger>) {
  auto r = blas::Ger();
  r.m = 3, r.n = 4, r.lda = 5, r.incy = -1, r.batch = 2, r.alpha = 0.5;
  r.a = buffer(1, DType::f32, 40), r.x = buffer(2, DType::f32, 6), r.y = buffer(3, DType::f32, 8);
  return r;
}
inline blas::Trsv example(For<blas::Trsv>) {
  auto r = blas::Trsv();
  r.dtype = DType::f64, r.fill = blas::Fill::upper, r.transpose = Transpose::transpose;
  r.diagonal = blas::Diagonal::unit, r.n = 4, r.incx = -2, r.a = buffer(1, DType::f64, 16);
  r.x = buffer(2, DType::f64, 7);
  return r;
}
inline blas::Symv example(For<blas::Symv>) {
  auto r = blas::Symv();
  r.fill = blas::Fill::upper, r.n = 3, r.incx = 2, r.batch = 2, r.alpha = 2, r.beta = 1;
  r.a = buffer(1, DType::f32, 18), r.x = buffer(2, DType::f32, 10), r.y = buffer(3, DType::f32, 6);
  return r;
}
inline blas::Trsm example(For<blas::Trsm>) {
  auto r = blas::Trsm();
  r.dtype = DType::f64, r.side = blas::Side::right, r.fill = blas::Fill::upper, r.diagonal = blas::Diagonal::unit;
  r.m = 3, r.n = 4, r.a = buffer(1, DType::f64, 16), r.b = buffer(2, DType::f64, 12);
  return r;
}
inline blas::Syrk example(For<blas::Syrk>) {
  auto r = blas::Syrk();
  r.transpose = Transpose::transpose, r.n = 3, r.k = 5, r.batch = 2, r.alpha = 2;
  r.a = buffer(1, DType::f32, 30), r.c = buffer(2, DType::f32, 18);
  return r;
}
inline blas::Symm example(For<blas::Symm>) {
  auto r = blas::Symm();
  r.dtype = DType::f64, r.side = blas::Side::right, r.fill = blas::Fill::upper, r.m = 3, r.n = 2, r.ldc = 4;
  r.batch = 2, r.alpha = 0.5, r.beta = 1;
  r.a = buffer(1, DType::f64, 8), r.b = buffer(2, DType::f64, 12), r.c = buffer(3, DType::f64, 16);
  return r;
}
inline blas::Trmm example(For<blas::Trmm>) {
  auto r = blas::Trmm();
  r.transpose = Transpose::transpose, r.diagonal = blas::Diagonal::unit, r.m = 3, r.n = 5, r.alpha = 2;
  r.a = buffer(1, DType::f32, 9), r.b = buffer(2, DType::f32, 15);
  return r;
}
inline blas::Geam example(For<blas::Geam>) {
  auto r = blas::Geam();
  r.transpose_a = Transpose::transpose, r.m = 2, r.n = 3, r.batch = 2, r.alpha = 1, r.beta = -1;
  r.a = buffer(1, DType::f32, 12), r.b = buffer(2, DType::f32, 12), r.c = buffer(3, DType::f32, 12);
  return r;
}

}  // namespace accel::fuzzing
