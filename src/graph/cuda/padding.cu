#include "graph/cuda/padding.hpp"

namespace accel::graph::cuda {

namespace {
template <class T>
__global__ void repeat_last_kernel(T* data, std::uint64_t real, std::uint64_t padded) {
  const std::uint64_t i = real + blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (i < padded) data[i] = data[real - 1];
}

template <class T>
cudaError_t repeat_last(void* data, std::uint64_t real, std::uint64_t padded, cudaStream_t stream) {
  constexpr unsigned kThreads = 256;
  const std::uint64_t blocks = (padded - real + kThreads - 1) / kThreads;
  repeat_last_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(static_cast<T*>(data), real, padded);
  return cudaGetLastError();
}
}  // namespace

cudaError_t fill_padding(void* data, std::size_t element_bytes, std::uint64_t real, std::uint64_t padded,
                         bool repeat_last_element, cudaStream_t stream) {
  if (padded <= real) return cudaSuccess;
  if (!repeat_last_element || real == 0)
    return cudaMemsetAsync(static_cast<std::byte*>(data) + real * element_bytes, 0, (padded - real) * element_bytes,
                           stream);
  switch (element_bytes) {
    case 1: return repeat_last<std::uint8_t>(data, real, padded, stream);
    case 2: return repeat_last<std::uint16_t>(data, real, padded, stream);
    case 4: return repeat_last<std::uint32_t>(data, real, padded, stream);
    case 8: return repeat_last<std::uint64_t>(data, real, padded, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace accel::graph::cuda
