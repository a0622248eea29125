/// @file
/// accel::LibraryVersion — a library a device answers requests with; libraries name themselves, devices list them.
#pragma once

#include <string>

namespace accel {

/// e.g. {"cuBLASLt", "13.0.1"}, {"cuDNN", "9.14.0"}, {"OpenBLAS", "OpenBLAS 0.3.21 ..."}.
struct LibraryVersion {
  std::string name;     ///< the library's name, e.g. "cuBLASLt"
  std::string version;  ///< its version as the library reports it
};

}  // namespace accel
