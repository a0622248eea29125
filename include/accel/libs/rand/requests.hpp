/// @file
/// The requests of the random-number family, as the device protocol registers them.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/libs/rand/generate.hpp"

namespace accel::rand {
/// The requests of the random-number family, as the device protocol registers them.
using Requests = RequestList<Generate>;
}  // namespace accel::rand
