#include <cuda_fp16.h>

#include <algorithm>

#include "libs/fft/fft_scale.hpp"

namespace accel::fft {
namespace {

// The type each stored part is scaled in: half in f32, rounded once (as the CPU device does), rather
// than multiplied in half, which would round the factor (1/N, 1/sqrt(N)) too.
template <class Real>
struct Arithmetic {
  using Type = Real;
  __device__ static Type load(Real value) { return value; }
  __device__ static Real store(Type value) { return value; }
};

template <>
struct Arithmetic<__half> {
  using Type = float;
  __device__ static float load(__half value) { return __half2float(value); }
  __device__ static __half store(float value) { return __float2half_rn(value); }
};

template <class Real, int kParts>
__global__ void scale_kernel(Real* data, ScaledLayout layout, std::uint64_t total,
                             typename Arithmetic<Real>::Type factor) {
  using A = Arithmetic<Real>;
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
    for (int p = 0; p < kParts; ++p) element[p] = A::store(A::load(element[p]) * factor);
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
  const auto typed_factor = static_cast<typename Arithmetic<Real>::Type>(factor);
  if (complex) {
    scale_kernel<Real, 2><<<blocks, kThreads, 0, stream>>>(typed, layout, total, typed_factor);
  } else {
    scale_kernel<Real, 1><<<blocks, kThreads, 0, stream>>>(typed, layout, total, typed_factor);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t scale_layout(void* data, ScaledPart part, bool complex, const ScaledLayout& layout, double factor,
                         cudaStream_t stream) {
  switch (part) {
    case ScaledPart::f16: return launch<__half>(data, complex, layout, factor, stream);
    case ScaledPart::f32: return launch<float>(data, complex, layout, factor, stream);
    case ScaledPart::f64: return launch<double>(data, complex, layout, factor, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace accel::fft
