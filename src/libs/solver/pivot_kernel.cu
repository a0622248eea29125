#include <algorithm>

#include "libs/solver/pivot_kernel.hpp"

namespace accel::solver {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 1024;  // grid-stride beyond this: pivots are few next to their matrices

__global__ void find_bad_pivot(const std::int32_t* ipiv, std::int64_t count, std::int64_t n,
                               unsigned long long* first) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    if (ipiv[i] < 1 || ipiv[i] > n) atomicMin(first, static_cast<unsigned long long>(i));
  }
}

}  // namespace

cudaError_t launch_pivot_check(const std::int32_t* ipiv, std::int64_t count, std::int64_t n, PivotReport* report,
                               cudaStream_t stream) {
  static_assert(sizeof(PivotReport) == sizeof(unsigned long long), "atomicMin works on the report in place");
  if (cudaError_t error = cudaMemsetAsync(report, 0xff, sizeof(PivotReport), stream); error != cudaSuccess) {
    return error;
  }
  const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((count + kThreads - 1) / kThreads, 1, kMaxBlocks));
  find_bad_pivot<<<blocks, kThreads, 0, stream>>>(ipiv, count, n, reinterpret_cast<unsigned long long*>(report));
  return cudaGetLastError();
}

}  // namespace accel::solver
