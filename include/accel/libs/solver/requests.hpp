/// @file
/// The requests of the dense solver family (cuSOLVER on CUDA, LAPACKE on the CPU), as the device protocol
/// registers them.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/libs/solver/dense.hpp"

namespace accel::solver {
/// The requests of the dense solver family, as the device protocol registers them.
using Requests = RequestList<Getrf, Getrs, Potrf, Potrs, Syevd, Geqrf, Orgqr, Gesvd, Gesvdj, Ormqr, Gels>;
}  // namespace accel::solver
