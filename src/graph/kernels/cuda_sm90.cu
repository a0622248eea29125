#include <cuda_runtime.h>

#include "graph/kernels/cuda_sm90.hpp"

namespace accel::graph::cuda {

bool sm90a_runs_here() {
  int device = 0, major = 0, minor = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
         cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess && major == 9 &&
         minor == 0;
}

}  // namespace accel::graph::cuda
