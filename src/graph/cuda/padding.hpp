// Padding of a bucketed input on the device: elements [real, padded) of a buffer set to zero or to its last real
// element (sequence offsets, so that padding sequences are empty).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace accel::graph::cuda {

[[nodiscard]] cudaError_t fill_padding(void* data, std::size_t element_bytes, std::uint64_t real, std::uint64_t padded,
                                       bool repeat_last, cudaStream_t stream);

}  // namespace accel::graph::cuda
