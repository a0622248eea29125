/// @file
/// The requests of the sparse family (cuSPARSE on CUDA, Eigen on the CPU), as the device protocol registers them.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/libs/sparse/dense_to_csr.hpp"
#include "accel/libs/sparse/sddmm.hpp"
#include "accel/libs/sparse/sparse.hpp"
#include "accel/libs/sparse/spgemm.hpp"

namespace accel::sparse {
/// The requests of the sparse family, as the device protocol registers them.
using Requests =
    RequestList<SpMV, SpMM, SpSV, ToDense, CsrToCoo, CooToCsr, SDDMM, SpGemmCount, SpGemm, DenseToCsrCount, DenseToCsr>;
}  // namespace accel::sparse
