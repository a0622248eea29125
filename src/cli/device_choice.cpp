#include "cli/device_choice.hpp"

#include <fmt/format.h>

#include "accel/device/pool.hpp"

namespace accel::cli {

Result<Device> open_device(System& system, std::string_view choice) {
  ACCEL_ASSIGN_OR_RETURN(DeviceOptions options, parse_device_choice(choice));
  return Device::open(system, std::move(options));
}

Result<std::optional<DType>> compute_dtype(std::string_view choice) {
  if (choice == "auto") return std::optional<DType>();
  if (choice == "f32") return std::optional<DType>(DType::f32);
  if (choice == "f16") return std::optional<DType>(DType::f16);
  if (choice == "bf16") return std::optional<DType>(DType::bf16);
  return invalid_argument(fmt::format("unknown dtype '{}' ({})", choice, kDtypeChoices));
}

OpenedModel open_model(System& system, std::string_view choice, embed::ModelOptions options, MailboxOptions mailbox) {
  Result<DeviceOptions> device_options_chosen = parse_device_choice(choice);
  if (!device_options_chosen.ok()) return {.model = device_options_chosen.status(), .device_failed = true};
  device_options_chosen->mailbox = mailbox;
  bool device_failed = false;
  Result<std::shared_ptr<embed::Model>> model =
      embed::Model::open({.kind = device_options_chosen->kind,
                          .isolation = device_options_chosen->isolation,
                          .open =
                              [&]() {
                                Result<Device> device = Device::open(system, *device_options_chosen);
                                device_failed = !device.ok();
                                return device;
                              }},
                         std::move(options));
  return {.model = std::move(model), .device_failed = device_failed};
}

}  // namespace accel::cli
