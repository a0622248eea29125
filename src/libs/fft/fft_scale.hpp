// The normalisation of an FFT on CUDA: cuFFT computes the raw sums, so a kernel multiplies the output afterwards.
// Only the elements the output layout names are touched (gaps between strided elements may hold the caller's
// data). Plain C++17 and CUDA types: nvcc compiles the kernel's file as C++17.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace accel::fft {

// Element (b, i, j, k) lies at b * distance + i * strides[0] + j * strides[1] + k * strides[2]; unused
// dimensions have size 1.
struct ScaledLayout {
  std::int64_t sizes[3];
  std::int64_t strides[3];
  std::int64_t batch;
  std::int64_t distance;
};

// The type of the parts of each element (a real one, or each half of a complex one).
enum class ScaledPart { f16, f32, f64 };

// Multiplies each named element of `data` (of `part`s, 2 per element when `complex`) by `factor`, on `stream`;
// the launch's error, if any. f16 parts are multiplied in f32 and rounded once.
[[nodiscard]] cudaError_t scale_layout(void* data, ScaledPart part, bool complex, const ScaledLayout& layout,
                                       double factor, cudaStream_t stream);

}  // namespace accel::fft
