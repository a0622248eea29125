// The check of Getrs's pivots on a CUDA stream, before cuSOLVER's getrs reads them: getrs trusts its pivots, and one
// outside 1..n has it swap rows outside B. Compiled as C++17 by nvcc, so this header includes nothing of C++20.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace accel::solver {

// What the check leaves in device memory: the index of the first pivot outside 1..n, or all ones if none is.
using PivotReport = std::uint64_t;
inline constexpr PivotReport kNoBadPivot = ~PivotReport{0};

// Resets `report` and enqueues the check of the `count` pivots at `ipiv` (n per matrix); the launch's error, if any.
[[nodiscard]] cudaError_t launch_pivot_check(const std::int32_t* ipiv, std::int64_t count, std::int64_t n,
                                             PivotReport* report, cudaStream_t stream);

}  // namespace accel::solver
