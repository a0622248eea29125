// A copy of values multiplied by a factor, on the GPU: SpGemm's fill from a counted product, which cuSPARSE
// computed with alpha 1. Plain C++17 and CUDA types: nvcc compiles the kernel's file as C++17.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace accel::sparse {

// to[i] = factor * from[i] for `count` values (f64 if `f64`, else f32), on `stream`; the launch's error, if any.
[[nodiscard]] cudaError_t launch_scaled_copy(bool f64, const void* from, void* to, std::int64_t count, double factor,
                                             cudaStream_t stream);

}  // namespace accel::sparse
