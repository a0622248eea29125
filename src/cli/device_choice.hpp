// The --device option every accel command shares (accel::parse_device_choice: auto, cpu, cpu-isolated, cuda[:N],
// cuda-isolated[:N]); and --dtype, what a model computes in.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"

namespace accel::cli {

[[nodiscard]] Result<Device> open_device(System& system, std::string_view choice);

// The --dtype option of the commands that load a model (embed::ModelOptions::compute): auto (the device's default:
// f32 on the CPU, f16 on a GPU, bf16 for a decoder there), f32, f16 (GPUs) or bf16 (GPUs, and CPUs with avx512_bf16
// or AMX, whose matmuls then run in bf16).
inline constexpr std::string_view kDtypeChoices = "auto, f32, f16 or bf16";
// The compute dtype `choice` names: none for auto; invalid_argument for a name not among kDtypeChoices.
[[nodiscard]] Result<std::optional<DType>> compute_dtype(std::string_view choice);

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
