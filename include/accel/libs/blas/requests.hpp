/// @file
/// The requests of the BLAS family, as the device protocol registers them.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/libs/blas/gemm.hpp"
#include "accel/libs/blas/level1.hpp"
#include "accel/libs/blas/level2.hpp"
#include "accel/libs/blas/level3.hpp"

namespace accel::blas {
/// The requests of the BLAS family, as the device protocol registers them.
using Requests = RequestList<Gemm, Axpy, Scal, Dot, Nrm2, Asum, Iamax, Gemv, Trsm, Syrk, Copy, Swap, Rot, Iamin, Ger,
                             Trsv, Symv, Symm, Trmm, Geam>;
}  // namespace accel::blas
