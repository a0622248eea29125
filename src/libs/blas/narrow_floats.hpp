// The 16-bit floats (f16, bf16) of the BLAS requests that take them (level 1, Gemv) as the CPU device's loops read
// and write them: the element types, rounding from f32 (to nearest even), and a vector's elements where BLAS puts them.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "accel/core/dtype.hpp"

namespace accel::blas {

// f16 or bf16: the dtypes these routines take in place of cblas's.
[[nodiscard]] constexpr bool is_narrow_float(DType dtype) noexcept {
  return dtype == DType::f16 || dtype == DType::bf16;
}

// Calls f(std::type_identity<N>{}) with N Half or BFloat16, for a dtype that is_narrow_float.
template <class F>
decltype(auto) with_narrow_type(DType dtype, F&& f) {
  if (dtype == DType::bf16) return std::forward<F>(f)(std::type_identity<BFloat16>{});
  return std::forward<F>(f)(std::type_identity<Half>{});
}

// `value` rounded to N.
template <class N>
[[nodiscard]] N narrow(float value) noexcept {
  if constexpr (std::is_same_v<N, Half>) {
    return to_half(value);
  } else {
    return to_bfloat16(value);
  }
}

// An n-element vector of increment inc over `data`, element i where BLAS puts it (a negative increment walks
// backwards from the span's end).
template <class N>
struct Strided {
  N* data;
  std::int64_t n;
  std::int64_t inc;

  N& operator[](std::int64_t i) const { return data[inc > 0 ? i * inc : (n - 1 - i) * -inc]; }
  [[nodiscard]] float value(std::int64_t i) const { return to_float((*this)[i]); }
};

}  // namespace accel::blas
