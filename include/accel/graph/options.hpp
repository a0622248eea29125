/// @file
/// The compiled graphs' options (DeviceOptions::graph), on every device.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

namespace accel::graph {

struct Options {
  /// Compiled graph executables (graph::Execute) per stream: an LRU by entries and by arena bytes. Their plans are
  /// kept on disk ("graph-executables" by default), so that another process or a replaced isolated worker
  /// specialises nothing again.
  std::uint64_t executable_capacity = 64;
  std::uint64_t executable_bytes = 8ull << 30;
  bool persistent = true;
  std::string directory;
  std::uint64_t directory_bytes = 64ull << 20;

  /// Every field, as an isolated device sends them to its worker (a field added here crosses with no other edit).
  template <class Self>
  static auto fields(Self& self) {
    return std::tie(self.executable_capacity, self.executable_bytes, self.persistent, self.directory,
                    self.directory_bytes);
  }
};

}  // namespace accel::graph
