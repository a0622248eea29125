// CUDA return codes as Status values, classified the way the device must react to them:
//   sticky     (illegal address, launch failure, misaligned address, ECC, ...): the context, and with it every
//              later CUDA call in this process, is unusable -> Code::context_lost; the device is poisoned;
//   transient  (out of memory, bad argument, not supported, ...): only the request that met it fails.
#pragma once

#include <cuda_runtime.h>

#include <string_view>

#include "accel/core/status.hpp"

namespace accel {

[[nodiscard]] bool is_sticky(cudaError_t error) noexcept;

// A Status for a failed CUDA call; `what` names the call and its purpose. Clears a transient error from the
// thread's last-error slot so it does not surface again in an unrelated call.
[[nodiscard]] Status cuda_status(cudaError_t error, std::string_view what);

}  // namespace accel
