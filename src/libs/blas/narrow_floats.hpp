// The 16-bit floats (f16, bf16) of the BLAS requests that take them (level 1, Gemv) as the CPU device's loops read
// and write them: the element types, rounding from f32 (to nearest even), a vector's elements where BLAS puts them,
// and chunks of them widened and rounded at once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include "accel/core/dtype.hpp"
#include "core/float_arrays.hpp"

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

// The loops widen and round a chunk of elements at a time through the array conversions (core/float_arrays.hpp), which
// vectorize, where one element at a time took 12-25 ns an element (PERFORMANCE.md §94).
constexpr std::int64_t kChunk = 1024;

// Elements [first, first + count) of v (count at most kChunk), widened into `out`; v's elements N or const N.
template <class Element>
void widen(const Strided<Element>& v, std::int64_t first, std::int64_t count, float* out) {
  using N = std::remove_const_t<Element>;
  const auto length = static_cast<std::size_t>(count);
  if (v.inc == 1) {
    to_floats(std::span<const N>(v.data + first, length), out);
    return;
  }
  N gathered[kChunk];
  for (std::int64_t k = 0; k < count; ++k) gathered[k] = v[first + k];
  to_floats(std::span<const N>(gathered, length), out);
}

// `values` rounded to N into elements [first, first + values.size()) of v (at most kChunk).
template <class N>
void store(const Strided<N>& v, std::int64_t first, std::span<const float> values) {
  const auto round = [&](N* out) {
    if constexpr (std::is_same_v<N, Half>) {
      to_halves(values, out);
    } else {
      to_bfloat16s(values, out);
    }
  };
  if (v.inc == 1) {
    round(v.data + first);
    return;
  }
  N rounded[kChunk];
  round(rounded);
  for (std::size_t k = 0; k < values.size(); ++k) v[first + static_cast<std::int64_t>(k)] = rounded[k];
}

// A sum in double of many terms as eight sums of every eighth term (a term's index within its chunk decides, and a
// chunk's length is a multiple of 8 but for the last), added pairwise at the end: the order is fixed, and the
// additions do not wait on one another as one running sum's do. The add_ functions (narrow_sums.cpp) take a chunk of
// terms each, in vector registers where the CPU has them.
struct EightSums {
  double sums[8] = {};
  [[nodiscard]] double total() const {
    return ((sums[0] + sums[1]) + (sums[2] + sums[3])) + ((sums[4] + sums[5]) + (sums[6] + sums[7]));
  }
};
// Σ x_k y_k, Σ x_k², Σ |x_k| over k < n, each term in double.
void add_products(EightSums& sums, const float* x, const float* y, std::int64_t n);
void add_squares(EightSums& sums, const float* x, std::int64_t n);
void add_magnitudes(EightSums& sums, const float* x, std::int64_t n);

// Calls each(first, count) over n elements in chunks of at most kChunk.
template <class Each>
void for_each_chunk(std::int64_t n, Each&& each) {
  for (std::int64_t first = 0; first < n; first += kChunk) each(first, std::min(kChunk, n - first));
}

}  // namespace accel::blas
