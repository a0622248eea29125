// A CUDA driver function, found through the runtime: accel links no driver library (the runtime has loaded it).
#pragma once

#include <cuda_runtime.h>

namespace accel::device::cuda {

// `name` as of CUDA 12's driver API (its _v2 forms where there are two), or null where the driver has none.
template <class Function>
Function* driver_function(const char* name) noexcept {
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult result{};
  const bool found = cudaGetDriverEntryPointByVersion(name, &entry, 12000, cudaEnableDefault, &result) == cudaSuccess &&
                     result == cudaDriverEntryPointSuccess;
  (void)cudaGetLastError();  // a failed look-up leaves no error for the next call to find
  return found ? reinterpret_cast<Function*>(entry) : nullptr;
}

}  // namespace accel::device::cuda
