// The structural check of structure.hpp as kernels on a CUDA stream: they fill a StructureReport in device memory,
// reading each offset and index once, and never outside the arrays (their sizes were checked as operands).
#pragma once

#include <cuda_runtime.h>

#include "libs/sparse/structure.hpp"

namespace accel::sparse {

// Resets `report` (device memory) and enqueues the check of arrays of `index` type; the launch's error, if any.
[[nodiscard]] cudaError_t launch_structure_check(const StructureShape& shape, DType index, const void* offsets,
                                                 const void* indices, StructureReport* report, cudaStream_t stream);

}  // namespace accel::sparse
