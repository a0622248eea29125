// Operation graphs on the host: what GraphBuilder infers, what build() refuses (and how it says so), and
// Graph::create's own checks.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
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

// -- dims inference ----------------------------------------------------------------------------------------

TEST(GraphBuilderTest, ConvForwardInfersDimsFromPaddingStrideDilationAndGroups) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {2, 6, 10, 12});
  const TensorRef w = b.tensor(DType::f32, {8, 3, 3, 5});  // 2 groups of 3 input channels
  const TensorRef y =
      b.conv_forward(x, w, {.pre_padding = {1, 2}, .post_padding = {1, 2}, .stride = {2, 1}, .dilation = {1, 2}});
  b.output(y, DType::f32);
  auto graph = build(b);
  ASSERT_NE(graph, nullptr);
  // H: (10 + 2 - 3) / 2 + 1 = 5; W: (12 + 4 - (2 * 4 + 1)) / 1 + 1 = 8.
  EXPECT_THAT(dims_of(*graph, y), ElementsAre(2, 8, 5, 8));
  ASSERT_EQ(graph->nodes().size(), 1u);
  const auto& node = std::get<ConvolutionNode>(graph->nodes()[0]);
  EXPECT_EQ(node.spatial_rank, 2);
  EXPECT_EQ(node.stride[0], 2);
  EXPECT_EQ(node.stride[1], 1);
  EXPECT_EQ(node.dilation[1], 2);
  EXPECT_EQ(node.pre_padding[1], 2);
  EXPECT_TRUE(graph->writes(y.uid));
  EXPECT_FALSE(graph->writes(x.uid));
  EXPECT_THAT(graph->bound_uids(), ElementsAre(x.uid, w.uid, y.uid));
}

TEST(GraphBuilderTest, ConvForwardInfersDimsIn1DAnd3D) {
  {
    GraphBuilder b;
    const TensorRef x = b.tensor(DType::f32, {1, 4, 20});
    const TensorRef w = b.tensor(DType::f32, {6, 4, 5});
    const TensorRef y = b.conv_forward(x, w, {.pre_padding = {2}, .post_padding = {2}, .stride = {3}});
    b.output(y, DType::f32);
    auto graph = build(b);
    ASSERT_NE(graph, nullptr);
    EXPECT_THAT(dims_of(*graph, y), ElementsAre(1, 6, 7));  // (24 - 5) / 3 + 1
    EXPECT_EQ(std::get<ConvolutionNode>(graph->nodes()[0]).spatial_rank, 1);
  }
  {
    GraphBuilder b;
    const TensorRef x = b.tensor(DType::f16, {1, 2, 5, 6, 7}, TensorLayout::channels_last);
    const TensorRef w = b.tensor(DType::f16, {4, 2, 3, 3, 3}, TensorLayout::channels_last);
    const TensorRef y = b.conv_forward(
        x, w, {.pre_padding = {1, 0, 1}, .post_padding = {1, 0, 1}, .stride = {1, 2, 1}, .dilation = {2, 1, 1}});
    b.output(y, DType::f16, TensorLayout::channels_last);
    auto graph = build(b);
    ASSERT_NE(graph, nullptr);
    // D: (7 - 5) / 1 + 1 = 3; H: (6 - 3) / 2 + 1 = 2; W: (9 - 3) / 1 + 1 = 7.
    EXPECT_THAT(dims_of(*graph, y), ElementsAre(1, 4, 3, 2, 7));
    EXPECT_EQ(std::get<ConvolutionNode>(graph->nodes()[0]).spatial_rank, 3);
    EXPECT_EQ(graph->find(y.uid)->dtype, DType::f16);
    EXPECT_EQ(graph->find(y.uid)->strides, packed({1, 4, 3, 2, 7}, TensorLayout::channels_last));
  }
}

TEST(GraphBuilderTest, VirtualResultsKeepTheLayoutOfTheirInput) {
  for (TensorLayout layout : {TensorLayout::channels_last, TensorLayout::channels_first}) {
    SCOPED_TRACE(to_string(layout));
    GraphBuilder b;
    const TensorRef x = b.tensor(DType::f16, {2, 8, 5, 7}, layout);
    const TensorRef w = b.tensor(DType::f16, {16, 8, 3, 3}, layout);
    const TensorRef conv = b.conv_forward(x, w, {.pre_padding = {1, 1}, .post_padding = {1, 1}});
    const TensorRef bias = b.tensor(DType::f16, {1, 16, 1, 1});
    const TensorRef biased = b.add(conv, bias);
    const TensorRef y = b.relu(biased);
    b.output(y, DType::f16);  // the output itself is stored as asked (channels_first)
    auto graph = build(b);
    ASSERT_NE(graph, nullptr);
    for (TensorRef v : {conv, biased}) {
      const TensorDesc* t = graph->find(v.uid);
      ASSERT_NE(t, nullptr);
      EXPECT_TRUE(t->is_virtual);
      EXPECT_EQ(t->dtype, DType::f32);  // intermediates are f32
      EXPECT_THAT(t->shape(), ElementsAre(2, 16, 5, 7));
      EXPECT_EQ(t->strides, packed({2, 16, 5, 7}, layout)) << "uid " << v.uid;
    }
    EXPECT_EQ(graph->find(y.uid)->strides, packed({2, 16, 5, 7}, TensorLayout::channels_first));
    EXPECT_THAT(graph->bound_uids(), ElementsAre(x.uid, w.uid, bias.uid, y.uid));
  }
}

TEST(GraphBuilderTest, MatmulBroadcastsBatchDims) {
  GraphBuilder b;
  const TensorRef a = b.tensor(DType::bf16, {3, 1, 4, 5});
  const TensorRef m = b.tensor(DType::bf16, {1, 2, 5, 6});
  const TensorRef y = b.matmul(a, m);
  b.output(y, DType::f32);
  auto graph = build(b);
  ASSERT_NE(graph, nullptr);
  EXPECT_THAT(dims_of(*graph, y), ElementsAre(3, 2, 4, 6));
  EXPECT_EQ(graph->find(y.uid)->dtype, DType::f32);
}

TEST(GraphBuilderTest, PoolingInfersDims) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {1, 3, 9, 10}, TensorLayout::channels_last);
  const TensorRef max = b.pooling(
      x, {.mode = PoolingMode::max, .window = {3, 3}, .stride = {2, 2}, .pre_padding = {1, 1}, .post_padding = {1, 1}});
  const TensorRef avg =
      b.pooling(x, {.mode = PoolingMode::average_exclude_padding, .window = {2, 4}, .stride = {2, 3}});
  b.output(max, DType::f32);
  b.output(avg, DType::f32);
  auto graph = build(b);
  ASSERT_NE(graph, nullptr);
  EXPECT_THAT(dims_of(*graph, max), ElementsAre(1, 3, 5, 5));  // (11 - 3) / 2 + 1, (12 - 3) / 2 + 1
  EXPECT_THAT(dims_of(*graph, avg), ElementsAre(1, 3, 4, 3));  // (9 - 2) / 2 + 1, (10 - 4) / 3 + 1
}

TEST(GraphBuilderTest, AttentionInfersItsOutputsAndStats) {
  GraphBuilder b;
  const TensorRef q = b.tensor(DType::f16, {2, 4, 8, 16});
  const TensorRef k = b.tensor(DType::f16, {2, 4, 10, 16});
  const TensorRef v = b.tensor(DType::f16, {2, 4, 10, 32});
  const TensorRef len_q = b.tensor(DType::i32, {2, 1, 1, 1});
  const TensorRef len_kv = b.tensor(DType::i32, {2, 1, 1, 1});
  const AttentionOutputs out = b.attention(
      q, k, v, {.scale = 0.25f, .causal = true, .seq_len_q = len_q, .seq_len_kv = len_kv, .with_stats = true});
  ASSERT_FALSE(out.o.is_null());
  ASSERT_FALSE(out.stats.is_null());
  b.output(out.o, DType::f16);
  b.output(out.stats, DType::f32);
  auto graph = build(b);
  ASSERT_NE(graph, nullptr);
  EXPECT_THAT(dims_of(*graph, out.o), ElementsAre(2, 4, 8, 32));
  EXPECT_THAT(dims_of(*graph, out.stats), ElementsAre(2, 4, 8, 1));
  const auto& node = std::get<AttentionNode>(graph->nodes()[0]);
  EXPECT_TRUE(node.causal);
  EXPECT_EQ(node.scale, 0.25f);
  EXPECT_EQ(node.seq_len_q, len_q.uid);

  GraphBuilder without;
  const TensorRef q2 = without.tensor(DType::f16, {1, 1, 3, 8});
  const TensorRef k2 = without.tensor(DType::f16, {1, 1, 5, 8});
  const AttentionOutputs plain = without.attention(q2, k2, k2, {});
  EXPECT_TRUE(plain.stats.is_null());
  without.output(plain.o, DType::f16);
  auto graph2 = build(without);
  ASSERT_NE(graph2, nullptr);
  EXPECT_THAT(dims_of(*graph2, plain.o), ElementsAre(1, 1, 3, 8));
}

TEST(GraphBuilderTest, ReductionAndReshapeTakeTheDimsTheyAreGiven) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {2, 3, 4});
  const TensorRef sum = b.reduction(ReductionMode::add, x, {2, 1, 4});
  const TensorRef flat = b.reshape(x, {6, 4});
  const TensorRef all = b.reduction(ReductionMode::max, flat, {1, 1});
  b.output(sum, DType::f32);
  b.output(all, DType::f32);
  auto graph = build(b);
  ASSERT_NE(graph, nullptr);
  EXPECT_THAT(dims_of(*graph, sum), ElementsAre(2, 1, 4));
  EXPECT_THAT(dims_of(*graph, flat), ElementsAre(6, 4));
  EXPECT_TRUE(graph->find(flat.uid)->is_virtual);
  EXPECT_THAT(dims_of(*graph, all), ElementsAre(1, 1));
}

TEST(GraphBuilderTest, NormalisationsInferTheirStatistics) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {4, 3, 8});
  const TensorRef scale = b.tensor(DType::f32, {1, 3, 8});
  const TensorRef bias = b.tensor(DType::f32, {1, 3, 8});
  const NormOutputs ln = b.layer_norm(x, scale, bias, 1e-5f, /*training=*/true);
  const NormOutputs rms = b.rms_norm(x, scale, 1e-6f, /*training=*/true);
  EXPECT_TRUE(rms.mean.is_null());
  for (TensorRef t : {ln.y, ln.mean, ln.inv_variance, rms.y, rms.inv_variance}) b.output(t, DType::f32);
  const TensorRef img = b.tensor(DType::f32, {2, 5, 3, 3});
  const TensorRef c_scale = b.tensor(DType::f32, {1, 5, 1, 1});
  const TensorRef c_bias = b.tensor(DType::f32, {1, 5, 1, 1});
  const NormOutputs bn = b.batch_norm_training(img, c_scale, c_bias, 1e-3f);
  for (TensorRef t : {bn.y, bn.mean, bn.inv_variance}) b.output(t, DType::f32);
  auto graph = build(b);
  ASSERT_NE(graph, nullptr);
  EXPECT_THAT(dims_of(*graph, ln.y), ElementsAre(4, 3, 8));
  EXPECT_THAT(dims_of(*graph, ln.mean), ElementsAre(4, 1, 1));
  EXPECT_THAT(dims_of(*graph, ln.inv_variance), ElementsAre(4, 1, 1));
  EXPECT_THAT(dims_of(*graph, rms.inv_variance), ElementsAre(4, 1, 1));
  EXPECT_THAT(dims_of(*graph, bn.y), ElementsAre(2, 5, 3, 3));
  EXPECT_THAT(dims_of(*graph, bn.mean), ElementsAre(1, 5, 1, 1));
  EXPECT_THAT(dims_of(*graph, bn.inv_variance), ElementsAre(1, 5, 1, 1));
}

// -- build() errors ----------------------------------------------------------------------------------------

TEST(GraphBuilderErrorsTest, ConvChannelsThatDoNotMakeGroupsAreNamed) {
  {
    GraphBuilder b;
    const TensorRef x = b.tensor(DType::f32, {1, 6, 8, 8});
    const TensorRef w = b.tensor(DType::f32, {8, 4, 3, 3});  // 6 channels are not groups of 4
    b.output(b.conv_forward(x, w), DType::f32);
    EXPECT_THAT(b.build(), StatusIs(Code::invalid_argument, "conv_forward: input channels 6"));
  }
  {
    GraphBuilder b;
    const TensorRef x = b.tensor(DType::f32, {1, 6, 8, 8});
    const TensorRef w = b.tensor(DType::f32, {5, 3, 3, 3});  // 2 groups, 5 output channels
    b.output(b.conv_forward(x, w), DType::f32);
    EXPECT_THAT(b.build(), StatusIs(Code::invalid_argument, "conv_forward: output channels 5"));
  }
  {
    GraphBuilder b;
    const TensorRef x = b.tensor(DType::f32, {1, 6, 8, 8});
    const TensorRef w = b.tensor(DType::f32, {4, 6, 3});  // a 1-D filter for a 2-D input
    b.output(b.conv_forward(x, w), DType::f32);
    EXPECT_THAT(b.build(), StatusIs(Code::invalid_argument, "conv_forward: a 2-D convolution"));
  }
}

TEST(GraphBuilderErrorsTest, AFilterLargerThanThePaddedInputIsNamed) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {1, 2, 4, 4});
  const TensorRef w = b.tensor(DType::f32, {2, 2, 3, 3});
  // Dilation 2 spans 5 > 4 + 0 padding in dim 1; dim 0 has padding enough.
  b.output(b.conv_forward(x, w, {.pre_padding = {1, 0}, .post_padding = {0, 0}, .dilation = {2, 2}}), DType::f32);
  EXPECT_THAT(b.build(), StatusIs(Code::invalid_argument,
                                  "conv_forward: spatial dim 1: the dilated filter (5) is larger than the padded "
                                  "input (4)"));
}

TEST(GraphBuilderErrorsTest, OperandsThatDoNotBroadcastAreNamed) {
  GraphBuilder b;
  const TensorRef a = b.tensor(DType::f32, {2, 3, 4});
  const TensorRef c = b.tensor(DType::f32, {2, 5, 4});
  b.output(b.mul(a, c), DType::f32);
  EXPECT_THAT(b.build(), StatusIs(Code::invalid_argument, "mul: dim 1 is 3 and 5"));

  GraphBuilder ranks;
  const TensorRef r3 = ranks.tensor(DType::f32, {2, 3, 4});
  const TensorRef r2 = ranks.tensor(DType::f32, {3, 4});
  ranks.output(ranks.add(r3, r2), DType::f32);
  EXPECT_THAT(ranks.build(), StatusIs(Code::invalid_argument, "add: operands of rank 3 and 2"));
}

TEST(GraphBuilderErrorsTest, MatmulInnerDimsThatDifferAreNamed) {
  GraphBuilder b;
  const TensorRef a = b.tensor(DType::f32, {2, 3, 4});
  const TensorRef m = b.tensor(DType::f32, {2, 5, 6});
  b.output(b.matmul(a, m), DType::f32);
  EXPECT_THAT(b.build(), StatusIs(Code::invalid_argument, "matmul: a has 4 columns but b has 5 rows"));

  GraphBuilder batch;
  const TensorRef a2 = batch.tensor(DType::f32, {2, 3, 4});
  const TensorRef m2 = batch.tensor(DType::f32, {3, 4, 6});
  batch.output(batch.matmul(a2, m2), DType::f32);
  EXPECT_THAT(batch.build(), StatusIs(Code::invalid_argument, "matmul: dim 0 is 2 and 3"));
}

TEST(GraphBuilderErrorsTest, AReshapeToAnotherElementCountIsNamed) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {2, 3, 4});
  b.output(b.reshape(x, {5, 5}), DType::f32);
  EXPECT_THAT(b.build(), StatusIs(Code::invalid_argument, "reshape: 24 elements cannot take dims [5, 5]"));
}

TEST(GraphBuilderErrorsTest, AVirtualResultNobodyReadsIsRefused) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {2, 3});
  const TensorRef unused = b.relu(x);
  b.output(b.pointwise(PointwiseMode::neg, x), DType::f32);
  ASSERT_EQ(unused.uid, 2u);
  EXPECT_THAT(b.build(), StatusIs(Code::invalid_argument, "%2 is virtual but no op reads it"));
}

TEST(GraphBuilderErrorsTest, OutputOfAnInputIsRefused) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {2, 3});
  b.output(b.relu(x), DType::f32);
  b.output(x, DType::f32);
  EXPECT_THAT(b.build(), StatusIs(Code::invalid_argument, "output: %1 is an input of the graph"));

  GraphBuilder unknown;
  const TensorRef y = unknown.tensor(DType::f32, {2, 3});
  unknown.output(unknown.relu(y), DType::f32);
  unknown.output(TensorRef{77}, DType::f32);
  EXPECT_THAT(unknown.build(), StatusIs(Code::invalid_argument, "output: uid 77 is not a tensor of this builder"));
}

TEST(GraphBuilderErrorsTest, ReadingAnUnknownTensorNamesTheOpAndTheRole) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {2, 3});
  const TensorRef y = b.add(x, TensorRef{42});
  EXPECT_TRUE(y.is_null());
  b.output(b.relu(x), DType::f32);
  EXPECT_THAT(b.build(), StatusIs(Code::invalid_argument, "add: b is not a tensor of this builder"));

  GraphBuilder conv;
  const TensorRef w = conv.tensor(DType::f32, {2, 2, 3, 3});
  EXPECT_TRUE(conv.conv_forward(TensorRef{9}, w).is_null());
  EXPECT_THAT(conv.build(), StatusIs(Code::invalid_argument, "conv_forward: x is not a tensor of this builder"));
}

TEST(GraphBuilderErrorsTest, TheFirstMistakeIsTheOneReported) {
  GraphBuilder b;
  const TensorRef a = b.tensor(DType::f32, {2, 3});
  const TensorRef m = b.tensor(DType::f32, {4, 5});
  const TensorRef bad = b.matmul(a, m);  // first: inner dims
  EXPECT_TRUE(bad.is_null());
  b.output(b.reshape(a, {7}), DType::f32);  // second: element count
  EXPECT_THAT(b.build(), StatusIs(Code::invalid_argument, "matmul"));
}

// -- Graph::create -----------------------------------------------------------------------------------------

TEST(GraphCreateTest, AcceptsAValidDescription) {
  auto graph = Graph::create({desc(1, {2, 3}), desc(2, {2, 3}, true), desc(3, {2, 3})},
                             {PointwiseNode{.mode = PointwiseMode::relu, .a = 1, .out = 2},
                              PointwiseNode{.mode = PointwiseMode::neg, .a = 2, .out = 3}});
  ASSERT_THAT(graph, IsOk());
  EXPECT_THAT((*graph)->bound_uids(), ElementsAre(1, 3));
  EXPECT_TRUE((*graph)->writes(3));
  EXPECT_FALSE((*graph)->writes(1));
}

// Seen while fixing what fuzz/plan_key_fuzzer found: the element count and the strides' span were products that
// could wrap past 2^64 back under the limit (2^32 + 1 elements at stride 2^32 spanned "one" element).
TEST(GraphCreateTest, RejectsStridesWhoseSpanWrapsPast64Bits) {
  TensorDesc wide = desc(1, {(std::int64_t{1} << 32) + 1});
  wide.strides[0] = std::int64_t{1} << 32;
  EXPECT_THAT(Graph::create({wide, desc(2, {(std::int64_t{1} << 32) + 1})},
                            {PointwiseNode{.mode = PointwiseMode::relu, .a = 1, .out = 2}}),
              StatusIs(Code::invalid_argument, "span more than 2^48"));
}

TEST(GraphCreateTest, RejectsDuplicateUids) {
  EXPECT_THAT(Graph::create({desc(1, {2, 3}), desc(2, {2, 3}), desc(2, {2, 3})},
                            {PointwiseNode{.mode = PointwiseMode::relu, .a = 1, .out = 2}}),
              StatusIs(Code::invalid_argument, "uid 2 names two tensors"));
}

TEST(GraphCreateTest, RejectsAVirtualInputNotProducedEarlier) {
  // The op that makes %2 runs after the op that reads it.
  EXPECT_THAT(Graph::create({desc(1, {2, 3}), desc(2, {2, 3}, true), desc(3, {2, 3})},
                            {PointwiseNode{.mode = PointwiseMode::neg, .a = 2, .out = 3},
                             PointwiseNode{.mode = PointwiseMode::relu, .a = 1, .out = 2}}),
              StatusIs(Code::invalid_argument, "op 0 (neg): virtual input %2 is not the result of an earlier op"));
  // No op makes %2 at all.
  EXPECT_THAT(Graph::create({desc(1, {2, 3}), desc(2, {2, 3}, true), desc(3, {2, 3})},
                            {PointwiseNode{.mode = PointwiseMode::add, .a = 1, .b = 2, .out = 3}}),
              StatusIs(Code::invalid_argument, "virtual input %2"));
}

TEST(GraphCreateTest, RejectsAnOutputWrittenTwice) {
  EXPECT_THAT(
      Graph::create({desc(1, {2, 3}), desc(2, {2, 3})}, {PointwiseNode{.mode = PointwiseMode::relu, .a = 1, .out = 2},
                                                         PointwiseNode{.mode = PointwiseMode::neg, .a = 1, .out = 2}}),
      StatusIs(Code::invalid_argument, "op 1 (neg): %2 is written twice"));
  // Written after it was read as an input.
  EXPECT_THAT(Graph::create({desc(1, {2, 3}), desc(2, {2, 3}), desc(3, {2, 3})},
                            {PointwiseNode{.mode = PointwiseMode::relu, .a = 2, .out = 3},
                             PointwiseNode{.mode = PointwiseMode::neg, .a = 1, .out = 2}}),
              StatusIs(Code::invalid_argument, "op 1 (neg)"));
}

TEST(GraphCreateTest, RejectsOutputsWhoseDimsTheOpDoesNotMake) {
  EXPECT_THAT(
      Graph::create({desc(1, {2, 3}), desc(2, {3, 2})}, {PointwiseNode{.mode = PointwiseMode::relu, .a = 1, .out = 2}}),
      StatusIs(Code::invalid_argument, "op 0 (relu): output %2 has dims [3, 2], the op makes [2, 3]"));
  EXPECT_THAT(Graph::create({desc(1, {2, 3}), desc(2, {2, 3})}, {}),
              StatusIs(Code::invalid_argument, "at least one op"));
  EXPECT_THAT(
      Graph::create({desc(1, {2, 3}), desc(2, {2, 3})}, {PointwiseNode{.mode = PointwiseMode::relu, .a = 1, .out = 5}}),
      StatusIs(Code::invalid_argument, "output uid 5"));
}

}  // namespace
}  // namespace accel::dnn
