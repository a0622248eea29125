// graph::Execute on the CPU device: a transformer encoder layer against the naive double reference for a sweep of
// packed lengths, a matmul's residual, a gated matmul in both layouts, every pool mode through its encoding,
// bindings inside shared buffers (in process and isolated), bindings refused before anything runs, executables
// compiled once per bucket, and executables found on disk by a second process.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "accel/device/device.hpp"
#include "accel/graph/execute.hpp"
#include "graph/kernels/cpu_packed_matmul.hpp"
#include "testing/encoder_graph.hpp"
#include "testing/gated_matmul_graph.hpp"
#include "testing/offset_bindings.hpp"
#include "testing/pool_reference.hpp"
#include "testing/residual_matmul.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::graph {
namespace {

using testing::EncoderShape;

class CpuGraphExecuteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Device> opened = Device::open(system_, {.kind = DeviceKind::cpu});
    ASSERT_TRUE(opened.ok()) << opened.status().to_string();
    device_.emplace(std::move(*opened));
  }

  template <class T>
  Buffer<T> upload(const std::vector<T>& values) {
    Buffer<T> buffer = *device_->allocate<T>(std::max<std::size_t>(values.size(), 1)).wait();
    EXPECT_TRUE(device_->upload(std::span<const T>(values), buffer).wait().ok());
    return buffer;
  }
  template <class T>
  std::vector<T> download(const Buffer<T>& buffer, std::size_t count) {
    std::vector<T> out(count);
    EXPECT_TRUE(device_->download(buffer, std::span<T>(out)).wait().ok());
    return out;
  }
  CacheStats executables() {
    DeviceInfo info = *device_->info().wait();
    const CacheStats* stats = info.cache("graph-executables");
    return stats == nullptr ? CacheStats{} : *stats;
  }

  System system_;
  std::optional<Device> device_;
};

class CpuEncoderLayerTest : public CpuGraphExecuteTest, public ::testing::WithParamInterface<bool> {};

// With q, k and v as three projections, and as one read by attention_packed.
TEST_P(CpuEncoderLayerTest, MatchesTheReferenceForASweepOfPackedLengths) {
  const EncoderShape shape{.packed_qkv = GetParam()};
  auto graph = testing::encoder_graph(shape, Ladder::powers_of_two(16, 2048), Ladder::powers_of_two(1, 64));
  std::mt19937 rng(7);
  const auto params = testing::random_parameters(*graph, rng);
  Buffer<std::uint8_t> weights = upload(testing::weight_bytes_f32(*graph, params));
  for (std::int64_t sequences : {1, 3, 8, 17}) {
    const std::vector<std::int32_t> offsets = testing::random_offsets(sequences, shape.max_length, rng);
    const std::int64_t tokens = offsets.back();
    std::vector<float> x(static_cast<std::size_t>(tokens * shape.width));
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (float& e : x) e = dist(rng);
    Buffer<float> y = *device_->allocate<float>(x.size()).wait();
    Buffer<float> pooled = *device_->allocate<float>(static_cast<std::uint64_t>(sequences * shape.width)).wait();
    Status ran = device_
                     ->ask(Execute{.graph = graph,
                                   .symbols = {{"tokens", tokens}, {"sequences", sequences}},
                                   .weights = weights,
                                   .inputs = {{"x", upload(x)}, {"offsets", upload(offsets)}},
                                   .outputs = {{"y", y}, {"pooled", pooled}}})
                     .wait()
                     .status();
    ASSERT_TRUE(ran.ok()) << ran.to_string();
    const auto ref = testing::reference_encoder(shape, *graph, params, x, offsets);
    const auto got = download(y, x.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], ref.out[i], 2e-4) << "tokens " << tokens << " at " << i;
    const auto got_pooled = download(pooled, ref.pooled.size());
    for (std::size_t i = 0; i < got_pooled.size(); ++i) ASSERT_NEAR(got_pooled[i], ref.pooled[i], 1e-5);
  }
}

// A bf16 graph keeps its activations in f32 between ops and runs its matmuls in bf16 on weights packed once, from
// the bf16 of the weights buffer (cpu_bf16_graph.hpp). Parameters and x are bf16 values, so the reference computes
// with what the device holds: what is left is each matmul's input rows rounded to bf16 and the outputs' rounding.
// A CPU without avx512_bf16 or AMX refuses the graph before anything runs.
TEST_P(CpuEncoderLayerTest, Bf16GraphRunsItsMatmulsInBf16) {
  const EncoderShape shape{.dtype = DType::bf16, .packed_qkv = GetParam()};
  auto graph = testing::encoder_graph(shape, Ladder::powers_of_two(16, 2048), Ladder::powers_of_two(1, 64));
  std::mt19937 rng(9);
  auto params = testing::random_parameters(*graph, rng);
  std::vector<std::uint8_t> bytes(graph->weight_bytes());
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto* out = reinterpret_cast<BFloat16*>(bytes.data() + graph->parameters()[i].offset);
    for (std::size_t j = 0; j < params[i].size(); ++j) {
      out[j] = to_bfloat16(params[i][j]);
      params[i][j] = to_float(out[j]);
    }
  }
  Buffer<std::uint8_t> weights = upload(bytes);
  const auto to_bf16 = [](const std::vector<float>& v) {
    std::vector<BFloat16> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = to_bfloat16(v[i]);
    return out;
  };
  for (std::int64_t sequences : {1, 3, 8, 17}) {
    const std::vector<std::int32_t> offsets = testing::random_offsets(sequences, shape.max_length, rng);
    const std::int64_t tokens = offsets.back();
    std::vector<float> x(static_cast<std::size_t>(tokens * shape.width));
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (float& e : x) e = to_float(to_bfloat16(dist(rng)));
    Buffer<BFloat16> y = *device_->allocate<BFloat16>(x.size()).wait();
    Buffer<BFloat16> pooled = *device_->allocate<BFloat16>(static_cast<std::uint64_t>(sequences * shape.width)).wait();
    const Buffer<BFloat16> xb = upload(to_bf16(x));
    const Buffer<std::int32_t> ob = upload(offsets);
    const Execute request{.graph = graph,
                          .symbols = {{"tokens", tokens}, {"sequences", sequences}},
                          .weights = weights,
                          .inputs = {{"x", xb}, {"offsets", ob}},
                          .outputs = {{"y", y}, {"pooled", pooled}}};
    Status ran = device_->ask(request).wait().status();
    if (!cpu::cpu_has_bf16()) {
      EXPECT_EQ(ran.code(), Code::not_supported);
      EXPECT_NE(ran.message().find("avx512_bf16 or AMX"), std::string::npos) << ran.message();
      return;
    }
    ASSERT_TRUE(ran.ok()) << ran.to_string();
    const auto ref = testing::reference_encoder(shape, *graph, params, x, offsets);
    const auto got = download(y, x.size());
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(to_float(got[i]) - ref.out[i]));
    EXPECT_LT(worst, 5e-2) << "tokens " << tokens;
    const auto got_pooled = download(pooled, ref.pooled.size());
    for (std::size_t i = 0; i < got_pooled.size(); ++i) ASSERT_NEAR(to_float(got_pooled[i]), ref.pooled[i], 1e-2);
    // The weights were packed by the bucket's first run: the same weights never pack again.
    const std::uint64_t packs = cpu::PackedMatmul::packs_made();
    ASSERT_TRUE(device_->ask(request).wait().ok());
    EXPECT_EQ(cpu::PackedMatmul::packs_made(), packs) << "tokens " << tokens;
    if (sequences != 17) continue;
    // Written again (even with the same bytes), the weights are new contents to the device: packed again.
    ASSERT_TRUE(device_->upload(std::span<const std::uint8_t>(bytes), weights).wait().ok());
    ASSERT_TRUE(device_->ask(request).wait().ok());
    EXPECT_GT(cpu::PackedMatmul::packs_made(), packs);
  }
}

// A bf16 matmul whose bias is an input, not a parameter: its pack (which holds the bias) is made again each run,
// so a new bias is seen (every value a small integer, exact in bf16).
TEST_F(CpuGraphExecuteTest, Bf16MatmulWithAnInputBiasSeesEachRunsBias) {
  GraphBuilder b;
  Tensor x = b.input("x", DType::bf16, {Dim::of(40), Dim::of(16)});
  Tensor bias = b.input("bias", DType::bf16, {Dim::of(8)});
  b.output("y", b.matmul(x, b.parameter("w", DType::bf16, {Dim::of(16), Dim::of(8)}), {.bias = bias}));
  std::shared_ptr<const Graph> graph = *b.build();
  std::vector<std::uint8_t> bytes(graph->weight_bytes());
  auto* w = reinterpret_cast<BFloat16*>(bytes.data());
  for (int i = 0; i < 16 * 8; ++i) w[i] = to_bfloat16(i % 3 == 0 ? 1.0f : 0.0f);
  Buffer<std::uint8_t> weights = upload(bytes);
  const Buffer<BFloat16> xb = upload(std::vector<BFloat16>(40 * 16, to_bfloat16(1.0f)));
  Buffer<BFloat16> y = *device_->allocate<BFloat16>(40 * 8).wait();
  for (float offset : {0.0f, 100.0f}) {
    std::vector<BFloat16> values(8);
    for (int j = 0; j < 8; ++j) values[j] = to_bfloat16(offset + static_cast<float>(j));
    const Buffer<BFloat16> bb = upload(values);
    const Status ran =
        device_
            ->ask(
                Execute{.graph = graph, .weights = weights, .inputs = {{"x", xb}, {"bias", bb}}, .outputs = {{"y", y}}})
            .wait()
            .status();
    if (!cpu::cpu_has_bf16()) {  // refused, as Bf16GraphRunsItsMatmulsInBf16 checks
      EXPECT_EQ(ran.code(), Code::not_supported);
      return;
    }
    ASSERT_TRUE(ran.ok()) << ran.to_string();
    const std::vector<BFloat16> got = download(y, 40 * 8);
    for (int r = 0; r < 40; ++r)
      for (int j = 0; j < 8; ++j) {
        float ones = 0;  // x is all ones: the column's sum of w
        for (int i = 0; i < 16; ++i) ones += (i * 8 + j) % 3 == 0 ? 1.0f : 0.0f;
        ASSERT_EQ(to_float(got[r * 8 + j]), ones + offset + static_cast<float>(j)) << "row " << r << " column " << j;
      }
  }
}

// A residual added after the product: packed weights (parameters) and OpenBLAS's (weights the graph reads as input).
TEST_F(CpuGraphExecuteTest, AMatmulAddsItsResidual) {
  testing::expect_residual_matmuls(
      *device_, {{.weights_are_parameters = true}, {.weights_are_parameters = false}, {.k = 7, .n = 3}},
      ExecuteMode::automatic, 23);
}

// A gated MLP's matmul and gate in either layout, its product an output of the graph as well or not.
TEST_F(CpuGraphExecuteTest, AGatedMatmulMatchesTheReferenceInEitherLayout) {
  testing::expect_gated_matmuls(*device_,
                                {{.dtype = DType::f32},
                                 {.dtype = DType::f32, .activation = Activation::gelu_erf},
                                 {.dtype = DType::f32, .layout = GateLayout::halves},
                                 {.dtype = DType::f32, .product_is_output = true}},
                                ExecuteMode::automatic, 29);
}

INSTANTIATE_TEST_SUITE_P(QkvProjections, CpuEncoderLayerTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "packed" : "separate"; });

// Each mode survives the encoding (a graph that decodes to an equal one, and differs from the other modes'), and
// the decoded graph pools bucketed, padded inputs as the reference does.
TEST_F(CpuGraphExecuteTest, EveryPoolModeEncodesDecodesAndRuns) {
  constexpr std::int64_t kWidth = 24;
  const std::vector<std::int32_t> offsets{0, 3, 3, 10, 11};  // an empty sequence; 11 tokens run in the 16 bucket
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(offsets.back() * kWidth));
  for (float& e : x) e = dist(rng);
  std::vector<std::vector<std::byte>> encodings;  // of the modes before
  for (PoolMode mode : testing::kPoolModes) {
    SCOPED_TRACE(to_string(mode));
    GraphBuilder b;
    b.bucket("tokens", Ladder::powers_of_two(16, 256)).bucket("sequences", Ladder::powers_of_two(1, 8));
    Tensor in = b.input("x", DType::f32, {Dim::sym("tokens"), Dim::of(kWidth)});
    Tensor o = b.input("offsets", DType::i32, {Dim::sym("sequences", 1)}, Padding::repeat_last);
    b.output("pooled", b.pool(in, o, mode));
    std::shared_ptr<const Graph> built = *b.build();
    Result<std::shared_ptr<const Graph>> decoded = Graph::decode(built->encoding());
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    EXPECT_EQ((*decoded)->nodes(), built->nodes());
    EXPECT_EQ((*decoded)->encoding(), built->encoding());
    for (const std::vector<std::byte>& other : encodings) EXPECT_NE(built->encoding(), other);
    encodings.push_back(built->encoding());

    const std::int64_t sequences = static_cast<std::int64_t>(offsets.size()) - 1;
    Buffer<float> pooled = *device_->allocate<float>(static_cast<std::uint64_t>(sequences * kWidth)).wait();
    Status ran = device_
                     ->ask(Execute{.graph = *decoded,
                                   .symbols = {{"tokens", offsets.back()}, {"sequences", sequences}},
                                   .weights = upload(std::vector<std::uint8_t>{}),
                                   .inputs = {{"x", upload(x)}, {"offsets", upload(offsets)}},
                                   .outputs = {{"pooled", pooled}}})
                     .wait()
                     .status();
    ASSERT_TRUE(ran.ok()) << ran.to_string();
    const std::vector<double> want = testing::pool_reference(mode, x, kWidth, offsets);
    const std::vector<float> got = download(pooled, want.size());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << "at " << i;
  }
}

// Inputs sharing a buffer and an output inside a larger one, in process and through an isolated device's codec.
TEST(CpuGraphExecuteBindings, InputsAndOutputsStartAtTheirFirstElement) {
  System system;
  for (Isolation isolation : {Isolation::in_process, Isolation::worker_process}) {
    SCOPED_TRACE(isolation == Isolation::in_process ? "in process" : "isolated");
    testing::expect_bindings_start_at_their_first_element(
        *Device::open(system, {.kind = DeviceKind::cpu, .isolation = isolation}), ExecuteMode::automatic);
  }
}

TEST_F(CpuGraphExecuteTest, BindingsAreCheckedBeforeAnythingRuns) {
  auto graph = testing::encoder_graph({}, Ladder::powers_of_two(16, 256), Ladder::powers_of_two(1, 8));
  Buffer<std::uint8_t> weights = *device_->allocate<std::uint8_t>(graph->weight_bytes()).wait();
  Buffer<float> x = *device_->allocate<float>(64 * 64).wait();
  Buffer<std::int32_t> offsets = *device_->allocate<std::int32_t>(3).wait();
  Buffer<float> y = *device_->allocate<float>(64 * 64).wait();
  Buffer<float> pooled = *device_->allocate<float>(2 * 64).wait();
  const Execute good{.graph = graph,
                     .symbols = {{"tokens", 64}, {"sequences", 2}},
                     .weights = weights,
                     .inputs = {{"x", x}, {"offsets", offsets}},
                     .outputs = {{"y", y}, {"pooled", pooled}}};
  auto refused = [&](Execute request, std::string_view what) {
    Status s = device_->ask(std::move(request)).wait().status();
    EXPECT_EQ(s.code(), Code::invalid_argument) << s.to_string();
    EXPECT_NE(s.message().find(what), std::string::npos) << s.to_string();
  };
  Execute r = good;
  r.inputs.push_back({"z", x});
  refused(r, "no input 'z'");
  r = good;
  r.inputs.pop_back();
  refused(r, "input 'offsets' is not bound");
  r = good;
  r.symbols["tokens"] = 65;
  refused(r, "input 'x'");  // 65 x 64 floats do not fit
  r = good;
  r.symbols["tokens"] = 257;
  refused(r, "symbol 'tokens' = 257");
  r = good;
  r.symbols.erase("sequences");
  refused(r, "no value for symbol 'sequences'");
  r = good;
  r.inputs[1].buffer = x;
  refused(r, "offsets");  // f32 where i32 is wanted
  r = good;
  r.outputs[0].buffer = r.outputs[1].buffer;
  refused(r, "output");
  r = good;
  r.inputs[1].first = 1;  // 3 offsets from element 1 of 3
  refused(r, "input 'offsets'");
  r = good;
  r.outputs[1].first = 64 + 1;  // 2 rows of 64 from element 65 of 128
  refused(r, "output 'pooled'");
}

TEST_F(CpuGraphExecuteTest, OffsetsOutsideTheRowsAreRefused) {
  auto graph = testing::encoder_graph({}, Ladder::powers_of_two(16, 256), Ladder::powers_of_two(1, 8));
  Buffer<std::uint8_t> weights = *device_->allocate<std::uint8_t>(graph->weight_bytes()).wait();
  Buffer<float> y = *device_->allocate<float>(16 * 64).wait();
  Buffer<float> pooled = *device_->allocate<float>(2 * 64).wait();
  Status s = device_
                 ->ask(Execute{.graph = graph,
                               .symbols = {{"tokens", 16}, {"sequences", 2}},
                               .weights = weights,
                               .inputs = {{"x", upload(std::vector<float>(16 * 64, 0.5f))},
                                          {"offsets", upload(std::vector<std::int32_t>{0, 9, 40})}},
                               .outputs = {{"y", y}, {"pooled", pooled}}})
                 .wait()
                 .status();
  EXPECT_EQ(s.code(), Code::invalid_argument) << s.to_string();
  EXPECT_NE(s.message().find("attention: sequence offsets"), std::string::npos) << s.to_string();
}

TEST_F(CpuGraphExecuteTest, OneCompilePerBucketAndOnePackForAllOfThem) {
  // A graph of its own, so that other tests' executables do not count.
  auto graph = testing::encoder_graph({.width = 32, .heads = 2, .hidden = 48}, Ladder::powers_of_two(16, 1024),
                                      Ladder::powers_of_two(1, 64));
  std::mt19937 rng(3);
  Buffer<std::uint8_t> weights = upload(testing::weight_bytes_f32(*graph, testing::random_parameters(*graph, rng)));
  const CacheStats before = executables();
  const std::uint64_t packs_before = cpu::PackedMatmul::packs_made();
  std::uint64_t packs_after_first = 0;
  // 20 and 30 tokens share the 32 bucket; 3 and 4 sequences share the 4 bucket.
  for (auto [tokens, sequences] : {std::pair{20, 3}, std::pair{30, 4}, std::pair{20, 4}, std::pair{100, 3}}) {
    std::vector<std::int32_t> offsets{0};
    for (int s = 0; s < sequences; ++s) offsets.push_back(tokens * (s + 1) / sequences);
    Buffer<float> y = *device_->allocate<float>(static_cast<std::uint64_t>(tokens) * 32).wait();
    Buffer<float> pooled = *device_->allocate<float>(static_cast<std::uint64_t>(sequences) * 32).wait();
    ASSERT_TRUE(
        device_
            ->ask(Execute{.graph = graph,
                          .symbols = {{"tokens", tokens}, {"sequences", sequences}},
                          .weights = weights,
                          .inputs = {{"x", upload(std::vector<float>(static_cast<std::size_t>(tokens) * 32, 0.25f))},
                                     {"offsets", upload(offsets)}},
                          .outputs = {{"y", y}, {"pooled", pooled}}})
            .wait()
            .ok());
    if (packs_after_first == 0) packs_after_first = cpu::PackedMatmul::packs_made();
  }
  const CacheStats after = executables();
  EXPECT_EQ(after.misses - before.misses, 2u);  // (32, 4) and (128, 4)
  EXPECT_EQ(after.hits - before.hits, 2u);
  // The weights were packed by the first run (where oneDNN packs at all), the second bucket's executable shares them.
  if (cpu::packed_matmul_pays()) {
    EXPECT_GT(packs_after_first, packs_before);
  }
  EXPECT_EQ(cpu::PackedMatmul::packs_made(), packs_after_first);
}

}  // namespace
}  // namespace accel::graph
