// A graph whose inputs share one buffer and whose output lies inside a larger one, each bound at a first element of
// its own (graph::NamedBuffer::first): the CPU and CUDA graph tests check that a device reads and writes there alone.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/graph/execute.hpp"
#include "testing/pool_reference.hpp"

namespace accel::graph::testing {

// mean-pool(x * scale) over 2 sequences of 9 tokens in all, width 8: x and scale end to end in one f32 buffer after 5
// other elements, the offsets at element 3 of theirs, the output from element 11 of 40 elements that must keep their
// sentinel elsewhere. The tokens' bucket is 16, so a replaying device pads each input from its first element on.
inline void expect_bindings_start_at_their_first_element(const Device& device, ExecuteMode mode) {
  constexpr std::int64_t kWidth = 8, kTokens = 9;
  constexpr std::uint64_t kXFirst = 5, kOffsetsFirst = 3, kOutputFirst = 11;
  GraphBuilder b;
  b.bucket("tokens", Ladder::powers_of_two(16, 64)).bucket("sequences", Ladder::powers_of_two(1, 8));
  Tensor x = b.input("x", DType::f32, {Dim::sym("tokens"), Dim::of(kWidth)});
  Tensor scale = b.input("scale", DType::f32, {Dim::sym("tokens"), Dim::of(kWidth)});
  Tensor offsets = b.input("offsets", DType::i32, {Dim::sym("sequences", 1)}, Padding::repeat_last);
  b.output("pooled", b.pool(b.binary(BinaryOp::mul, x, scale), offsets, PoolMode::mean));
  std::shared_ptr<const Graph> graph = *b.build();

  std::vector<float> floats(kXFirst + 2 * kTokens * kWidth + 3);
  for (std::size_t i = 0; i < floats.size(); ++i) floats[i] = static_cast<float>((i * 7) % 13) - 6.0f;
  std::vector<float> product(kTokens * kWidth);
  for (std::size_t i = 0; i < product.size(); ++i)
    product[i] = floats[kXFirst + i] * floats[kXFirst + product.size() + i];
  const std::vector<double> want = pool_reference(PoolMode::mean, product, kWidth, {0, 4, 9});

  Buffer<float> inputs = *device.allocate<float>(floats.size()).wait();
  ASSERT_TRUE(device.upload(std::span<const float>(floats), inputs).wait().ok());
  const std::vector<std::int32_t> ints{-1, -1, -1, 0, 4, 9};
  Buffer<std::int32_t> offsets_buffer = *device.allocate<std::int32_t>(ints.size()).wait();
  ASSERT_TRUE(device.upload(std::span<const std::int32_t>(ints), offsets_buffer).wait().ok());
  const std::vector<float> sentinel(40, 99.0f);
  Buffer<float> pooled = *device.allocate<float>(sentinel.size()).wait();
  ASSERT_TRUE(device.upload(std::span<const float>(sentinel), pooled).wait().ok());
  Status ran = device
                   .ask(Execute{.graph = graph,
                                .symbols = {{"tokens", kTokens}, {"sequences", 2}},
                                .weights = *device.allocate<std::uint8_t>(1).wait(),
                                .inputs = {{"x", inputs, kXFirst},
                                           {"scale", inputs, kXFirst + kTokens * kWidth},
                                           {"offsets", offsets_buffer, kOffsetsFirst}},
                                .outputs = {{"pooled", pooled, kOutputFirst}},
                                .mode = mode})
                   .wait()
                   .status();
  ASSERT_TRUE(ran.ok()) << ran.to_string();
  std::vector<float> got(sentinel.size());
  ASSERT_TRUE(device.download(pooled, std::span<float>(got)).wait().ok());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (i < kOutputFirst || i >= kOutputFirst + want.size()) {
      EXPECT_EQ(got[i], 99.0f) << "written outside the output at " << i;
    } else {
      EXPECT_NEAR(got[i], want[i - kOutputFirst], 1e-5) << "at " << i;
    }
  }
}

}  // namespace accel::graph::testing
