/// @file
/// The requests of the JIT family, as the device protocol registers them.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/jit/cutlass.hpp"
#include "accel/jit/kernel.hpp"

namespace accel::jit {
/// The requests of the JIT family, as the device protocol registers them.
using Requests = RequestList<LaunchKernel, CutlassGemm, CutlassGroupedGemm, CutlassConv>;
}  // namespace accel::jit
