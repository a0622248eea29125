// CutlassGemm on the CPU device against a naive double computation, and the validation errors of bad
// requests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/dnn/convolution.hpp"
#include "accel/jit/cutlass.hpp"
#include "accel/jit/kernel.hpp"
#include "device/isolated/staged_requests.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/jit_requests.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::HostArray;
using testing::IsOk;
using testing::relative_error;
using testing::StatusIs;
using namespace jit_testing;

// -- 1. CutlassGemm against a naive computation ------------------------------------------------------------------

TEST_F(JitRequestsTest, GemmF16WithSourceMatchesNaive) {
  // Row-major A with a padded ld (80 bytes), column-major B, row-major C and D (D padded: 96 bytes).
  const GemmProblem problem(
      {.input = DType::f16, .output = DType::f16, .lda = 40, .ldd = 48, .alpha = 0.75f, .beta = 0.5f, .c = true}, 1);
  problem.run_and_check(*dev_);
}

TEST_F(JitRequestsTest, GemmBf16WithTheWholeEpilogueMatchesNaive) {
  const GemmProblem problem({.input = DType::bf16,
                             .output = DType::bf16,
                             .layout_a = MatrixOrder::column_major,
                             .layout_b = MatrixOrder::row_major,
                             .layout_c = MatrixOrder::column_major,
                             .ldc = 32,
                             .alpha = 1.25f,
                             .beta = -0.5f,
                             .c = true,
                             .activation = Activation::relu,
                             .bias = BiasVector::per_row,
                             .row_scale = true,
                             .col_scale = true,
                             .residual = true},
                            2);
  // relu matters: some pre-activations are negative.
  int clipped = 0;
  for (std::int64_t i = 0; i < 24; ++i)
    for (std::int64_t j = 0; j < 40; ++j)
      clipped += problem.expected[i * 40 + j] == problem.residual.values[problem.sd.index(i, j)];
  EXPECT_GT(clipped, 50);
  problem.run_and_check(*dev_);
}

TEST_F(JitRequestsTest, GemmFp8ToF32WithoutSourceMatchesNaive) {
  const GemmProblem problem({.input = DType::fp8_e4m3, .output = DType::f32, .alpha = 1.5f, .beta = 3.0f}, 3);
  problem.run_and_check(*dev_);
}

TEST_F(JitRequestsTest, GemmGeluAndSiluWithPerColumnBiasMatchNaive) {
  std::uint64_t seed = 10;
  for (Activation activation : {Activation::gelu_tanh, Activation::silu}) {
    for (DType output : {DType::f16, DType::f32}) {
      SCOPED_TRACE(std::string(to_string(activation)) + " to " + std::string(to_string(output)));
      const GemmProblem problem({.input = DType::f16,
                                 .output = output,
                                 .alpha = 0.5f,
                                 .activation = activation,
                                 .bias = BiasVector::per_column},
                                ++seed);
      problem.run_and_check(*dev_);
    }
  }
}

// -- 2. validation -------------------------------------------------------------------------------------------------

TEST_F(JitRequestsTest, BadGemmRequestsAreRefusedBeforeAnythingRuns) {
  const Device& dev = *dev_;
  const GemmProblem problem({.m = 24, .n = 40, .k = 32, .alpha = 1.0f, .beta = 0.5f, .c = true}, 20);
  const CutlassGemm good = problem.upload(dev);
  auto refused = [&](auto mutate) {
    CutlassGemm request = good;
    mutate(request);
    return dev.ask(request).wait();
  };

  // lda = 36 f16 elements is 72 bytes.
  EXPECT_THAT(refused([](CutlassGemm& r) { r.lda = 36; }), StatusIs(Code::invalid_argument, "16-byte aligned"));
  EXPECT_THAT(refused([](CutlassGemm& r) { r.ldd = 44; }), StatusIs(Code::invalid_argument, "16-byte aligned"));
  EXPECT_THAT(refused([](CutlassGemm& r) { r.lda = 16; }), StatusIs(Code::invalid_argument, "smaller"));
  EXPECT_THAT(refused([](CutlassGemm& r) { r.ldb = -8; }), StatusIs(Code::invalid_argument, "negative"));
  // fp8 needs row-major A and column-major B.
  EXPECT_THAT(refused([](CutlassGemm& r) {
                r.input = DType::fp8_e4m3;
                r.layout_a = MatrixOrder::column_major;
              }),
              StatusIs(Code::not_supported, "fp8"));
  EXPECT_THAT(refused([](CutlassGemm& r) {
                r.input = DType::fp8_e4m3;
                r.layout_b = MatrixOrder::row_major;
              }),
              StatusIs(Code::not_supported, "fp8"));
  EXPECT_THAT(refused([](CutlassGemm& r) { r.input = DType::f32; }), StatusIs(Code::not_supported, "f32"));
  EXPECT_THAT(refused([](CutlassGemm& r) { r.output = DType::i32; }), StatusIs(Code::not_supported, "i32"));
  EXPECT_THAT(refused([](CutlassGemm& r) { r.output = DType::bf16; }), StatusIs(Code::not_supported, "bf16"));
  EXPECT_THAT(refused([](CutlassGemm& r) { r.d = {}; }), StatusIs(Code::invalid_argument, "operand d is missing"));
  EXPECT_THAT(refused([](CutlassGemm& r) { r.a = {}; }), StatusIs(Code::invalid_argument, "operand a is missing"));
  EXPECT_THAT(refused([](CutlassGemm& r) { r.m = 0; }), StatusIs(Code::invalid_argument, "positive"));
  EXPECT_THAT(refused([](CutlassGemm& r) { r.n = -40; }), StatusIs(Code::invalid_argument, "positive"));
  EXPECT_THAT(refused([](CutlassGemm& r) { r.k = -1; }), StatusIs(Code::invalid_argument, "positive"));
  // What the renderer has no epilogue node for.
  for (Activation activation : {Activation::gelu_erf, Activation::sigmoid, Activation::tanh}) {
    EXPECT_THAT(refused([&](CutlassGemm& r) { r.epilogue.activation = activation; }),
                StatusIs(Code::not_supported, std::string(to_string(activation))));
  }
  EXPECT_THAT(refused([](CutlassGemm& r) { r.epilogue.bias = BiasVector::per_channel; }),
              StatusIs(Code::not_supported, "per_channel bias"));

  // Buffers: the wrong type, a bias without its vector and the reverse, too small, stale.
  const BufferHandle bf16_a = to_device(dev, filled(DType::bf16, 24 * 32, 1.0));
  EXPECT_THAT(refused([&](CutlassGemm& r) { r.a = bf16_a; }),
              StatusIs(Code::invalid_argument, "but the request needs"));
  const BufferHandle f16_scale = to_device(dev, filled(DType::f16, 24, 1.0));
  EXPECT_THAT(refused([&](CutlassGemm& r) { r.row_scale = f16_scale; }),
              StatusIs(Code::invalid_argument, "but the request needs"));
  const BufferHandle bias = to_device(dev, filled(DType::f16, 40, 1.0));
  EXPECT_THAT(refused([&](CutlassGemm& r) { r.bias = bias; }),
              StatusIs(Code::invalid_argument, "without an epilogue bias"));
  EXPECT_THAT(refused([&](CutlassGemm& r) { r.epilogue.bias = BiasVector::per_column; }),
              StatusIs(Code::invalid_argument, "operand bias is missing"));
  const BufferHandle short_bias = to_device(dev, filled(DType::f16, 16, 1.0));  // per_row needs m = 24
  EXPECT_THAT(refused([&](CutlassGemm& r) {
                r.bias = short_bias;
                r.epilogue.bias = BiasVector::per_row;
              }),
              StatusIs(Code::invalid_argument, "lie outside"));
  const BufferHandle small_a = to_device(dev, filled(DType::f16, 24 * 32 - 1, 1.0));
  EXPECT_THAT(refused([&](CutlassGemm& r) { r.a = small_a; }), StatusIs(Code::invalid_argument));
  const BufferHandle small_residual = to_device(dev, filled(DType::f16, 24 * 40 - 8, 1.0));
  EXPECT_THAT(refused([&](CutlassGemm& r) { r.residual = small_residual; }), StatusIs(Code::invalid_argument));
  const HostArray small_d_host = filled(DType::f16, 24 * 40 - 1, kSentinel);
  const BufferHandle small_d = to_device(dev, small_d_host);
  const Status small_d_status = refused([&](CutlassGemm& r) { r.d = small_d; }).status();
  EXPECT_FALSE(small_d_status.ok());
  expect_all(from_device(dev, small_d), kSentinel);

  Result<BufferHandle> freed = dev.ask(Allocate{.dtype = DType::f16, .count = 24 * 32}).wait();
  ASSERT_THAT(freed, IsOk());
  ASSERT_THAT(dev.free(*freed).wait(), IsOk());
  EXPECT_THAT(refused([&](CutlassGemm& r) { r.a = *freed; }), StatusIs(Code::stale_handle));
  EXPECT_THAT(refused([&](CutlassGemm& r) { r.c = *freed; }), StatusIs(Code::stale_handle));

  // No refused request wrote D; the good one still runs.
  expect_all(from_device(dev, good.d), kSentinel);
  ASSERT_THAT(dev.ask(good).wait(), IsOk());
  expect_matrix_near(from_device(dev, good.d), problem.sd, problem.expected, 1e-2);
}

}  // namespace
}  // namespace accel
