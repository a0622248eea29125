// The signature of an operation graph: equal graphs, equal bytes; every change that changes a plan changes
// them; the codec round-trips and refuses what is not a graph.
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
