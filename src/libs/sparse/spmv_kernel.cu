#include "libs/sparse/spmv_kernel.hpp"

namespace accel::sparse {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr std::int64_t kLongestForWarp = 1024;  // longer rows are summed by the whole block

template <class Real>
__device__ Real combined(Real alpha, Real sum, Real beta, const Real* y) {
  return beta == Real(0) ? alpha * sum : alpha * sum + beta * *y;
}

// The lanes of the calling thread's group of `Lanes` within its warp.
template <int Lanes>
__device__ unsigned group_mask() {
  if constexpr (Lanes == 32) {
    return ~0u;
  } else {
    const unsigned first = (threadIdx.x % 32) / Lanes * Lanes;
    return ((1u << Lanes) - 1) << first;
  }
}

// The sum of a warp's 32 values, by a butterfly: every lane gets it, added in the same order.
template <class Real>
__device__ Real warp_sum(Real value) {
  for (int step = 16; step > 0; step /= 2) value += __shfl_xor_sync(~0u, value, step);
  return value;
}

// A row's entries, each thread of a team of `team` (its rank `rank`) summing every team-th product from the row's
// start: the team's share of the row in a fixed order.
template <class Real, class Index>
__device__ Real strided_sum(std::int64_t begin, std::int64_t end, int rank, int team, const Index* columns,
                            const Real* values, const Real* x) {
  Real sum = 0;
#pragma unroll 4
  for (std::int64_t j = begin + rank; j < end; j += team) sum += values[j] * x[columns[j]];
  return sum;
}

// Sums a row with all of the block's threads, in a fixed order: a strided sum per thread, a butterfly within each
// warp, then the warps' sums in order.
template <class Real, class Index>
__device__ void block_row(std::int64_t row, const Index* offsets, const Index* columns, const Real* values,
                          const Real* x, Real* y, Real alpha, Real beta, Real* warp_sums) {
  const Real sum = warp_sum(strided_sum(offsets[row], offsets[row + 1], threadIdx.x, kThreads, columns, values, x));
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    Real total = 0;
    for (int w = 0; w < kWarps; ++w) total += warp_sums[w];
    y[row] = combined(alpha, total, beta, y + row);
  }
  __syncthreads();
}

template <class Real, class Index, int Lanes>
__global__ void __launch_bounds__(kThreads)
    csr_product(std::int64_t rows, const Index* __restrict__ offsets, const Index* __restrict__ columns,
                const Real* __restrict__ values, const Real* __restrict__ x, Real* __restrict__ y, Real alpha,
                Real beta) {
  constexpr int kGroups = kThreads / Lanes;
  constexpr std::int64_t kLongestForGroup = 16 * Lanes;
  __shared__ std::int64_t long_rows[kGroups];
  __shared__ int long_count;
  __shared__ Real warp_sums[kWarps];
  if (threadIdx.x == 0) long_count = 0;
  __syncthreads();
  const int lane = threadIdx.x % Lanes;
  const std::int64_t row = blockIdx.x * std::int64_t{kGroups} + threadIdx.x / Lanes;
  if (row < rows) {
    const std::int64_t begin = offsets[row], end = offsets[row + 1];
    if (end - begin > kLongestForGroup) {
      if (lane == 0) long_rows[atomicAdd(&long_count, 1)] = row;
    } else {
      Real sum = strided_sum(begin, end, lane, Lanes, columns, values, x);
      if constexpr (Lanes > 1) {
        const unsigned mask = group_mask<Lanes>();
        for (int step = Lanes / 2; step > 0; step /= 2) sum += __shfl_xor_sync(mask, sum, step, Lanes);
      }
      if (lane == 0) y[row] = combined(alpha, sum, beta, y + row);
    }
  }
  __syncthreads();
  // The long rows, each summed by a warp in turn, the longest by the whole block. Which slot holds a row depends on
  // the atomics' order; no row's sum does.
  const int long_rows_here = long_count;
  for (int i = threadIdx.x / 32; i < long_rows_here; i += kWarps) {
    const std::int64_t r = long_rows[i], begin = offsets[r], end = offsets[r + 1];
    if (end - begin > kLongestForWarp) continue;
    const Real sum = warp_sum(strided_sum(begin, end, threadIdx.x % 32, 32, columns, values, x));
    if (threadIdx.x % 32 == 0) y[r] = combined(alpha, sum, beta, y + r);
  }
  for (int i = 0; i < long_rows_here; ++i) {
    const std::int64_t r = long_rows[i];
    if (offsets[r + 1] - offsets[r] > kLongestForWarp)
      block_row(r, offsets, columns, values, x, y, alpha, beta, warp_sums);
  }
}

template <class Real, class Index, int Lanes>
cudaError_t launch(const CsrProduct& p, cudaStream_t stream) {
  constexpr std::int64_t kGroups = kThreads / Lanes;
  const auto blocks = static_cast<unsigned>((p.rows + kGroups - 1) / kGroups);
  csr_product<Real, Index, Lanes><<<blocks, kThreads, 0, stream>>>(
      p.rows, static_cast<const Index*>(p.offsets), static_cast<const Index*>(p.columns),
      static_cast<const Real*>(p.values), static_cast<const Real*>(p.x), static_cast<Real*>(p.y),
      static_cast<Real>(p.alpha), static_cast<Real>(p.beta));
  return cudaGetLastError();
}

template <class Real, class Index>
cudaError_t launch_typed(const CsrProduct& p, cudaStream_t stream) {
  switch (p.lanes) {
    case 1: return launch<Real, Index, 1>(p, stream);
    case 2: return launch<Real, Index, 2>(p, stream);
    case 4: return launch<Real, Index, 4>(p, stream);
    case 8: return launch<Real, Index, 8>(p, stream);
    case 16: return launch<Real, Index, 16>(p, stream);
    case 32: return launch<Real, Index, 32>(p, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

int csr_product_lanes(std::int64_t rows, std::int64_t nnz) noexcept {
  const double mean = rows > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) : 0;
  int lanes = 1;
  while (lanes < 32 && mean > 2.0 * lanes) lanes *= 2;
  return lanes;
}

cudaError_t launch_csr_product(const CsrProduct& p, cudaStream_t stream) {
  if (p.rows <= 0) return cudaSuccess;
  if (p.f64)
    return p.wide ? launch_typed<double, std::int64_t>(p, stream) : launch_typed<double, std::int32_t>(p, stream);
  return p.wide ? launch_typed<float, std::int64_t>(p, stream) : launch_typed<float, std::int32_t>(p, stream);
}

}  // namespace accel::sparse
