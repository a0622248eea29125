// The requests of the sparse family (cuSPARSE on CUDA, Eigen on the CPU), as the device protocol registers them.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/libs/sparse/sparse.hpp"

namespace accel::sparse {
using Requests = RequestList<SpMV, SpMM, SpSV, ToDense, CsrToCoo, CooToCsr>;
}  // namespace accel::sparse
