// cuDNN through accel on one GPU, with its PyTorch peer in bench/peers/torch_dnn.py (same shapes, same method):
//   plans      the plan cost of a new convolution shape: built (heuristics + plan build), loaded from the
//              persistent tier by a new device, and found in memory (the host time a hit adds per call);
//   resnet     steady-state convolution forward on ResNet-50's layers, N=32 NHWC, f16 and f32;
//   fused      convolution + bias + ReLU as one fused request (PyTorch: conv2d, add, relu);
//   attention  SDPA forward, bf16, b8 h16 s2048 d128, causal.
// Steady-state times: `reps` requests sent back to back on one device, wall clock from the first send to the
// last completion, divided by `reps`, best of 5 (as the peer does with torch.cuda.synchronize).
#include <filesystem>
#include <random>

#include "accel/device/device.hpp"
#include "accel/dnn/convolution.hpp"
#include "common/csv_report.hpp"
#include "dnn/cudnn/dnn_plans.hpp"
#include "dnn/plan_key.hpp"

namespace accel::bench {
namespace {

using dnn::TensorLayout;

BufferHandle allocate_random(const Device& device, DType dtype, std::uint64_t count, std::uint64_t seed) {
  BufferHandle handle = require(device.ask(Allocate{.dtype = dtype, .count = count}).wait(), "allocate");
  std::mt19937 rng(static_cast<std::uint32_t>(seed));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<std::byte> bytes(count * size_of(dtype));
  for (std::uint64_t i = 0; i < count; ++i) {
    const float v = uniform(rng);
    if (dtype == DType::f32) std::memcpy(bytes.data() + i * 4, &v, 4);
    if (dtype == DType::f16) {
      const Half h = to_half(v);
      std::memcpy(bytes.data() + i * 2, &h, 2);
    }
    if (dtype == DType::bf16) {
      const BFloat16 b = to_bfloat16(v);
      std::memcpy(bytes.data() + i * 2, &b, 2);
    }
  }
  require(device.ask(CopyToDevice{.source = {bytes.data(), count, dtype}, .destination = handle}).wait(), "upload");
  return handle;
}

template <class Send>
double steady_micros(int reps, Send send) {
  for (int i = 0; i < 20; ++i) require(send().wait(), "warm-up");
  double best = 1e300;
  for (int round = 0; round < 5; ++round) {
    std::vector<Future<Done>> futures;
    futures.reserve(reps);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) futures.push_back(send());
    for (Future<Done>& f : futures) require(f.wait(), "request");
    best = std::min(best, micros(std::chrono::steady_clock::now() - start) / reps);
  }
  return best;
}

struct ConvBuffers {
  BufferHandle x, w, y, bias;
};

ConvBuffers conv_buffers(const Device& device, const ConvShape& shape) {
  const dnn::ConvTensors t = require(dnn::conv_tensors(shape), "conv tensors");
  return {allocate_random(device, shape.dtype, dnn::storage_extent(t.x), 1),
          allocate_random(device, shape.dtype, dnn::storage_extent(t.w), 2),
          allocate_random(device, shape.dtype, dnn::storage_extent(t.y), 3),
          allocate_random(device, shape.dtype, static_cast<std::uint64_t>(shape.k), 4)};
}

void free_all(const Device& device, const ConvBuffers& b) {
  for (const BufferHandle& h : {b.x, b.w, b.y, b.bias}) (void)device.ask(Free{.buffer = h}).wait();
}

struct Layer {
  const char* name;
  std::int64_t c, k, hw, filter, stride, pad;
};

// ResNet-50's convolution shapes (one of each kind), N = 32.
constexpr Layer kResnet[] = {
    {"stem 7x7/2 3-64", 3, 64, 224, 7, 2, 3}, {"3x3 64 56", 64, 64, 56, 3, 1, 1},
    {"3x3 128 28", 128, 128, 28, 3, 1, 1},    {"3x3 256 14", 256, 256, 14, 3, 1, 1},
    {"3x3 512 7", 512, 512, 7, 3, 1, 1},      {"1x1 256-64 56", 256, 64, 56, 1, 1, 0},
    {"1x1 64-256 56", 64, 256, 56, 1, 1, 0},
};

ConvShape resnet_shape(const Layer& l, DType dtype) {
  const auto pad = static_cast<std::int32_t>(l.pad);
  const auto stride = static_cast<std::int32_t>(l.stride);
  return {.layout = TensorLayout::channels_last,
          .dtype = dtype,
          .n = 32,
          .c = l.c,
          .k = l.k,
          .input = {l.hw, l.hw},
          .filter = {l.filter, l.filter},
          .pre_padding = {pad, pad},
          .post_padding = {pad, pad},
          .stride = {stride, stride}};
}

double conv_tflops(const ConvShape& s, double micros_per_conv) {
  const auto out = *dnn::conv_output_extents(s);
  const double flops = 2.0 * s.n * s.k * out[0] * out[1] * (s.c / s.groups) * s.filter[0] * s.filter[1];
  return flops / (micros_per_conv * 1e6);
}

void plans(System& system, const std::filesystem::path& directory) {
  // Fresh shapes (never seen by this directory): each costs a build; a second device over the same directory
  // (a new DnnPlans, as a new process has) loads them.
  std::vector<ConvShape> shapes;
  for (const Layer& l : kResnet) shapes.push_back(resnet_shape(l, DType::f16));
  std::filesystem::remove_all(directory);
  DeviceOptions options{.kind = DeviceKind::cuda, .dnn = {.plan_directory = directory.string()}};
  auto first_run = [&](const Device& device, const char* variant) {
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const ConvBuffers b = conv_buffers(device, shapes[i]);
      const auto start = std::chrono::steady_clock::now();
      require(device.ask(ConvFwd{.shape = shapes[i], .x = b.x, .w = b.w, .y = b.y}).wait(), "first conv");
      const double first = micros(std::chrono::steady_clock::now() - start);
      const double steady =
          steady_micros(20, [&] { return device.ask(ConvFwd{.shape = shapes[i], .x = b.x, .w = b.w, .y = b.y}); });
      row("plans", kResnet[i].name, variant, "first_call_minus_steady_us", first - steady);
      free_all(device, b);
    }
    const DeviceInfo info = require(device.ask(QueryDevice{}).wait(), "query");
    const CacheStats stats = info.cache("cudnn-plans") != nullptr ? *info.cache("cudnn-plans") : CacheStats{};
    row("plans", "all 7", variant, "builds", static_cast<double>(stats.builds));
    row("plans", "all 7", variant, "disk_loads", static_cast<double>(stats.disk_loads));
    row("plans", "all 7", variant, "disk_skips", static_cast<double>(stats.disk_skips));
    if (stats.builds != 0) row("plans", "all 7", variant, "build_us_mean", stats.build_micros / double(stats.builds));
    if (stats.disk_loads != 0)
      row("plans", "all 7", variant, "disk_load_us_mean", stats.load_micros / double(stats.disk_loads));
  };
  {
    Device cold = require(Device::open(system, options), "open");
    first_run(cold, "cold");
  }
  {
    Device warm = require(Device::open(system, options), "open");
    first_run(warm, "disk");
  }
  {
    // A memory hit: the key of a request and the cache lookup, with a plan already built.
    Device device = require(Device::open(system, options), "open");
    const ConvBuffers b = conv_buffers(device, shapes[1]);
    require(device.ask(ConvFwd{.shape = shapes[1], .x = b.x, .w = b.w, .y = b.y}).wait(), "build");
    dnn::cudnn::DnnPlans plans_in_memory({.persistent = false});
    const ConvFwd request{.shape = shapes[1], .x = b.x, .w = b.w, .y = b.y};
    cudnnHandle_t handle = nullptr;
    cudnnCreate(&handle);
    (void)require(plans_in_memory.find_or_build(dnn::plan_key(request), handle, [&] { return dnn::graph_of(request); }),
                  "build in memory");
    constexpr int kLookups = 100000;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kLookups; ++i) {
      (void)plans_in_memory.find_or_build(dnn::plan_key(request), handle, [&] { return dnn::graph_of(request); });
    }
    row("plans", "3x3 64 56", "memory", "hit_us", micros(std::chrono::steady_clock::now() - start) / kLookups);
    cudnnDestroy(handle);
    // The whole request path of a cached plan, host side: a 1x1x1 convolution whose GPU time is negligible.
    const ConvShape tiny{.layout = TensorLayout::channels_last,
                         .dtype = DType::f16,
                         .n = 1,
                         .c = 8,
                         .k = 8,
                         .input = {1, 1},
                         .filter = {1, 1}};
    const ConvBuffers t = conv_buffers(device, tiny);
    row("plans", "tiny 1x1", "accel", "request_us",
        steady_micros(2000, [&] { return device.ask(ConvFwd{.shape = tiny, .x = t.x, .w = t.w, .y = t.y}); }));
    free_all(device, b);
    free_all(device, t);
  }
  std::filesystem::remove_all(directory);
}

void resnet(System& system) {
  Device device = require(Device::open(system, {.kind = DeviceKind::cuda, .dnn = {.persistent_plans = false}}), "open");
  for (DType dtype : {DType::f16, DType::f32}) {
    for (const Layer& l : kResnet) {
      const ConvShape shape = resnet_shape(l, dtype);
      const ConvBuffers b = conv_buffers(device, shape);
      const double us =
          steady_micros(50, [&] { return device.ask(ConvFwd{.shape = shape, .x = b.x, .w = b.w, .y = b.y}); });
      const std::string name = fmt::format("{} {}", l.name, to_string(dtype));
      row("resnet", name, "accel", "us", us);
      row("resnet", name, "accel", "tflops", conv_tflops(shape, us));
      free_all(device, b);
    }
  }
}

void fused(System& system) {
  Device device = require(Device::open(system, {.kind = DeviceKind::cuda, .dnn = {.persistent_plans = false}}), "open");
  for (const Layer& l : kResnet) {
    const ConvShape shape = resnet_shape(l, DType::f16);
    const ConvBuffers b = conv_buffers(device, shape);
    const double us = steady_micros(50, [&] {
      return device.ask(ConvFwd{.shape = shape,
                                .x = b.x,
                                .w = b.w,
                                .y = b.y,
                                .bias = b.bias,
                                .epilogue = {.activation = Activation::relu, .bias = BiasVector::per_channel}});
    });
    row("fused", fmt::format("{} f16", l.name), "accel", "us", us);
    free_all(device, b);
  }
}

void attention(System& system) {
  Device device = require(Device::open(system, {.kind = DeviceKind::cuda, .dnn = {.persistent_plans = false}}), "open");
  dnn::GraphBuilder b;
  auto q = b.tensor(DType::bf16, {8, 16, 2048, 128});
  auto k = b.tensor(DType::bf16, {8, 16, 2048, 128});
  auto v = b.tensor(DType::bf16, {8, 16, 2048, 128});
  auto o = b.attention(q, k, v, {.scale = 1.0f / std::sqrt(128.0f), .causal = true}).o;
  b.output(o, DType::bf16);
  std::shared_ptr<const dnn::Graph> graph = require(b.build(), "attention graph");
  const std::uint64_t count = 8ull * 16 * 2048 * 128;
  RunGraph run{.graph = graph,
               .bindings = {{q.uid, allocate_random(device, DType::bf16, count, 5)},
                            {k.uid, allocate_random(device, DType::bf16, count, 6)},
                            {v.uid, allocate_random(device, DType::bf16, count, 7)},
                            {o.uid, allocate_random(device, DType::bf16, count, 8)}}};
  const double us = steady_micros(50, [&] { return device.ask(run); });
  // Causal: half of the 4 * b * h * s^2 * d multiply-adds.
  const double flops = 4.0 * 8 * 16 * 2048.0 * 2048.0 * 128 / 2;
  row("attention", "b8 h16 s2048 d128 causal", "accel", "us", us);
  row("attention", "b8 h16 s2048 d128 causal", "accel", "tflops", flops / (us * 1e6));
  for (const dnn::TensorBinding& binding : run.bindings) (void)device.ask(Free{.buffer = binding.buffer}).wait();
}

}  // namespace
}  // namespace accel::bench

int main(int argc, char** argv) {
  const std::string parts = argc > 1 ? argv[1] : "plans,resnet,fused,attention";
  accel::System system;
  accel::Device probe = accel::bench::require(accel::Device::open(system, {.kind = accel::DeviceKind::cuda}), "open");
  const accel::DeviceInfo info = accel::bench::require(probe.ask(accel::QueryDevice{}).wait(), "query");
  const accel::LibraryVersion* cudnn = info.library("cuDNN");
  fmt::print(stderr, "cudnn_bench on {} with cuDNN {}\n", info.name, cudnn != nullptr ? cudnn->version : "?");
  fmt::print("part,case,variant,metric,value\n");
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / fmt::format("accel-cudnn-bench-{}", ::getpid());
  if (parts.find("plans") != std::string::npos) accel::bench::plans(system, directory);
  if (parts.find("resnet") != std::string::npos) accel::bench::resnet(system);
  if (parts.find("fused") != std::string::npos) accel::bench::fused(system);
  if (parts.find("attention") != std::string::npos) accel::bench::attention(system);
  return 0;
}
