// The narrow float conversions: to_half against the nearest f16 found by decoding, at every rounding boundary.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "accel/core/dtype.hpp"

namespace accel {
namespace {

// Every finite non-negative f16 bit pattern in increasing order of value is 0x0000 .. 0x7bff.
constexpr std::uint16_t kLargestFinite = 0x7bff;

TEST(HalfConversion, RoundsToNearestEvenAtEveryBoundary) {
  for (std::uint16_t low = 0; low < kLargestFinite; ++low) {
    const auto high = static_cast<std::uint16_t>(low + 1);
    const float below = to_float(Half{low});
    const float above = to_float(Half{high});
    const float midpoint = (below + above) / 2;  // exact: f16 values need 11 significant bits, a float has 24
    const std::uint16_t even = (low & 1u) == 0 ? low : high;
    for (const float sign : {1.0f, -1.0f}) {
      const std::uint16_t sign_bit = sign < 0 ? 0x8000 : 0;
      EXPECT_EQ(to_half(sign * below).bits, low | sign_bit) << below;
      EXPECT_EQ(to_half(sign * midpoint).bits, even | sign_bit) << midpoint;
      EXPECT_EQ(to_half(sign * std::nextafter(midpoint, 0.0f)).bits, low | sign_bit) << midpoint;
      EXPECT_EQ(to_half(sign * std::nextafter(midpoint, INFINITY)).bits, high | sign_bit) << midpoint;
    }
  }
}

TEST(HalfConversion, OverflowsToInfinityFromTheMidpointPastTheLargestFinite) {
  const float largest = to_float(Half{kLargestFinite});  // 65504
  EXPECT_EQ(largest, 65504.0f);
  EXPECT_EQ(to_half(65520.0f).bits, 0x7c00);  // the tie goes to the even "65536", which is infinity
  EXPECT_EQ(to_half(std::nextafter(65520.0f, 0.0f)).bits, kLargestFinite);
  EXPECT_EQ(to_half(-1e10f).bits, 0xfc00);
  EXPECT_EQ(to_half(INFINITY).bits, 0x7c00);
  EXPECT_EQ(to_half(-INFINITY).bits, 0xfc00);
  EXPECT_EQ(to_half(std::numeric_limits<float>::max()).bits, 0x7c00);
}

TEST(HalfConversion, KeepsNaNsAndSignedZeros) {
  EXPECT_TRUE(std::isnan(to_float(to_half(std::nanf("")))));
  EXPECT_TRUE(std::isnan(to_float(to_half(-std::nanf("")))));
  EXPECT_EQ(to_half(0.0f).bits, 0x0000);
  EXPECT_EQ(to_half(-0.0f).bits, 0x8000);
  // Below half of the smallest subnormal (2^-25) everything rounds to zero; 2^-25 itself is a tie to even (0).
  EXPECT_EQ(to_half(std::ldexp(1.0f, -25)).bits, 0x0000);
  EXPECT_EQ(to_half(std::nextafter(std::ldexp(1.0f, -25), 1.0f)).bits, 0x0001);
  EXPECT_EQ(to_half(std::numeric_limits<float>::denorm_min()).bits, 0x0000);
}

TEST(HalfConversion, RoundTripsEveryHalf) {
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const Half half{static_cast<std::uint16_t>(bits)};
    if ((bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0) continue;  // NaNs have many patterns
    EXPECT_EQ(to_half(to_float(half)).bits, half.bits) << std::hex << bits;
  }
}

TEST(DType, SizesAndNames) {
  EXPECT_EQ(size_of(DType::c128), 16u);
  EXPECT_EQ(size_of(DType::c64), 8u);
  EXPECT_EQ(size_of(DType::i64), 8u);
  EXPECT_EQ(size_of(DType::u32), 4u);
  EXPECT_EQ(to_string(DType::c64), "c64");
  EXPECT_EQ(size_of(DType::fp8_e5m2), 1u);
  EXPECT_EQ(to_string(DType::fp8_e5m2), "fp8_e5m2");
  EXPECT_TRUE(is_dtype(static_cast<std::uint8_t>(DType::fp8_e5m2)));
  // c32 came after fp8_e5m2, so the wire values before it kept their numbers.
  EXPECT_EQ(static_cast<int>(DType::fp8_e5m2), 13);
  EXPECT_EQ(static_cast<int>(DType::c32), 14);
  EXPECT_EQ(size_of(DType::c32), 4u);
  EXPECT_EQ(to_string(DType::c32), "c32");
  EXPECT_TRUE(is_dtype(static_cast<std::uint8_t>(DType::c32)));
  EXPECT_FALSE(is_dtype(static_cast<std::uint8_t>(DType::c32) + 1));
  EXPECT_FALSE(is_dtype(255));
}

// e5m2 is the top byte of an f16: every finite one converts back to itself, and floats round to nearest even.
TEST(Float8E5M2Conversion, RoundTripsAndRounds) {
  for (std::uint32_t bits = 0; bits <= 0xff; ++bits) {
    const Float8E5M2 value{static_cast<std::uint8_t>(bits)};
    if ((bits & 0x7cu) == 0x7cu) continue;  // infinities and NaNs
    EXPECT_EQ(to_float8_e5m2(to_float(value)).bits, value.bits) << std::hex << bits;
  }
  EXPECT_EQ(to_float(to_float8_e5m2(1.125f)), 1.0f);        // a tie: to the even 1.0
  EXPECT_EQ(to_float(to_float8_e5m2(1.375f)), 1.5f);        // a tie: to the even 1.5
  EXPECT_EQ(to_float(to_float8_e5m2(57344.0f)), 57344.0f);  // the largest finite
  EXPECT_TRUE(std::isinf(to_float(to_float8_e5m2(61440.0f))));
  EXPECT_TRUE(std::isnan(to_float(to_float8_e5m2(std::nanf("")))));
}

}  // namespace
}  // namespace accel
