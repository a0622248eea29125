// The CUDA device a GPU benchmark measures. Where none opens, the benchmark ends at once with a line naming why and
// status 77, "skipped", as a test binary whose every test skipped ends (tests/testing/gtest_main.cpp).
#pragma once

#include <fmt/format.h>

#include <string_view>
#include <utility>

#include "accel/device/device.hpp"
#include "common/exit_now.hpp"

namespace accel::bench {

inline Device open_gpu_or_skip(System& system, std::string_view benchmark,
                               const DeviceOptions& options = {.kind = DeviceKind::cuda}) {
  Result<Device> device = Device::open(system, options);
  if (!device.ok()) {
    fmt::print(stderr, "{} needs a GPU: {}\n", benchmark, device.status().to_string());
    exit_now(77);
  }
  return std::move(*device);
}

}  // namespace accel::bench
