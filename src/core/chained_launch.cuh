// Kernels of a chain: kernels launched one after another on one stream, each reading what the one before wrote.
// Launched by launch_chained (programmatic dependent launch, Hopper on), a kernel's blocks are scheduled before the
// kernel before it has finished and wait on the GPU for it, not for a launch after it ends: a microsecond or more a
// kernel. The solver family's factorisations are chains of two dozen steps; a compiled graph's own kernels each
// follow a cuBLASLt product. Device code, included by nvcc alone.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>

namespace accel {

// Called first by a kernel launch_chained launches, before it touches memory: waits until the kernel before it on
// the stream has finished and its writes are visible. Where the kernel before was not launched so (or nothing is
// before), it returns at once. The kernel after may be scheduled once this one's blocks have all ended.
inline __device__ void wait_for_prior_kernel() {
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}

// Lets the kernel after this one (launched by launch_chained) be scheduled once every block of this one has called
// it or ended, while they finish: it still waits in wait_for_prior_kernel() until they have all ended. Without it, it
// is scheduled as they end. Its blocks then hold their multiprocessors' room while they wait: on the H200 a chain of
// small kernels that each called this at their start ran 1.09 µs a kernel, against 0.93 without (chain_launch_bench,
// PERFORMANCE §65), so it pays only where the next kernel has work that does not wait: what no kernel writes (a
// graph's parameters), read before its wait_for_prior_kernel().
inline __device__ void let_next_kernel_start() {
#if __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

// wait_for_prior_kernel(), then let_next_kernel_start(): for a chain of kernels of a few blocks each, which leave the
// GPU's other multiprocessors free.
inline __device__ void follow_chain() {
  wait_for_prior_kernel();
  let_next_kernel_start();
}

// `kernel` launched so that it may be scheduled before the kernel before it on `stream` has finished; it must call
// wait_for_prior_kernel() or follow_chain() first.
template <class... Parameters, class... Arguments>
cudaError_t launch_chained(void (*kernel)(Parameters...), dim3 grid, dim3 block, std::size_t shared_bytes,
                           cudaStream_t stream, Arguments&&... arguments) {
  cudaLaunchAttribute chained{};
  chained.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  chained.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = &chained;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Parameters>(arguments)...);
}

// Lets kKernel take `bytes` of dynamic shared memory on the current device, past the default where it needs more (the
// solver's blocks of 256 rows, a Trsm's 128-row diagonal blocks, attention's resident keys). The attribute is the
// function's in the device's context: raised there to the most asked so far and never lowered, under a lock, since a
// stream that set less while another launched with more would fail that launch. Later calls find it set and make no
// CUDA call: a host call is made only where a size is first asked, which plans and first (uncaptured) runs do.
template <auto kKernel>
cudaError_t allow_shared(std::size_t bytes) {
  constexpr std::size_t kWithinDefault = 32 * 1024;  // 48 KiB in all, less any of these kernels' static arrays
  constexpr int kDevices = 64;
  if (bytes <= kWithinDefault) return cudaSuccess;
  int device = 0;
  if (const cudaError_t found = cudaGetDevice(&device); found != cudaSuccess) return found;
  if (device < 0 || device >= kDevices) return cudaErrorInvalidDevice;
  static std::array<std::atomic<std::size_t>, kDevices> allowed{};
  if (allowed[device].load(std::memory_order_acquire) >= bytes) return cudaSuccess;
  static std::mutex raising;
  std::lock_guard lock(raising);
  if (allowed[device].load(std::memory_order_relaxed) >= bytes) return cudaSuccess;
  if (const cudaError_t set =
          cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
      set != cudaSuccess)
    return set;
  allowed[device].store(bytes, std::memory_order_release);
  return cudaSuccess;
}

}  // namespace accel
