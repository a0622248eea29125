/// @file
/// The requests of the tensor family (cuTENSOR on CUDA; OpenBLAS and Eigen on the CPU), as the device protocol
/// registers them.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/libs/tensor/tensor.hpp"

namespace accel::tensor {
/// The requests of the tensor family, as the device protocol registers them.
using Requests = RequestList<Contract, ElementwiseBinary, ElementwiseTrinary, Reduce, Permute>;
}  // namespace accel::tensor
