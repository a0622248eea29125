/// @file
/// BLAS level 1: vector requests on f32, f64, c64, c128, f16 or bf16 (OpenBLAS on the CPU device, cuBLAS on CUDA):
///   Axpy   y = alpha x + y
///   Scal   x = alpha x
///   Dot    result = xᵀ y (complex: xᴴ y when `conjugate`)
///   Nrm2   result = ‖x‖₂
///   Asum   result = Σ |x_i| (complex: Σ |Re x_i| + |Im x_i|, as BLAS)
///   Iamax  result = the 1-based index of the first element of largest |x_i| (0 for an empty x), as BLAS counts
///   Copy   y = x
///   Swap   x, y = y, x
///   Rot    x, y = c x + s y, c y - s x (a plane rotation; real c and s on complex vectors too)
///   Iamin  result = the 1-based index of the first element of smallest |x_i| (0 for an empty x), as BLAS counts
///
/// On complex vectors a scale has an imaginary part (`alpha_imag`), Nrm2 and Asum give a real result (f32 for c64, f64
/// for c128) and Iamax and Iamin compare |Re x_i| + |Im x_i|, as BLAS's complex routines do.
///
/// On f16 and bf16 vectors each routine computes in f32 and rounds what it writes once, to nearest even, as cuBLAS's Ex
/// routines (cublasAxpyEx, cublasDotEx, ...) do: alpha is taken as an f32, Rot's c and s are rounded to the element
/// type first, and Dot, Nrm2 and Asum write a result of the element type (the CPU device sums in double, then rounds).
/// Copy and Swap move the bits as they are.
///
/// A vector of n elements lies in its buffer one element every `inc` elements. A negative increment walks the vector
/// backwards from the end of the same memory, as in BLAS: element i of x is at (n - 1 - i) * |incx| when incx < 0.
/// Either way the vector spans (n - 1) * |inc| + 1 elements from the buffer's start. An increment of 0 is refused;
/// Scal, Nrm2, Asum, Iamax and Iamin take positive increments only (BLAS does nothing for the others there).
///
/// The scalar results (Dot, Nrm2, Asum, Iamax, Iamin) are written into a buffer on the device, as cuBLAS's device
/// pointer mode writes them, so that the request never waits for the GPU: one element of the dtype (i32 for Iamax and
/// Iamin, the real part's dtype for a complex Nrm2 or Asum) at the start of `result`, which must be a buffer of its
/// own. Sizes and increments must fit the 32-bit integers of BLAS and cuBLAS. A request is checked whole before
/// anything runs, naming what was wrong.
///
/// @code
///   accel::blas::Dot dot{.dtype = accel::DType::f64, .n = 1000, .x = x, .y = y, .result = sum};
///   accel::Status s = device.ask(dot).wait().status();  // then download `sum`, one f64
/// @endcode
#pragma once

#include <cstdint>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/result.hpp"

namespace accel::blas {

/// y = alpha x + y on n elements (y may not share x's buffer).
struct Axpy {
  static constexpr const char* kName = "blas::Axpy";
  using Response = Done;

  DType dtype = DType::f32;  ///< element type of x and y: f32, f64, c64, c128, f16 or bf16
  std::int64_t n = 0;        ///< elements of x and y
  std::int64_t incx = 1;     ///< x's increment, not 0 (negative: backwards)
  std::int64_t incy = 1;     ///< y's increment, not 0 (negative: backwards)
  double alpha = 1.0;        ///< scales x (its real part, for c64 and c128)
  double alpha_imag = 0.0;   ///< alpha's imaginary part: c64 and c128 only (0 for f32 and f64)
  BufferHandle x;            ///< read
  BufferHandle y;            ///< read and written
};

/// x = alpha x on n elements, in place.
struct Scal {
  static constexpr const char* kName = "blas::Scal";
  using Response = Done;

  DType dtype = DType::f32;  ///< element type of x: f32, f64, c64, c128, f16 or bf16
  std::int64_t n = 0;        ///< elements of x
  std::int64_t incx = 1;     ///< x's increment, positive
  double alpha = 1.0;        ///< the factor (its real part, for c64 and c128)
  double alpha_imag = 0.0;   ///< alpha's imaginary part: c64 and c128 only (0 for f32 and f64)
  BufferHandle x;            ///< read and written
};

/// result = Σ x_i y_i over n elements (0 for n = 0), accumulated in the dtype; complex vectors: Σ conj(x_i) y_i with
/// `conjugate` (BLAS's dotc), Σ x_i y_i without (dotu).
struct Dot {
  static constexpr const char* kName = "blas::Dot";
  using Response = Done;

  DType dtype = DType::f32;  ///< element type of x, y and the result: f32, f64, c64, c128, f16 or bf16
  std::int64_t n = 0;        ///< elements of x and y
  std::int64_t incx = 1;     ///< x's increment, not 0 (negative: backwards)
  std::int64_t incy = 1;     ///< y's increment, not 0 (negative: backwards)
  bool conjugate = false;    ///< c64 and c128: x conjugated (no effect on f32 and f64)
  BufferHandle x;            ///< read
  BufferHandle y;            ///< read
  BufferHandle result;       ///< written: one element of the dtype
};

/// result = the Euclidean norm of x (0 for n = 0), computed without overflow for large elements; real for complex x.
struct Nrm2 {
  static constexpr const char* kName = "blas::Nrm2";
  using Response = Done;

  DType dtype = DType::f32;  ///< element type of x: f32, f64, c64, c128, f16 or bf16
  std::int64_t n = 0;        ///< elements of x
  std::int64_t incx = 1;     ///< x's increment, positive
  BufferHandle x;            ///< read
  BufferHandle result;       ///< written: one element of the real part's dtype (f32 for f32 and c64)
};

/// result = Σ |x_i| over n elements (0 for n = 0); Σ |Re x_i| + |Im x_i| for complex x, as BLAS.
struct Asum {
  static constexpr const char* kName = "blas::Asum";
  using Response = Done;

  DType dtype = DType::f32;  ///< element type of x: f32, f64, c64, c128, f16 or bf16
  std::int64_t n = 0;        ///< elements of x
  std::int64_t incx = 1;     ///< x's increment, positive
  BufferHandle x;            ///< read
  BufferHandle result;       ///< written: one element of the real part's dtype (f32 for f32 and c64)
};

/// result = the smallest 1-based i of largest |x_i| (|Re x_i| + |Im x_i| for complex x) (0 for n = 0), as BLAS's
/// i?amax and cuBLAS count.
struct Iamax {
  static constexpr const char* kName = "blas::Iamax";
  using Response = Done;

  DType dtype = DType::f32;  ///< element type of x: f32, f64, c64, c128, f16 or bf16
  std::int64_t n = 0;        ///< elements of x
  std::int64_t incx = 1;     ///< x's increment, positive
  BufferHandle x;            ///< read
  BufferHandle result;       ///< written: one i32
};

/// y = x on n elements (y may not share x's buffer).
struct Copy {
  static constexpr const char* kName = "blas::Copy";
  using Response = Done;

  DType dtype = DType::f32;  ///< element type of x and y: f32, f64, c64, c128, f16 or bf16
  std::int64_t n = 0;        ///< elements of x and y
  std::int64_t incx = 1;     ///< x's increment, not 0 (negative: backwards)
  std::int64_t incy = 1;     ///< y's increment, not 0 (negative: backwards)
  BufferHandle x;            ///< read
  BufferHandle y;            ///< written
};

/// Exchanges x and y on n elements (in two different buffers).
struct Swap {
  static constexpr const char* kName = "blas::Swap";
  using Response = Done;

  DType dtype = DType::f32;  ///< element type of x and y: f32, f64, c64, c128, f16 or bf16
  std::int64_t n = 0;        ///< elements of x and y
  std::int64_t incx = 1;     ///< x's increment, not 0 (negative: backwards)
  std::int64_t incy = 1;     ///< y's increment, not 0 (negative: backwards)
  BufferHandle x;            ///< read and written
  BufferHandle y;            ///< read and written
};

/// Applies the plane rotation [c s; -s c] to the pairs (x_i, y_i): x_i = c x_i + s y_i, y_i = c y_i - s x_i (c and s
/// real for complex vectors too, as BLAS's csrot and zdrot).
struct Rot {
  static constexpr const char* kName = "blas::Rot";
  using Response = Done;

  DType dtype = DType::f32;  ///< element type of x and y: f32, f64, c64, c128, f16 or bf16
  std::int64_t n = 0;        ///< elements of x and y
  std::int64_t incx = 1;     ///< x's increment, not 0 (negative: backwards)
  std::int64_t incy = 1;     ///< y's increment, not 0 (negative: backwards)
  double c = 1.0;            ///< the rotation's cosine
  double s = 0.0;            ///< the rotation's sine
  BufferHandle x;            ///< read and written
  BufferHandle y;            ///< read and written
};

/// result = the smallest 1-based i of smallest |x_i| (|Re x_i| + |Im x_i| for complex x) (0 for n = 0), as BLAS's
/// i?amin and cuBLAS count.
struct Iamin {
  static constexpr const char* kName = "blas::Iamin";
  using Response = Done;

  DType dtype = DType::f32;  ///< element type of x: f32, f64, c64, c128, f16 or bf16
  std::int64_t n = 0;        ///< elements of x
  std::int64_t incx = 1;     ///< x's increment, positive
  BufferHandle x;            ///< read
  BufferHandle result;       ///< written: one i32
};

}  // namespace accel::blas
