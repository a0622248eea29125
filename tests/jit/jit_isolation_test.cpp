// The JIT requests in an isolated worker: the same bytes as in this process, and LaunchKernel's refusal
// without CUDA.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/dnn/convolution.hpp"
#include "accel/jit/cutlass.hpp"
#include "accel/jit/kernel.hpp"
#include "device/isolated/staged_requests.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/jit_requests.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::HostArray;
using testing::IsOk;
using testing::relative_error;
using testing::StatusIs;
using namespace jit_testing;

// -- 5. LaunchKernel without CUDA --------------------------------------------------------------------------------

LaunchKernel scale_kernel(const BufferHandle& x) {
  auto program = std::make_shared<jit::Program>(jit::Program{
      .name = "scale.cu", .source = R"(extern "C" __global__ void scale(float* x, float a, unsigned long long n) {
                     auto i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; })"});
  return LaunchKernel{.program = program,
                      .kernel = "scale",
                      .grid = {1},
                      .block = {64},
                      .args = {KernelArg::inout(x), KernelArg::of(2.0f), KernelArg::of(std::uint64_t{64})}};
}

TEST(JitRequestsIsolationTest, LaunchKernelNeedsCuda) {
  System system;
  for (Isolation isolation : {Isolation::in_process, Isolation::worker_process}) {
    SCOPED_TRACE(std::string(to_string(isolation)));
    Result<Device> opened = Device::open(system, options_for(isolation));
    ASSERT_THAT(opened, IsOk());
    const Device dev = *opened;
    const BufferHandle x = to_device(dev, filled(DType::f32, 64, 1.5));
    EXPECT_THAT(dev.ask(scale_kernel(x)).wait(), StatusIs(Code::not_supported, "needs a CUDA device"));
    expect_all(from_device(dev, x), 1.5);
    if (isolation == Isolation::worker_process) {
      EXPECT_THAT(dev.ask(LaunchKernel{.kernel = "scale"}).wait(), StatusIs(Code::invalid_argument, "program"));
      // The worker is still the first one: the staged request did not bring it down.
      EXPECT_EQ(dev.info().wait()->worker_restarts, 0u);
    }
  }
}

// -- 6. the isolated device against the in-process one ------------------------------------------------------------

TEST(JitRequestsIsolationTest, IsolatedDeviceGivesTheSameBytes) {
  System system;
  Result<Device> in_process = Device::open(system, options_for(Isolation::in_process));
  Result<Device> isolated = Device::open(system, options_for(Isolation::worker_process));
  ASSERT_THAT(in_process, IsOk());
  ASSERT_THAT(isolated, IsOk());
  ASSERT_GT(isolated->info().wait()->worker_pid, 0);

  // A CutlassGemm with every epilogue operand (crosses as plain data).
  const GemmProblem gemm({.input = DType::bf16,
                          .output = DType::bf16,
                          .layout_a = MatrixOrder::column_major,
                          .layout_b = MatrixOrder::row_major,
                          .layout_c = MatrixOrder::column_major,
                          .ldd = 32,
                          .alpha = 0.75f,
                          .beta = 0.5f,
                          .c = true,
                          .activation = Activation::gelu_tanh,
                          .bias = BiasVector::per_column,
                          .row_scale = true,
                          .col_scale = true,
                          .residual = true},
                         60);
  const HostArray local_gemm = gemm.run_and_check(*in_process);
  const HostArray remote_gemm = gemm.run_and_check(*isolated);
  EXPECT_EQ(remote_gemm.bytes, local_gemm.bytes);

  // A CutlassGroupedGemm (staged).
  const GroupedProblem grouped(61);
  std::vector<HostArray> outputs;
  for (const Device& dev : {*in_process, *isolated}) {
    const CutlassGroupedGemm request = grouped.upload(dev);
    EXPECT_THAT(dev.ask(request).wait(), IsOk());
    outputs.push_back(from_device(dev, request.groups[0].d.buffer));
    grouped.check(outputs.back());
  }
  EXPECT_EQ(outputs[1].bytes, outputs[0].bytes);

  // Errors keep their codes across the worker.
  for (const Device& dev : {*in_process, *isolated}) {
    CutlassGroupedGemm bad = grouped.upload(dev);
    bad.groups[1].lda = 20;
    EXPECT_THAT(dev.ask(bad).wait(), StatusIs(Code::invalid_argument, "16-byte aligned"));
    CutlassGemm bad_gemm = gemm.upload(dev);
    bad_gemm.input = DType::fp8_e4m3;
    EXPECT_THAT(dev.ask(bad_gemm).wait(), StatusIs(Code::not_supported, "fp8"));
  }
  EXPECT_EQ(isolated->info().wait()->worker_restarts, 0u);
}

}  // namespace
}  // namespace accel
