#include "graph/cuda/padding.hpp"

#include <algorithm>

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

struct InputCopies {
  InputCopy items[kMostInputCopies];
};

template <class T>
__device__ void copy_elements(const InputCopy& copy, std::uint64_t first, std::uint64_t step) {
  const T* from = static_cast<const T*>(copy.from);
  T* to = static_cast<T*>(copy.to);
  const bool repeat = copy.repeat_last && copy.real > 0;
  for (std::uint64_t i = first; i < copy.padded; i += step) {
    to[i] = i < copy.real ? from[i] : (repeat ? from[copy.real - 1] : T{});
  }
}

// blockIdx.y picks the copy; the x blocks stride over its elements.
__global__ void copy_inputs_kernel(InputCopies copies) {
  const InputCopy& copy = copies.items[blockIdx.y];
  const std::uint64_t first = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  switch (copy.element_bytes) {
    case 1: copy_elements<std::uint8_t>(copy, first, step); break;
    case 2: copy_elements<std::uint16_t>(copy, first, step); break;
    case 4: copy_elements<std::uint32_t>(copy, first, step); break;
    case 8: copy_elements<std::uint64_t>(copy, first, step); break;
    default: break;  // refused on the host
  }
}
}  // namespace

bool fits_one_launch(const InputCopy* copies, std::size_t count) {
  if (count > kMostInputCopies) return false;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t bytes = copies[i].element_bytes;
    if ((bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) || copies[i].padded < copies[i].real) return false;
  }
  return true;
}

cudaError_t copy_inputs(const InputCopy* copies, std::size_t count, cudaStream_t stream) {
  if (!fits_one_launch(copies, count)) return cudaErrorInvalidValue;
  InputCopies params{};
  std::uint64_t most = 0;
  for (std::size_t i = 0; i < count; ++i) {
    params.items[i] = copies[i];
    most = std::max(most, copies[i].padded);
  }
  if (most == 0) return cudaSuccess;
  constexpr unsigned kThreads = 256;
  constexpr std::uint64_t kMostBlocks = 1024;
  const auto blocks = static_cast<unsigned>(std::min<std::uint64_t>((most + kThreads - 1) / kThreads, kMostBlocks));
  copy_inputs_kernel<<<dim3(blocks, static_cast<unsigned>(count)), kThreads, 0, stream>>>(params);
  return cudaGetLastError();
}

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
