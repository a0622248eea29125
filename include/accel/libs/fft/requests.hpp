/// @file
/// The requests of the FFT family, as the device protocol registers them.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/libs/fft/fft.hpp"

namespace accel::fft {
using Requests = RequestList<Fft>;  ///< The requests of the FFT family, as the device protocol registers them.
}  // namespace accel::fft
