#include "libs/sparse/structure_kernel.hpp"

#include <algorithm>
#include <cstdint>

namespace accel::sparse {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;  // grid-stride beyond this: enough blocks to fill any current GPU

__device__ void fault(StructureReport* r, std::uint32_t kind, unsigned long long* first, std::uint64_t at) {
  atomicOr(&r->faults, kind);
  atomicMin(first, static_cast<unsigned long long>(at));
}

template <class I>
__global__ void check_offsets(const I* offsets, std::int64_t outer, std::int64_t nnz, StructureReport* r) {
  auto* first = reinterpret_cast<unsigned long long*>(&r->first_offset);
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i <= outer;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    if (i == 0 && offsets[0] != 0) fault(r, kFirstOffsetNotZero, first, 0);
    if (i < outer && offsets[i + 1] < offsets[i]) fault(r, kOffsetsDecrease, first, i);
    if (i < outer && offsets[i + 1] > offsets[i]) {
      atomicMax(reinterpret_cast<unsigned long long*>(&r->longest),
                static_cast<unsigned long long>(offsets[i + 1] - offsets[i]));
    }
    if (i == outer && offsets[outer] != nnz) fault(r, kLastOffsetNotNnz, first, outer);
  }
}

// `rows` is COO's row array, or null for CSR and CSC.
// `lowest` is the least index allowed: 0, or -1 where a blocked ELL pads.
template <class I>
__global__ void check_entries(const I* rows, const I* indices, std::int64_t nnz, std::int64_t outer, std::int64_t inner,
                              I lowest, StructureReport* r) {
  auto* first_offset = reinterpret_cast<unsigned long long*>(&r->first_offset);
  auto* first_index = reinterpret_cast<unsigned long long*>(&r->first_index);
  for (std::int64_t p = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; p < nnz;
       p += std::int64_t{gridDim.x} * blockDim.x) {
    if (indices[p] < lowest || indices[p] >= inner) fault(r, kIndexOutOfRange, first_index, p);
    if (rows != nullptr) {
      if (rows[p] < 0 || rows[p] >= outer) fault(r, kRowOutOfRange, first_offset, p);
      if (p + 1 < nnz && rows[p + 1] < rows[p]) fault(r, kRowsUnsorted, first_offset, p + 1);
    }
  }
}

unsigned blocks(std::int64_t n) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

template <class I>
cudaError_t launch(const KernelShape& s, const I* offsets, const I* indices, StructureReport* report,
                   cudaStream_t stream) {
  if (!s.coo && !s.blocked_ell) {
    check_offsets<I><<<blocks(s.outer + 1), kThreads, 0, stream>>>(offsets, s.outer, s.nnz, report);
    if (cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;
  }
  if (s.nnz == 0) return cudaSuccess;
  const I* rows = s.coo ? offsets : nullptr;
  const I lowest = s.blocked_ell ? I{-1} : I{0};
  check_entries<I><<<blocks(s.nnz), kThreads, 0, stream>>>(rows, indices, s.nnz, s.outer, s.inner, lowest, report);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_structure_check(const KernelShape& shape, const void* offsets, const void* indices,
                                   StructureReport* report, cudaStream_t stream) {
  // faults, reserved and longest to 0, the first positions to all ones (none yet).
  if (cudaError_t error = cudaMemsetAsync(report, 0, 16, stream); error != cudaSuccess) return error;
  if (cudaError_t error = cudaMemsetAsync(&report->first_offset, 0xff, 16, stream); error != cudaSuccess) return error;
  if (shape.wide) {
    return launch(shape, static_cast<const std::int64_t*>(offsets), static_cast<const std::int64_t*>(indices), report,
                  stream);
  }
  return launch(shape, static_cast<const std::int32_t*>(offsets), static_cast<const std::int32_t*>(indices), report,
                stream);
}

}  // namespace accel::sparse
