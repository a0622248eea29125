// NVRTC kernels on the GPU: launched with typed arguments and compared with the host, refused before launch
// when bad, and the kernel cache across devices and a replaced isolated worker.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "accel/jit/cutlass.hpp"
#include "accel/jit/kernel.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/cuda_jit_fixture.hpp"

namespace accel::testing {
namespace {

// -- NVRTC kernels --------------------------------------------------------------------------------------------

std::shared_ptr<const jit::Program> axpy_program() {
  return std::make_shared<jit::Program>(
      jit::Program{.name = "axpy.cu",
                   .source = R"(#include "scale.h"
extern "C" __global__ void axpy(float* y, const float* x, float a, unsigned long long n) {
  unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
  if (i < n) y[i] += kScale * a * x[i];
}
template <class T> __global__ void fill(T* out, T value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
})",
                   .headers = {{.name = "scale.h", .contents = "constexpr float kScale = 2.0f;\n"}},
                   .name_expressions = {"fill<float>", "fill<int>"}});
}

TEST_F(CudaJit, AxpyAndTemplatesMatchTheHost) {
  const std::uint64_t n = 100'003;
  HostArray x = random_array(DType::f32, n, 1);
  HostArray y = random_array(DType::f32, n, 2);
  const BufferHandle dx = upload(*gpu_, x);
  const BufferHandle dy = upload(*gpu_, y);
  const auto program = axpy_program();
  LaunchKernel axpy{.program = program,
                    .kernel = "axpy",
                    .grid = {static_cast<std::uint32_t>((n + 255) / 256)},
                    .block = {256},
                    .args = {KernelArg::inout(dy), KernelArg::in(dx), KernelArg::of(0.5f), KernelArg::of(n)}};
  ASSERT_THAT(gpu_->ask(axpy).wait(), IsOk());
  HostArray out = download(*gpu_, dy);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(out.values[i], y.values[i] + 2.0 * 0.5 * x.values[i]) << i;

  Result<BufferHandle> ints = gpu_->ask(Allocate{.dtype = DType::i32, .count = 1000}).wait();
  ASSERT_THAT(ints, IsOk());
  LaunchKernel fill{
      .program = program,
      .kernel = "fill<int>",
      .grid = {4},
      .block = {256},
      .args = {KernelArg::out(*ints), KernelArg::of(std::int32_t{-7}), KernelArg::of(std::int32_t{1000})}};
  ASSERT_THAT(gpu_->ask(fill).wait(), IsOk());
  HostArray filled = download(*gpu_, *ints);
  for (double v : filled.values) ASSERT_EQ(v, -7.0);

  const JitStats stats = jit_stats(*gpu_);
  EXPECT_EQ(stats.compiles + stats.disk_loads, 1u) << "one program, compiled or loaded once";
  EXPECT_EQ(stats.module_loads, 1u);
}

// What an isolated worker does: every launch brings a new Program object with the same contents.
TEST_F(CudaJit, EqualProgramsBuiltAnewFindTheLoadedKernel) {
  Result<BufferHandle> out = gpu_->ask(Allocate{.dtype = DType::f32, .count = 256}).wait();
  ASSERT_THAT(out, IsOk());
  for (int i = 0; i < 600; ++i) {
    auto program = std::make_shared<jit::Program>(*axpy_program());
    LaunchKernel fill{.program = program,
                      .kernel = "fill<float>",
                      .grid = {1},
                      .block = {256},
                      .args = {KernelArg::out(*out), KernelArg::of(static_cast<float>(i)), KernelArg::of(256)}};
    ASSERT_THAT(gpu_->ask(fill).wait(), IsOk()) << i;
  }
  HostArray filled = download(*gpu_, *out);
  for (double v : filled.values) ASSERT_EQ(v, 599.0);
  const JitStats stats = jit_stats(*gpu_);
  EXPECT_EQ(stats.compiles + stats.disk_loads, 1u);
  EXPECT_EQ(stats.module_loads, 1u);
}

TEST_F(CudaJit, BadLaunchesAreRefusedBeforeLaunching) {
  const auto program = axpy_program();
  Result<BufferHandle> y = gpu_->ask(Allocate{.dtype = DType::f32, .count = 16}).wait();
  ASSERT_THAT(y, IsOk());
  LaunchKernel launch{.program = program,
                      .kernel = "axpy",
                      .grid = {1},
                      .block = {16},
                      .args = {KernelArg::inout(*y), KernelArg::in(*y), KernelArg::of(1.0f)}};
  EXPECT_THAT(gpu_->ask(launch).wait(), StatusIs(Code::invalid_argument, "takes 4 parameters"));
  launch.args.push_back(KernelArg::of(std::int32_t{16}));
  EXPECT_THAT(gpu_->ask(launch).wait(), StatusIs(Code::invalid_argument, "argument 3 is a int32 of 4 bytes"));
  launch.args.back() = KernelArg::of(std::uint64_t{16});
  launch.kernel = "saxpy";
  EXPECT_THAT(gpu_->ask(launch).wait(), StatusIs(Code::invalid_argument, "has no kernel saxpy"));
  launch.kernel = "axpy";
  launch.block = {2048};
  EXPECT_THAT(gpu_->ask(launch).wait(), StatusIs(Code::invalid_argument, "2048 threads"));
  launch.block = {16};
  ASSERT_THAT(gpu_->ask(Free{.buffer = *y}).wait(), IsOk());
  EXPECT_THAT(gpu_->ask(launch).wait(), StatusIs(Code::stale_handle));

  auto broken = std::make_shared<jit::Program>(jit::Program{
      .name = "broken.cu", .source = "extern \"C\" __global__ void k(float* x) { x[0] = undeclared_name; }"});
  LaunchKernel bad{.program = broken, .kernel = "k", .grid = {1}, .block = {1}, .args = {KernelArg::of(1.0f)}};
  EXPECT_THAT(gpu_->ask(bad).wait(), StatusIs(Code::invalid_argument, "undeclared_name"));
  EXPECT_THAT(cpu_->ask(bad).wait(), StatusIs(Code::not_supported, "needs a CUDA device"));
}

TEST_F(CudaJit, KernelsComeFromDiskInANewDeviceAndAReplacedWorker) {
  // Random for a program that no earlier run of this test left in the kernel directory (which lasts the whole
  // process, --gtest_repeat included), so that the first launch compiles; any factor is checked exactly.
  const int factor = static_cast<int>(std::random_device{}() % 1000 + 1);
  auto program = std::make_shared<jit::Program>(jit::Program{
      .name = "iota.cu",
      .source = fmt::format("extern \"C\" __global__ void iota(int* out, int n) {{ int i = threadIdx.x; if (i < n) "
                            "out[i] = i * {}; }}",
                            factor)});
  std::vector<double> expected(64);
  for (int i = 0; i < 64; ++i) expected[static_cast<std::size_t>(i)] = i * factor;
  // What the kernel wrote: a kernel found in a cache must compute what the compiled one did, not only launch.
  auto run = [&](const Device& device) -> Result<std::vector<double>> {
    ACCEL_ASSIGN_OR_RETURN(BufferHandle out, device.ask(Allocate{.dtype = DType::i32, .count = 64}).wait());
    LaunchKernel launch{.program = program,
                        .kernel = "iota",
                        .grid = {1},
                        .block = {64},
                        .args = {KernelArg::out(out), KernelArg::of(std::int32_t{64})}};
    ACCEL_RETURN_IF_ERROR(device.ask(launch).wait().status());
    HostArray host(DType::i32, 64);
    ACCEL_RETURN_IF_ERROR(device.ask(CopyToHost{.source = out, .destination = host.destination()}).wait().status());
    host.decode();
    return host.values;
  };
  const Result<std::vector<double>> compiled = run(*gpu_);
  ASSERT_THAT(compiled, IsOk());
  EXPECT_EQ(*compiled, expected);
  EXPECT_EQ(jit_stats(*gpu_).compiles, 1u);
  {
    Device second = *Device::open(system_, gpu_options());
    const Result<std::vector<double>> loaded = run(second);
    ASSERT_THAT(loaded, IsOk());
    EXPECT_EQ(*loaded, expected);
    const JitStats stats = jit_stats(second);
    EXPECT_EQ(stats.compiles, 0u);
    EXPECT_EQ(stats.disk_loads, 1u);
  }
  Device worker = *Device::open(system_, gpu_options(Isolation::worker_process));
  const Result<std::vector<double>> in_worker = run(worker);
  ASSERT_THAT(in_worker, IsOk());
  EXPECT_EQ(*in_worker, expected);
  EXPECT_EQ(jit_stats(worker).compiles, 0u);
  // A sticky fault: the worker and its context are replaced; the new context loads the kernel again.
  EXPECT_THAT(worker.ask(InjectFault{}).wait(), StatusIs(Code::context_lost));
  Result<std::vector<double>> again = run(worker);
  for (int attempt = 0; attempt < 50 && again.code() == Code::unavailable; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    again = run(worker);
  }
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(*again, expected);
  const JitStats after = jit_stats(worker);
  EXPECT_EQ(after.compiles, 0u);
  EXPECT_EQ(after.disk_loads, 1u);
  EXPECT_EQ(after.module_loads, 1u);
}

}  // namespace
}  // namespace accel::testing
