#include <cstdint>

#include "core/chained_launch.cuh"
#include "operation/cuda_copy.hpp"

namespace accel {
namespace {

constexpr unsigned kThreads = 256;

// 16-byte words where both ranges start 16-byte aligned, then the last bytes one by one; bytes throughout otherwise
// (memory adopted from another library may start anywhere).
__global__ void copy_kernel(std::byte* to, const std::byte* from, std::size_t bytes, bool aligned) {
  wait_for_prior_kernel();
  const std::size_t first = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t step = std::size_t{gridDim.x} * blockDim.x;
  std::size_t done = 0;
  if (aligned) {
    const std::size_t words = bytes / sizeof(uint4);
    const auto* source = reinterpret_cast<const uint4*>(from);
    auto* destination = reinterpret_cast<uint4*>(to);
    for (std::size_t i = first; i < words; i += step) destination[i] = source[i];
    done = words * sizeof(uint4);
  }
  for (std::size_t i = done + first; i < bytes; i += step) to[i] = from[i];
}

}  // namespace

cudaError_t copy_on_device(void* to, const void* from, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  if (bytes >= kKernelCopyBytes) return cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream);
  const bool aligned = (reinterpret_cast<std::uintptr_t>(to) | reinterpret_cast<std::uintptr_t>(from)) % 16 == 0;
  const std::size_t units = aligned ? (bytes + sizeof(uint4) - 1) / sizeof(uint4) : bytes;
  const auto blocks = static_cast<unsigned>((units + kThreads - 1) / kThreads);
  return launch_chained(copy_kernel, dim3(blocks), dim3(kThreads), 0, stream, static_cast<std::byte*>(to),
                        static_cast<const std::byte*>(from), bytes, aligned);
}

}  // namespace accel
