// The JIT on the GPU, every figure beside the thing a user would use instead, in one run:
//   cache    compile cold vs disk hit vs memory hit, for an NVRTC program and a CUTLASS module (the device's
//            JitKernels directly: the cost of finding a kernel, not of a request around it)
//   gemm     CutlassGemm vs cuBLASLt (accel's Gemm request), f16/bf16 4096^3 and 8192^3, fp8 e4m3 -> bf16
//   evt      GEMM + bias + GELU: one CUTLASS EVT kernel vs cuBLASLt's epilogue vs cuBLASLt GEMM then a separate
//            bias+GELU kernel (NVRTC)
//   grouped  32 groups, M from 16 to 2048, N = K = 4096: one CutlassGroupedGemm vs a loop of cuBLASLt GEMMs
//   conv     CutlassConv fprop vs cuDNN (ConvFwd), ResNet-50 3x3 and 1x1 layers, N = 32, f16
// Usage: jit_bench [comma-separated parts]; CSV rows on stdout (part,case,variant,metric,value).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <random>
#include <set>

#include "accel/device/device.hpp"
#include "common/csv_report.hpp"
#include "common/exit_now.hpp"
#include "jit/cuda/jit_kernels.hpp"
#include "jit/cutlass_requests.hpp"

namespace accel::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::filesystem::path fresh_directory(std::string_view name) {
  auto dir = std::filesystem::temp_directory_path() / fmt::format("accel-jit-bench-{}-{}", name, ::getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

BufferHandle random_buffer(const Device& device, DType dtype, std::uint64_t count, std::uint64_t seed,
                           float scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-scale, scale);
  std::vector<std::byte> bytes(count * size_of(dtype));
  for (std::uint64_t i = 0; i < count; ++i) {
    const float v = uniform(rng);
    switch (dtype) {
      case DType::f16: reinterpret_cast<Half*>(bytes.data())[i] = to_half(v); break;
      case DType::bf16: reinterpret_cast<BFloat16*>(bytes.data())[i] = to_bfloat16(v); break;
      case DType::fp8_e4m3: reinterpret_cast<Float8E4M3*>(bytes.data())[i] = to_float8_e4m3(v); break;
      default: reinterpret_cast<float*>(bytes.data())[i] = v; break;
    }
  }
  BufferHandle buffer = require(device.ask(Allocate{.dtype = dtype, .count = count}).wait(), "allocate");
  require(device.ask(CopyToDevice{.source = {bytes.data(), count, dtype}, .destination = buffer}).wait(), "upload");
  return buffer;
}

// Median over rounds of (wall time of `per_round` requests submitted back to back) / per_round, in µs.
template <class Submit>
double pipelined_micros(const Device& device, Submit submit, int per_round = 20, int rounds = 7) {
  for (int i = 0; i < 3; ++i) require(submit().wait(), "warm-up");
  std::vector<double> samples;
  for (int round = 0; round < rounds; ++round) {
    std::vector<Future<Done>> pending;
    pending.reserve(per_round);
    const auto start = Clock::now();
    for (int i = 0; i < per_round; ++i) pending.push_back(submit());
    for (Future<Done>& f : pending) require(f.wait(), "request");
    samples.push_back(micros(Clock::now() - start) / per_round);
  }
  (void)device;
  return percentile(samples, 0.5);
}

double tflops(double flops, double us) { return flops / (us * 1e-6) / 1e12; }

// -- cache tiers -------------------------------------------------------------------------------------------

void cache_part() {
  using jit::JitKernels;
  if (cudaSetDevice(0) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) accel::bench::exit_now(1);
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  const auto dir = fresh_directory("cache");
  const jit::JitOptions options{.directory = dir.string(), .compute_capability = major * 10 + minor};
  auto program = std::make_shared<jit::Program>(jit::Program{
      .name = "bench.cu",
      .source = "extern \"C\" __global__ void scale(float* x, float a, int n) { int i = blockIdx.x * blockDim.x + "
                "threadIdx.x; if (i < n) x[i] *= a; }"});
  auto timed = [](auto&& f) {
    const auto start = Clock::now();
    f();
    return micros(Clock::now() - start);
  };
  {
    auto cold = require(JitKernels::open(options), "open");
    row("cache", "nvrtc", "cold compile + load", "us", timed([&] { require(cold->program(program), "compile"); }));
  }
  auto warm = require(JitKernels::open(options), "open");
  row("cache", "nvrtc", "disk hit + load", "us", timed([&] { require(warm->program(program), "disk"); }));
  std::vector<double> same, equal;
  for (int i = 0; i < 1000; ++i) {
    same.push_back(timed([&] { require(warm->program(program), "memory"); }));
    auto copy = std::make_shared<jit::Program>(*program);
    equal.push_back(timed([&] { require(warm->program(copy), "memory"); }));
  }
  row("cache", "nvrtc", "memory hit (same Program)", "us", percentile(same, 0.5));
  row("cache", "nvrtc", "memory hit (equal Program, by key)", "us", percentile(equal, 0.5));

  const jit::cutlass::Instance instance =
      jit::cutlass::GemmInstance{.arch = options.compute_capability,
                                 .input = DType::f16,
                                 .output = DType::f16,
                                 .tile = {.tile_m = 128, .tile_n = 128, .tile_k = 64, .cluster_m = 1, .cluster_n = 1},
                                 .epilogue = {.activation = jit::cutlass::Activation::relu, .source = false}};
  {
    auto cold = require(JitKernels::open(options), "open");
    row("cache", "cutlass gemm", "cold nvcc compile + load", "us",
        timed([&] { require(cold->cutlass_module(instance, true, {}), "compile"); }));
  }
  auto again = require(JitKernels::open(options), "open");
  row("cache", "cutlass gemm", "disk hit + dlopen", "us",
      timed([&] { require(again->cutlass_module(instance, true, {}), "disk"); }));
  std::vector<double> hits;
  for (int i = 0; i < 1000; ++i)
    hits.push_back(timed([&] { require(again->cutlass_module(instance, true, {}), "memory"); }));
  row("cache", "cutlass gemm", "memory hit", "us", percentile(hits, 0.5));
  std::filesystem::remove_all(dir);
}

// -- GEMMs -------------------------------------------------------------------------------------------------

struct GemmBuffers {
  BufferHandle a, b, d, bias;
};

GemmBuffers gemm_buffers(const Device& device, DType input, DType output, std::int64_t m, std::int64_t n,
                         std::int64_t k) {
  return {random_buffer(device, input, m * k, 1), random_buffer(device, input, k * n, 2),
          random_buffer(device, output, m * n, 3), random_buffer(device, output, n, 4)};
}

// Row-major A (m x k), column-major B (k x n), row-major D: the same product for both libraries.
CutlassGemm cutlass_gemm(const GemmBuffers& g, DType input, DType output, std::int64_t m, std::int64_t n,
                         std::int64_t k) {
  return {.m = m, .n = n, .k = k, .input = input, .output = output, .a = g.a, .b = g.b, .d = g.d};
}

Gemm library_gemm(const GemmBuffers& g, DType input, DType output, std::int64_t m, std::int64_t n, std::int64_t k,
                  Epilogue epilogue = {}) {
  return {.shape = {.order = MatrixOrder::row_major,
                    .transpose_b = Transpose::transpose,
                    .m = m,
                    .n = n,
                    .k = k,
                    .input_type = input,
                    .output_type = output,
                    .epilogue = epilogue},
          .a = g.a,
          .b = g.b,
          .c = g.d,
          .bias = epilogue.has_bias() ? g.bias : BufferHandle{}};
}

// Starts the compile of every CUTLASS instance the parts use, all at once (Code::unavailable answers while they
// compile), so that the run pays for about one compile instead of one per instance.
void compile_ahead(const Device& device) {
  const std::int64_t s = 2048;  // as large as the measured problems: the same default tile
  for (auto [input, output] :
       {std::pair{DType::f16, DType::f16}, {DType::bf16, DType::bf16}, {DType::fp8_e4m3, DType::bf16}}) {
    const GemmBuffers g = gemm_buffers(device, input, output, s, s, 128);
    CutlassGemm r = cutlass_gemm(g, input, output, s, s, 128);
    r.when_compiling = WhenCompiling::unavailable;
    (void)device.ask(r).wait();
    if (input == DType::bf16) {
      r.epilogue = {.activation = Activation::gelu_tanh, .bias = BiasVector::per_column};
      r.bias = g.bias;
      (void)device.ask(r).wait();
    }
    if (input != DType::fp8_e4m3) {
      CutlassGroupedGemm grouped{.input = input, .output = output, .when_compiling = WhenCompiling::unavailable};
      GemmGroup group{.m = 64, .n = 64, .k = 64};
      group.a.buffer = g.a;
      group.b.buffer = g.b;
      group.d.buffer = g.d;
      grouped.groups.push_back(group);
      (void)device.ask(grouped).wait();
    }
  }
  const ConvShape shape{.layout = dnn::TensorLayout::channels_last,
                        .dtype = DType::f16,
                        .n = 1,
                        .c = 64,
                        .k = 64,
                        .input = {8, 8},
                        .filter = {3, 3},
                        .pre_padding = {1, 1},
                        .post_padding = {1, 1}};
  const BufferHandle x = random_buffer(device, DType::f16, 64 * 64, 1);
  const BufferHandle w = random_buffer(device, DType::f16, 64 * 9 * 64, 2);
  const BufferHandle y = random_buffer(device, DType::f16, 64 * 64, 3);
  (void)device.ask(CutlassConv{.shape = shape, .x = x, .w = w, .y = y, .when_compiling = WhenCompiling::unavailable})
      .wait();
}

void gemm_part(const Device& device) {
  struct Case {
    DType input, output;
    std::int64_t size;
  };
  const Case cases[] = {{DType::f16, DType::f16, 4096},       {DType::bf16, DType::bf16, 4096},
                        {DType::f16, DType::f16, 8192},       {DType::bf16, DType::bf16, 8192},
                        {DType::fp8_e4m3, DType::bf16, 4096}, {DType::fp8_e4m3, DType::bf16, 8192}};
  for (const Case& c : cases) {
    const std::int64_t s = c.size;
    const GemmBuffers g = gemm_buffers(device, c.input, c.output, s, s, s);
    const double flops = 2.0 * s * s * s;
    const std::string name = fmt::format("{}->{} {}^3", to_string(c.input), to_string(c.output), s);
    const double cutlass =
        pipelined_micros(device, [&] { return device.ask(cutlass_gemm(g, c.input, c.output, s, s, s)); });
    row("gemm", name, "cutlass", "us", cutlass);
    row("gemm", name, "cutlass", "TFLOP/s", tflops(flops, cutlass));
    const Gemm gemm = library_gemm(g, c.input, c.output, s, s, s);
    Result<Done> probe = device.ask(gemm).wait();
    if (!probe.ok()) {
      fmt::print(stderr, "{} on cuBLASLt: {}\n", name, probe.status().to_string());
      continue;
    }
    const double library = pipelined_micros(device, [&] { return device.ask(gemm); });
    row("gemm", name, "cublaslt", "us", library);
    row("gemm", name, "cublaslt", "TFLOP/s", tflops(flops, library));
    row("gemm", name, "cutlass/cublaslt", "speedup", library / cutlass);
  }
}

// bf16 as raw bits, so that the program needs no CUDA headers (NVRTC gets no include path here).
// CUTLASS tile configurations beside accel's default, to choose that default from measurements.
const KernelTile kSweep[] = {
    {.m = 128, .n = 256, .k = 64, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_cooperative},
    {.m = 128, .n = 256, .k = 64, .cluster_m = 1, .cluster_n = 2, .schedule = KernelSchedule::tma_cooperative},
    {.m = 256, .n = 128, .k = 64, .cluster_m = 1, .cluster_n = 2, .schedule = KernelSchedule::tma_cooperative},
    {.m = 256, .n = 128, .k = 64, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_cooperative},
    {.m = 128, .n = 256, .k = 64, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_pingpong},
    {.m = 128, .n = 128, .k = 64, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_pingpong},
};

std::string to_string(const KernelTile& t) {
  return fmt::format("{}x{}x{} c{}x{} {}", t.m, t.n, t.k, t.cluster_m, t.cluster_n,
                     t.schedule == KernelSchedule::tma_pingpong ? "pingpong" : "cooperative");
}

void tiles_part(const Device& device) {
  for (DType dtype : {DType::bf16, DType::fp8_e4m3}) {
    const DType output = DType::bf16;
    const GemmBuffers small = gemm_buffers(device, dtype, output, 256, 256, 128);
    for (KernelTile tile : kSweep) {
      if (dtype == DType::fp8_e4m3) tile.k = 128;
      CutlassGemm r = cutlass_gemm(small, dtype, output, 256, 256, 128);
      r.tile = tile;
      r.when_compiling = WhenCompiling::unavailable;
      (void)device.ask(r).wait();
    }
    for (std::int64_t s : {4096, 8192}) {
      const GemmBuffers g = gemm_buffers(device, dtype, output, s, s, s);
      for (KernelTile tile : kSweep) {
        if (dtype == DType::fp8_e4m3) tile.k = 128;
        CutlassGemm r = cutlass_gemm(g, dtype, output, s, s, s);
        r.tile = tile;
        const double us = pipelined_micros(device, [&] { return device.ask(r); });
        row("tiles", fmt::format("{}->{} {}^3", to_string(dtype), to_string(output), s), to_string(tile), "TFLOP/s",
            tflops(2.0 * s * s * s, us));
      }
    }
  }
}

// Grouped GEMM and convolution tiles beside accel's defaults.
const KernelTile kGroupedSweep[] = {
    {.m = 128, .n = 256, .k = 64, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_cooperative},
    {.m = 128, .n = 128, .k = 64, .cluster_m = 1, .cluster_n = 1, .schedule = KernelSchedule::tma_cooperative},
    {.m = 128, .n = 128, .k = 64, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_cooperative},
    {.m = 128, .n = 256, .k = 64, .cluster_m = 1, .cluster_n = 2, .schedule = KernelSchedule::tma_cooperative},
    {.m = 64, .n = 128, .k = 64, .cluster_m = 1, .cluster_n = 1, .schedule = KernelSchedule::tma_pingpong},
    {.m = 64, .n = 256, .k = 64, .cluster_m = 1, .cluster_n = 2, .schedule = KernelSchedule::tma_pingpong},
};
const KernelTile kConvSweep[] = {
    {.m = 128, .n = 128, .k = 64, .cluster_m = 1, .cluster_n = 1},
    {.m = 128, .n = 64, .k = 64, .cluster_m = 1, .cluster_n = 1},
    {.m = 128, .n = 128, .k = 64, .cluster_m = 2, .cluster_n = 1},
    {.m = 64, .n = 128, .k = 64, .cluster_m = 2, .cluster_n = 1},
    {.m = 128, .n = 64, .k = 64, .cluster_m = 2, .cluster_n = 1},
};

CutlassGroupedGemm moe_problem(const Device& device, DType dtype, double* flops, std::int64_t* total_m,
                               std::vector<Gemm>* loop) {
  constexpr int kGroups = 32;
  constexpr std::int64_t kN = 4096, kK = 4096;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> log_m(4, 11);  // M from 16 to 2048
  CutlassGroupedGemm grouped{.input = dtype, .output = dtype};
  *flops = 0;
  *total_m = 0;
  for (int i = 0; i < kGroups; ++i) {
    const std::int64_t m = std::int64_t{1} << log_m(rng);
    *total_m += m;
    const GemmBuffers g = gemm_buffers(device, dtype, dtype, m, kN, kK);
    GemmGroup group{.m = m, .n = kN, .k = kK};
    group.a.buffer = g.a;
    group.b.buffer = g.b;
    group.d.buffer = g.d;
    grouped.groups.push_back(group);
    if (loop != nullptr) loop->push_back(library_gemm(g, dtype, dtype, m, kN, kK));
    *flops += 2.0 * m * kN * kK;
  }
  return grouped;
}

ConvShape resnet_shape(std::int64_t c, std::int64_t k, std::int64_t hw, std::int64_t rs, int stride) {
  const int pad = static_cast<int>(rs / 2);
  return {.layout = dnn::TensorLayout::channels_last,
          .dtype = DType::f16,
          .n = 32,
          .c = c,
          .k = k,
          .input = {hw, hw},
          .filter = {rs, rs},
          .pre_padding = {pad, pad},
          .post_padding = {pad, pad},
          .stride = {stride, stride}};
}

void tile_sweeps_part(const Device& device) {
  double flops = 0;
  std::int64_t total_m = 0;
  CutlassGroupedGemm grouped = moe_problem(device, DType::bf16, &flops, &total_m, nullptr);
  for (const KernelTile& tile : kGroupedSweep) {
    grouped.tile = tile;
    grouped.when_compiling = WhenCompiling::unavailable;
    (void)device.ask(grouped).wait();
  }
  const ConvShape layers[] = {resnet_shape(64, 64, 56, 3, 1), resnet_shape(512, 512, 7, 3, 1),
                              resnet_shape(256, 64, 56, 1, 1), resnet_shape(128, 128, 28, 3, 1)};
  std::vector<std::array<BufferHandle, 3>> tensors;
  for (const ConvShape& s : layers) {
    const std::int64_t p = (s.input[0] + 2 * s.pre_padding[0] - s.filter[0]) / s.stride[0] + 1;
    tensors.push_back({random_buffer(device, DType::f16, s.n * s.input[0] * s.input[1] * s.c, 1),
                       random_buffer(device, DType::f16, s.k * s.filter[0] * s.filter[1] * s.c, 2, 0.1f),
                       random_buffer(device, DType::f16, s.n * p * p * s.k, 3)});
  }
  for (const KernelTile& tile : kConvSweep) {
    (void)device
        .ask(CutlassConv{.shape = layers[0],
                         .x = tensors[0][0],
                         .w = tensors[0][1],
                         .y = tensors[0][2],
                         .tile = tile,
                         .when_compiling = WhenCompiling::unavailable})
        .wait();
  }
  for (const KernelTile& tile : kGroupedSweep) {
    grouped.tile = tile;
    grouped.when_compiling = WhenCompiling::wait;
    const double us = pipelined_micros(
        device, [&] { return device.ask(grouped); }, 5);
    row("tiles", fmt::format("bf16 moe 32 groups sum M {}", total_m), to_string(tile), "TFLOP/s", tflops(flops, us));
  }
  for (std::size_t i = 0; i < std::size(layers); ++i) {
    const ConvShape& s = layers[i];
    const double conv_flops = 2.0 * s.n * s.input[0] * s.input[1] * s.k * s.c * s.filter[0] * s.filter[1];
    for (const KernelTile& tile : kConvSweep) {
      const CutlassConv conv{.shape = s, .x = tensors[i][0], .w = tensors[i][1], .y = tensors[i][2], .tile = tile};
      const double us = pipelined_micros(device, [&] { return device.ask(conv); });
      row("tiles", fmt::format("conv {}x{} {}->{} @{}", s.filter[0], s.filter[1], s.c, s.k, s.input[0]),
          to_string(tile), "TFLOP/s", tflops(conv_flops, us));
    }
  }
}

constexpr const char* kBiasGelu = R"(
__device__ float load_bf16(unsigned short bits) { return __uint_as_float(static_cast<unsigned>(bits) << 16); }
__device__ unsigned short store_bf16(float value) {
  unsigned bits = __float_as_uint(value);
  return static_cast<unsigned short>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
extern "C" __global__ void bias_gelu(unsigned short* d, const unsigned short* bias, long long m, long long n) {
  long long i = blockIdx.x * 1ll * blockDim.x + threadIdx.x;
  if (i >= m * n) return;
  float x = load_bf16(d[i]) + load_bf16(bias[i % n]);
  d[i] = store_bf16(0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))));
})";

void evt_part(const Device& device) {
  for (std::int64_t s : {4096, 8192}) {
    const GemmBuffers g = gemm_buffers(device, DType::bf16, DType::bf16, s, s, s);
    const std::string name = fmt::format("bf16 {}^3 +bias+gelu", s);
    CutlassGemm fused = cutlass_gemm(g, DType::bf16, DType::bf16, s, s, s);
    fused.epilogue = {.activation = Activation::gelu_tanh, .bias = BiasVector::per_column};
    fused.bias = g.bias;
    const double evt = pipelined_micros(device, [&] { return device.ask(fused); });
    const double epilogue = pipelined_micros(
        device, [&] { return device.ask(library_gemm(g, DType::bf16, DType::bf16, s, s, s, fused.epilogue)); });
    auto program = std::make_shared<jit::Program>(jit::Program{.name = "bias_gelu.cu", .source = kBiasGelu});
    const std::uint64_t total = static_cast<std::uint64_t>(s) * s;
    const LaunchKernel separate{.program = program,
                                .kernel = "bias_gelu",
                                .grid = {static_cast<std::uint32_t>((total + 255) / 256)},
                                .block = {256},
                                .args = {KernelArg::inout(g.d), KernelArg::in(g.bias), KernelArg::of(std::int64_t{s}),
                                         KernelArg::of(std::int64_t{s})}};
    const Gemm plain = library_gemm(g, DType::bf16, DType::bf16, s, s, s);
    const double two_kernels = pipelined_micros(device, [&] {
      (void)device.ask(plain);
      return device.ask(separate);
    });
    row("evt", name, "cutlass evt", "us", evt);
    row("evt", name, "cublaslt epilogue", "us", epilogue);
    row("evt", name, "cublaslt + separate kernel", "us", two_kernels);
    row("evt", name, "evt vs separate", "speedup", two_kernels / evt);
    row("evt", name, "evt vs cublaslt epilogue", "speedup", epilogue / evt);
  }
}

void grouped_part(const Device& device) {
  for (DType dtype : {DType::f16, DType::bf16}) {
    double flops = 0;
    std::int64_t total_m = 0;
    std::vector<Gemm> loop;
    const CutlassGroupedGemm grouped = moe_problem(device, dtype, &flops, &total_m, &loop);
    const std::string name = fmt::format("{} 32 groups M 16..2048 (sum {}) N=K=4096", to_string(dtype), total_m);
    const double one = pipelined_micros(
        device, [&] { return device.ask(grouped); }, 5);
    const double many = pipelined_micros(
        device,
        [&] {
          for (std::size_t i = 0; i + 1 < loop.size(); ++i) (void)device.ask(loop[i]);
          return device.ask(loop.back());
        },
        5);
    row("grouped", name, "cutlass grouped", "us", one);
    row("grouped", name, "cutlass grouped", "TFLOP/s", tflops(flops, one));
    row("grouped", name, "cublaslt loop", "us", many);
    row("grouped", name, "cublaslt loop", "TFLOP/s", tflops(flops, many));
    row("grouped", name, "grouped vs loop", "speedup", many / one);
  }
}

void conv_part(const Device& device) {
  struct Layer {
    std::int64_t c, k, hw, rs;
    int stride;
  };
  const Layer layers[] = {{64, 64, 56, 3, 1},  {128, 128, 28, 3, 1}, {256, 256, 14, 3, 1}, {512, 512, 7, 3, 1},
                          {256, 64, 56, 1, 1}, {512, 128, 28, 1, 1}, {1024, 256, 14, 1, 1}};
  for (const Layer& l : layers) {
    const ConvShape shape = resnet_shape(l.c, l.k, l.hw, l.rs, l.stride);
    const std::int64_t p = (l.hw + 2 * shape.pre_padding[0] - l.rs) / l.stride + 1;
    const BufferHandle x = random_buffer(device, DType::f16, 32 * l.hw * l.hw * l.c, 1);
    const BufferHandle w = random_buffer(device, DType::f16, l.k * l.rs * l.rs * l.c, 2, 0.1f);
    const BufferHandle y = random_buffer(device, DType::f16, 32 * p * p * l.k, 3);
    const std::string name = fmt::format("{}x{} {}->{} @{}", l.rs, l.rs, l.c, l.k, l.hw);
    const double flops = 2.0 * 32 * p * p * l.k * l.c * l.rs * l.rs;
    const double cutlass =
        pipelined_micros(device, [&] { return device.ask(CutlassConv{.shape = shape, .x = x, .w = w, .y = y}); });
    const double cudnn =
        pipelined_micros(device, [&] { return device.ask(ConvFwd{.shape = shape, .x = x, .w = w, .y = y}); });
    row("conv", name, "cutlass", "us", cutlass);
    row("conv", name, "cutlass", "TFLOP/s", tflops(flops, cutlass));
    row("conv", name, "cudnn", "us", cudnn);
    row("conv", name, "cutlass/cudnn", "speedup", cudnn / cutlass);
  }
}

}  // namespace
}  // namespace accel::bench

int main(int argc, char** argv) {
  using namespace accel;
  std::set<std::string> parts;
  std::string list = argc > 1 ? argv[1] : "cache,gemm,evt,grouped,conv";
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    parts.insert(list.substr(start, end - start));
    start = end + 1;
  }
  fmt::print("part,case,variant,metric,value\n");
  if (parts.count("cache")) bench::cache_part();
  System system;
  const auto dir = bench::fresh_directory("kernels");
  Device device = bench::require(
      Device::open(system,
                   {.kind = DeviceKind::cuda, .jit = {.kernel_directory = dir.string(), .compile_threads = 16}}),
      "open cuda:0");
  bench::compile_ahead(device);
  if (parts.count("tiles")) bench::tiles_part(device);
  if (parts.count("sweeps")) bench::tile_sweeps_part(device);
  if (parts.count("gemm")) bench::gemm_part(device);
  if (parts.count("evt")) bench::evt_part(device);
  if (parts.count("grouped")) bench::grouped_part(device);
  if (parts.count("conv")) bench::conv_part(device);
  std::filesystem::remove_all(dir);
  return 0;
}
