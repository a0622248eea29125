// Kernels of a chain: the solver kernels launch their steps one after another on one stream, each reading what the
// one before wrote. Launched by launch_chained (programmatic dependent launch, Hopper on), a step's blocks are
// scheduled while the step before still runs and wait on the GPU for it, not for a launch after it ends: a few
// microseconds a step, where a factorisation of 256 is two dozen steps. And the shared memory the family's kernels
// may take. Device code, included by nvcc alone.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace accel::solver {

// Called first by every kernel launch_chained launches, before it touches memory: waits until the kernel before it
// on the stream has finished and its writes are visible, then lets the next one's blocks be scheduled. Where the
// kernel before was not launched so (or nothing is before), it returns at once.
inline __device__ void follow_chain() {
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

// `kernel` launched so that it may be scheduled before the kernel before it on `stream` has finished; it must call
// follow_chain() first.
template <class... Parameters, class... Arguments>
cudaError_t launch_chained(void (*kernel)(Parameters...), dim3 grid, int threads, std::size_t shared_bytes,
                           cudaStream_t stream, Arguments&&... arguments) {
  cudaLaunchAttribute chained{};
  chained.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  chained.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = &chained;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Parameters>(arguments)...);
}

// Lets `kernel` take `bytes` of dynamic shared memory: beyond the default for blocks of 256 rows (in f64 above all).
// The attribute is the current device's, so it is set on every request that needs it.
template <class Kernel>
cudaError_t allow_shared(Kernel kernel, std::size_t bytes) {
  constexpr std::size_t kWithinDefault = 32 * 1024;  // 48 KiB in all, less any of these kernels' static arrays
  if (bytes <= kWithinDefault) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

}  // namespace accel::solver
