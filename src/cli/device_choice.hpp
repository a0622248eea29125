// The --device option every accel command shares: auto (a CUDA device when there is a usable GPU, else the CPU),
// cpu, cuda (in process) or cuda-isolated (the context in a supervised worker process).
#pragma once

#include <string_view>

#include "accel/device/device.hpp"

namespace accel::cli {

inline constexpr std::string_view kDeviceChoices = "auto, cpu, cuda or cuda-isolated";

[[nodiscard]] Result<Device> open_device(System& system, std::string_view choice);

}  // namespace accel::cli
