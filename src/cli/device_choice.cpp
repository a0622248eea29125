#include "cli/device_choice.hpp"

#include <fmt/format.h>

namespace accel::cli {

Result<Device> open_device(System& system, std::string_view choice) {
  if (choice == "auto") return Device::open_default(system);
  if (choice == "cpu") return Device::open(system, {.kind = DeviceKind::cpu});
  if (choice == "cuda") return Device::open(system, {.kind = DeviceKind::cuda});
  if (choice == "cuda-isolated")
    return Device::open(system, {.kind = DeviceKind::cuda, .isolation = Isolation::worker_process});
  return invalid_argument(fmt::format("unknown device '{}' ({})", choice, kDeviceChoices));
}

}  // namespace accel::cli
