// The element types of level 1's vectors (f32, f64, c64, c128) as the CPU and CUDA halves of its contract call them:
// a request's scalar in the element type, and the call for a validated dtype (operation/complex_dtypes.hpp says what a
// complex type's part is).
#pragma once

#include <complex>
#include <type_traits>
#include <utility>

#include "accel/core/dtype.hpp"
#include "operation/complex_dtypes.hpp"

namespace accel::blas {

// A request's scalar (real and imaginary parts) in the element type; the imaginary part is 0 for a real type
// (validation refused any other).
template <class T>
[[nodiscard]] T scalar(double real, double imag) {
  if constexpr (kComplex<T>) {
    return T(static_cast<part_t<T>>(real), static_cast<part_t<T>>(imag));
  } else {
    static_cast<void>(imag);
    return static_cast<T>(real);
  }
}

// Calls f(std::type_identity<T>{}) with T the element type of a validated dtype: float, double, std::complex<float> or
// std::complex<double>.
template <class F>
decltype(auto) with_vector_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f64: return std::forward<F>(f)(std::type_identity<double>{});
    case DType::c64: return std::forward<F>(f)(std::type_identity<std::complex<float>>{});
    case DType::c128: return std::forward<F>(f)(std::type_identity<std::complex<double>>{});
    default: return std::forward<F>(f)(std::type_identity<float>{});
  }
}

}  // namespace accel::blas
