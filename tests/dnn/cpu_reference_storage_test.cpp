// How the CPU reference reads and stores tensors: rounding into 16-bit types, full precision between fused
// ops, and the bindings it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "accel/dnn/graph.hpp"
#include "dnn/cpu/graph_interpreter.hpp"
#include "testing/dnn_reference.hpp"
#include "testing/status_matchers.hpp"

namespace accel::dnn {
namespace {

using testing::IsOk;
using testing::StatusIs;
using namespace reference_testing;

// -- element types -----------------------------------------------------------------------------------------

std::vector<double> stored_as(DType dtype, const std::vector<double>& values) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f64, {static_cast<std::int64_t>(values.size())});
  const TensorRef y = b.pointwise(PointwiseMode::identity, x);
  b.output(y, dtype);
  GraphRun run(build(b));
  run.set(x, values);
  EXPECT_THAT(run.run(), IsOk());
  return run.get(y);
}

TEST(CpuReferenceDtypes, HalfOutputsRoundToNearestEvenFromTheExactValue) {
  const double ulp = std::ldexp(1.0, -10);  // of f16 at 1
  EXPECT_EQ(stored_as(DType::f16,
                      {
                          1 + ulp / 2,                         // a tie: to the even 1
                          1 + 3 * ulp / 2,                     // a tie: to the even 1 + 2 ulp
                          1 + ulp / 2 + std::ldexp(1.0, -30),  // just above a tie, below f32's precision
                          65520,                               // halfway to the next binade: overflows
                          std::ldexp(1.0, -25),                // half the least subnormal: to the even 0
                          std::ldexp(1.0, -25) + std::ldexp(1.0, -40),
                      }),
            (std::vector<double>{1, 1 + 2 * ulp, 1 + ulp, kInfinity, 0, std::ldexp(1.0, -24)}));
}

TEST(CpuReferenceDtypes, Bfloat16OutputsRoundToNearestEvenFromTheExactValue) {
  const double ulp = std::ldexp(1.0, -7);
  EXPECT_EQ(stored_as(DType::bf16, {1 + ulp / 2, 1 + 3 * ulp / 2, 1 + ulp / 2 + std::ldexp(1.0, -40), -3}),
            (std::vector<double>{1, 1 + 2 * ulp, 1 + ulp, -3}));
}

TEST(CpuReferenceDtypes, VirtualTensorsKeepFullPrecisionBetweenFusedOps) {
  // 1 + 2^-40 exists only in the virtual sum; rounded to its nominal f32 it would be 1, and the result 0.
  GraphBuilder b;
  const TensorRef one = b.tensor(DType::f64, {1});
  const TensorRef tiny = b.tensor(DType::f64, {1});
  const TensorRef y = b.pointwise(PointwiseMode::sub, b.add(one, tiny), one);
  b.output(y, DType::f64);
  GraphRun run(build(b));
  run.set(one, {1});
  run.set(tiny, {std::ldexp(1.0, -40)});
  ASSERT_THAT(run.run(), IsOk());
  EXPECT_EQ(run.get(y), (std::vector<double>{std::ldexp(1.0, -40)}));
}

TEST(CpuReferenceDtypes, HalfAndBfloat16InputsAreReadExactly) {
  GraphBuilder b;
  const TensorRef h = b.tensor(DType::f16, {3});
  const TensorRef bf = b.tensor(DType::bf16, {3});
  const TensorRef y = b.add(h, bf);
  b.output(y, DType::f64);
  GraphRun run(build(b));
  run.set(h, {1 + std::ldexp(1.0, -10), -2, 65504});
  run.set(bf, {std::ldexp(1.0, -7), 0.5, 0});
  ASSERT_THAT(run.run(), IsOk());
  EXPECT_EQ(run.get(y), (std::vector<double>{1 + std::ldexp(1.0, -10) + std::ldexp(1.0, -7), -1.5, 65504}));
}

// -- refusals ----------------------------------------------------------------------------------------------

class CpuReferenceBindings : public ::testing::Test {
 protected:
  void SetUp() override {
    GraphBuilder b;
    x_ = b.tensor(DType::f32, {2, 3});
    y_ = b.relu(x_);
    b.output(y_, DType::f32);
    graph_ = build(b);
    ASSERT_NE(graph_, nullptr);
  }

  std::shared_ptr<const Graph> graph_;
  TensorRef x_, y_;
  std::vector<float> x_memory_ = std::vector<float>(6, 1.0f), y_memory_ = std::vector<float>(6, 0.0f);
};

TEST_F(CpuReferenceBindings, AMissingBindingIsRefusedNamingTheTensor) {
  const std::vector<std::pair<std::uint32_t, cpu::HostTensor>> bound{
      {x_.uid, {.data = x_memory_.data(), .dtype = DType::f32, .count = 6}}};
  EXPECT_THAT(cpu::run_graph(*graph_, bound),
              StatusIs(Code::invalid_argument, "tensor " + std::to_string(y_.uid) + " is not bound"));
}

TEST_F(CpuReferenceBindings, MemoryShortOfTheStorageExtentIsRefusedNamingTheTensor) {
  const std::vector<std::pair<std::uint32_t, cpu::HostTensor>> bound{
      {x_.uid, {.data = x_memory_.data(), .dtype = DType::f32, .count = 5}},
      {y_.uid, {.data = y_memory_.data(), .dtype = DType::f32, .count = 6}}};
  EXPECT_THAT(cpu::run_graph(*graph_, bound), StatusIs(Code::invalid_argument, "tensor " + std::to_string(x_.uid)));
  EXPECT_EQ(y_memory_, std::vector<float>(6, 0.0f)) << "nothing runs before every binding is checked";
}

TEST_F(CpuReferenceBindings, ADtypeOtherThanTheTensorsIsRefusedNamingTheTensor) {
  const std::vector<std::pair<std::uint32_t, cpu::HostTensor>> bound{
      {x_.uid, {.data = x_memory_.data(), .dtype = DType::f32, .count = 6}},
      {y_.uid, {.data = y_memory_.data(), .dtype = DType::i32, .count = 6}}};
  EXPECT_THAT(cpu::run_graph(*graph_, bound), StatusIs(Code::invalid_argument, "tensor " + std::to_string(y_.uid)));
}

TEST_F(CpuReferenceBindings, UnknownRepeatedAndNullBindingsAreRefused) {
  const cpu::HostTensor x{.data = x_memory_.data(), .dtype = DType::f32, .count = 6};
  const cpu::HostTensor y{.data = y_memory_.data(), .dtype = DType::f32, .count = 6};
  using Bound = std::vector<std::pair<std::uint32_t, cpu::HostTensor>>;
  EXPECT_THAT(cpu::run_graph(*graph_, Bound{{x_.uid, x}, {y_.uid, y}, {99, y}}),
              StatusIs(Code::invalid_argument, "uid 99"));
  EXPECT_THAT(cpu::run_graph(*graph_, Bound{{x_.uid, x}, {y_.uid, y}, {x_.uid, x}}),
              StatusIs(Code::invalid_argument, "twice"));
  EXPECT_THAT(cpu::run_graph(*graph_, Bound{{x_.uid, {.dtype = DType::f32, .count = 6}}, {y_.uid, y}}),
              StatusIs(Code::invalid_argument, "null"));
  EXPECT_THAT(cpu::run_graph(*graph_, Bound{{x_.uid, x}, {y_.uid, y}}), IsOk());
  EXPECT_EQ(y_memory_, std::vector<float>(6, 1.0f));
}

TEST(CpuReferenceRefusals, AnIntegerOutputIsNotSupported) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {4});
  const TensorRef y = b.relu(x);
  b.output(y, DType::i32);
  GraphRun run(build(b));
  EXPECT_THAT(run.run(), StatusIs(Code::not_supported, "tensor " + std::to_string(y.uid)));
}

}  // namespace
}  // namespace accel::dnn
