// 16-bit floats widened and rounded an array at a time, as accel/core/dtype.hpp's to_float, to_half and to_bfloat16 do
// one element at a time (the same bits, NaNs included), in loops a compiler vectorizes (core/dtype.cpp): for the CPU
// device's loops over 16-bit vectors, where one call an element cost more than the arithmetic.
#pragma once

#include <span>

#include "accel/core/dtype.hpp"

namespace accel {

// Each of `values` widened into `out`, which has room for as many.
void to_floats(std::span<const Half> values, float* out) noexcept;
void to_floats(std::span<const BFloat16> values, float* out) noexcept;
// Each of `values` rounded to nearest even into `out`, which has room for as many.
void to_halves(std::span<const float> values, Half* out) noexcept;
void to_bfloat16s(std::span<const float> values, BFloat16* out) noexcept;

}  // namespace accel
