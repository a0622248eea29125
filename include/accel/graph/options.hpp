/// @file
/// The compiled graphs' options (DeviceOptions::graph), on every device.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

namespace accel::graph {

/// The graph family's options: the cache of compiled executables, in memory and on disk.
struct Options {
  /// Compiled graph executables (graph::Execute) per stream: an LRU by entries (and on the CPU device by arena
  /// bytes). Their plans are kept on disk ("graph-executables" by default), so that another process or a replaced
  /// isolated worker specialises nothing again. 256 holds every batch shape a server warms
  /// (embed::ModelOptions::warm_every_batch_size): 106 for all-MiniLM-L6-v2's runs of up to 65,536 tokens.
  std::uint64_t executable_capacity = 256;
  /// The most arena bytes the cached executables may hold, on the CPU device. A CUDA stream's executables share one
  /// arena, the largest run's, so this bound does not apply there.
  std::uint64_t executable_bytes = 8ull << 30;
  bool persistent = true;  ///< keep the executables' plans on disk
  std::string directory;   ///< the on-disk plans' directory; empty: DiskStore's default for "graph-executables"
  std::uint64_t directory_bytes = 64ull << 20;  ///< the most bytes the on-disk plans may take

  /// Every field, as an isolated device sends them to its worker (a field added here crosses with no other edit).
  template <class Self>
  static auto fields(Self& self) {
    return std::tie(self.executable_capacity, self.executable_bytes, self.persistent, self.directory,
                    self.directory_bytes);
  }
};

}  // namespace accel::graph
