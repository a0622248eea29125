// What the tests of CUTLASS instances share: a small f16 GEMM instance that every check accepts.
#pragma once

#include "jit/cutlass/render.hpp"

namespace accel::jit::cutlass::instance_testing {

inline GemmInstance small_f16_gemm() {
  GemmInstance instance;
  instance.tile = {.tile_m = 128, .tile_n = 128, .tile_k = 64, .cluster_m = 1, .cluster_n = 1};
  return instance;
}

}  // namespace accel::jit::cutlass::instance_testing
