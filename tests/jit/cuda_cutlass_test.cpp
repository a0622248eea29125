// Every CUTLASS request family on the GPU compared with the CPU reference (and cuBLASLt / cuDNN) on fresh
// random inputs. CUTLASS kernels compile in the background at the start of the suite (Code::unavailable
// answers), so the suite pays for about one compile, not one per instance.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <thread>

#include "accel/jit/cutlass.hpp"
#include "accel/jit/kernel.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/cuda_jit_fixture.hpp"

namespace accel::testing {
namespace {

double tolerance(DType input, DType output) {
  if (input == DType::fp8_e4m3) return 2e-2;
  return output == DType::bf16 || input == DType::bf16 ? 1e-2 : 4e-3;
}

// -- CUTLASS ----------------------------------------------------------------------------------------------------

struct GemmCase {
  std::string name;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  DType input = DType::f16;
  DType output = DType::f16;
  MatrixOrder layout_a = MatrixOrder::row_major;
  MatrixOrder layout_b = MatrixOrder::column_major;
  MatrixOrder layout_c = MatrixOrder::row_major;
  Activation activation = Activation::identity;
  BiasVector bias = BiasVector::none;
  bool source = true;
  bool scales = false;
  bool residual = false;
  float alpha = 1.0f;
  float beta = 0.5f;
};

std::vector<GemmCase> gemm_cases() {
  using enum DType;
  return {
      {.name = "f16 plain", .m = 256, .n = 384, .k = 512, .input = f16, .output = f16},
      {.name = "f16 plain, other sizes",
       .m = 136,
       .n = 264,
       .k = 1000,
       .input = f16,
       .output = f16,
       .alpha = 0.75f,
       .beta = -1.0f},
      {.name = "bf16 bias per column + gelu",
       .m = 384,
       .n = 256,
       .k = 320,
       .input = bf16,
       .output = bf16,
       .activation = Activation::gelu_tanh,
       .bias = BiasVector::per_column,
       .source = false},
      {.name = "bf16 relu + per-row bias + scales + residual",
       .m = 200,
       .n = 328,
       .k = 256,
       .input = bf16,
       .output = bf16,
       .activation = Activation::relu,
       .bias = BiasVector::per_row,
       .scales = true,
       .residual = true},
      {.name = "f16 silu", .m = 128, .n = 128, .k = 64, .input = f16, .output = f16, .activation = Activation::silu},
      {.name = "fp8 e4m3 to bf16",
       .m = 256,
       .n = 512,
       .k = 384,
       .input = fp8_e4m3,
       .output = bf16,
       .source = false,
       .alpha = 0.5f},
      {.name = "f16 column-major C",
       .m = 264,
       .n = 192,
       .k = 256,
       .input = f16,
       .output = f16,
       .layout_a = MatrixOrder::column_major,
       .layout_b = MatrixOrder::row_major,
       .layout_c = MatrixOrder::column_major},
  };
}

GemmCase cublaslt_case() {
  return {.name = "f16 vs cuBLASLt",
          .m = 512,
          .n = 256,
          .k = 768,
          .input = DType::f16,
          .output = DType::f16,
          .source = false};
}

struct GemmArrays {
  HostArray a, b, c, bias, row_scale, col_scale, residual;
};

GemmArrays gemm_inputs(const GemmCase& g, std::uint64_t seed) {
  return {random_array(g.input, g.m * g.k, seed),
          random_array(g.input, g.k * g.n, seed + 1),
          random_array(g.output, g.m * g.n, seed + 2),
          random_array(g.output, g.bias == BiasVector::per_row ? g.m : g.n, seed + 3),
          random_array(DType::f32, g.m, seed + 4, 0.5, 1.5),
          random_array(DType::f32, g.n, seed + 5, 0.5, 1.5),
          random_array(g.output, g.m * g.n, seed + 6)};
}

CutlassGemm gemm_request(const GemmCase& g, const Device& device, const GemmArrays& in, WhenCompiling when) {
  CutlassGemm r{.m = g.m,
                .n = g.n,
                .k = g.k,
                .input = g.input,
                .output = g.output,
                .layout_a = g.layout_a,
                .layout_b = g.layout_b,
                .layout_c = g.layout_c,
                .alpha = g.alpha,
                .beta = g.beta,
                .epilogue = {.activation = g.activation, .bias = g.bias},
                .when_compiling = when};
  r.a = upload(device, in.a);
  r.b = upload(device, in.b);
  r.d = upload(device, in.c);
  if (g.source) r.c = r.d;
  if (g.bias != BiasVector::none) r.bias = upload(device, in.bias);
  if (g.scales) {
    r.row_scale = upload(device, in.row_scale);
    r.col_scale = upload(device, in.col_scale);
  }
  if (g.residual) r.residual = upload(device, in.residual);
  return r;
}

struct ConvCase {
  std::string name;
  ConvPass pass;
  ConvShape shape;
};

ConvShape conv_shape(std::int64_t n, std::int64_t c, std::int64_t k, std::int64_t hw, std::int64_t rs, int pad,
                     int stride, DType dtype) {
  return {.layout = dnn::TensorLayout::channels_last,
          .dtype = dtype,
          .n = n,
          .c = c,
          .k = k,
          .input = {hw, hw},
          .filter = {rs, rs},
          .pre_padding = {pad, pad},
          .post_padding = {pad, pad},
          .stride = {stride, stride}};
}

std::vector<ConvCase> conv_cases() {
  return {{"fprop 3x3", ConvPass::fprop, conv_shape(4, 64, 64, 28, 3, 1, 1, DType::f16)},
          {"fprop 1x1 stride 2", ConvPass::fprop, conv_shape(2, 128, 256, 14, 1, 0, 2, DType::f16)},
          {"dgrad 3x3", ConvPass::dgrad, conv_shape(4, 64, 64, 28, 3, 1, 1, DType::f16)},
          {"wgrad 3x3", ConvPass::wgrad, conv_shape(4, 64, 64, 28, 3, 1, 1, DType::f16)}};
}

std::int64_t conv_out(const ConvShape& s, int i) {
  return (s.input[i] + 2 * s.pre_padding[i] - s.filter[i]) / s.stride[i] + 1;
}

// Starts the compile of every CUTLASS instance the suite uses, all at once, on the device's compile threads.
class CudaCutlass : public CudaJit {
 protected:
  static void SetUpTestSuite() {
    System system;
    Result<Device> gpu = Device::open(system, gpu_options());
    if (!gpu.ok()) return;
    std::vector<GemmCase> cases = gemm_cases();
    cases.push_back(cublaslt_case());
    for (const GemmCase& g : cases) {
      Status s = gpu->ask(gemm_request(g, *gpu, gemm_inputs(g, 1), WhenCompiling::unavailable)).wait().status();
      if (!s.ok() && s.code() != Code::unavailable) ADD_FAILURE() << g.name << ": " << s.to_string();
    }
    for (DType dtype : {DType::f16, DType::bf16}) {
      Status s = gpu->ask(grouped_request(*gpu, dtype, {{64, 128, 64}}, WhenCompiling::unavailable)).wait().status();
      if (!s.ok() && s.code() != Code::unavailable) ADD_FAILURE() << "grouped: " << s.to_string();
    }
    for (const ConvCase& c : conv_cases()) {
      Status s = gpu->ask(conv_request(c, *gpu, 1, WhenCompiling::unavailable)).wait().status();
      if (!s.ok() && s.code() != Code::unavailable) ADD_FAILURE() << c.name << ": " << s.to_string();
    }
    // The compiles go on in the device's cache; this device must stay open until they are stored.
    for (const GemmCase& g : cases)
      (void)gpu->ask(gemm_request(g, *gpu, gemm_inputs(g, 1), WhenCompiling::wait)).wait();
  }

  struct Grouped {
    CutlassGroupedGemm request;
    std::vector<HostArray> inputs;
  };

  static CutlassGroupedGemm grouped_request(const Device& device, DType dtype,
                                            const std::vector<std::array<std::int64_t, 3>>& sizes, WhenCompiling when,
                                            std::vector<HostArray>* inputs = nullptr, std::uint64_t seed = 7) {
    CutlassGroupedGemm r{.input = dtype, .output = dtype, .alpha = 1.0f, .beta = 0.25f, .when_compiling = when};
    for (const auto& [m, n, k] : sizes) {
      HostArray a = random_array(dtype, m * k, seed++);
      HostArray b = random_array(dtype, k * n, seed++);
      HostArray c = random_array(dtype, m * n, seed++);
      GemmGroup group{.m = m, .n = n, .k = k};
      group.a.buffer = upload(device, a);
      group.b.buffer = upload(device, b);
      group.d.buffer = upload(device, c);
      group.c = group.d;
      r.groups.push_back(group);
      if (inputs != nullptr) {
        inputs->push_back(std::move(a));
        inputs->push_back(std::move(b));
        inputs->push_back(std::move(c));
      }
    }
    return r;
  }

  static CutlassConv conv_request(const ConvCase& c, const Device& device, std::uint64_t seed, WhenCompiling when) {
    const ConvShape& s = c.shape;
    const std::int64_t p = conv_out(s, 0), q = conv_out(s, 1);
    CutlassConv r{.pass = c.pass, .shape = s, .when_compiling = when};
    r.x = upload(device, random_array(s.dtype, s.n * s.input[0] * s.input[1] * s.c, seed));
    r.w = upload(device, random_array(s.dtype, s.k * s.filter[0] * s.filter[1] * s.c, seed + 1));
    r.y = upload(device, random_array(s.dtype, s.n * p * q * s.k, seed + 2));
    return r;
  }
};

TEST_F(CudaCutlass, GemmsMatchTheReference) {
  std::uint64_t seed = 100;
  for (const GemmCase& g : gemm_cases()) {
    const GemmArrays in = gemm_inputs(g, seed += 10);
    const CutlassGemm on_gpu = gemm_request(g, *gpu_, in, WhenCompiling::wait);
    const CutlassGemm on_cpu = gemm_request(g, *cpu_, in, WhenCompiling::wait);
    ASSERT_THAT(gpu_->ask(on_gpu).wait(), IsOk()) << g.name;
    ASSERT_THAT(cpu_->ask(on_cpu).wait(), IsOk()) << g.name;
    const HostArray out = download(*gpu_, on_gpu.d);
    const HostArray ref = download(*cpu_, on_cpu.d);
    EXPECT_LE(relative_error(out.values, ref.values), tolerance(g.input, g.output)) << g.name;
  }
  EXPECT_EQ(jit_stats(*gpu_).compiles, 0u) << "the suite's warm-up compiled every instance";
}

TEST_F(CudaCutlass, PlainGemmMatchesCublasLt) {
  const GemmCase g = cublaslt_case();
  const GemmArrays in = gemm_inputs(g, 5);
  const CutlassGemm cutlass = gemm_request(g, *gpu_, in, WhenCompiling::wait);
  ASSERT_THAT(gpu_->ask(cutlass).wait(), IsOk());
  // The same product through cuBLASLt: row-major C = A B with B stored column-major (B^T row-major).
  const BufferHandle c = upload(*gpu_, in.c);
  Gemm gemm{.shape = {.order = MatrixOrder::row_major,
                      .transpose_b = Transpose::transpose,
                      .m = g.m,
                      .n = g.n,
                      .k = g.k,
                      .input_type = DType::f16,
                      .output_type = DType::f16},
            .a = cutlass.a,
            .b = cutlass.b,
            .c = c};
  ASSERT_THAT(gpu_->ask(gemm).wait(), IsOk());
  EXPECT_LE(relative_error(download(*gpu_, cutlass.d).values, download(*gpu_, c).values), 2e-3);
}

TEST_F(CudaCutlass, LibraryFallbackAnswersWhileCompilingThenTheKernelServes) {
  // A tile no other test uses, so this instance is compiled here for the first time.
  GemmCase g{.name = "fallback",
             .m = 256,
             .n = 256,
             .k = 256,
             .input = DType::f16,
             .output = DType::f16,
             .activation = Activation::relu,
             .bias = BiasVector::per_column};
  const GemmArrays in = gemm_inputs(g, 11);
  // The suite's warm-up asked with WhenCompiling::unavailable, which counts too: compare with before.
  const std::uint64_t fallbacks_before = jit_stats(*gpu_).library_fallbacks;
  CutlassGemm request = gemm_request(g, *gpu_, in, WhenCompiling::library_fallback);
  request.tile = {
      .m = 128, .n = 64, .k = 64, .cluster_m = 1, .cluster_n = 1, .schedule = KernelSchedule::tma_cooperative};
  const CutlassGemm on_cpu = gemm_request(g, *cpu_, in, WhenCompiling::wait);
  ASSERT_THAT(cpu_->ask(on_cpu).wait(), IsOk());
  const HostArray ref = download(*cpu_, on_cpu.d);
  ASSERT_THAT(gpu_->ask(request).wait(), IsOk());
  EXPECT_EQ(jit_stats(*gpu_).library_fallbacks - fallbacks_before, 1u);
  EXPECT_LE(relative_error(download(*gpu_, request.d).values, ref.values), 4e-3);
  // Wait for the kernel, then the same request (inputs restored) runs on it.
  CutlassGemm waiting = gemm_request(g, *gpu_, in, WhenCompiling::wait);
  waiting.tile = request.tile;
  ASSERT_THAT(gpu_->ask(waiting).wait(), IsOk());
  EXPECT_EQ(jit_stats(*gpu_).library_fallbacks - fallbacks_before, 1u);
  EXPECT_LE(relative_error(download(*gpu_, waiting.d).values, ref.values), 4e-3);
}

TEST_F(CudaCutlass, GroupedGemmsMatchTheReference) {
  for (DType dtype : {DType::f16, DType::bf16}) {
    const std::vector<std::array<std::int64_t, 3>> sizes = {
        {16, 256, 128}, {200, 128, 256}, {64, 384, 64}, {1, 8, 8}, {333, 64, 512}};
    std::vector<HostArray> inputs;
    const CutlassGroupedGemm on_gpu = grouped_request(*gpu_, dtype, sizes, WhenCompiling::wait, &inputs, 31);
    const CutlassGroupedGemm on_cpu = grouped_request(*cpu_, dtype, sizes, WhenCompiling::wait, nullptr, 31);
    ASSERT_THAT(gpu_->ask(on_gpu).wait(), IsOk()) << to_string(dtype);
    ASSERT_THAT(cpu_->ask(on_cpu).wait(), IsOk());
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_LE(relative_error(download(*gpu_, on_gpu.groups[i].d.buffer).values,
                               download(*cpu_, on_cpu.groups[i].d.buffer).values),
                tolerance(dtype, dtype))
          << to_string(dtype) << " group " << i;
    }
  }
}

TEST_F(CudaCutlass, ConvolutionsMatchCudnnAndTheReference) {
  std::uint64_t seed = 500;
  for (const ConvCase& c : conv_cases()) {
    const CutlassConv on_gpu = conv_request(c, *gpu_, seed += 10, WhenCompiling::wait);
    const CutlassConv on_cpu = conv_request(c, *cpu_, seed, WhenCompiling::wait);
    ASSERT_THAT(gpu_->ask(on_gpu).wait(), IsOk()) << c.name;
    ASSERT_THAT(cpu_->ask(on_cpu).wait(), IsOk()) << c.name;
    const BufferHandle gpu_out = c.pass == ConvPass::fprop ? on_gpu.y : c.pass == ConvPass::dgrad ? on_gpu.x : on_gpu.w;
    const BufferHandle cpu_out = c.pass == ConvPass::fprop ? on_cpu.y : c.pass == ConvPass::dgrad ? on_cpu.x : on_cpu.w;
    EXPECT_LE(relative_error(download(*gpu_, gpu_out).values, download(*cpu_, cpu_out).values), 5e-3) << c.name;
  }
}

TEST_F(CudaCutlass, IsolatedDevicesRunTheSameKernels) {
  Device worker = *Device::open(system_, gpu_options(Isolation::worker_process));
  const GemmCase g = gemm_cases()[2];
  const GemmArrays in = gemm_inputs(g, 77);
  const CutlassGemm here = gemm_request(g, *gpu_, in, WhenCompiling::wait);
  const CutlassGemm there = gemm_request(g, worker, in, WhenCompiling::wait);
  ASSERT_THAT(gpu_->ask(here).wait(), IsOk());
  ASSERT_THAT(worker.ask(there).wait(), IsOk());
  EXPECT_EQ(download(*gpu_, here.d).bytes, download(worker, there.d).bytes);
  EXPECT_EQ(jit_stats(worker).compiles, 0u);
  std::vector<HostArray> inputs;
  const CutlassGroupedGemm grouped =
      grouped_request(worker, DType::f16, {{64, 128, 64}, {8, 64, 128}}, WhenCompiling::wait, &inputs);
  EXPECT_THAT(worker.ask(grouped).wait(), IsOk());
}

}  // namespace
}  // namespace accel::testing
