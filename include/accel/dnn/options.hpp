/// @file
/// The cuDNN family's options (DeviceOptions::dnn). CUDA only.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

namespace accel::dnn {

/// The DNN family's options: cuDNN's plan cache, in memory and on disk.
struct Options {
  std::uint64_t plan_cache_capacity = 1024;  ///< cuDNN execution plans per device (LRU)
  /// Built cuDNN plans are kept on disk, so that another process (or a replaced isolated worker) loads them
  /// instead of running heuristics and building again. Empty directory: DiskStore's default for "cudnn-plans"
  /// ($ACCEL_CACHE_DIR, $XDG_CACHE_HOME/accel or ~/.cache/accel).
  bool persistent_plans = true;
  std::string plan_directory;  ///< the on-disk plans' directory; empty: DiskStore's default for "cudnn-plans"
  std::uint64_t plan_directory_bytes = 256ull << 20;  ///< the most bytes the on-disk plans may take

  /// Every field, as an isolated device sends them to its worker (a field added here crosses with no other edit).
  template <class Self>
  static auto fields(Self& self) {
    return std::tie(self.plan_cache_capacity, self.persistent_plans, self.plan_directory, self.plan_directory_bytes);
  }
};

}  // namespace accel::dnn
