// The convolution requests on the host: their plan keys and the graphs they run.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "accel/dnn/convolution.hpp"
#include "accel/dnn/graph.hpp"
#include "dnn/plan_key.hpp"
#include "testing/dnn_graph.hpp"
#include "testing/status_matchers.hpp"

namespace accel::dnn {
namespace {

using ::testing::ElementsAre;
using testing::IsOk;
using testing::StatusIs;
using namespace graph_testing;

// -- plan keys and the graphs of convolution requests -----------------------------------------------------------

ConvShape small_shape() {
  return ConvShape{.spatial_rank = 2,
                   .layout = TensorLayout::channels_last,
                   .dtype = DType::f16,
                   .n = 2,
                   .c = 8,
                   .k = 4,
                   .groups = 2,
                   .input = {9, 7, 0},
                   .filter = {3, 3, 0},
                   .pre_padding = {1, 1, 0},
                   .post_padding = {1, 0, 0},
                   .stride = {2, 1, 1},
                   .dilation = {1, 2, 1}};
}

BufferHandle handle(std::uint32_t slot) { return BufferHandle{.device = 1, .slot = slot, .generation = slot}; }

TEST(PlanKeyTest, EqualConvShapesGiveEqualKeysWhateverTheBuffers) {
  const ConvFwd a{.shape = small_shape(),
                  .x = handle(1),
                  .w = handle(2),
                  .y = handle(3),
                  .bias = handle(4),
                  .epilogue = {.activation = Activation::relu, .bias = BiasVector::per_channel}};
  const ConvFwd b{.shape = small_shape(),
                  .x = handle(11),
                  .w = handle(12),
                  .y = handle(13),
                  .bias = handle(14),
                  .epilogue = {.activation = Activation::relu, .bias = BiasVector::per_channel}};
  EXPECT_FALSE(plan_key(a).empty());
  EXPECT_EQ(plan_key(a), plan_key(b));
  EXPECT_EQ(plan_key(ConvBwdData{.shape = small_shape(), .dy = handle(1)}),
            plan_key(ConvBwdData{.shape = small_shape(), .dy = handle(7)}));
}

TEST(PlanKeyTest, ADifferentEpilogueStrideOrDtypeGivesADifferentKey) {
  const ConvFwd base{.shape = small_shape(),
                     .epilogue = {.activation = Activation::relu, .bias = BiasVector::per_channel}};
  const auto key = plan_key(base);

  ConvFwd other = base;
  other.epilogue.activation = Activation::silu;
  EXPECT_NE(plan_key(other), key) << "activation";
  other = base;
  other.epilogue = {.bias = BiasVector::per_channel};
  EXPECT_NE(plan_key(other), key) << "bias only";
  other = base;
  other.epilogue = {};
  EXPECT_NE(plan_key(other), key) << "no epilogue";
  other = base;
  other.shape.stride[1] = 2;
  EXPECT_NE(plan_key(other), key) << "stride";
  other = base;
  other.shape.dtype = DType::bf16;
  EXPECT_NE(plan_key(other), key) << "dtype";
  other = base;
  other.shape.layout = TensorLayout::channels_first;
  EXPECT_NE(plan_key(other), key) << "layout";
  other = base;
  other.shape.post_padding[0] = 0;
  EXPECT_NE(plan_key(other), key) << "padding";
  other = base;
  other.shape.groups = 4;
  EXPECT_NE(plan_key(other), key) << "groups";
  other = base;
  other.shape.strided = true;
  other.shape.x_strides = {504, 1, 56, 8, 0};
  EXPECT_NE(plan_key(other), key) << "strided";
  ConvFwd other_strides = other;
  other_strides.shape.x_strides[0] = 600;
  EXPECT_NE(plan_key(other_strides), plan_key(other)) << "x strides";
}

TEST(PlanKeyTest, DirectionsAndGraphsHaveKeysOfTheirOwn) {
  const ConvShape shape = small_shape();
  const auto forward = plan_key(ConvFwd{.shape = shape});
  const auto data = plan_key(ConvBwdData{.shape = shape});
  const auto filter = plan_key(ConvBwdFilter{.shape = shape});
  EXPECT_NE(forward, data);
  EXPECT_NE(forward, filter);
  EXPECT_NE(data, filter);

  auto graph = graph_of(ConvFwd{.shape = shape});
  ASSERT_THAT(graph, IsOk());
  const auto graph_key = plan_key(**graph);
  EXPECT_NE(graph_key, forward);
  EXPECT_NE(graph_key, data);
  EXPECT_NE(graph_key, filter);
  // A graph's key is its signature behind a kind byte: equal graphs, equal keys.
  auto again = graph_of(ConvFwd{.shape = shape});
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(plan_key(**again), graph_key);
  ASSERT_EQ(graph_key.size(), (*graph)->signature().bytes.size() + 1);
  EXPECT_TRUE(std::equal(graph_key.begin() + 1, graph_key.end(), (*graph)->signature().bytes.begin()));
  auto bias_graph = graph_of(ConvFwd{.shape = shape, .epilogue = {.bias = BiasVector::per_channel}});
  ASSERT_THAT(bias_graph, IsOk());
  EXPECT_NE(plan_key(**bias_graph), graph_key);
}

TEST(ConvGraphTest, ForwardGraphsBindUidsOneToThreeAndFourWithABias) {
  for (const ConvShape& shape : {small_shape(),
                                 ConvShape{.spatial_rank = 1,
                                 .layout = TensorLayout::channels_first,
                                 .dtype = DType::f32,
                                 .n = 1,
                                 .c = 3,
                                 .k = 5,
                                 .input = {11, 0, 0},
                                 .filter = {4, 0, 0},
                                 .stride = {3, 1, 1}},
                                 ConvShape{.spatial_rank = 3,
                                 .dtype = DType::bf16,
                                 .n = 1,
                                 .c = 2,
                                 .k = 2,
                                 .input = {4, 5, 6},
                                 .filter = {2, 3, 3},
                                 .pre_padding = {0, 1, 1},
                                 .post_padding = {0, 1, 1}}}) {
    SCOPED_TRACE(to_string(shape));
    Result<ConvTensors> tensors = conv_tensors(shape);
    ASSERT_THAT(tensors, IsOk());
    auto plain = graph_of(ConvFwd{.shape = shape});
    ASSERT_THAT(plain, IsOk());
    EXPECT_THAT((*plain)->bound_uids(), ElementsAre(1, 2, 3));
    EXPECT_EQ(*(*plain)->find(1), tensors->x);
    EXPECT_EQ(*(*plain)->find(2), tensors->w);
    EXPECT_EQ(*(*plain)->find(3), tensors->y);
    EXPECT_TRUE((*plain)->writes(3));
    EXPECT_FALSE((*plain)->writes(1));
    EXPECT_EQ((*plain)->nodes().size(), 1u);

    for (Activation activation : {Activation::identity, Activation::relu, Activation::silu}) {
      const Epilogue epilogue{.activation = activation, .bias = BiasVector::per_channel};
      SCOPED_TRACE(to_string(epilogue));
      auto fused = graph_of(ConvFwd{.shape = shape, .epilogue = epilogue});
      ASSERT_THAT(fused, IsOk());
      EXPECT_THAT((*fused)->bound_uids(), ElementsAre(1, 2, 3, 4));
      EXPECT_EQ(*(*fused)->find(1), tensors->x);
      EXPECT_EQ(*(*fused)->find(3), tensors->y);
      EXPECT_EQ(*(*fused)->find(4), tensors->bias);
      EXPECT_EQ((*fused)->nodes().size(), activation == Activation::identity ? 2u : 3u);
      EXPECT_TRUE((*fused)->writes(3));
      EXPECT_FALSE((*fused)->writes(4));
    }
    // The y dims are what conv_output_extents says.
    auto extents = conv_output_extents(shape);
    ASSERT_THAT(extents, IsOk());
    for (std::size_t i = 0; i < shape.spatial_rank; ++i) EXPECT_EQ(tensors->y.dims[i + 2], (*extents)[i]);
  }
}

TEST(ConvGraphTest, BackwardGraphsWriteTheGradientTheyAreNamedFor) {
  const ConvShape shape = small_shape();
  Result<ConvTensors> tensors = conv_tensors(shape);
  ASSERT_THAT(tensors, IsOk());
  EXPECT_THAT(tensors->y.shape(), ElementsAre(2, 4, 5, 4));  // (11 - 3) / 2 + 1, (8 - 5) / 1 + 1
  EXPECT_THAT(tensors->w.shape(), ElementsAre(4, 4, 3, 3));

  auto data = graph_of(ConvBwdData{.shape = shape});
  ASSERT_THAT(data, IsOk());
  EXPECT_THAT((*data)->bound_uids(), ElementsAre(1, 2, 3));
  EXPECT_EQ(*(*data)->find(1), tensors->x);  // dx
  EXPECT_EQ(*(*data)->find(2), tensors->w);
  EXPECT_EQ(*(*data)->find(3), tensors->y);  // dy
  EXPECT_TRUE((*data)->writes(1));
  EXPECT_FALSE((*data)->writes(2));
  EXPECT_FALSE((*data)->writes(3));
  EXPECT_EQ(std::get<ConvolutionNode>((*data)->nodes()[0]).direction, ConvDirection::backward_data);

  auto filter = graph_of(ConvBwdFilter{.shape = shape});
  ASSERT_THAT(filter, IsOk());
  EXPECT_THAT((*filter)->bound_uids(), ElementsAre(1, 2, 3));
  EXPECT_EQ(*(*filter)->find(1), tensors->x);
  EXPECT_EQ(*(*filter)->find(2), tensors->w);  // dw
  EXPECT_EQ(*(*filter)->find(3), tensors->y);  // dy
  EXPECT_TRUE((*filter)->writes(2));
  EXPECT_FALSE((*filter)->writes(1));
  EXPECT_EQ(std::get<ConvolutionNode>((*filter)->nodes()[0]).direction, ConvDirection::backward_filter);
}

TEST(ConvGraphTest, ARequestThatIsNotAConvolutionHasNoGraph) {
  ConvShape shape = small_shape();
  shape.groups = 3;
  EXPECT_THAT(graph_of(ConvFwd{.shape = shape}), StatusIs(Code::invalid_argument, "groups"));
  shape = small_shape();
  shape.dtype = DType::i32;
  EXPECT_THAT(graph_of(ConvBwdData{.shape = shape}), StatusIs(Code::not_supported, "i32"));
  shape = small_shape();
  shape.filter[1] = 9;
  EXPECT_THAT(graph_of(ConvBwdFilter{.shape = shape}), StatusIs(Code::invalid_argument, "larger than the padded"));
}

// Found by fuzz/plan_key_fuzzer: the packed strides of a shape with more than 2^48 elements were computed (and
// overflowed) before the tensor's check refused it.
TEST(ConvGraphTest, AShapeTooLargeIsRefusedWithoutOverflow) {
  ConvShape shape = small_shape();
  shape.layout = TensorLayout::channels_last;
  shape.c = shape.k = shape.groups = std::int64_t{1} << 40;
  shape.input = {std::int64_t{1} << 20, std::int64_t{1} << 20, 1};
  EXPECT_THAT(graph_of(ConvFwd{.shape = shape}), StatusIs(Code::invalid_argument, "more than 2^48 elements"));
}

// Found by fuzz/dnn_graph_fuzzer: a decoded graph's dilation or padding made the filter's span overflow.
TEST(ConvGraphTest, ADilationThatOverflowsIsRefused) {
  ConvolutionNode conv{.direction = ConvDirection::forward, .spatial_rank = 1, .a = 1, .b = 2, .out = 3};
  conv.dilation[0] = std::int64_t{1} << 62;
  EXPECT_THAT(Graph::create({desc(1, {1, 1, 8}), desc(2, {1, 1, 3}), desc(3, {1, 1, 8})}, {conv}),
              StatusIs(Code::invalid_argument, "overflows"));
  conv.dilation[0] = 1;
  conv.pre_padding[0] = std::numeric_limits<std::int64_t>::max();
  EXPECT_THAT(Graph::create({desc(1, {1, 1, 8}), desc(2, {1, 1, 3}), desc(3, {1, 1, 8})}, {conv}),
              StatusIs(Code::invalid_argument, "overflows"));
}

// Found by fuzz/plan_key_fuzzer: a request's dilation and filter made the filter's span overflow before any
// tensor was checked.
TEST(ConvGraphTest, AShapeWhoseFilterSpanOverflowsIsRefused) {
  ConvShape shape = small_shape();
  shape.dilation[0] = 1 << 24;
  shape.filter[0] = std::int64_t{1} << 40;
  EXPECT_THAT(graph_of(ConvFwd{.shape = shape}), StatusIs(Code::invalid_argument, "overflows"));
}

}  // namespace
}  // namespace accel::dnn
