// Padding of a bucketed input on the device: elements [real, padded) of a buffer set to zero or to its last real
// element (sequence offsets, so that padding sequences are empty).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace accel::graph::cuda {

[[nodiscard]] cudaError_t fill_padding(void* data, std::size_t element_bytes, std::uint64_t real, std::uint64_t padded,
                                       bool repeat_last, cudaStream_t stream);

// One input's way into its arena slot: `real` elements of `from`, then [real, padded) as fill_padding pads them.
struct InputCopy {
  const void* from = nullptr;
  void* to = nullptr;
  std::uint64_t real = 0;
  std::uint64_t padded = 0;  // at least real
  std::uint32_t element_bytes = 0;
  bool repeat_last = false;
};
inline constexpr std::size_t kMostInputCopies = 8;

// Up to kMostInputCopies copies (this header is C++17: .cu files include it), padding included, in one kernel launch:
// before a replayed graph the host's calls are what the GPU waits for (docs/PERFORMANCE.md §54), and a copy and a fill
// per input were a call each.
// Whether copy_inputs takes these: at most kMostInputCopies, elements of 1, 2, 4 or 8 bytes, padded at least real.
[[nodiscard]] bool fits_one_launch(const InputCopy* copies, std::size_t count);
// cudaErrorInvalidValue, launching nothing, for copies that do not fit one launch.
[[nodiscard]] cudaError_t copy_inputs(const InputCopy* copies, std::size_t count, cudaStream_t stream);

}  // namespace accel::graph::cuda
