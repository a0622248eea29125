#include <algorithm>

#include "libs/fft/fft_scale.hpp"

namespace accel::fft {
namespace {

template <class Real, int kParts>
__global__ void scale_kernel(Real* data, ScaledLayout layout, std::uint64_t total, Real factor) {
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t e = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; e < total; e += step) {
    std::uint64_t rest = e;
    const std::int64_t k = static_cast<std::int64_t>(rest % layout.sizes[2]);
    rest /= layout.sizes[2];
    const std::int64_t j = static_cast<std::int64_t>(rest % layout.sizes[1]);
    rest /= layout.sizes[1];
    const std::int64_t i = static_cast<std::int64_t>(rest % layout.sizes[0]);
    const std::int64_t b = static_cast<std::int64_t>(rest / layout.sizes[0]);
    const std::int64_t at = b * layout.distance + i * layout.strides[0] + j * layout.strides[1] + k * layout.strides[2];
    Real* element = data + at * kParts;
#pragma unroll
    for (int p = 0; p < kParts; ++p) element[p] *= factor;
  }
}

template <class Real>
cudaError_t launch(void* data, bool complex, const ScaledLayout& layout, double factor, cudaStream_t stream) {
  const std::uint64_t total =
      static_cast<std::uint64_t>(layout.batch) * layout.sizes[0] * layout.sizes[1] * layout.sizes[2];
  if (total == 0) return cudaSuccess;
  constexpr unsigned kThreads = 256;
  // A grid-stride loop: enough blocks to fill the GPU many times over, not one thread per element.
  const unsigned blocks = static_cast<unsigned>(std::min<std::uint64_t>((total + kThreads - 1) / kThreads, 65536));
  Real* typed = static_cast<Real*>(data);
  if (complex) {
    scale_kernel<Real, 2><<<blocks, kThreads, 0, stream>>>(typed, layout, total, static_cast<Real>(factor));
  } else {
    scale_kernel<Real, 1><<<blocks, kThreads, 0, stream>>>(typed, layout, total, static_cast<Real>(factor));
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t scale_layout(void* data, bool f64, bool complex, const ScaledLayout& layout, double factor,
                         cudaStream_t stream) {
  return f64 ? launch<double>(data, complex, layout, factor, stream)
             : launch<float>(data, complex, layout, factor, stream);
}

}  // namespace accel::fft
