// The template stage: shape inference and validation as ops are added, the canonical encoding, bucket ladders and
// the memory plan of a specialisation.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "accel/graph/graph.hpp"
#include "graph/executable_plan.hpp"
#include "graph/execute_operation.hpp"

namespace accel::graph {
namespace {

Dim T() { return Dim::sym("tokens"); }

// A two-layer MLP over token rows, bucketed by tokens.
std::shared_ptr<const Graph> mlp(std::int64_t width = 16, std::int64_t hidden = 64) {
  GraphBuilder b;
  b.bucket("tokens", Ladder::powers_of_two(8, 1024));
  Tensor x = b.input("x", DType::f32, {T(), Dim::of(width)});
  Tensor w1 = b.parameter("w1", DType::f32, {Dim::of(hidden), Dim::of(width)});
  Tensor b1 = b.parameter("b1", DType::f32, {Dim::of(hidden)});
  Tensor w2 = b.parameter("w2", DType::f32, {Dim::of(width), Dim::of(hidden)});
  Tensor h = b.matmul(x, w1, {.transpose_b = true, .bias = b1, .activation = Activation::gelu_erf});
  Tensor y = b.matmul(h, w2, {.transpose_b = true});
  Tensor g = b.parameter("g", DType::f32, {Dim::of(width)});
  b.output("y", b.layer_norm(y, g, std::nullopt, 1e-5f, x));
  Result<std::shared_ptr<const Graph>> built = b.build();
  EXPECT_TRUE(built.ok()) << built.status().to_string();
  return *built;
}

TEST(GraphBuilderTest, InfersShapesAndLaysOutParameters) {
  std::shared_ptr<const Graph> g = mlp();
  const TensorInfo& out = g->tensors()[g->outputs()[0].tensor];
  EXPECT_EQ(to_string(out.shape), "[tokens, 16]");
  ASSERT_EQ(g->parameters().size(), 4u);
  EXPECT_EQ(g->parameter("w1")->offset, 0u);
  EXPECT_EQ(g->parameter("b1")->offset, 64u * 16 * 4);
  EXPECT_EQ(g->weight_bytes() % 256, 0u);
  EXPECT_EQ(g->symbols(), std::vector<std::string>{"tokens"});
}

TEST(GraphBuilderTest, RefusesMismatchedShapesNamingTheOp) {
  GraphBuilder b;
  Tensor x = b.input("x", DType::f32, {T(), Dim::of(16)});
  Tensor w = b.parameter("w", DType::f32, {Dim::of(15), Dim::of(4)});
  b.output("y", b.matmul(x, w));
  Result<std::shared_ptr<const Graph>> built = b.build();
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), Code::invalid_argument);
  EXPECT_NE(built.status().message().find("matmul: inner dimensions differ"), std::string::npos);
}

TEST(GraphBuilderTest, RefusesDuplicateNamesMissingOutputsAndBadBuckets) {
  {
    GraphBuilder b;
    Tensor x = b.input("x", DType::f32, {T()});
    b.input("x", DType::f32, {T()});
    b.output("y", b.unary(Activation::relu, x));
    EXPECT_FALSE(b.build().ok());
  }
  {
    GraphBuilder b;
    b.input("x", DType::f32, {T()});
    EXPECT_NE(b.build().status().message().find("no outputs"), std::string::npos);
  }
  {
    GraphBuilder b;
    b.bucket("tokens", Ladder::explicit_rungs({8, 4}));
    EXPECT_NE(b.build().status().message().find("ascending"), std::string::npos);
  }
  {  // A bucketed symbol in a non-leading dim would let padding reach real rows.
    GraphBuilder b;
    b.bucket("tokens", Ladder::powers_of_two(8, 64));
    Tensor x = b.input("x", DType::f32, {T(), Dim::of(4)});
    b.output("y", b.transpose(x, {1, 0}));
    EXPECT_NE(b.build().status().message().find("only a leading dim"), std::string::npos);
  }
  {
    GraphBuilder b;
    Tensor q = b.input("q", DType::f32, {T(), Dim::of(30)});
    Tensor o = b.input("o", DType::i32, {Dim::sym("s", 1)});
    b.output("y", b.attention(q, q, q, o, 4, 64));
    EXPECT_NE(b.build().status().message().find("heads must divide"), std::string::npos);
  }
  {  // A mode byte from outside that names no PoolMode.
    GraphBuilder b;
    Tensor x = b.input("x", DType::f32, {T(), Dim::of(4)});
    Tensor o = b.input("o", DType::i32, {Dim::sym("s", 1)});
    b.output("y", b.pool(x, o, static_cast<PoolMode>(6)));
    EXPECT_NE(b.build().status().message().find("pool: mode 6 is not a PoolMode"), std::string::npos);
  }
}

TEST(GraphBuilderTest, EncodingIsCanonicalAndDecodesToAnEqualGraph) {
  std::shared_ptr<const Graph> a = mlp(), b = mlp();
  EXPECT_EQ(a->encoding(), b->encoding());
  EXPECT_NE(a->encoding(), mlp(16, 32)->encoding());
  Result<std::shared_ptr<const Graph>> decoded = Graph::decode(a->encoding());
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ((*decoded)->encoding(), a->encoding());
}

// A decoder's attention: rotary q and k, grouped-query heads, causal, past the encoders' 1,024 tokens.
Result<std::shared_ptr<const Graph>> decoder_attention(std::int32_t kv_heads, bool causal, std::int32_t max_length,
                                                       std::int32_t rope_heads = 4, std::int32_t window = 0) {
  GraphBuilder b;
  b.bucket("tokens", Ladder::powers_of_two(8, 64));
  Tensor q = b.input("q", DType::f32, {T(), Dim::of(32)});
  Tensor kv = b.input("kv", DType::f32, {T(), Dim::of(16)});
  Tensor o = b.input("o", DType::i32, {Dim::sym("s", 1)});
  Tensor positions = b.sequence_positions(o, T());
  Tensor rq = b.rope(q, positions, rope_heads, 1e6f), rk = b.rope(kv, positions, 2, 1e6f);
  b.output("y", b.attention(rq, rk, kv, o, 4, max_length, {.kv_heads = kv_heads, .causal = causal, .window = window}));
  return b.build();
}

TEST(GraphBuilderTest, DecoderOpsKeepTheirAttributesThroughTheEncoding) {
  Result<std::shared_ptr<const Graph>> g = decoder_attention(2, true, 40000);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  const Node& attention = (*g)->nodes().back();
  EXPECT_EQ(attention.kind, OpKind::attention);
  EXPECT_EQ(attention.kv_heads, 2);
  EXPECT_TRUE(attention.causal);
  EXPECT_EQ(attention.max_length, 40000);
  EXPECT_EQ((*g)->nodes()[attention.inputs[0]].kind, OpKind::rope);
  EXPECT_EQ((*g)->nodes()[attention.inputs[0]].theta, 1e6f);
  Result<std::shared_ptr<const Graph>> decoded = Graph::decode((*g)->encoding());
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ((*decoded)->nodes(), (*g)->nodes());
  EXPECT_NE((*decoder_attention(2, false, 40000))->encoding(), (*g)->encoding());
  EXPECT_NE(decoder_attention(4, true, 40000).status().message().find("key/value heads must divide"),
            std::string::npos);
  EXPECT_NE(decoder_attention(3, true, 40000).status().message().find("key/value heads must divide"),
            std::string::npos);
  EXPECT_NE(decoder_attention(2, true, kMaxAttentionLength + 1).status().message().find("max_length"),
            std::string::npos);
  EXPECT_NE(decoder_attention(2, true, 64, 32).status().message().find("rope: 32 heads"), std::string::npos);
}

// One rope over a packed q|k|v projection with Qwen3's per-head norms, as the decoders build it: its inputs, eps and
// kv_heads kept through the encoding; each misuse refused by name.
Result<std::shared_ptr<const Graph>> packed_rope(std::int64_t head_dim, std::int32_t kv_heads, bool query_norm,
                                                 bool key_norm, float eps = 1e-6f, std::int64_t gamma_size = 0) {
  GraphBuilder b;
  b.bucket("tokens", Ladder::powers_of_two(8, 64));
  Tensor qkv = b.input("qkv", DType::bf16, {T(), Dim::of((4 + 2 * kv_heads) * head_dim)});
  Tensor o = b.input("o", DType::i32, {Dim::sym("s", 1)});
  const Dim gamma{Dim::of(gamma_size != 0 ? gamma_size : head_dim)};
  RopeOptions options{.kv_heads = kv_heads, .eps = eps};
  if (query_norm) options.query_norm = b.parameter("q_norm", DType::bf16, {gamma});
  if (key_norm) options.key_norm = b.parameter("k_norm", DType::bf16, {gamma});
  Tensor rotated = b.rope(qkv, b.sequence_positions(o, T()), 4, 1e6f, options);
  b.output("y", kv_heads > 0 ? b.attention_packed(rotated, o, 4, 64, {.kv_heads = kv_heads, .causal = true}) : rotated);
  return b.build();
}

TEST(GraphBuilderTest, APackedNormalisedRopeKeepsThroughTheEncodingAndRefusesMisuse) {
  Result<std::shared_ptr<const Graph>> g = packed_rope(128, 2, true, true);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  const Node& attention = (*g)->nodes().back();
  const Node& rope = (*g)->nodes()[attention.inputs[0]];
  EXPECT_EQ(rope.kind, OpKind::rope);
  EXPECT_EQ(rope.kv_heads, 2);
  EXPECT_EQ(rope.eps, 1e-6f);
  ASSERT_EQ(rope.inputs.size(), 4u);
  EXPECT_EQ((*g)->tensors()[rope.inputs[2]].name, "q_norm");
  EXPECT_EQ((*g)->tensors()[rope.inputs[3]].name, "k_norm");
  Result<std::shared_ptr<const Graph>> decoded = Graph::decode((*g)->encoding());
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ((*decoded)->nodes(), (*g)->nodes());
  EXPECT_NE((*packed_rope(128, 2, false, false))->encoding(), (*g)->encoding());
  EXPECT_TRUE(packed_rope(64, 0, true, false).ok());  // q's heads alone, normalised
  const auto refused = [](const Result<std::shared_ptr<const Graph>>& r, std::string_view what) {
    EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().to_string();
  };
  refused(packed_rope(128, 2, true, false), "key_norm goes with query_norm");
  refused(packed_rope(64, 0, true, true), "key_norm goes with query_norm");
  refused(packed_rope(128, 2, true, true, 0.0f), "eps must be positive");
  refused(packed_rope(128, 2, true, true, 1e-6f, 64), "query_norm must be bf16 [128]");
  refused(packed_rope(258, 2, false, false), "head dims of at most 256");
  refused(packed_rope(128, -1, false, false), "rope: 4 heads");
}

TEST(GraphBuilderTest, GatedHalvesTheWidthKeepsItsActivationAndLayoutAndRefusesAnOddWidth) {
  const auto gated = [](std::int64_t width, GateLayout layout) {
    GraphBuilder b;
    b.bucket("tokens", Ladder::powers_of_two(8, 64));
    b.output("y", b.gated(b.input("x", DType::f16, {T(), Dim::of(width)}), Activation::silu, layout));
    return b.build();
  };
  for (const GateLayout layout : {GateLayout::halves, GateLayout::groups_of_8}) {
    Result<std::shared_ptr<const Graph>> g = gated(6144, layout);
    ASSERT_TRUE(g.ok()) << g.status().to_string();
    const Node& node = (*g)->nodes().back();
    EXPECT_EQ(node.kind, OpKind::gated);
    EXPECT_EQ(node.activation, Activation::silu);
    EXPECT_EQ(node.gate_layout, layout);
    EXPECT_EQ((*g)->tensors()[node.output].shape, (Shape{T(), Dim::of(3072)}));
    Result<std::shared_ptr<const Graph>> decoded = Graph::decode((*g)->encoding());
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    EXPECT_EQ((*decoded)->nodes(), (*g)->nodes());
  }
  EXPECT_NE((*gated(6144, GateLayout::halves))->encoding(), (*gated(6144, GateLayout::groups_of_8))->encoding());
  EXPECT_NE(gated(7, GateLayout::halves)
                .status()
                .message()
                .find("gated: x must be 2-D floating point of a constant even width"),
            std::string::npos);
  EXPECT_NE(gated(24, GateLayout::groups_of_8).status().message().find("not a multiple of 16"), std::string::npos);
  EXPECT_NE(gated(32, static_cast<GateLayout>(7)).status().message().find("unknown gate layout 7"), std::string::npos);
}

// A residual added in a matmul's epilogue: a fourth input kept through the encoding (absent, the node keeps its
// three), refused with another shape or dtype and after an activation.
Result<std::shared_ptr<const Graph>> residual_matmul(Shape residual_shape, DType residual_dtype,
                                                     Activation activation) {
  GraphBuilder b;
  b.bucket("tokens", Ladder::powers_of_two(8, 64));
  Tensor x = b.input("x", DType::f16, {T(), Dim::of(32)});
  Tensor stream = b.input("stream", residual_dtype, std::move(residual_shape));
  Tensor w = b.parameter("w", DType::f16, {Dim::of(16), Dim::of(32)});
  b.output("y", b.matmul(x, w, {.transpose_b = true, .activation = activation, .residual = stream}));
  return b.build();
}

TEST(GraphBuilderTest, AMatmulResidualKeepsThroughTheEncodingAndRefusesMisuse) {
  Result<std::shared_ptr<const Graph>> g = residual_matmul({T(), Dim::of(16)}, DType::f16, Activation::identity);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  const Node& node = (*g)->nodes().back();
  ASSERT_EQ(node.inputs.size(), 4u);
  EXPECT_EQ((*g)->nodes()[node.inputs[3]].kind, OpKind::input);
  EXPECT_EQ(node.inputs[2], Node::kNone);
  Result<std::shared_ptr<const Graph>> decoded = Graph::decode((*g)->encoding());
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ((*decoded)->nodes(), (*g)->nodes());
  EXPECT_EQ(mlp()->nodes()[4].inputs.size(), 3u);  // the first matmul: no residual, three inputs as before
  for (const auto& bad : {residual_matmul({T(), Dim::of(32)}, DType::f16, Activation::identity),
                          residual_matmul({Dim::of(8), Dim::of(16)}, DType::f16, Activation::identity),
                          residual_matmul({T(), Dim::of(16)}, DType::f32, Activation::identity),
                          residual_matmul({T(), Dim::of(16)}, DType::f16, Activation::silu)})
    EXPECT_NE(bad.status().message().find("matmul: a residual must be f16 [tokens, 16] and come with the identity "
                                          "activation"),
              std::string::npos)
        << bad.status().to_string();
}

TEST(GraphBuilderTest, AnAttentionWindowKeepsThroughTheEncodingAndIsNeverNegative) {
  Result<std::shared_ptr<const Graph>> g = decoder_attention(2, false, 512, 4, 64);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ((*g)->nodes().back().window, 64);
  Result<std::shared_ptr<const Graph>> decoded = Graph::decode((*g)->encoding());
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ((*decoded)->nodes(), (*g)->nodes());
  EXPECT_NE((*decoder_attention(2, false, 512, 4, 0))->encoding(), (*g)->encoding());
  EXPECT_NE(decoder_attention(2, false, 512, 4, -1).status().message().find("window -1 is negative"),
            std::string::npos);
}

// q|k|v in one tensor: k and v absent from the node, kept so through the encoding; misshaped packs refused by name.
Result<std::shared_ptr<const Graph>> packed_attention(std::int64_t width, std::int32_t heads, std::int32_t kv_heads) {
  GraphBuilder b;
  b.bucket("tokens", Ladder::powers_of_two(8, 64));
  Tensor qkv = b.input("qkv", DType::f16, {T(), Dim::of(width)});
  Tensor o = b.input("o", DType::i32, {Dim::sym("s", 1)});
  b.output("y", b.attention_packed(qkv, o, heads, 64, {.kv_heads = kv_heads}));
  return b.build();
}

TEST(GraphBuilderTest, PackedAttentionKeepsThroughTheEncodingAndRefusesMisshapedPacks) {
  Result<std::shared_ptr<const Graph>> g = packed_attention(96, 4, 0);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  const Node& attention = (*g)->nodes().back();
  EXPECT_TRUE(attention.packs_qkv());
  EXPECT_EQ((*g)->tensors()[attention.output].shape, (Shape{T(), Dim::of(32)}));
  EXPECT_FLOAT_EQ(attention.scale, 1.0f / std::sqrt(8.0f));
  Result<std::shared_ptr<const Graph>> decoded = Graph::decode((*g)->encoding());
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ((*decoded)->nodes(), (*g)->nodes());
  EXPECT_TRUE(packed_attention(64, 4, 2).ok());  // 4 query heads and 2 + 2 key/value heads of 8
  for (auto [width, heads, kv_heads] : {std::tuple{100, 4, 0}, {96, 4, 3}, {96, 0, 0}, {96 * 32, 1, 0}}) {
    EXPECT_NE(packed_attention(width, heads, kv_heads).status().message().find("attention: packed qkv"),
              std::string::npos)
        << width << " " << heads << " " << kv_heads;
  }
}

TEST(GraphBuilderTest, DamagedEncodingsAreRefused) {
  const std::vector<std::byte> good = mlp()->encoding();
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, good.size() / 2, good.size() - 1}) {
    EXPECT_FALSE(Graph::decode(std::span(good).first(cut)).ok()) << cut;
  }
  for (std::size_t at = 0; at < good.size(); at += 7) {
    std::vector<std::byte> bad = good;
    bad[at] ^= std::byte{0x5a};
    Result<std::shared_ptr<const Graph>> decoded = Graph::decode(bad);
    if (decoded.ok()) {  // a flip that still makes a valid graph
      EXPECT_EQ((*decoded)->encoding(), bad);
    }
  }
}

// Found by the graph fuzzer: a reshape's constant dims whose product passes int64 overflowed while the shapes were
// compared. Sizes past 2^48 bytes are refused when the graph is built, and at a binding when it runs.
TEST(GraphBuilderTest, RefusesSizesPastTheLimitWithoutOverflowing) {
  {
    GraphBuilder b;
    Tensor x = b.input("x", DType::f32, {Dim::of(8256), Dim::of(4)});
    b.output("y", b.reshape(x, {Dim::of(6192449487634496), Dim::of(8256)}));
    EXPECT_FALSE(b.build().ok());
  }
  {
    GraphBuilder b;
    b.output("y", b.unary(Activation::relu, b.input("x", DType::f32, {Dim::of(1ll << 40), Dim::of(1ll << 20)})));
    EXPECT_NE(b.build().status().message().find("larger than 2^48 bytes"), std::string::npos);
  }
  GraphBuilder b;
  b.output("y", b.unary(Activation::relu, b.input("x", DType::f32, {T(), Dim::sym("width")})));
  std::shared_ptr<const Graph> g = *b.build();
  Result<ExecutablePlan> huge = ExecutablePlan::make(g, {{"tokens", 1ll << 40}, {"width", 1ll << 40}});
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("at this binding"), std::string::npos);
  EXPECT_FALSE(ExecutablePlan::make(g, {{"tokens", INT64_MAX}, {"width", 1}}).ok());
}

TEST(LadderTest, PicksTheSmallestRungAtOrAbove) {
  const Ladder ladder = Ladder::powers_of_two(64, 1000);
  EXPECT_EQ(ladder.rungs, (std::vector<std::int64_t>{64, 128, 256, 512, 1000}));
  EXPECT_EQ(*ladder.rung_for(1), 64);
  EXPECT_EQ(*ladder.rung_for(129), 256);
  EXPECT_EQ(*ladder.rung_for(1000), 1000);
  EXPECT_FALSE(ladder.rung_for(1001).ok());
  EXPECT_EQ(Ladder::arithmetic(100, 250).rungs, (std::vector<std::int64_t>{100, 200, 250}));
  EXPECT_EQ(Ladder::powers_of_two(1ll << 61, INT64_MAX).rungs.back(), INT64_MAX);  // no overflow on the way
  EXPECT_EQ(Ladder::arithmetic(1ll << 62, INT64_MAX).rungs.size(), 2u);
}

TEST(BucketBindingTest, BucketsOnlyTheLadderedSymbols) {
  GraphBuilder b;
  b.bucket("tokens", Ladder::powers_of_two(16, 256));
  Tensor x = b.input("x", DType::f32, {T(), Dim::sym("width")});
  b.output("y", b.unary(Activation::relu, x));
  std::shared_ptr<const Graph> g = *b.build();
  Result<SymbolValues> compiled = bucket_binding(*g, {{"tokens", 17}, {"width", 5}});
  ASSERT_TRUE(compiled.ok());
  EXPECT_EQ(compiled->at("tokens"), 32);
  EXPECT_EQ(compiled->at("width"), 5);
  Result<SymbolValues> above = bucket_binding(*g, {{"tokens", 257}, {"width", 5}});
  ASSERT_FALSE(above.ok());
  EXPECT_NE(above.status().message().find("symbol 'tokens' = 257"), std::string::npos);
}

TEST(ExecutablePlanTest, EncodesAndRefusesAPlanOfAnotherBinding) {
  std::shared_ptr<const Graph> g = mlp();
  ExecutablePlan plan = *ExecutablePlan::make(g, {{"tokens", 64}});
  Result<ExecutablePlan> back = ExecutablePlan::decode(g, plan.encode());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->arena_bytes(), plan.arena_bytes());
  std::vector<std::byte> other = ExecutablePlan::make(g, {{"tokens", 128}})->encode();
  other.resize(other.size() - 1);
  EXPECT_FALSE(ExecutablePlan::decode(g, other).ok());
  EXPECT_FALSE(ExecutablePlan::make(g, {}).ok());
}

// What an executable depends on beyond its graph and binding (device, formats) begins its cache's disk keys instead.
TEST(ExecutableKeyTest, DiffersInGraphAndBinding) {
  std::shared_ptr<const Graph> g = mlp();
  const auto key = executable_key(*g, {{"tokens", 64}});
  EXPECT_EQ(key, executable_key(*mlp(), {{"tokens", 64}}));
  EXPECT_NE(key, executable_key(*g, {{"tokens", 128}}));
  EXPECT_NE(key, executable_key(*mlp(16, 32), {{"tokens", 64}}));
}

// What a CUDA device does with a run: replay the bucket's captured graph, or launch each op at the actual extent.
TEST(ReplaysTest, FollowsTheModeTheFillAndWhetherCapturesAreSafe) {
  CheckedExecute half_full;  // 17 of 32 tokens; "width" is not bucketed, so its rung is its value
  half_full.actual = {{"tokens", 17}, {"width", 5}};
  half_full.compiled = {{"tokens", 32}, {"width", 5}};
  CheckedExecute full = half_full;
  full.actual["tokens"] = 32;
  const Execute replay{.mode = ExecuteMode::replay}, direct{.mode = ExecuteMode::direct};
  const Execute automatic{.mode = ExecuteMode::automatic, .direct_below = 0.5f};
  EXPECT_TRUE(replays(replay, half_full, false));
  EXPECT_FALSE(replays(direct, full, false));
  EXPECT_TRUE(replays(automatic, half_full, false)) << "17 / 32 fills more than half";
  half_full.actual["tokens"] = 15;
  EXPECT_FALSE(replays(automatic, half_full, false)) << "15 / 32 fills less than half";
  EXPECT_TRUE(replays(automatic, full, false));
  EXPECT_TRUE(replays(Execute{}, half_full, false)) << "direct_below 0 (the default): always replays";
  // While cuBLASLt's start-up runs on its thread, no mode captures.
  for (const Execute* request : {&replay, &direct, &automatic}) EXPECT_FALSE(replays(*request, full, true));
}

}  // namespace
}  // namespace accel::graph
