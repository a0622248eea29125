// The fixture of the JIT tests on the GPU: a GPU device whose kernel cache has a directory of its own, a CPU
// device for the reference, the JIT's counters, and host arrays moved to and from a device.
#pragma once

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

namespace accel::testing {

inline std::filesystem::path kernel_directory() {
  // One directory for the whole suite, so the warm-up's compiles serve every test.
  static const std::filesystem::path dir = [] {
    auto path = std::filesystem::temp_directory_path() / fmt::format("accel-jit-test-{}", ::getpid());
    std::filesystem::remove_all(path);
    return path;
  }();
  return dir;
}

inline DeviceOptions gpu_options(Isolation isolation = Isolation::in_process) {
  return {.kind = DeviceKind::cuda,
          .isolation = isolation,
          .jit = {.kernel_directory = kernel_directory().string(), .compile_threads = 16}};
}

// What the JIT's caches say: compiles and disk loads of "jit-binaries", loads into the context of
// "jit-programs" and "jit-modules", and answers given while a kernel compiled ("jit-binaries" not_ready).
struct JitStats {
  std::uint64_t compiles = 0;
  std::uint64_t disk_loads = 0;
  std::uint64_t module_loads = 0;
  std::uint64_t library_fallbacks = 0;
};

inline JitStats jit_stats(const Device& device) {
  Result<DeviceInfo> info = device.ask(QueryDevice{}).wait();
  EXPECT_THAT(info, IsOk());
  if (!info.ok()) return {};
  const CacheStats* binaries = info->cache("jit-binaries");
  const CacheStats* programs = info->cache("jit-programs");
  const CacheStats* modules = info->cache("jit-modules");
  // A device reports the JIT's caches once a request has opened its state: before that, nothing was compiled or
  // loaded. Some of them without the others would be a broken report.
  if (binaries == nullptr && programs == nullptr && modules == nullptr) return {};
  EXPECT_TRUE(binaries != nullptr && programs != nullptr && modules != nullptr);
  if (binaries == nullptr || programs == nullptr || modules == nullptr) return {};
  return {.compiles = binaries->builds,
          .disk_loads = binaries->disk_loads,
          .module_loads = programs->builds - programs->build_failures + modules->builds - modules->build_failures,
          .library_fallbacks = binaries->not_ready};
}

inline BufferHandle upload(const Device& device, const HostArray& host) {
  Result<BufferHandle> buffer = device.ask(Allocate{.dtype = host.dtype, .count = host.size()}).wait();
  EXPECT_THAT(buffer, IsOk());
  EXPECT_THAT(device.ask(CopyToDevice{.source = host.source(), .destination = *buffer}).wait(), IsOk());
  return *buffer;
}

inline HostArray download(const Device& device, BufferHandle buffer) {
  HostArray host(buffer.dtype, buffer.count);
  EXPECT_THAT(device.ask(CopyToHost{.source = buffer, .destination = host.destination()}).wait(), IsOk());
  host.decode();
  return host;
}

inline HostArray random_array(DType dtype, std::size_t count, std::uint64_t seed, double low = -1.0,
                              double high = 1.0) {
  std::mt19937_64 rng(seed);
  HostArray host(dtype, count);
  host.fill_uniform(rng, low, high);
  return host;
}

class CudaJit : public ::testing::Test {
 protected:
  void SetUp() override {
    ACCEL_OPEN_CUDA_OR_SKIP(system_, gpu_options(), gpu);
    gpu_ = gpu;
    cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  }
  System system_;
  std::optional<Device> gpu_;
  std::optional<Device> cpu_;
};

}  // namespace accel::testing
