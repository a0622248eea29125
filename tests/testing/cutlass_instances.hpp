// What the tests of CUTLASS instances share: a small f16 GEMM instance that every check accepts.
#pragma once

#include "jit/cutlass/render.hpp"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jit/cutlass/module_abi.hpp"
#include "jit/cutlass/render_parts.hpp"
#include "jit/nvcc_compiler.hpp"
#include "testing/status_matchers.hpp"

namespace accel::jit::cutlass::instance_testing {

namespace fs = std::filesystem;
using accel::testing::IsOk;
using accel::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

inline GemmInstance small_f16_gemm() {
  GemmInstance instance;
  instance.tile = {.tile_m = 128, .tile_n = 128, .tile_k = 64, .cluster_m = 1, .cluster_n = 1};
  return instance;
}

}  // namespace accel::jit::cutlass::instance_testing
