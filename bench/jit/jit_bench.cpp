// The JIT on the GPU, every figure beside the thing a user would use instead, in one run:
//   cache    compile cold vs disk hit vs memory hit, for an NVRTC program and a CUTLASS module (the device's
//            JitKernels directly: the cost of finding a kernel, not of a request around it)
//   gemm     CutlassGemm vs cuBLASLt (accel's Gemm request), f16/bf16 4096^3 and 8192^3, fp8 e4m3 -> bf16
//   evt      GEMM + bias + GELU: one CUTLASS EVT kernel vs cuBLASLt's epilogue vs cuBLASLt GEMM then a separate
//            bias+GELU kernel (NVRTC)
//   grouped  32 groups, M from 16 to 2048, N = K = 4096: one CutlassGroupedGemm vs a loop of cuBLASLt GEMMs
//   conv     CutlassConv fprop vs cuDNN (ConvFwd), ResNet-50 3x3 and 1x1 layers, N = 32, f16
//   tiles, sweeps   CUTLASS tiles beside accel's defaults (jit_tile_sweeps.cpp; not run unless named)
// Usage: jit_bench [comma-separated parts]; CSV rows on stdout (part,case,variant,metric,value).
#include <cuda_runtime.h>

#include <functional>
#include <set>

#include "common/exit_now.hpp"
#include "jit/cuda/jit_kernels.hpp"
#include "jit/jit_bench_common.hpp"

namespace accel::bench {
namespace {

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
