// What an isolated device's worker is told: the device's id and name and the DeviceOptions its in-process device
// is built with, written with the byte codec (a new option is a line in each direction, not a new fixed field).
// Client-side options (the mailbox, supervision, the worker's executable and restart budget) stay behind.
#pragma once

#include <cstdint>
#include <string>

#include "accel/core/byte_codec.hpp"
#include "accel/device/device.hpp"

namespace accel::device {

struct WorkerSetup {
  std::uint32_t device_id = 0;
  std::string name;
  DeviceOptions options;
};

void encode(ByteWriter& out, const WorkerSetup& setup);
// invalid_argument naming what is out of range or cut short: the bytes come from another process.
[[nodiscard]] Result<WorkerSetup> decode_worker_setup(ByteReader& in);

}  // namespace accel::device
