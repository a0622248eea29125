// The narrow float conversions: to_half against the nearest f16 found by decoding, at every rounding boundary; every
// half widened against its fields' value; the array forms against the one-element ones.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "accel/core/dtype.hpp"
#include "core/float_arrays.hpp"

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

TEST(HalfConversion, WidensEveryHalfToItsValue) {
  // The value each pattern stands for, from its fields (IEEE 754 binary16), against to_float's bit arithmetic.
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const int exponent = static_cast<int>((bits >> 10) & 0x1fu);
    const double mantissa = static_cast<double>(bits & 0x3ffu);
    const double sign = (bits & 0x8000u) != 0 ? -1.0 : 1.0;
    const float got = to_float(Half{static_cast<std::uint16_t>(bits)});
    if (exponent == 0x1f) {
      if (mantissa != 0) {
        EXPECT_TRUE(std::isnan(got)) << std::hex << bits;
      } else {
        EXPECT_EQ(got, static_cast<float>(sign * INFINITY)) << std::hex << bits;
      }
      continue;
    }
    const double want =
        sign * (exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024.0 + mantissa, exponent - 25));
    EXPECT_EQ(got, static_cast<float>(want)) << std::hex << bits;
    EXPECT_EQ(std::signbit(got), (bits & 0x8000u) != 0) << std::hex << bits;  // -0 stays negative
  }
}

TEST(ArrayConversions, MatchTheOneElementConversionsBitForBit) {
  // Every half and bfloat16 widened, and about a million floats across all 2^32 patterns (NaNs, infinities,
  // subnormals, ties) rounded, by the array forms and one at a time.
  std::vector<Half> halves(0x10000);
  std::vector<BFloat16> bfloats(0x10000);
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    halves[bits] = Half{static_cast<std::uint16_t>(bits)};
    bfloats[bits] = BFloat16{static_cast<std::uint16_t>(bits)};
  }
  std::vector<float> widened(0x10000);
  to_floats(halves, widened.data());
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits)
    EXPECT_EQ(std::bit_cast<std::uint32_t>(widened[bits]), std::bit_cast<std::uint32_t>(to_float(halves[bits])))
        << std::hex << bits;
  to_floats(bfloats, widened.data());
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits)
    EXPECT_EQ(std::bit_cast<std::uint32_t>(widened[bits]), std::bit_cast<std::uint32_t>(to_float(bfloats[bits])))
        << std::hex << bits;

  std::vector<float> floats;
  for (std::uint64_t bits = 0; bits <= 0xffffffffu; bits += 4093)
    floats.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  for (std::uint32_t bits : {0x7f800000u, 0xff800000u, 0x7fc00001u, 0xffa00000u, 0x477fefffu, 0x477ff000u, 0x38800000u,
                             0x387fffffu, 0x33000000u, 0x33000001u, 0x3f808000u, 0x3f818000u})
    floats.push_back(std::bit_cast<float>(bits));
  std::vector<Half> rounded_halves(floats.size());
  std::vector<BFloat16> rounded_bfloats(floats.size());
  to_halves(floats, rounded_halves.data());
  to_bfloat16s(floats, rounded_bfloats.data());
  for (std::size_t i = 0; i < floats.size(); ++i) {
    EXPECT_EQ(rounded_halves[i].bits, to_half(floats[i]).bits) << std::hex << std::bit_cast<std::uint32_t>(floats[i]);
    EXPECT_EQ(rounded_bfloats[i].bits, to_bfloat16(floats[i]).bits)
        << std::hex << std::bit_cast<std::uint32_t>(floats[i]);
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
