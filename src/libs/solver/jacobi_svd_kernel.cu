#include <climits>
#include <cmath>
#include <limits>

#include "libs/solver/jacobi_rotation.cuh"
#include "libs/solver/jacobi_svd_kernel.hpp"

namespace accel::solver {
namespace {

constexpr int kMax = static_cast<int>(kSmallJacobiMaxN);
// A pair of columns takes kGroup lanes of a warp, kMax / kGroup rows each: four pairs a warp compute their rotations'
// scalars at once, where a warp per pair computed them 32 times over (4,096 matrices of 32 x 32 in f32 took 3.9 ms
// that way on an H100, and 1.9 ms with four pairs a warp; groups of 4 and 16 lanes were no faster).
constexpr int kGroup = 8;
constexpr int kRowsPerLane = kMax / kGroup;
constexpr int kPairsPerWarp = 32 / kGroup;

// One block per matrix, kPairsPerWarp pairs of columns a warp; rows past n are zero. Columns are kMax + 1 apart, so
// that the four pairs of a warp, reading the same rows of different columns, spread over the banks.
template <class T>
__global__ void __launch_bounds__(kMax / 2 / kPairsPerWarp * 32)
    jacobi_svd(const T* a, int n, std::int64_t lda, std::int64_t stride_a, T* s, T* u, std::int64_t ldu,
               std::int64_t stride_u, T* v, std::int64_t ldv, std::int64_t stride_v, Stopping<T> stop, int max_sweeps,
               std::int32_t* infos) {
  __shared__ T columns[kMax][kMax + 1];  // A's column c, then U's, at columns[c]
  __shared__ T v_columns[kMax][kMax + 1];
  __shared__ T norms[kMax];   // the singular values, once the sweeps end
  __shared__ T scales[kMax];  // without V: the square of each column's scale from the rotations
  __shared__ int places[kMax];
  __shared__ T largest;  // A's largest magnitude
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const std::int64_t b = blockIdx.x;
  const bool vectors = u != nullptr;
  if (threadIdx.x == 0) largest = T(0);
  __syncthreads();
  T mine = 0;  // of the elements this thread reads
  for (int c = warp; c < n; c += warps) {
    columns[c][lane] = lane < n ? a[b * stride_a + c * lda + lane] : T(0);
    mine = fmax(mine, fabs(columns[c][lane]));
    v_columns[c][lane] = T(lane == c);
    if (lane == 0) scales[c] = T(1);
  }
  raise_to_magnitude(&largest, mine);
  __syncthreads();
  const int exponent = exponent_of(largest);  // A / 2^exponent is what turns
  for (int c = warp; c < n; c += warps) columns[c][lane] = times_power_of_two(columns[c][lane], -exponent);
  __syncthreads();

  const int players = n + (n & 1), pairs = players / 2;
  bool converged = false;
  for (int sweep = 0; !converged && sweep < max_sweeps; ++sweep) {
    int rotated = 0;
    const int pair = warp * kPairsPerWarp + lane / kGroup;
    for (int round = 0; round + 1 < players; ++round) {
      int p = 0, q = 0;
      if (pair < pairs) p = player(pair, round, players), q = player(players - 1 - pair, round, players);
      const bool active = pair < pairs && p < n && q < n;
      if (rotate<kGroup, kRowsPerLane>(active, kRowsPerLane, columns[p], columns[q], v_columns[p], v_columns[q],
                                       vectors, vectors ? nullptr : &scales[p], &scales[q], stop)) {
        rotated = 1;
      }
      __syncthreads();
    }
    converged = __syncthreads_or(rotated) == 0;
  }

  // A V holds the vectors: σ = ‖A v‖ / ‖v‖ for each column v of V as it ends, scale and all; 0 for a negligible one.
  for (int c = warp; c < n; c += warps) {
    const T x = columns[c][lane], squares = group_sum(x * x), norm = squares < stop.negligible ? T(0) : sqrt(squares);
    const T y = v_columns[c][lane], scale = vectors ? sqrt(group_sum(y * y)) : sqrt(scales[c]);
    if (lane == 0) norms[c] = times_power_of_two(norm / scale, exponent);
    if (vectors) {
      if (norm != T(0)) columns[c][lane] = x / norm;
      v_columns[c][lane] = y / scale;
    }
  }
  __syncthreads();
  if (warp == 0) {
    if (vectors) replace_zero_columns<1>([&](int k) { return columns[k]; }, norms, n);
    if (lane < n) {  // descending, ties in column order
      const T mine = ordering_key(norms[lane]);
      int place = 0;
      for (int k = 0; k < n; ++k) {
        const T other = ordering_key(norms[k]);
        place += other > mine || (other == mine && k < lane);
      }
      places[lane] = place;
    }
  }
  __syncthreads();
  for (int c = warp; c < n; c += warps) {
    const int to = places[c];
    if (lane == 0) s[b * n + to] = norms[c];
    if (vectors && lane < n) {
      u[b * stride_u + to * ldu + lane] = columns[c][lane];
      v[b * stride_v + to * ldv + lane] = v_columns[c][lane];
    }
  }
  if (threadIdx.x == 0) infos[b] = converged ? 0 : n + 1;
}

}  // namespace

bool takes_small_jacobi_svd(std::int64_t m, std::int64_t n, std::int64_t batch) {
  return m == n && n >= 1 && n <= kSmallJacobiMaxN && batch >= 1 && batch <= INT_MAX;
}

template <class T>
cudaError_t launch_small_jacobi_svd(const T* a, std::int64_t n, std::int64_t lda, std::int64_t stride_a,
                                    std::int64_t batch, T* s, T* u, std::int64_t ldu, std::int64_t stride_u, T* v,
                                    std::int64_t ldv, std::int64_t stride_v, double tolerance, int max_sweeps,
                                    std::int32_t* infos, cudaStream_t stream) {
  if (!takes_small_jacobi_svd(n, n, batch) || max_sweeps < 1 || (u == nullptr) != (v == nullptr)) {
    return cudaErrorInvalidValue;
  }
  const int size = static_cast<int>(n), warps = ((size + 1) / 2 + kPairsPerWarp - 1) / kPairsPerWarp;
  jacobi_svd<T><<<static_cast<unsigned>(batch), 32 * warps, 0, stream>>>(
      a, size, lda, stride_a, s, u, ldu, stride_u, v, ldv, stride_v, stopping<T>(tolerance, size), max_sweeps, infos);
  return cudaGetLastError();
}

template cudaError_t launch_small_jacobi_svd<float>(const float*, std::int64_t, std::int64_t, std::int64_t,
                                                    std::int64_t, float*, float*, std::int64_t, std::int64_t, float*,
                                                    std::int64_t, std::int64_t, double, int, std::int32_t*,
                                                    cudaStream_t);
template cudaError_t launch_small_jacobi_svd<double>(const double*, std::int64_t, std::int64_t, std::int64_t,
                                                     std::int64_t, double*, double*, std::int64_t, std::int64_t,
                                                     double*, std::int64_t, std::int64_t, double, int, std::int32_t*,
                                                     cudaStream_t);

}  // namespace accel::solver
