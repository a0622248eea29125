// Copies between two ranges of one GPU's memory, in stream order: the call every component makes for one.
// Small copies are a kernel of ours. On the H200's host a cudaMemcpyAsync between device buffers held its caller
// 5.95 µs, where a kernel's launch is the cheaper call (docs/PERFORMANCE.md §56); from kKernelCopyBytes on, the
// copy runs at memory's rate either way and cudaMemcpyAsync is kept.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace accel {

inline constexpr std::size_t kKernelCopyBytes = std::size_t{1} << 20;

// `from` and `to` must not overlap (a copy within one buffer goes through a temporary).
[[nodiscard]] cudaError_t copy_on_device(void* to, const void* from, std::size_t bytes, cudaStream_t stream);

}  // namespace accel
