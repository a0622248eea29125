// Kernels of a chain: kernels launched one after another on one stream, each reading what the one before wrote.
// Launched by launch_chained (programmatic dependent launch, Hopper on), a kernel's blocks are scheduled before the
// kernel before it has finished and wait on the GPU for it, not for a launch after it ends: a microsecond or more a
// kernel. The solver family's factorisations are chains of two dozen steps; a compiled graph's own kernels each
// follow a cuBLASLt product. Device code, included by nvcc alone.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

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

// Lets `kernel` take `bytes` of dynamic shared memory: beyond the default where a kernel needs more (the solver's
// blocks of 256 rows, in f64 above all). The attribute is the current device's, so it is set on every request that
// needs it.
template <class Kernel>
cudaError_t allow_shared(Kernel kernel, std::size_t bytes) {
  constexpr std::size_t kWithinDefault = 32 * 1024;  // 48 KiB in all, less any of these kernels' static arrays
  if (bytes <= kWithinDefault) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

}  // namespace accel
