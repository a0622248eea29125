// `accel gemm-demo`: GEMMs of several sizes through the device actor, checked against a reference, with timings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace accel::cli {

struct GemmDemoOptions {
  std::string device = "auto";  // auto | cpu | cuda
  std::vector<std::int64_t> sizes{64, 128, 256, 512};
  int repeats = 20;
};

// Returns the process exit code: 0 when every result matched its reference.
int run_gemm_demo(const GemmDemoOptions& options);

}  // namespace accel::cli
