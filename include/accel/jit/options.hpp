/// @file
/// The JIT family's options (DeviceOptions::jit). CUDA only.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

namespace accel::jit {

/// The JIT family's options: the on-disk kernel cache and the background compiles.
struct Options {
  /// Run-time compiled kernels (NVRTC programs, CUTLASS modules) are kept on disk, in "jit-kernels" by default
  /// (see dnn::Options for where that is); compiles run on `compile_threads` background threads per device.
  bool persistent_kernels = true;
  std::string kernel_directory;  ///< the on-disk kernels' directory; empty: DiskStore's default for "jit-kernels"
  std::uint64_t kernel_directory_bytes = 2ull << 30;  ///< the most bytes the on-disk kernels may take
  std::uint32_t compile_threads = 4;                  ///< background compile threads per device

  /// Every field, as an isolated device sends them to its worker (a field added here crosses with no other edit).
  template <class Self>
  static auto fields(Self& self) {
    return std::tie(self.persistent_kernels, self.kernel_directory, self.kernel_directory_bytes, self.compile_threads);
  }
};

}  // namespace accel::jit
