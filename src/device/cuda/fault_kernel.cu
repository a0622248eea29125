#include <cstdint>

#include "device/cuda/fault_kernel.hpp"

namespace accel::device::cuda {
namespace {

__global__ void write_to(std::uintptr_t address) { *reinterpret_cast<volatile int*>(address) = 1; }

}  // namespace

cudaError_t launch_illegal_write(cudaStream_t stream) {
  // Low addresses are never mapped in a CUDA context's virtual address space.
  write_to<<<1, 1, 0, stream>>>(std::uintptr_t{0x100});
  return cudaGetLastError();
}

}  // namespace accel::device::cuda
