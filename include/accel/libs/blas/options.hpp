/// @file
/// The BLAS family's options (DeviceOptions::blas). CUDA only.
#pragma once

#include <cstdint>
#include <tuple>

namespace accel::blas {

/// The BLAS family's options: cuBLASLt's plan cache and workspace.
struct Options {
  std::uint64_t plan_cache_capacity = 256;      ///< cuBLASLt plans per stream (LRU)
  std::uint64_t workspace_bytes = 32ull << 20;  ///< per stream, taken from the device's memory pool

  /// Every field, as an isolated device sends them to its worker (a field added here crosses with no other edit).
  template <class Self>
  static auto fields(Self& self) {
    return std::tie(self.plan_cache_capacity, self.workspace_bytes);
  }
};

}  // namespace accel::blas
