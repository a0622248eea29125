/// @file
/// The requests of the BLAS family, as the device protocol registers them.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/libs/blas/gemm.hpp"

namespace accel::blas {
using Requests = RequestList<Gemm>;  ///< The requests of the BLAS family, as the device protocol registers them.
}  // namespace accel::blas
