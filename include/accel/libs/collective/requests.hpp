/// @file
/// The requests of the collective family (NCCL on CUDA, a CPU world on the CPU), as the device protocol registers
/// them.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/libs/collective/collective.hpp"

namespace accel::collective {
/// The requests of the collective family, as the device protocol registers them.
using Requests = RequestList<InitComm, DestroyComm, Collective, Group>;
}  // namespace accel::collective
