// How the command line names a device's libraries: "cuBLASLt 13.0.1, cuDNN 9.14.0, cudnn-frontend 1.23.0".
#pragma once

#include <string>

#include "accel/device/requests.hpp"

namespace accel::cli {

[[nodiscard]] inline std::string library_list(const DeviceInfo& info) {
  std::string text;
  for (const LibraryVersion& library : info.libraries) {
    if (!text.empty()) text += ", ";
    text += library.name + " " + library.version;
  }
  return text;
}

}  // namespace accel::cli
