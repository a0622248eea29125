// The --device option every accel command shares: auto (a CUDA device when there is a usable GPU, else the CPU),
// cpu, cuda (in process) or cuda-isolated (the context in a supervised worker process).
#pragma once

#include <memory>
#include <string_view>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"

namespace accel::cli {

inline constexpr std::string_view kDeviceChoices = "auto, cpu, cuda or cuda-isolated";

// The options of the device `choice` names (auto resolved to what this machine has), or invalid_argument.
[[nodiscard]] Result<DeviceOptions> device_options(std::string_view choice);

[[nodiscard]] Result<Device> open_device(System& system, std::string_view choice);

// What embed, serve and the demo load: the model on the device `choice` names, opened while the model's folder is
// read and converted (embed::Model::open). `device_failed` says whether an error is the device's.
struct OpenedModel {
  Result<std::shared_ptr<embed::Model>> model;
  bool device_failed = false;
};
// `mailbox`: how the device's actor waits for its next request (the default, or a server's longer spin).
[[nodiscard]] OpenedModel open_model(System& system, std::string_view choice, embed::ModelOptions options,
                                     MailboxOptions mailbox = {});

}  // namespace accel::cli
