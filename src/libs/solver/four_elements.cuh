// Loads and stores of four consecutive elements of shared memory by 16-byte accesses, for the solver kernels. Device
// code, included by nvcc alone.
#pragma once

#include <cuda_runtime.h>

namespace accel::solver {

// Four consecutive elements of shared memory, 16-byte aligned, in as few loads as the type allows.
inline __device__ void load4(const float* p, float (&out)[4]) {
  const float4 q = *reinterpret_cast<const float4*>(p);
  out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
}
inline __device__ void load4(const double* p, double (&out)[4]) {
  const double2 low = reinterpret_cast<const double2*>(p)[0], high = reinterpret_cast<const double2*>(p)[1];
  out[0] = low.x, out[1] = low.y, out[2] = high.x, out[3] = high.y;
}

inline __device__ void store4(float* p, float a, float b, float c, float d) {
  *reinterpret_cast<float4*>(p) = make_float4(a, b, c, d);
}
inline __device__ void store4(double* p, double a, double b, double c, double d) {
  reinterpret_cast<double2*>(p)[0] = make_double2(a, b);
  reinterpret_cast<double2*>(p)[1] = make_double2(c, d);
}

}  // namespace accel::solver
