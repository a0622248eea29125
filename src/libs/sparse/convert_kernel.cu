#include "libs/sparse/convert_kernel.hpp"

#include <algorithm>
#include <cstdint>

namespace accel::sparse {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;  // grid-stride beyond this, as the structure check does

// The first position in sorted [first, first + count) whose value is greater than `value` (or count).
template <class I>
__device__ std::int64_t upper_bound(const I* first, std::int64_t count, std::int64_t value) {
  std::int64_t low = 0;
  while (count > 0) {
    const std::int64_t half = count / 2;
    if (static_cast<std::int64_t>(first[low + half]) <= value) {
      low += half + 1;
      count -= half + 1;
    } else {
      count = half;
    }
  }
  return low;
}

// The first position whose value is not less than `value`.
template <class I>
__device__ std::int64_t lower_bound(const I* first, std::int64_t count, std::int64_t value) {
  std::int64_t low = 0;
  while (count > 0) {
    const std::int64_t half = count / 2;
    if (static_cast<std::int64_t>(first[low + half]) < value) {
      low += half + 1;
      count -= half + 1;
    } else {
      count = half;
    }
  }
  return low;
}

// Entry p lies in the last row whose offset is at most p: empty rows (equal offsets) are passed over.
template <class I>
__global__ void expand_rows(const I* offsets, std::int64_t rows, std::int64_t nnz, I* coo_rows) {
  for (std::int64_t p = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; p < nnz;
       p += std::int64_t{gridDim.x} * blockDim.x) {
    coo_rows[p] = static_cast<I>(upper_bound(offsets, rows + 1, p) - 1);
  }
}

template <class I>
__global__ void compress_rows(const I* coo_rows, std::int64_t rows, std::int64_t nnz, I* offsets) {
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; r <= rows;
       r += std::int64_t{gridDim.x} * blockDim.x) {
    offsets[r] = static_cast<I>(lower_bound(coo_rows, nnz, r));
  }
}

unsigned blocks(std::int64_t n) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

}  // namespace

cudaError_t launch_csr_to_coo(bool wide, std::int64_t rows, std::int64_t nnz, const void* offsets, void* coo_rows,
                              cudaStream_t stream) {
  if (nnz == 0) return cudaSuccess;
  if (wide) {
    expand_rows<<<blocks(nnz), kThreads, 0, stream>>>(static_cast<const std::int64_t*>(offsets), rows, nnz,
                                                      static_cast<std::int64_t*>(coo_rows));
  } else {
    expand_rows<<<blocks(nnz), kThreads, 0, stream>>>(static_cast<const std::int32_t*>(offsets), rows, nnz,
                                                      static_cast<std::int32_t*>(coo_rows));
  }
  return cudaGetLastError();
}

cudaError_t launch_coo_to_csr(bool wide, std::int64_t rows, std::int64_t nnz, const void* coo_rows, void* offsets,
                              cudaStream_t stream) {
  if (wide) {
    compress_rows<<<blocks(rows + 1), kThreads, 0, stream>>>(static_cast<const std::int64_t*>(coo_rows), rows, nnz,
                                                             static_cast<std::int64_t*>(offsets));
  } else {
    compress_rows<<<blocks(rows + 1), kThreads, 0, stream>>>(static_cast<const std::int32_t*>(coo_rows), rows, nnz,
                                                             static_cast<std::int32_t*>(offsets));
  }
  return cudaGetLastError();
}

}  // namespace accel::sparse
