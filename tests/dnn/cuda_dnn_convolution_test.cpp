// Convolution requests on the GPU (cuDNN) in every direction over a grid of shapes, and fused bias +
// activation epilogues, each compared with the CPU reference on the same fresh random inputs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "accel/dnn/convolution.hpp"
#include "testing/cuda_dnn_fixture.hpp"
#include "testing/dnn_testbed.hpp"

namespace accel::testing {
namespace {

using dnn::GraphBuilder;
using dnn::TensorLayout;
using dnn::TensorRef;

// -- convolutions over a grid -------------------------------------------------------------------------------

struct ConvCase {
  ConvShape shape;
  std::string name;
};

std::vector<ConvCase> conv_grid() {
  std::vector<ConvCase> cases;
  auto add = [&](std::string name, ConvShape shape) { cases.push_back({shape, std::move(name)}); };
  add("2-D NHWC f16 3x3 pad 1", {.layout = TensorLayout::channels_last,
                                 .dtype = DType::f16,
                                 .n = 2,
                                 .c = 16,
                                 .k = 32,
                                 .input = {12, 10},
                                 .filter = {3, 3},
                                 .pre_padding = {1, 1},
                                 .post_padding = {1, 1}});
  add("2-D NCHW f32 stride 2 asymmetric padding", {.layout = TensorLayout::channels_first,
                                                   .dtype = DType::f32,
                                                   .n = 3,
                                                   .c = 8,
                                                   .k = 12,
                                                   .input = {11, 9},
                                                   .filter = {3, 2},
                                                   .pre_padding = {1, 0},
                                                   .post_padding = {2, 1},
                                                   .stride = {2, 2}});
  add("2-D NHWC bf16 dilation 2 groups 2", {.layout = TensorLayout::channels_last,
                                            .dtype = DType::bf16,
                                            .n = 2,
                                            .c = 16,
                                            .k = 16,
                                            .groups = 2,
                                            .input = {14, 14},
                                            .filter = {3, 3},
                                            .pre_padding = {2, 2},
                                            .post_padding = {2, 2},
                                            .dilation = {2, 2}});
  add("2-D NHWC f16 depthwise", {.layout = TensorLayout::channels_last,
                                 .dtype = DType::f16,
                                 .n = 2,
                                 .c = 32,
                                 .k = 32,
                                 .groups = 32,
                                 .input = {10, 10},
                                 .filter = {3, 3},
                                 .pre_padding = {1, 1},
                                 .post_padding = {1, 1}});
  add("1-D NCHW f32", {.spatial_rank = 1,
                       .layout = TensorLayout::channels_first,
                       .dtype = DType::f32,
                       .n = 4,
                       .c = 8,
                       .k = 16,
                       .input = {33},
                       .filter = {5},
                       .pre_padding = {2},
                       .post_padding = {2}});
  add("1-D NHWC f16 stride 3", {.spatial_rank = 1,
                                .layout = TensorLayout::channels_last,
                                .dtype = DType::f16,
                                .n = 2,
                                .c = 16,
                                .k = 8,
                                .input = {40},
                                .filter = {4},
                                .stride = {3}});
  add("3-D NHWC f16", {.spatial_rank = 3,
                       .layout = TensorLayout::channels_last,
                       .dtype = DType::f16,
                       .n = 2,
                       .c = 8,
                       .k = 16,
                       .input = {6, 8, 8},
                       .filter = {3, 3, 3},
                       .pre_padding = {1, 1, 1},
                       .post_padding = {1, 1, 1}});
  add("3-D NCHW f32 stride 2", {.spatial_rank = 3,
                                .layout = TensorLayout::channels_first,
                                .dtype = DType::f32,
                                .n = 1,
                                .c = 4,
                                .k = 8,
                                .input = {7, 7, 7},
                                .filter = {3, 3, 3},
                                .stride = {2, 2, 2}});
  // Fully strided: x is NCHW with each row padded to 16 elements; w and y packed NHWC given as strides.
  ConvShape strided{.layout = TensorLayout::channels_first,
                    .strided = true,
                    .dtype = DType::f32,
                    .n = 2,
                    .c = 4,
                    .k = 8,
                    .input = {9, 12},
                    .filter = {3, 3},
                    .pre_padding = {1, 1},
                    .post_padding = {1, 1}};
  strided.x_strides = {4 * 9 * 16, 9 * 16, 16, 1, 0};
  strided.w_strides = {9 * 4, 1, 3 * 4, 4, 0};
  strided.y_strides = {9 * 12 * 8, 1, 12 * 8, 8, 0};
  add("2-D strided f32", strided);
  return cases;
}

TEST_F(CudaDnn, ConvolutionsInEveryDirectionMatchTheReferenceOverTheGrid) {
  std::uint64_t seed = 1;
  for (const ConvCase& c : conv_grid()) {
    {
      const ConvFwd request{.shape = c.shape};
      Result<std::shared_ptr<const dnn::Graph>> graph = dnn::graph_of(request);
      ASSERT_THAT(graph, IsOk()) << c.name;
      expect_matches_reference(
          **graph,
          [&](const Device& d, const BufferMap& b) {
            return d.ask(ConvFwd{.shape = c.shape, .x = b.at(1), .w = b.at(2), .y = b.at(3)});
          },
          ++seed, "forward " + c.name);
    }
    {
      Result<std::shared_ptr<const dnn::Graph>> graph = dnn::graph_of(ConvBwdData{.shape = c.shape});
      ASSERT_THAT(graph, IsOk()) << c.name;
      expect_matches_reference(
          **graph,
          [&](const Device& d, const BufferMap& b) {
            return d.ask(ConvBwdData{.shape = c.shape, .dy = b.at(3), .w = b.at(2), .dx = b.at(1)});
          },
          ++seed, "backward data " + c.name);
    }
    {
      Result<std::shared_ptr<const dnn::Graph>> graph = dnn::graph_of(ConvBwdFilter{.shape = c.shape});
      ASSERT_THAT(graph, IsOk()) << c.name;
      expect_matches_reference(
          **graph,
          [&](const Device& d, const BufferMap& b) {
            return d.ask(ConvBwdFilter{.shape = c.shape, .x = b.at(1), .dy = b.at(3), .dw = b.at(2)});
          },
          ++seed, "backward filter " + c.name);
    }
  }
}

TEST_F(CudaDnn, FusedBiasActivationEpiloguesMatchTheUnfusedSequence) {
  const ConvShape shape{.layout = TensorLayout::channels_last,
                        .dtype = DType::f16,
                        .n = 2,
                        .c = 16,
                        .k = 32,
                        .input = {10, 10},
                        .filter = {3, 3},
                        .pre_padding = {1, 1},
                        .post_padding = {1, 1}};
  int seed = 0;  // 1 to 6, the seeds these cases have always had
  for (Activation activation : {Activation::identity, Activation::relu, Activation::sigmoid, Activation::tanh,
                                Activation::gelu_erf, Activation::silu}) {
    ++seed;
    const Epilogue epilogue{.activation = activation, .bias = BiasVector::per_channel};
    const ConvFwd fused{.shape = shape, .epilogue = epilogue};
    Result<std::shared_ptr<const dnn::Graph>> graph = dnn::graph_of(fused);
    ASSERT_THAT(graph, IsOk());
    const TensorArrays inputs = random_inputs(**graph, 100 + seed);
    auto submit_fused = [&](const Device& d, const BufferMap& b) {
      return d.ask(
          ConvFwd{.shape = shape, .x = b.at(1), .w = b.at(2), .y = b.at(3), .bias = b.at(4), .epilogue = epilogue});
    };
    Result<TensorArrays> on_gpu = run_on(*gpu_, **graph, inputs, submit_fused);
    ASSERT_THAT(on_gpu, IsOk()) << to_string(epilogue);
    // Unfused on the GPU: the convolution to memory (f32), then the bias add and the activation as graphs of
    // their own, each through memory.
    Result<TensorArrays> unfused = [&]() -> Result<TensorArrays> {
      Result<TensorArrays> conv = run_on(*gpu_, **graph, inputs, [&](const Device& d, const BufferMap& b) {
        return d.ask(ConvFwd{.shape = shape, .x = b.at(1), .w = b.at(2), .y = b.at(3)});
      });
      ACCEL_RETURN_IF_ERROR(conv.status());
      GraphBuilder b;
      auto y = b.tensor(DType::f16, {2, 32, 10, 10}, TensorLayout::channels_last);
      auto bias = b.tensor(DType::f16, {1, 32, 1, 1});
      auto w = b.tensor(DType::f16, {32, 32, 1, 1}, TensorLayout::channels_last);
      // An identity 1x1 convolution gives cuDNN a main op to fuse the pointwise ops onto.
      auto out = b.add(b.conv_forward(y, w), bias);
      if (activation == Activation::relu) out = b.relu(out);
      if (activation == Activation::sigmoid) out = b.pointwise(dnn::PointwiseMode::sigmoid, out);
      if (activation == Activation::tanh) out = b.pointwise(dnn::PointwiseMode::tanh, out);
      if (activation == Activation::gelu_erf) out = b.pointwise(dnn::PointwiseMode::gelu, out);
      if (activation == Activation::silu) out = b.pointwise(dnn::PointwiseMode::swish, out);
      b.output(out, DType::f16, TensorLayout::channels_last);
      ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const dnn::Graph> second, b.build());
      TensorArrays second_inputs;
      second_inputs.emplace(y.uid, conv->at(3));
      second_inputs.emplace(bias.uid, inputs.at(4));
      HostArray identity(DType::f16, 32 * 32);
      for (std::size_t k = 0; k < 32; ++k) identity.set(k * 32 + k, 1.0);
      second_inputs.emplace(w.uid, identity);
      ACCEL_ASSIGN_OR_RETURN(TensorArrays result, run_on(*gpu_, *second, second_inputs, run_graph(second)));
      TensorArrays renamed;
      renamed.emplace(3, result.at(out.uid));
      return renamed;
    }();
    ASSERT_THAT(unfused, IsOk()) << to_string(epilogue);
    // The fused result rounds once (f32 accumulator -> f16), the unfused one twice.
    EXPECT_LE(scaled_error(on_gpu->at(3), unfused->at(3)), 2e-2) << to_string(epilogue);
    expect_matches_reference(**graph, submit_fused, 200 + seed, fmt::format("fused {}", to_string(epilogue)));
  }
}

}  // namespace
}  // namespace accel::testing
