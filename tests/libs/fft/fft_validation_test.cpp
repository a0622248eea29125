// Every way an FFT request can be wrong is refused, by name, before anything runs (on the CPU device; the checks
// are the device-independent validation every device runs first).
#include <gtest/gtest.h>

#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/fft/fft.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::StatusIs;

class FftValidationTest : public ::testing::Test {
 protected:
  BufferHandle buffer(DType dtype, std::uint64_t count) {
    Result<BufferHandle> handle = device_.ask(Allocate{.dtype = dtype, .count = count}).wait();
    EXPECT_THAT(handle, IsOk());
    return handle.ok() ? *handle : BufferHandle{};
  }
  Status run(const FftShape& shape, BufferHandle input, BufferHandle output) {
    return device_.ask(Fft{.shape = shape, .input = input, .output = output}).wait().status();
  }
  // Sentinel contents, to show that a refused request wrote nothing: bits, since fresh memory may hold NaNs.
  std::vector<std::uint32_t> contents(const BufferHandle& handle) {
    std::vector<std::uint32_t> out(handle.count * size_of(handle.dtype) / 4);
    EXPECT_THAT(
        device_.ask(CopyToHost{.source = handle, .destination = {out.data(), handle.count, handle.dtype}}).wait(),
        IsOk());
    return out;
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  BufferHandle c64_ = buffer(DType::c64, 64);
  BufferHandle other_c64_ = buffer(DType::c64, 64);
  BufferHandle f32_ = buffer(DType::f32, 64);
};

TEST_F(FftValidationTest, RankSizesBatchAndEnumsAreChecked) {
  EXPECT_THAT(run({.n = {8}}, c64_, other_c64_), IsOk());
  EXPECT_THAT(run({.rank = 0, .n = {8}}, c64_, other_c64_), StatusIs(Code::invalid_argument, "rank must be 1, 2 or 3"));
  EXPECT_THAT(run({.rank = 4, .n = {2, 2, 2}}, c64_, other_c64_), StatusIs(Code::invalid_argument, "rank"));
  EXPECT_THAT(run({.n = {0}}, c64_, other_c64_), StatusIs(Code::invalid_argument, "n[0] = 0 must be at least 1"));
  EXPECT_THAT(run({.n = {8, 2}}, c64_, other_c64_), StatusIs(Code::invalid_argument, "n[1] = 2 lies beyond rank 1"));
  EXPECT_THAT(run({.n = {8}, .batch = 0}, c64_, other_c64_), StatusIs(Code::invalid_argument, "batch must be"));
  EXPECT_THAT(run({.type = static_cast<FftType>(9), .n = {8}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "FftType 9 does not exist"));
  EXPECT_THAT(run({.n = {8}, .direction = static_cast<FftDirection>(5)}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "FftDirection 5"));
  EXPECT_THAT(run({.n = {8}, .normalization = static_cast<FftNormalization>(3)}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "FftNormalization 3"));
  EXPECT_THAT(run({.rank = 3, .n = {1ll << 30, 1ll << 30, 1ll << 30}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "the transform size overflows 64-bit element counts"));
  EXPECT_THAT(
      run({.n = {1 << 20}, .input = {.stride = 1ll << 50}}, c64_, other_c64_),
      StatusIs(Code::invalid_argument, "input distance overflows 64-bit element counts (1125899906842624 x 1048576)"));
  EXPECT_THAT(run({.n = {8}, .batch = 3, .output = {.distance = INT64_MAX / 2}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "the output layout's extent overflows 64-bit element counts"));
}

TEST_F(FftValidationTest, PrecisionAndDirectionMustSuitTheType) {
  EXPECT_THAT(run({.precision = DType::i32, .n = {8}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "f32, f64 or f16, not i32"));
  EXPECT_THAT(run({.type = FftType::r2c, .n = {8}, .direction = FftDirection::inverse}, f32_, c64_),
              StatusIs(Code::invalid_argument, "r2c is a forward transform"));
  EXPECT_THAT(run({.type = FftType::c2r, .n = {8}}, c64_, f32_),
              StatusIs(Code::invalid_argument, "c2r is an inverse transform"));
}

TEST_F(FftValidationTest, BuffersMustHoldTheTypesAndReachOfTheLayouts) {
  EXPECT_THAT(run({.n = {8}}, f32_, c64_), StatusIs(Code::invalid_argument,
                                                    "operand 'input' holds f32 but the request "
                                                    "needs c64"));
  EXPECT_THAT(run({.type = FftType::c2r, .n = {8}, .direction = FftDirection::inverse}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "operand 'output' holds c64 but the request needs f32"));
  EXPECT_THAT(run({.precision = DType::f64, .n = {8}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "needs c128"));
  EXPECT_THAT(run({.n = {65}}, c64_, other_c64_), StatusIs(Code::invalid_argument, "lie outside"));
  EXPECT_THAT(run({.n = {8}, .batch = 9}, c64_, other_c64_), StatusIs(Code::invalid_argument, "lie outside"));
  EXPECT_THAT(run({.n = {8}, .output = {.stride = 10}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "operand 'output'"));
  EXPECT_THAT(run({.n = {8}}, c64_, BufferHandle{}), StatusIs(Code::invalid_argument, "null buffer handle"));
  // r2c of 64 reals makes 33 complex numbers: 33 fit, 64 reals read.
  EXPECT_THAT(run({.type = FftType::r2c, .n = {64}}, f32_, c64_), IsOk());
  EXPECT_THAT(run({.type = FftType::r2c, .n = {65}}, f32_, c64_), StatusIs(Code::invalid_argument, "operand 'input'"));
}

// Half precision takes what cuFFT's half transforms take, on every device (this one is the CPU): power-of-two
// sizes and a real side of stride 1; and buffers of f16 and c32.
TEST_F(FftValidationTest, HalfPrecisionTakesPowersOfTwoAndBuffersOfF16AndC32) {
  const BufferHandle c32 = buffer(DType::c32, 64), other_c32 = buffer(DType::c32, 64), f16 = buffer(DType::f16, 64);
  EXPECT_THAT(run({.precision = DType::f16, .n = {8}}, c32, other_c32), IsOk());
  EXPECT_THAT(run({.precision = DType::f16, .rank = 2, .n = {4, 16}}, c32, other_c32), IsOk());
  EXPECT_THAT(run({.type = FftType::r2c, .precision = DType::f16, .n = {64}}, f16, c32), IsOk());
  EXPECT_THAT(run({.precision = DType::f16, .n = {12}}, c32, other_c32),
              StatusIs(Code::not_supported,
                       "f16 FFTs take sizes that are powers of two in every dimension (cuFFT's half-precision "
                       "transforms take no others); n[0] = 12 is not one: pad to 16 or use f32"));
  EXPECT_THAT(run({.precision = DType::f16, .rank = 2, .n = {4, 6}}, c32, other_c32),
              StatusIs(Code::not_supported, "n[1] = 6 is not one: pad to 8"));
  EXPECT_THAT(
      run({.type = FftType::c2r, .precision = DType::f16, .n = {7}, .direction = FftDirection::inverse}, c32, f16),
      StatusIs(Code::not_supported, "n[0] = 7"));
  EXPECT_THAT(run({.type = FftType::r2c, .precision = DType::f16, .n = {8}, .input = {.stride = 2}}, f16, c32),
              StatusIs(Code::not_supported, "f16 r2c takes stride 1 on its real side"));
  EXPECT_THAT(run({.type = FftType::c2r,
                   .precision = DType::f16,
                   .n = {8},
                   .direction = FftDirection::inverse,
                   .output = {.stride = 3}},
                  c32, f16),
              StatusIs(Code::not_supported, "the output side has stride 3"));
  // The complex side of a real transform may be strided, as in f32.
  EXPECT_THAT(run({.type = FftType::r2c, .precision = DType::f16, .n = {8}, .output = {.stride = 2}}, f16, c32),
              IsOk());
  // Buffers of the wrong precision are refused by operand.
  EXPECT_THAT(run({.precision = DType::f16, .n = {8}}, c64_, other_c32),
              StatusIs(Code::invalid_argument, "operand 'input' holds c64 but the request needs c32"));
  EXPECT_THAT(run({.precision = DType::f16, .n = {8}}, c32, other_c64_),
              StatusIs(Code::invalid_argument, "operand 'output' holds c64 but the request needs c32"));
  EXPECT_THAT(run({.type = FftType::r2c, .precision = DType::f16, .n = {8}}, f32_, c32),
              StatusIs(Code::invalid_argument, "operand 'input' holds f32 but the request needs f16"));
  EXPECT_THAT(run({.n = {8}}, c32, other_c32),
              StatusIs(Code::invalid_argument, "operand 'input' holds c32 but the request needs c64"));
  // In place, the one buffer holds f16 or c32; 64 c32 hold 64 complex numbers, not 65 padded rows of them.
  EXPECT_THAT(run({.type = FftType::r2c, .precision = DType::f16, .n = {32}, .batch = 3}, c32, c32), IsOk());
  EXPECT_THAT(run({.type = FftType::r2c, .precision = DType::f16, .n = {32}, .batch = 4}, c32, c32),
              StatusIs(Code::invalid_argument, "lie outside"));
  EXPECT_THAT(run({.type = FftType::r2c, .precision = DType::f16, .n = {32}, .batch = 3}, c64_, c64_),
              StatusIs(Code::invalid_argument, "holds c64 but the request needs c32"));
}

TEST_F(FftValidationTest, LayoutsAreCheckedDimensionByDimension) {
  EXPECT_THAT(run({.rank = 2, .n = {4, 4}, .input = {.embed = {4, 0}}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "input.embed = [4, 0] gives some dimensions but not all"));
  EXPECT_THAT(run({.rank = 2, .n = {4, 4}, .output = {.embed = {4, 3}}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "output.embed[1] = 3 is smaller than the output side's logical size 4"));
  EXPECT_THAT(run({.n = {4}, .input = {.embed = {4, 4}}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "input.embed[1] = 4 lies beyond rank 1"));
  EXPECT_THAT(run({.n = {4}, .input = {.stride = -1}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "input.stride = -1 is negative"));
  EXPECT_THAT(run({.n = {4}, .batch = 2, .output = {.distance = -4}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "output.distance = -4 is negative"));
  // c2r of n = 7: the complex input has 7/2 + 1 = 4 elements per row, not 3.
  EXPECT_THAT(
      run({.type = FftType::c2r, .n = {7}, .direction = FftDirection::inverse, .input = {.embed = {3}}}, c64_, f32_),
      StatusIs(Code::invalid_argument, "n/2 + 1 = 4 elements in its last dimension for n = 7"));
  EXPECT_THAT(run({.rank = 1, .n = {1ll << 40}, .input = {.stride = 1ll << 40}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "overflow"));
}

TEST_F(FftValidationTest, LayoutsThatPlaceTwoElementsAtOneIndexAreRefused) {
  // Transforms of 8 one element apart overlap; element-interleaved ones (stride 4, distance 1) do not.
  EXPECT_THAT(run({.n = {8}, .batch = 4, .output = {.distance = 1}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument,
                       "the output layout (embed [8], stride 1, distance 1, batch 4) places two "
                       "elements at one index"));
  EXPECT_THAT(run({.n = {8}, .batch = 4, .input = {.stride = 4, .distance = 1}, .output = {.stride = 4, .distance = 1}},
                  c64_, other_c64_),
              IsOk());
  EXPECT_THAT(run({.n = {8}, .batch = 4, .input = {.stride = 3, .distance = 1}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument, "the input layout"));
}

TEST_F(FftValidationTest, InPlaceLayoutsMustShareTheirMemoryRowForRow) {
  // c2c: one layout for both sides.
  EXPECT_THAT(run({.n = {8}, .batch = 2, .input = {.distance = 10}}, c64_, c64_), IsOk());
  EXPECT_THAT(run({.n = {8}, .batch = 2, .input = {.distance = 10}, .output = {.distance = 12}}, c64_, c64_),
              StatusIs(Code::invalid_argument, "in-place c2c needs one layout for both sides"));
  // r2c of n = 7 in place: rows padded to 2 * 4 = 8 reals. Unpadded (7) is refused, and so is 9.
  const FftShape r2c{.type = FftType::r2c, .n = {7}, .batch = 2};
  EXPECT_THAT(run(r2c, c64_, c64_), IsOk());
  FftShape unpadded = r2c;
  unpadded.input = {.embed = {7}};
  EXPECT_THAT(run(unpadded, c64_, c64_), StatusIs(Code::invalid_argument,
                                                  "2 * (n/2 + 1) = 8 real elements for n = 7 (odd: one element of "
                                                  "padding)"));
  FftShape over_padded = r2c;
  over_padded.input = {.embed = {9}};
  EXPECT_THAT(run(over_padded, c64_, c64_), StatusIs(Code::invalid_argument, "embed [8], stride 1, distance 8"));
  FftShape padded = r2c;
  padded.input = {.embed = {8}};
  EXPECT_THAT(run(padded, c64_, c64_), IsOk());
  FftShape strided = r2c;
  strided.output = {.stride = 2};
  EXPECT_THAT(run(strided, c64_, c64_), StatusIs(Code::invalid_argument, "stride 1 on the complex side"));
  // c2r of n = 8 in place: two elements of padding.
  EXPECT_THAT(
      run({.type = FftType::c2r, .n = {8}, .direction = FftDirection::inverse, .output = {.embed = {8}}}, c64_, c64_),
      StatusIs(Code::invalid_argument, "(even: two)"));
  // The one buffer must cover the farther side, in its own elements: 2 x 8 reals of f32 fit 16 of 64 f32.
  EXPECT_THAT(run(r2c, f32_, f32_), IsOk());
  // n = 64: 33 complex numbers, 66 f32 of memory.
  EXPECT_THAT(run({.type = FftType::r2c, .n = {64}}, f32_, f32_), StatusIs(Code::invalid_argument, "lie outside"));
}

TEST_F(FftValidationTest, ARefusedRequestWritesNothing) {
  const std::vector<std::uint32_t> output = contents(other_c64_);
  EXPECT_THAT(run({.n = {8}, .batch = 4, .output = {.distance = 1}}, c64_, other_c64_),
              StatusIs(Code::invalid_argument));
  EXPECT_THAT(run({.n = {8}, .batch = 9}, c64_, other_c64_), StatusIs(Code::invalid_argument));
  EXPECT_EQ(contents(other_c64_), output);
}

}  // namespace
}  // namespace accel
