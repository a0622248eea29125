// What the families that take complex elements (the dense solvers, BLAS level 1) say of a complex dtype's parts, and
// of a complex element type's.
#pragma once

#include <complex>
#include <type_traits>

#include "accel/core/dtype.hpp"

namespace accel {

template <class T>
struct PartOf {
  using type = T;
};
template <class P>
struct PartOf<std::complex<P>> {
  using type = P;
};
// float for float and std::complex<float>; double for double and std::complex<double>.
template <class T>
using part_t = typename PartOf<T>::type;
template <class T>
inline constexpr bool kComplex = !std::is_same_v<T, part_t<T>>;

// The dtype of a complex dtype's parts (f32 for c64, f64 for c128); a real dtype itself.
[[nodiscard]] constexpr DType real_dtype(DType dtype) noexcept {
  return dtype == DType::c64 ? DType::f32 : dtype == DType::c128 ? DType::f64 : dtype;
}

}  // namespace accel
