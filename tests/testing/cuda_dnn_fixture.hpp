// The fixture of the cuDNN tests on the GPU: a GPU device with its own plan directory, a CPU device for the
// reference, and the comparison of a graph's GPU result with the CPU reference on the same random inputs.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "accel/dnn/convolution.hpp"
#include "testing/dnn_testbed.hpp"

namespace accel::testing {

inline std::filesystem::path fresh_directory(std::string_view name) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("accel-{}-{}-{}", name, ::getpid(), std::random_device{}());
  std::filesystem::remove_all(dir);
  return dir;
}

inline DeviceOptions gpu_options(const std::filesystem::path& plans, Isolation isolation = Isolation::in_process) {
  return {.kind = DeviceKind::cuda, .isolation = isolation, .dnn = {.plan_directory = plans.string()}};
}

inline CacheStats plan_stats(const Device& device) {
  Result<DeviceInfo> info = device.ask(QueryDevice{}).wait();
  EXPECT_THAT(info, IsOk());
  const CacheStats* plans = info.ok() ? info->cache("cudnn-plans") : nullptr;
  EXPECT_NE(plans, nullptr);
  return plans != nullptr ? *plans : CacheStats{};
}

class CudaDnn : public ::testing::Test {
 protected:
  void SetUp() override {
    plans_ = fresh_directory("plans");
    ACCEL_OPEN_CUDA_OR_SKIP(system_, gpu_options(plans_), gpu);
    gpu_ = gpu;
    cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  }
  void TearDown() override { std::filesystem::remove_all(plans_); }

  // Runs `submit` on the GPU and the CPU with the same inputs and expects every output to agree.
  void expect_matches_reference(const dnn::Graph& graph, const Submit& submit, std::uint64_t seed,
                                const std::string& what,
                                const std::function<void(std::uint32_t, HostArray&)>& fill = {}) {
    const TensorArrays inputs = random_inputs(graph, seed, fill);
    Result<TensorArrays> on_gpu = run_on(*gpu_, graph, inputs, submit);
    ASSERT_THAT(on_gpu, IsOk()) << what;
    Result<TensorArrays> on_cpu = run_on(*cpu_, graph, inputs, submit);
    ASSERT_THAT(on_cpu, IsOk()) << what;
    for (const auto& [uid, ref] : *on_cpu) {
      const double error = scaled_error(on_gpu->at(uid), ref);
      EXPECT_LE(error, tolerance_of(ref.dtype)) << what << ": output %" << uid;
    }
  }

  void expect_graph_matches(dnn::GraphBuilder& builder, std::uint64_t seed, const std::string& what,
                            const std::function<void(std::uint32_t, HostArray&)>& fill = {}) {
    Result<std::shared_ptr<const dnn::Graph>> graph = builder.build();
    ASSERT_THAT(graph, IsOk()) << what;
    expect_matches_reference(**graph, run_graph(*graph), seed, what, fill);
  }

  System system_;
  std::filesystem::path plans_;
  std::optional<Device> gpu_;
  std::optional<Device> cpu_;
};

}  // namespace accel::testing
