// The isolated device as the device facade sees it: a DeviceBackend whose stream states forward every request
// to the worker process (see worker_supervisor.hpp). No CUDA here: the client process never touches the GPU.
#pragma once

#include <memory>

#include "accel/core/result.hpp"
#include "device/device_shared.hpp"

namespace accel::device {

// Starts the device's worker process and waits until its context is built.
[[nodiscard]] Result<std::shared_ptr<DeviceBackend>> open_isolated_backend(const DeviceShared& shared);

}  // namespace accel::device
