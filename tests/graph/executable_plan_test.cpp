// The memory plan of a specialisation: places reused by liveness, a rope written over the input it reads last, and a
// gated op's output kept off the place of the input of the matmul before it.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "accel/graph/graph.hpp"
#include "graph/executable_plan.hpp"

namespace accel::graph {
namespace {

Dim T() { return Dim::sym("tokens"); }

TEST(ExecutablePlanTest, ReusesArenaBytesByLiveness) {
  // A chain of eight elementwise ops: only two intermediates are alive at once (plus the input).
  GraphBuilder b;
  Tensor x = b.input("x", DType::f32, {T(), Dim::of(256)});
  Tensor t = x;
  for (int i = 0; i < 8; ++i) t = b.unary(Activation::relu, t);
  b.output("y", t);
  Result<ExecutablePlan> plan = ExecutablePlan::make(*b.build(), {{"tokens", 64}});
  ASSERT_TRUE(plan.ok());
  const std::uint64_t tensor_bytes = 64 * 256 * 4;
  EXPECT_EQ(plan->unshared_bytes(), 9 * tensor_bytes);
  EXPECT_LE(plan->arena_bytes(), 3 * tensor_bytes);
  // No two tensors alive at the same step share bytes: consecutive ones differ.
  for (std::uint32_t s : plan->steps()) {
    const Node& node = plan->graph().nodes()[s];
    EXPECT_NE(plan->slot(node.inputs[0]).offset, plan->slot(node.output).offset);
  }
}

// No two places alive at one step overlap. A place is one tensor's, or shared by a reshape or a rope written over
// its input with that input; it is alive from the step that makes its first tensor to the last step that reads one
// (or the end, for outputs).
void expect_no_live_overlap(const ExecutablePlan& plan) {
  const Graph& graph = plan.graph();
  const std::size_t count = graph.tensors().size();
  std::vector<std::uint32_t> place(count);
  for (std::uint32_t t = 0; t < count; ++t) place[t] = t;
  for (const Node& node : graph.nodes()) {
    const bool shares = node.kind == OpKind::reshape ||
                        (node.kind == OpKind::rope && plan.slot(node.inputs[0]) == plan.slot(node.output));
    if (shares) place[node.output] = place[node.inputs[0]];
  }
  struct Life {
    std::uint64_t end = 0;
    std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = -1;
    bool used = false;
  };
  std::vector<Life> lives(count);
  const auto touch = [&](std::uint32_t t, std::int64_t step) {
    if (t == Node::kNone || plan.slot(t).storage != Storage::arena) return;
    Life& life = lives[place[t]];
    life.used = true;
    life.first = std::min(life.first, step);
    life.last = std::max(life.last, step);
    life.end = std::max(life.end, plan.slot(t).offset + element_count(graph.tensors()[t].shape, plan.binding()) *
                                                            size_of(graph.tensors()[t].dtype));
  };
  for (std::uint32_t n : graph.inputs()) touch(graph.nodes()[n].output, -1);
  const auto& steps = plan.steps();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Node& node = graph.nodes()[steps[i]];
    for (std::uint32_t in : node.inputs) touch(in, static_cast<std::int64_t>(i));
    touch(node.output, static_cast<std::int64_t>(i));
  }
  for (const Graph::Output& out : graph.outputs()) touch(out.tensor, static_cast<std::int64_t>(steps.size()));
  for (std::uint32_t a = 0; a < count; ++a) {
    for (std::uint32_t b = a + 1; b < count; ++b) {
      const Life &x = lives[a], &y = lives[b];
      if (!x.used || !y.used || x.last < y.first || y.last < x.first) continue;
      const std::uint64_t xa = plan.slot(a).offset, ya = plan.slot(b).offset;
      EXPECT_TRUE(x.end <= ya || y.end <= xa)
          << graph.tensors()[a].name << " and " << graph.tensors()[b].name << " overlap while both are alive";
    }
  }
}

// A rope over packed q|k|v takes the projection's place when it is the projection's last reader (v's columns are
// then never copied); not when a later op still reads the projection, nor over a graph output.
TEST(ExecutablePlanTest, ARopeWritesOverTheInputItReadsLast) {
  const auto plan = [](bool read_again, bool projection_is_output) {
    GraphBuilder b;
    Tensor x = b.input("x", DType::f16, {T(), Dim::of(64)});
    Tensor o = b.input("o", DType::i32, {Dim::of(3)});
    Tensor qkv = b.matmul(x, b.parameter("w", DType::f16, {Dim::of(64), Dim::of(64)}), {.transpose_b = true});
    Tensor rotated = b.rope(qkv, b.sequence_positions(o, T()), 2, 1e4f, {.kv_heads = 1});
    Tensor y = b.attention_packed(rotated, o, 2, 64, {.kv_heads = 1});
    b.output("y", read_again ? b.binary(BinaryOp::add, y, b.slice(qkv, 1, 0, 32)) : y);
    if (projection_is_output) b.output("qkv", qkv);
    Result<std::shared_ptr<const Graph>> graph = b.build();
    EXPECT_TRUE(graph.ok()) << graph.status().to_string();
    Result<ExecutablePlan> made = ExecutablePlan::make(*graph, {{"tokens", 40}});
    EXPECT_TRUE(made.ok()) << made.status().to_string();
    const Node& rope = *std::find_if((*graph)->nodes().begin(), (*graph)->nodes().end(),
                                     [](const Node& n) { return n.kind == OpKind::rope; });
    Result<ExecutablePlan> back = ExecutablePlan::decode(*graph, made->encode());
    EXPECT_TRUE(back.ok()) << back.status().to_string();
    expect_no_live_overlap(*made);
    return made->slot(rope.inputs[0]) == made->slot(rope.output);
  };
  EXPECT_TRUE(plan(false, false));
  EXPECT_FALSE(plan(true, false));
  EXPECT_FALSE(plan(false, true));
}

// Rotary q and k as two ropes over their own projections, which share the positions: the k projection, made
// between the two ropes, must not take the positions' place, which the second rope reads last.
TEST(ExecutablePlanTest, ARopeWrittenOverItsInputKeepsItsOtherInputsAlive) {
  GraphBuilder b;
  Tensor x = b.input("x", DType::f32, {T(), Dim::of(32)});
  Tensor o = b.input("o", DType::i32, {Dim::of(3)});
  Tensor positions = b.sequence_positions(o, T());
  const auto projected = [&](const char* name) {
    return b.matmul(x, b.parameter(name, DType::f32, {Dim::of(32), Dim::of(32)}), {.transpose_b = true});
  };
  Tensor q = b.rope(projected("wq"), positions, 2, 1e4f);
  Tensor k = b.rope(projected("wk"), positions, 2, 1e4f);
  b.output("y", b.attention(q, k, projected("wv"), o, 2, 64));
  Result<std::shared_ptr<const Graph>> graph = b.build();
  ASSERT_TRUE(graph.ok()) << graph.status().to_string();
  for (std::int64_t tokens : {1, 40, 4096}) {
    Result<ExecutablePlan> plan = ExecutablePlan::make(*graph, {{"tokens", tokens}});
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    expect_no_live_overlap(*plan);
  }
}

// A matmul and the gated op after it may run as one product (the CUDA lowering's fused GEMM), which reads x while
// its epilogue writes the gated output: that output must not take x's place, though x's last reader is the matmul.
// With x wider than the output, the plan of liveness alone put the two at the same offset (ModernBERT-base's and
// Qwen3's MLPs read wrong rows of x on the H200 until the plan kept x alive).
TEST(ExecutablePlanTest, AGatedOutputNeverTakesThePlaceOfItsMatmulsInput) {
  for (const bool x_is_input : {true, false}) {
    GraphBuilder b;
    Tensor in = b.input("in", DType::f16, {T(), Dim::of(512)});
    Tensor x = x_is_input ? in : b.unary(Activation::relu, in);
    Tensor product = b.matmul(x, b.parameter("w", DType::f16, {Dim::of(512), Dim::of(512)}), {.transpose_b = true});
    b.output("y", b.binary(BinaryOp::add, b.gated(product, Activation::silu, GateLayout::groups_of_8),
                           b.input("bias", DType::f16, {T(), Dim::of(256)})));
    Result<std::shared_ptr<const Graph>> graph = b.build();
    ASSERT_TRUE(graph.ok()) << graph.status().to_string();
    const Node& gated = *std::find_if((*graph)->nodes().begin(), (*graph)->nodes().end(),
                                      [](const Node& n) { return n.kind == OpKind::gated; });
    for (std::int64_t tokens : {1, 4096}) {
      Result<ExecutablePlan> plan = ExecutablePlan::make(*graph, {{"tokens", tokens}});
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      expect_no_live_overlap(*plan);
      const std::uint64_t x_at = plan->slot(x.id).offset, y_at = plan->slot(gated.output).offset;
      const std::uint64_t x_end = x_at + static_cast<std::uint64_t>(tokens) * 512 * 2;
      const std::uint64_t y_end = y_at + static_cast<std::uint64_t>(tokens) * 256 * 2;
      EXPECT_TRUE(x_end <= y_at || y_end <= x_at)
          << "x [" << x_at << ", " << x_end << ") and the gated output [" << y_at << ", " << y_end << ") overlap";
    }
  }
}

}  // namespace
}  // namespace accel::graph
