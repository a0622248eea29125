// `accel demo`: GEMMs of several sizes through the device actor, checked against a reference, with timings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace accel::cli {

struct DemoOptions {
  std::string device = "auto";  // auto | cpu | cuda
  std::vector<std::int64_t> sizes{64, 128, 256, 512};
  int repeats = 20;
};

// Returns the process exit code: 0 when every result matched its reference.
int run_demo(const DemoOptions& options);

}  // namespace accel::cli
