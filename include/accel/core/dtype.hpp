/// @file
/// Element types of device buffers and library requests.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace accel {

/// c64 and c128 are complex numbers of two f32 or two f64 (real first), as std::complex and cuComplex store them;
/// c32 is two f16 (real first), as cuFFT's half-precision transforms store them (CUDA_C_16F).
/// New types go last, so that the values before them keep their numbers on the wire: fp8_e5m2 (for NCCL's
/// collectives), then c32 (for half-precision FFTs).
enum class DType : std::uint8_t { f32, f64, f16, bf16, fp8_e4m3, i8, i32, u8, u32, i64, u64, c64, c128, fp8_e5m2, c32 };

/// Whether a byte from outside names a DType.
[[nodiscard]] constexpr bool is_dtype(std::uint8_t value) noexcept {
  return value <= static_cast<std::uint8_t>(DType::c32);
}

/// Bytes of one element (a complex number counts both parts).
[[nodiscard]] constexpr std::size_t size_of(DType dtype) noexcept {
  switch (dtype) {
    case DType::c128: return 16;
    case DType::f64:
    case DType::i64:
    case DType::u64:
    case DType::c64: return 8;
    case DType::f32:
    case DType::i32:
    case DType::u32:
    case DType::c32: return 4;
    case DType::f16:
    case DType::bf16: return 2;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
    case DType::i8:
    case DType::u8: return 1;
  }
  return 0;
}

/// The dtype's name: "f32", "bf16", "c64" ...
[[nodiscard]] std::string_view to_string(DType dtype) noexcept;

/// 16-bit and 8-bit floats are stored as raw bits on the host side; the device interprets them.
struct Half {
  std::uint16_t bits;  ///< the IEEE binary16 bits
};
/// A bfloat16 as its raw bits (the top half of an f32).
struct BFloat16 {
  std::uint16_t bits;  ///< the bfloat16 bits
};
/// An fp8 E4M3 number (OCP's, as in CUDA's __nv_fp8_e4m3) as its raw bits.
struct Float8E4M3 {
  std::uint8_t bits;  ///< the fp8 bits
};
/// An fp8 E5M2 number (OCP's, as in CUDA's __nv_fp8_e5m2) as its raw bits.
struct Float8E5M2 {
  std::uint8_t bits;  ///< the fp8 bits
};

/// Conversions to and from float: round to nearest even; fp8 e4m3 (OCP "e4m3fn": no infinities) saturates to
/// ±448 and keeps NaN; fp8 e5m2 (IEEE-like: the top byte of an f16) has infinities and overflows to them.
[[nodiscard]] float to_float(Half value) noexcept;
/// The bfloat16's value.
[[nodiscard]] float to_float(BFloat16 value) noexcept;
/// The fp8 E4M3 number's value.
[[nodiscard]] float to_float(Float8E4M3 value) noexcept;
/// The fp8 E5M2 number's value.
[[nodiscard]] float to_float(Float8E5M2 value) noexcept;
/// `value` rounded to binary16.
[[nodiscard]] Half to_half(float value) noexcept;
/// `value` rounded to bfloat16.
[[nodiscard]] BFloat16 to_bfloat16(float value) noexcept;
/// `value` rounded to fp8 E4M3 (saturating: see above).
[[nodiscard]] Float8E4M3 to_float8_e4m3(float value) noexcept;
/// `value` rounded to fp8 E5M2.
[[nodiscard]] Float8E5M2 to_float8_e5m2(float value) noexcept;

/// False for every T: a static_assert that only fails when a template is instantiated.
template <class T>
inline constexpr bool always_false_v = false;

/// The DType of element type T (a compile-time error for a type without one).
template <class T>
[[nodiscard]] constexpr DType dtype_of() noexcept {
  if constexpr (std::is_same_v<T, float>)
    return DType::f32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::f64;
  else if constexpr (std::is_same_v<T, Half>)
    return DType::f16;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return DType::bf16;
  else if constexpr (std::is_same_v<T, Float8E4M3>)
    return DType::fp8_e4m3;
  else if constexpr (std::is_same_v<T, Float8E5M2>)
    return DType::fp8_e5m2;
  else if constexpr (std::is_same_v<T, std::int8_t>)
    return DType::i8;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return DType::i32;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return DType::u8;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return DType::u32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return DType::i64;
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return DType::u64;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return DType::c64;
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return DType::c128;
  else
    static_assert(always_false_v<T>, "no accel::DType for this element type");
}

}  // namespace accel
