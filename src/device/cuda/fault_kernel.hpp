// A kernel that writes to an address no allocation owns: the sticky fault InjectFault asks for.
#pragma once

#include <cuda_runtime.h>

namespace accel::device::cuda {

[[nodiscard]] cudaError_t launch_illegal_write(cudaStream_t stream);

}  // namespace accel::device::cuda
