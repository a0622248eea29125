// graph::Execute on a CUDA device against the naive double reference: an encoder layer in f32 and f16 over a sweep of
// packed lengths, replay equal to direct launches (padded rows never reach a real output), a matmul's residual,
// inputs and outputs bound inside shared buffers in both modes, and executables reloaded from disk by a replaced
// isolated worker with no compile, whose results before and after are also held to the CPU device's; the
// executables of a stream share one arena.
#include <gtest/gtest.h>

#include <cmath>

#include "accel/device/device.hpp"
#include "accel/graph/execute.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/encoder_graph.hpp"
#include "testing/gated_matmul_graph.hpp"
#include "testing/numeric_error.hpp"
#include "testing/offset_bindings.hpp"
#include "testing/residual_matmul.hpp"
#include "testing/status_matchers.hpp"
#include "testing/test_seed.hpp"

namespace accel::graph {
namespace {

using namespace std::chrono_literals;
using accel::testing::max_abs_error;  // infinite for a NaN or an infinity, which std::max would skip
using testing::EncoderShape;

struct Outputs {
  std::vector<float> y, pooled;
};

// The parameters as the weights buffer of a graph in `dtype`.
std::vector<std::uint8_t> weights_in(const Graph& graph, const std::vector<std::vector<float>>& params, DType dtype) {
  if (dtype == DType::f32) return testing::weight_bytes_f32(graph, params);
  std::vector<std::uint8_t> bytes(graph.weight_bytes());
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto* out = reinterpret_cast<Half*>(bytes.data() + graph.parameters()[i].offset);
    for (std::size_t j = 0; j < params[i].size(); ++j) out[j] = to_half(params[i][j]);
  }
  return bytes;
}

// Runs the encoder graph on `device`; x is given in f32 and converted to the graph's dtype.
Result<Outputs> run(const Device& device, const std::shared_ptr<const Graph>& graph, const EncoderShape& shape,
                    const std::vector<std::uint8_t>& weight_bytes, const std::vector<float>& x,
                    const std::vector<std::int32_t>& offsets, ExecuteMode mode) {
  const auto tokens = static_cast<std::int64_t>(offsets.back());
  const auto sequences = static_cast<std::int64_t>(offsets.size() - 1);
  ACCEL_ASSIGN_OR_RETURN(Buffer<std::uint8_t> weights, device.allocate<std::uint8_t>(weight_bytes.size()).wait());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const std::uint8_t>(weight_bytes), weights).wait().status());
  ACCEL_ASSIGN_OR_RETURN(Buffer<std::int32_t> ob, device.allocate<std::int32_t>(offsets.size()).wait());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const std::int32_t>(offsets), ob).wait().status());
  Outputs out{std::vector<float>(x.size()), std::vector<float>(static_cast<std::size_t>(sequences * shape.width))};
  graph::Execute request{
      .graph = graph, .symbols = {{"tokens", tokens}, {"sequences", sequences}}, .weights = weights, .mode = mode};
  if (shape.dtype == DType::f32) {
    ACCEL_ASSIGN_OR_RETURN(Buffer<float> xb, device.allocate<float>(x.size()).wait());
    ACCEL_RETURN_IF_ERROR(device.upload(std::span<const float>(x), xb).wait().status());
    ACCEL_ASSIGN_OR_RETURN(Buffer<float> y, device.allocate<float>(x.size()).wait());
    ACCEL_ASSIGN_OR_RETURN(Buffer<float> pooled, device.allocate<float>(out.pooled.size()).wait());
    request.inputs = {{"x", xb}, {"offsets", ob}};
    request.outputs = {{"y", y}, {"pooled", pooled}};
    ACCEL_RETURN_IF_ERROR(device.ask(request).wait().status());
    ACCEL_RETURN_IF_ERROR(device.download(y, std::span<float>(out.y)).wait().status());
    ACCEL_RETURN_IF_ERROR(device.download(pooled, std::span<float>(out.pooled)).wait().status());
    return out;
  }
  std::vector<Half> xh(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) xh[i] = to_half(x[i]);
  ACCEL_ASSIGN_OR_RETURN(Buffer<Half> xb, device.allocate<Half>(x.size()).wait());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const Half>(xh), xb).wait().status());
  ACCEL_ASSIGN_OR_RETURN(Buffer<Half> y, device.allocate<Half>(x.size()).wait());
  ACCEL_ASSIGN_OR_RETURN(Buffer<Half> pooled, device.allocate<Half>(out.pooled.size()).wait());
  request.inputs = {{"x", xb}, {"offsets", ob}};
  request.outputs = {{"y", y}, {"pooled", pooled}};
  ACCEL_RETURN_IF_ERROR(device.ask(request).wait().status());
  std::vector<Half> yh(out.y.size()), ph(out.pooled.size());
  ACCEL_RETURN_IF_ERROR(device.download(y, std::span<Half>(yh)).wait().status());
  ACCEL_RETURN_IF_ERROR(device.download(pooled, std::span<Half>(ph)).wait().status());
  for (std::size_t i = 0; i < yh.size(); ++i) out.y[i] = to_float(yh[i]);
  for (std::size_t i = 0; i < ph.size(); ++i) out.pooled[i] = to_float(ph[i]);
  return out;
}

// The parameters as the device holds them in `dtype`, so that the reference computes with the same values.
void round_to(DType dtype, std::vector<std::vector<float>>& params) {
  if (dtype != DType::f16) return;
  for (auto& p : params)
    for (float& v : p) v = to_float(to_half(v));
}

// The encoder of `shape` with random parameters, rounded to what the device holds in its dtype, and its weights.
struct RandomEncoder {
  std::shared_ptr<const Graph> graph;
  std::vector<std::vector<float>> params;
  std::vector<std::uint8_t> weights;
};

RandomEncoder random_encoder(const EncoderShape& shape, Ladder tokens, Ladder sequences, std::mt19937& rng) {
  RandomEncoder e{
      .graph = testing::encoder_graph(shape, std::move(tokens), std::move(sequences)), .params = {}, .weights = {}};
  e.params = testing::random_parameters(*e.graph, rng);
  round_to(shape.dtype, e.params);
  e.weights = weights_in(*e.graph, e.params, shape.dtype);
  return e;
}

// Normal inputs for the tokens `offsets` ends at, as the graph's dtype holds them.
std::vector<float> random_inputs(const EncoderShape& shape, const std::vector<std::int32_t>& offsets,
                                 std::mt19937& rng) {
  std::vector<float> x(static_cast<std::size_t>(offsets.back() * shape.width));
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& e : x) e = shape.dtype == DType::f32 ? dist(rng) : to_float(to_half(dist(rng)));
  return x;
}

// The same layer run by the CPU device, whose graphs run in f32 only: an f32 twin of `shape`'s graph with the same
// parameters (already rounded to what an f16 device holds), so that any difference is the GPU's arithmetic.
Result<Outputs> run_on_cpu(System& system, const EncoderShape& shape, const std::vector<std::vector<float>>& params,
                           const std::vector<float>& x, const std::vector<std::int32_t>& offsets) {
  ACCEL_ASSIGN_OR_RETURN(Device cpu, Device::open(system, {.kind = DeviceKind::cpu}));
  EncoderShape twin = shape;
  twin.dtype = DType::f32;
  auto graph = testing::encoder_graph(twin, Ladder::powers_of_two(64, 4096), Ladder::powers_of_two(1, 64));
  return run(cpu, graph, twin, testing::weight_bytes_f32(*graph, params), x, offsets, ExecuteMode::automatic);
}

// Each dtype, with q, k and v as three projections and as one read by attention_packed.
class CudaGraphExecuteTest : public ::testing::TestWithParam<std::tuple<DType, bool>> {};

TEST_P(CudaGraphExecuteTest, EncoderLayerMatchesTheReferenceInBothModes) {
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, (DeviceOptions{.kind = DeviceKind::cuda}), device);
  const EncoderShape shape{.width = 384,
                           .heads = 12,
                           .hidden = 1536,
                           .max_length = 256,
                           .dtype = std::get<0>(GetParam()),
                           .packed_qkv = std::get<1>(GetParam())};
  std::mt19937 rng(accel::testing::test_seed());
  const auto [graph, params, weights] =
      random_encoder(shape, Ladder::powers_of_two(64, 16384), Ladder::powers_of_two(1, 256), rng);
  const double tolerance = shape.dtype == DType::f32 ? 2e-3 : 6e-2;
  for (std::int64_t sequences : {1, 5, 33, 100}) {
    const std::vector<std::int32_t> offsets = testing::random_offsets(sequences, shape.max_length, rng);
    const std::vector<float> x = random_inputs(shape, offsets, rng);
    const auto ref = testing::reference_encoder(shape, *graph, params, x, offsets);
    Result<Outputs> replayed = run(device, graph, shape, weights, x, offsets, ExecuteMode::replay);
    Result<Outputs> direct = run(device, graph, shape, weights, x, offsets, ExecuteMode::direct);
    ASSERT_THAT(replayed, accel::testing::IsOk());
    ASSERT_THAT(direct, accel::testing::IsOk());
    EXPECT_LT(max_abs_error(replayed->y, ref.out), tolerance) << "tokens " << offsets.back();
    EXPECT_LT(max_abs_error(replayed->pooled, ref.pooled), tolerance / 4) << "tokens " << offsets.back();
    // Replay runs every op over the bucket's padded rows; direct launches never touch them. cuBLASLt may pick
    // another algorithm for the bucket's row count than for the actual one (on an H200 f32 results differed in the
    // sixth digit), so equal within rounding; a padded row reaching a real one would be far outside it.
    std::vector<double> direct_y(direct->y.begin(), direct->y.end());
    std::vector<double> direct_pooled(direct->pooled.begin(), direct->pooled.end());
    EXPECT_LT(max_abs_error(replayed->y, direct_y), tolerance / 20) << "tokens " << offsets.back();
    EXPECT_LT(max_abs_error(replayed->pooled, direct_pooled), tolerance / 80);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaGraphExecuteTest,
                         ::testing::Combine(::testing::Values(DType::f32, DType::f16), ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(to_string(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_packed" : "_separate");
                         });

// The executables of a stream share one arena, grown to the largest run's: small, large, then the small ones again
// (captured over the arena before it grew, so captured again) and a middle one, each held to the reference; the
// arena's bytes after the largest run are what it holds at the end.
TEST(CudaGraphArena, ExecutablesShareOneArenaThatGrowsToTheLargestRun) {
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, (DeviceOptions{.kind = DeviceKind::cuda}), device);
  const EncoderShape shape{.width = 256, .heads = 4, .hidden = 1024, .max_length = 128, .dtype = DType::f16};
  std::mt19937 rng(accel::testing::test_seed());
  const auto [graph, params, weights] =
      random_encoder(shape, Ladder::powers_of_two(64, 16384), Ladder::powers_of_two(1, 128), rng);
  const auto arena_bytes = [&] {
    const Result<DeviceInfo> info = device.info().wait();
    const CacheStats* executables = info.ok() ? info->cache("graph-executables") : nullptr;
    return executables != nullptr ? executables->bytes : 0;
  };
  std::vector<std::vector<std::int32_t>> runs;
  for (std::int64_t sequences : {2, 9, 100, 40})
    runs.push_back(testing::random_offsets(sequences, shape.max_length, rng));
  std::uint64_t after_largest = 0;
  for (const std::size_t i : {0, 1, 2, 0, 1, 3}) {
    const std::vector<std::int32_t>& offsets = runs[i];
    const std::vector<float> x = random_inputs(shape, offsets, rng);
    const auto ref = testing::reference_encoder(shape, *graph, params, x, offsets);
    Result<Outputs> replayed = run(device, graph, shape, weights, x, offsets, ExecuteMode::replay);
    ASSERT_THAT(replayed, accel::testing::IsOk());
    EXPECT_LT(max_abs_error(replayed->y, ref.out), 6e-2) << "tokens " << offsets.back();
    EXPECT_LT(max_abs_error(replayed->pooled, ref.pooled), 6e-2 / 4) << "tokens " << offsets.back();
    if (i == 2) after_largest = arena_bytes();
  }
  EXPECT_GT(after_largest, 0u);
  EXPECT_EQ(arena_bytes(), after_largest) << "smaller runs after the largest grow nothing";
}

// A residual added in cuBLASLt's epilogue (C beside the output D, timed on the first run like any product), in both
// dtypes and modes; weights the graph reads as input too.
TEST(CudaGraphExecute, AMatmulAddsItsResidualInCublasLtsEpilogue) {
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, (DeviceOptions{.kind = DeviceKind::cuda}), device);
  for (ExecuteMode mode : {ExecuteMode::replay, ExecuteMode::direct}) {
    SCOPED_TRACE(mode == ExecuteMode::replay ? "replay" : "direct");
    testing::expect_residual_matmuls(device,
                                     {{.dtype = DType::f16},
                                      {.dtype = DType::f32},
                                      {.dtype = DType::f16, .weights_are_parameters = false},
                                      {.dtype = DType::f16, .k = 1024, .n = 1024}},
                                     mode, accel::testing::test_seed());
  }
}

// A gated MLP's matmul and gate: with the gates in groups of 8 in f16, one fused product at 2,048 rows or more on an
// H100/H200 (captured in replay); in halves, in f32, at fewer rows, or with the product an output, the two ops.
TEST(CudaGraphExecute, AGatedMatmulMatchesTheReferenceFusedOrNot) {
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, (DeviceOptions{.kind = DeviceKind::cuda}), device);
  for (ExecuteMode mode : {ExecuteMode::replay, ExecuteMode::direct}) {
    SCOPED_TRACE(mode == ExecuteMode::replay ? "replay" : "direct");
    testing::expect_gated_matmuls(device,
                                  {{},
                                   {.activation = Activation::gelu_erf},
                                   {.layout = GateLayout::halves},
                                   {.product_is_output = true},
                                   {.dtype = DType::f32},
                                   {.k = 512, .width = 256},
                                   // x narrower than the output, whose tiles of 128 rows span later tiles' x
                                   {.k = 64, .width = 512}},
                                  mode, accel::testing::test_seed());
  }
}

TEST(CudaGraphBindings, InputsAndOutputsStartAtTheirFirstElementInBothModes) {
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, (DeviceOptions{.kind = DeviceKind::cuda}), device);
  for (ExecuteMode mode : {ExecuteMode::replay, ExecuteMode::direct}) {
    SCOPED_TRACE(mode == ExecuteMode::replay ? "replay" : "direct");
    testing::expect_bindings_start_at_their_first_element(device, mode);
  }
}

TEST(CudaGraphIsolatedTest, AReplacedWorkerReloadsExecutablesFromDiskWithoutCompiling) {
  System system;
  DeviceOptions options{.kind = DeviceKind::cuda, .isolation = Isolation::worker_process};
  ACCEL_OPEN_CUDA_OR_SKIP(system, options, device);
  const EncoderShape shape{.width = 128, .heads = 4, .hidden = 256, .max_length = 64, .dtype = DType::f16};
  // A graph no earlier run compiled: its width makes its key new in this cache directory.
  std::mt19937 rng(accel::testing::test_seed());
  const auto [graph, params, weights] =
      random_encoder(shape, Ladder::powers_of_two(64, 4096), Ladder::powers_of_two(1, 64), rng);
  const std::vector<std::int32_t> offsets = testing::random_offsets(7, shape.max_length, rng);
  const std::vector<float> x = random_inputs(shape, offsets, rng);
  const auto ref = testing::reference_encoder(shape, *graph, params, x, offsets);
  constexpr double kTolerance = 6e-2;  // f16, as the encoder layer's test above
  Result<Outputs> before = run(device, graph, shape, weights, x, offsets, ExecuteMode::replay);
  ASSERT_THAT(before, accel::testing::IsOk());
  EXPECT_THAT(device.inject_fault(FaultKind::illegal_address).wait_for(60s),
              accel::testing::StatusIs(Code::context_lost));
  Result<Outputs> after = run(device, graph, shape, weights, x, offsets, ExecuteMode::replay);
  ASSERT_THAT(after, accel::testing::IsOk());
  Result<Outputs> cpu = run_on_cpu(system, shape, params, x, offsets);
  ASSERT_THAT(cpu, accel::testing::IsOk());
  const std::vector<double> cpu_y(cpu->y.begin(), cpu->y.end()), cpu_pooled(cpu->pooled.begin(), cpu->pooled.end());
  // before == after alone would pass a worker that was wrong both times: each is held to the CPU device and to the
  // double reference too.
  for (const Outputs* gpu : {&*before, &*after}) {
    EXPECT_LT(max_abs_error(gpu->y, ref.out), kTolerance);
    EXPECT_LT(max_abs_error(gpu->pooled, ref.pooled), kTolerance / 4);
    EXPECT_LT(max_abs_error(gpu->y, cpu_y), kTolerance);
    EXPECT_LT(max_abs_error(gpu->pooled, cpu_pooled), kTolerance / 4);
  }
  EXPECT_EQ(before->pooled, after->pooled);
  const DeviceInfo info = *device.info().wait();
  EXPECT_EQ(info.worker_restarts, 1u);
  const CacheStats* executables = info.cache("graph-executables");
  ASSERT_NE(executables, nullptr);
  EXPECT_EQ(executables->builds, 0u);
  EXPECT_GE(executables->disk_loads, 1u);
}

}  // namespace
}  // namespace accel::graph
