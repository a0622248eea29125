// The Philox4x32-10 kernel of the CUDA device: cuRAND's device API over the layout of philox_layout.hpp.
#pragma once

#include <cuda_runtime.h>

#include "libs/rand/philox_layout.hpp"

namespace accel::rand {

// Enqueues `args` (output in device memory, count > 0) on `stream`; the launch's error, if any.
[[nodiscard]] cudaError_t launch_philox(const PhiloxArgs& args, cudaStream_t stream);

}  // namespace accel::rand
