// The structural check of structure.hpp as kernels on a CUDA stream: they fill a StructureReport in device memory,
// reading each offset and index once, and never outside the arrays (their sizes were checked as operands).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "libs/sparse/structure_report.hpp"

namespace accel::sparse {

// The sizes of structure.hpp's StructureShape, as the kernel takes them.
struct KernelShape {
  bool coo = false;
  bool blocked_ell = false;  // no offsets; indices of -1 (padding blocks) allowed
  bool wide = false;         // i64 indices, else i32
  std::int64_t outer = 0;
  std::int64_t inner = 0;
  std::int64_t nnz = 0;
};

// Resets `report` (device memory) and enqueues the check; the launch's error, if any.
[[nodiscard]] cudaError_t launch_structure_check(const KernelShape& shape, const void* offsets, const void* indices,
                                                 StructureReport* report, cudaStream_t stream);

}  // namespace accel::sparse
