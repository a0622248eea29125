// What the families that take complex elements (the dense solvers, BLAS level 1) say of a complex dtype's parts.
#pragma once

#include "accel/core/dtype.hpp"

namespace accel {

// The dtype of a complex dtype's parts (f32 for c64, f64 for c128); a real dtype itself.
[[nodiscard]] constexpr DType real_dtype(DType dtype) noexcept {
  return dtype == DType::c64 ? DType::f32 : dtype == DType::c128 ? DType::f64 : dtype;
}

}  // namespace accel
