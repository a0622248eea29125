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

// The sum of the products in [begin, end) by all of the block's threads, in a fixed order: a strided sum per thread, a
// butterfly within each warp, then the warps' sums in order. Thread 0 holds it.
template <class Real, class Index>
__device__ Real block_sum(std::int64_t begin, std::int64_t end, const Index* columns, const Real* values, const Real* x,
                          Real* warp_sums) {
  const Real sum = warp_sum(strided_sum(begin, end, threadIdx.x, kThreads, columns, values, x));
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  Real total = 0;
  if (threadIdx.x == 0) {
    for (int w = 0; w < kWarps; ++w) total += warp_sums[w];
  }
  __syncthreads();
  return total;
}

// The row holding entry `entry` (< nnz): the last row whose offset is at most `entry`, found by the whole block in
// steps that each narrow the range 256-fold (three steps for a million rows), rather than by one thread's twenty.
template <class Index>
__device__ std::int64_t row_holding(std::int64_t entry, const Index* offsets, std::int64_t rows) {
  std::int64_t low = 0, high = rows;  // offsets[low] <= entry < offsets[high]
  while (high - low > 1) {
    const std::int64_t step = (high - low + kThreads - 1) / kThreads;
    const std::int64_t probe = low + threadIdx.x * step;
    // Offsets never decrease, so the probes at or below `entry` are the first `below` threads'.
    const int below = __syncthreads_count(probe < high && offsets[probe] <= entry);
    const std::int64_t found = low + (below - 1) * step;
    high = found + step < high ? found + step : high;
    low = found;
  }
  return low;
}

// The partial sums of the rows longer than kSplitRowsAbove, a block a chunk of kChunkEntries. Such a row is longer
// than a chunk, so a chunk holds parts of at most two of them: slot 0 for the row holding its first entry, slot 1 for
// the one holding its last.
template <class Real, class Index>
__global__ void __launch_bounds__(kThreads)
    long_row_chunks(std::int64_t rows, std::int64_t nnz, const Index* __restrict__ offsets,
                    const Index* __restrict__ columns, const Real* __restrict__ values, const Real* __restrict__ x,
                    Real* __restrict__ partials) {
  __shared__ Real warp_sums[kWarps];
  const std::int64_t first = blockIdx.x * kChunkEntries;
  const std::int64_t last = first + kChunkEntries < nnz ? first + kChunkEntries : nnz;
  const std::int64_t ends[2] = {row_holding(first, offsets, rows), row_holding(last - 1, offsets, rows)};
  for (int side = 0; side < 2 && (side == 0 || ends[1] != ends[0]); ++side) {
    const std::int64_t begin = offsets[ends[side]], end = offsets[ends[side] + 1];
    if (end - begin <= kSplitRowsAbove) continue;
    const Real sum = block_sum(begin > first ? begin : first, end < last ? end : last, columns, values, x, warp_sums);
    if (threadIdx.x == 0) partials[2 * blockIdx.x + side] = sum;
  }
}

// A row longer than kSplitRowsAbove, from its chunks' partial sums (long_row_chunks), by one warp in a fixed order.
template <class Real>
__device__ Real sum_of_partials(std::int64_t begin, std::int64_t end, const Real* partials) {
  const std::int64_t first_chunk = begin / kChunkEntries, last_chunk = (end - 1) / kChunkEntries;
  Real sum = 0;
  for (std::int64_t c = first_chunk + threadIdx.x % 32; c <= last_chunk; c += 32) {
    // The row begins inside its first chunk only if that chunk's first entry is another row's.
    const bool second = c == first_chunk && begin > c * kChunkEntries;
    sum += partials[2 * c + (second ? 1 : 0)];
  }
  return warp_sum(sum);
}

template <class Real, class Index, int Lanes>
__global__ void __launch_bounds__(kThreads)
    csr_product(std::int64_t rows, const Index* __restrict__ offsets, const Index* __restrict__ columns,
                const Real* __restrict__ values, const Real* __restrict__ x, Real* __restrict__ y, Real alpha,
                Real beta, const Real* __restrict__ partials) {
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
  // The long rows, each summed by a warp in turn (the longest from their chunks' partial sums), the others of more
  // than kLongestForWarp entries by the whole block. Which slot holds a row depends on the atomics' order; no row's
  // sum does.
  const int long_rows_here = long_count;
  for (int i = threadIdx.x / 32; i < long_rows_here; i += kWarps) {
    const std::int64_t r = long_rows[i], begin = offsets[r], end = offsets[r + 1];
    if (end - begin > kLongestForWarp && end - begin <= kSplitRowsAbove) continue;
    const Real sum = end - begin > kSplitRowsAbove
                         ? sum_of_partials(begin, end, partials)
                         : warp_sum(strided_sum(begin, end, threadIdx.x % 32, 32, columns, values, x));
    if (threadIdx.x % 32 == 0) y[r] = combined(alpha, sum, beta, y + r);
  }
  for (int i = 0; i < long_rows_here; ++i) {
    const std::int64_t r = long_rows[i], begin = offsets[r], end = offsets[r + 1];
    if (end - begin <= kLongestForWarp || end - begin > kSplitRowsAbove) continue;
    const Real sum = block_sum(begin, end, columns, values, x, warp_sums);
    if (threadIdx.x == 0) y[r] = combined(alpha, sum, beta, y + r);
  }
}

std::int64_t chunks(std::int64_t nnz) { return (nnz + kChunkEntries - 1) / kChunkEntries; }

template <class Real, class Index, int Lanes>
cudaError_t launch(const CsrProduct& p, cudaStream_t stream) {
  const auto* offsets = static_cast<const Index*>(p.offsets);
  const auto* columns = static_cast<const Index*>(p.columns);
  const auto* values = static_cast<const Real*>(p.values);
  const auto* x = static_cast<const Real*>(p.x);
  auto* partials = static_cast<Real*>(p.partials);
  if (p.longest > static_cast<std::uint64_t>(kSplitRowsAbove)) {
    if (partials == nullptr) return cudaErrorInvalidValue;
    long_row_chunks<Real, Index><<<static_cast<unsigned>(chunks(p.nnz)), kThreads, 0, stream>>>(
        p.rows, p.nnz, offsets, columns, values, x, partials);
    if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;
  }
  constexpr std::int64_t kGroups = kThreads / Lanes;
  const auto blocks = static_cast<unsigned>((p.rows + kGroups - 1) / kGroups);
  csr_product<Real, Index, Lanes><<<blocks, kThreads, 0, stream>>>(p.rows, offsets, columns, values, x,
                                                                   static_cast<Real*>(p.y), static_cast<Real>(p.alpha),
                                                                   static_cast<Real>(p.beta), partials);
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

std::uint64_t csr_product_partials_bytes(std::int64_t nnz) noexcept {
  return static_cast<std::uint64_t>(2 * chunks(nnz)) * sizeof(double);
}

cudaError_t launch_csr_product(const CsrProduct& p, cudaStream_t stream) {
  if (p.rows <= 0) return cudaSuccess;
  if (p.f64)
    return p.wide ? launch_typed<double, std::int64_t>(p, stream) : launch_typed<double, std::int32_t>(p, stream);
  return p.wide ? launch_typed<float, std::int64_t>(p, stream) : launch_typed<float, std::int32_t>(p, stream);
}

}  // namespace accel::sparse
