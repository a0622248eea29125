#include <algorithm>

#include "libs/sparse/scale_kernel.hpp"

namespace accel::sparse {
namespace {

template <class Real>
__global__ void scaled_copy_kernel(const Real* from, Real* to, std::uint64_t count, Real factor) {
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < count; i += step)
    to[i] = factor * from[i];
}

template <class Real>
cudaError_t launch(const void* from, void* to, std::uint64_t count, double factor, cudaStream_t stream) {
  constexpr unsigned kThreads = 256;
  // A grid-stride loop: enough blocks to fill the GPU many times over, not one thread per value.
  const unsigned blocks = static_cast<unsigned>(std::min<std::uint64_t>((count + kThreads - 1) / kThreads, 65536));
  scaled_copy_kernel<Real><<<blocks, kThreads, 0, stream>>>(static_cast<const Real*>(from), static_cast<Real*>(to),
                                                            count, static_cast<Real>(factor));
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_scaled_copy(bool f64, const void* from, void* to, std::int64_t count, double factor,
                               cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  const auto values = static_cast<std::uint64_t>(count);
  return f64 ? launch<double>(from, to, values, factor, stream) : launch<float>(from, to, values, factor, stream);
}

}  // namespace accel::sparse
