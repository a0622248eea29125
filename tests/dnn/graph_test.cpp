// Operation graphs on the host: what GraphBuilder infers, what build() refuses (and how it says so), the
// signature and its codec, Graph::create's own checks, the plan keys of convolution requests and their graphs.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "accel/dnn/convolution.hpp"
#include "accel/dnn/graph.hpp"
#include "dnn/plan_key.hpp"
#include "testing/status_matchers.hpp"

namespace accel::dnn {
namespace {

using ::testing::ElementsAre;
using testing::IsOk;
using testing::StatusIs;

std::shared_ptr<const Graph> build(GraphBuilder& builder) {
  Result<std::shared_ptr<const Graph>> graph = builder.build();
  EXPECT_THAT(graph, IsOk());
  return graph.ok() ? *graph : nullptr;
}

std::vector<std::int64_t> dims_of(const Graph& graph, TensorRef ref) {
  const TensorDesc* t = graph.find(ref.uid);
  if (t == nullptr) {
    ADD_FAILURE() << "uid " << ref.uid << " is not a tensor of the graph";
    return {};
  }
  return {t->shape().begin(), t->shape().end()};
}

Dims packed(std::initializer_list<std::int64_t> dims, TensorLayout layout) {
  return packed_strides(std::span<const std::int64_t>(dims.begin(), dims.size()), layout);
}

TensorDesc desc(std::uint32_t uid, std::initializer_list<std::int64_t> dims, bool is_virtual = false,
                DType dtype = DType::f32) {
  TensorDesc t{.uid = uid, .dtype = dtype, .rank = static_cast<std::uint8_t>(dims.size()), .is_virtual = is_virtual};
  std::copy(dims.begin(), dims.end(), t.dims.begin());
  t.strides = packed(dims, TensorLayout::channels_first);
  return t;
}

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

// -- signatures --------------------------------------------------------------------------------------------

struct Variation {
  std::int64_t stride = 1;
  DType dtype = DType::f16;
  std::int64_t padding = 1;
  float epsilon = 1e-5f;
  float alpha = 1.0f;
  TensorLayout layout = TensorLayout::channels_last;
};

// conv -> swish(alpha) -> layer norm(epsilon): every variation changes what the plan computes.
std::shared_ptr<const Graph> variant(const Variation& v) {
  GraphBuilder b;
  const TensorRef x = b.tensor(v.dtype, {2, 4, 8, 8}, v.layout);
  const TensorRef w = b.tensor(v.dtype, {4, 4, 3, 3}, v.layout);
  const std::int64_t out = (8 + 2 * v.padding - 3) / v.stride + 1;
  const TensorRef conv = b.conv_forward(
      x, w,
      {.pre_padding = {v.padding, v.padding}, .post_padding = {v.padding, v.padding}, .stride = {v.stride, v.stride}});
  const TensorRef act = b.pointwise(PointwiseMode::swish, conv, {}, v.alpha);
  const TensorRef scale = b.tensor(DType::f32, {1, 4, out, out});
  const TensorRef bias = b.tensor(DType::f32, {1, 4, out, out});
  b.output(b.layer_norm(act, scale, bias, v.epsilon).y, v.dtype, v.layout);
  return build(b);
}

TEST(GraphSignatureTest, EqualGraphsHaveEqualSignatures) {
  auto first = variant({});
  auto second = variant({});
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_FALSE(first->signature().bytes.empty());
  EXPECT_EQ(first->signature().bytes, second->signature().bytes);
  EXPECT_EQ(first->signature().hash, second->signature().hash);
  EXPECT_EQ(first->signature(), second->signature());
  EXPECT_NE(first->signature().hash, 0u);
  // The same description through Graph::create gives the same signature again.
  auto again = Graph::create(first->tensors(), first->nodes());
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ((*again)->signature(), first->signature());
}

TEST(GraphSignatureTest, AnyChangeThatChangesThePlanChangesTheBytes) {
  auto base = variant({});
  ASSERT_NE(base, nullptr);
  const std::vector<std::pair<const char*, Variation>> changes = {
      {"stride", {.stride = 2}},
      {"dtype", {.dtype = DType::bf16}},
      {"padding", {.padding = 0}},
      {"epsilon", {.epsilon = 1e-3f}},
      {"pointwise alpha", {.alpha = 1.5f}},
      {"layout", {.layout = TensorLayout::channels_first}},
  };
  std::vector<GraphSignature> seen{base->signature()};
  for (const auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    auto changed = variant(change);
    ASSERT_NE(changed, nullptr);
    EXPECT_NE(changed->signature().bytes, base->signature().bytes);
    EXPECT_NE(changed->signature().hash, base->signature().hash);
    EXPECT_NE(changed->signature(), base->signature());
    for (const GraphSignature& other : seen) EXPECT_NE(changed->signature().bytes, other.bytes);
    seen.push_back(changed->signature());
  }

  // Alignment cannot be set through the builder: change it on the description.
  std::vector<TensorDesc> tensors = base->tensors();
  ASSERT_EQ(tensors[0].alignment, 16);
  tensors[0].alignment = 4;
  auto aligned = Graph::create(tensors, base->nodes());
  ASSERT_THAT(aligned, IsOk());
  EXPECT_NE((*aligned)->signature().bytes, base->signature().bytes);
  EXPECT_NE((*aligned)->signature().hash, base->signature().hash);

  // A bound tensor's strides (the same dims stored with padding between rows).
  tensors = base->tensors();
  tensors[0].strides[0] += 8;
  auto strided = Graph::create(tensors, base->nodes());
  ASSERT_THAT(strided, IsOk());
  EXPECT_NE((*strided)->signature().bytes, base->signature().bytes);
}

// A graph with one op of every kind, every optional tensor present somewhere.
std::shared_ptr<const Graph> every_op() {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f16, {2, 4, 6, 6}, TensorLayout::channels_last);
  const TensorRef w = b.tensor(DType::f16, {4, 2, 3, 3}, TensorLayout::channels_last);
  const TensorRef conv = b.conv_forward(x, w, {.pre_padding = {1, 1}, .post_padding = {1, 1}});
  const TensorRef mean = b.tensor(DType::f32, {1, 4, 1, 1});
  const TensorRef inv_var = b.tensor(DType::f32, {1, 4, 1, 1});
  const TensorRef scale = b.tensor(DType::f32, {1, 4, 1, 1});
  const TensorRef shift = b.tensor(DType::f32, {1, 4, 1, 1});
  const TensorRef bn = b.batch_norm_inference(conv, mean, inv_var, scale, shift);
  const TensorRef act = b.pointwise(PointwiseMode::swish, bn, {}, 1.5f);
  b.output(b.pooling(act, {.mode = PoolingMode::average_include_padding,
                           .window = {3, 3},
                           .stride = {2, 2},
                           .pre_padding = {1, 1},
                           .post_padding = {1, 1}}),
           DType::f16, TensorLayout::channels_last);
  b.output(b.reduction(ReductionMode::norm2, act, {2, 4, 1, 1}), DType::f32);

  const TensorRef img = b.tensor(DType::bf16, {2, 3, 4, 4});
  const TensorRef img_scale = b.tensor(DType::f32, {1, 3, 1, 1});
  const TensorRef img_bias = b.tensor(DType::f32, {1, 3, 1, 1});
  const NormOutputs bnt = b.batch_norm_training(img, img_scale, img_bias, 1e-3f);
  for (TensorRef t : {bnt.y, bnt.mean, bnt.inv_variance}) b.output(t, DType::f32);

  const TensorRef a = b.tensor(DType::f32, {2, 3, 4});
  const TensorRef m = b.tensor(DType::f32, {2, 4, 5});
  b.output(b.reshape(b.matmul(a, m), {6, 5}), DType::f32);

  const TensorRef rows = b.tensor(DType::f32, {2, 8});
  const TensorRef row_scale = b.tensor(DType::f32, {1, 8});
  const TensorRef row_bias = b.tensor(DType::f32, {1, 8});
  const NormOutputs ln = b.layer_norm(rows, row_scale, row_bias, 1e-5f, true);
  for (TensorRef t : {ln.y, ln.mean, ln.inv_variance}) b.output(t, DType::f32);
  b.output(b.rms_norm(rows, row_scale, 1e-6f, false, row_bias).y, DType::f32);

  const TensorRef q = b.tensor(DType::f16, {2, 2, 3, 8});
  const TensorRef k = b.tensor(DType::f16, {2, 2, 5, 8});
  const TensorRef v = b.tensor(DType::f16, {2, 2, 5, 4});
  const TensorRef len_q = b.tensor(DType::i32, {2, 1, 1, 1});
  const TensorRef len_kv = b.tensor(DType::i32, {2, 1, 1, 1});
  const AttentionOutputs att = b.attention(
      q, k, v, {.scale = 0.125f, .causal = true, .seq_len_q = len_q, .seq_len_kv = len_kv, .with_stats = true});
  b.output(att.o, DType::f16);
  b.output(att.stats, DType::f32);
  return build(b);
}

TEST(GraphSignatureTest, DecodingTheSignatureRoundTrips) {
  auto graph = every_op();
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(graph->nodes().size(), 11u);
  Result<std::shared_ptr<const Graph>> decoded = Graph::decode(graph->signature().bytes);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ((*decoded)->signature(), graph->signature());
  EXPECT_EQ((*decoded)->tensors(), graph->tensors());
  EXPECT_EQ((*decoded)->nodes(), graph->nodes());
  EXPECT_EQ((*decoded)->bound_uids(), graph->bound_uids());
  for (const TensorDesc& t : graph->tensors()) EXPECT_EQ((*decoded)->writes(t.uid), graph->writes(t.uid)) << t.uid;

  auto small = variant({});
  ASSERT_NE(small, nullptr);
  auto small_decoded = Graph::decode(small->signature().bytes);
  ASSERT_THAT(small_decoded, IsOk());
  EXPECT_EQ((*small_decoded)->signature(), small->signature());
}

// Where the first node's op index lies: format byte, two counts, then each tensor's fixed fields and its
// (dim, stride) pairs.
std::size_t first_node_offset(const Graph& graph) {
  std::size_t offset = 1 + 4 + 4;
  for (const TensorDesc& t : graph.tensors()) offset += 4 + 1 + 1 + 1 + 2 + t.rank * 16u;
  return offset;
}

TEST(GraphSignatureTest, DecodeRejectsBytesThatAreNotAGraph) {
  auto graph = variant({});
  ASSERT_NE(graph, nullptr);
  const std::vector<std::byte>& bytes = graph->signature().bytes;

  // Every proper prefix is cut short.
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_THAT(Graph::decode(std::span(bytes.data(), size)), StatusIs(Code::invalid_argument)) << size;
  }
  std::vector<std::byte> longer = bytes;
  longer.push_back(std::byte{0});
  EXPECT_THAT(Graph::decode(longer), StatusIs(Code::invalid_argument, "trailing"));

  std::vector<std::byte> format = bytes;
  format[0] = std::byte{static_cast<unsigned char>(std::to_integer<unsigned>(bytes[0]) + 1)};
  EXPECT_THAT(Graph::decode(format), StatusIs(Code::invalid_argument, "format"));

  const std::size_t op = first_node_offset(*graph);
  ASSERT_LT(op, bytes.size());
  ASSERT_EQ(std::to_integer<unsigned>(bytes[op]), graph->nodes()[0].index());  // the offset is right
  for (unsigned index : {static_cast<unsigned>(std::variant_size_v<Node>), 200u}) {
    std::vector<std::byte> unknown = bytes;
    unknown[op] = std::byte{static_cast<unsigned char>(index)};
    EXPECT_THAT(Graph::decode(unknown), StatusIs(Code::invalid_argument, "unknown op")) << index;
  }
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

TEST(GraphDecodeTest, EnumValuesOutsideTheirEnumAreRefused) {
  GraphBuilder b;
  auto x = b.tensor(DType::f32, {2, 3});
  b.output(b.pointwise(static_cast<PointwiseMode>(99), x), DType::f32);
  EXPECT_THAT(b.build(), StatusIs(Code::invalid_argument, "not one of the enum's values"));
}

TEST(GraphDecodeTest, ABoolFieldHoldingNeitherZeroNorOneIsRefused) {
  GraphBuilder b;
  auto x = b.tensor(DType::f32, {2, 3});
  b.output(b.relu(x), DType::f32);
  std::shared_ptr<const Graph> graph = *b.build();
  std::vector<std::byte> bytes = graph->signature().bytes;
  // Format byte, two counts, then tensor 1: uid (4 bytes), dtype, rank, is_virtual.
  constexpr std::size_t kFirstIsVirtual = 1 + 4 + 4 + 4 + 1 + 1;
  ASSERT_EQ(bytes[kFirstIsVirtual], std::byte{0});
  bytes[kFirstIsVirtual] = std::byte{2};
  EXPECT_THAT(Graph::decode(bytes), StatusIs(Code::invalid_argument));
}

}  // namespace
}  // namespace accel::dnn
