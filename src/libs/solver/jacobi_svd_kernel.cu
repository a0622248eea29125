#include <climits>
#include <cmath>
#include <limits>

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

// c and s of the rotation by the smaller angle that zeroes a pair's product γ, from the pair's squared norms α and β.
// Any c and s rotate, scaled by √(c² + s²) (the same for both columns): the angle chosen need not be exact, nor
// c² + s² be 1, since each column's scale is undone at the end. So f32 takes the hardware's approximate reciprocal
// and reciprocal square root (the exact ones' slow paths lay on every round's way); f64 takes correctly rounded
// ones, as an angle of f32's precision would cost sweeps.
inline __device__ void rotation(float alpha, float beta, float gamma, float& c, float& s) {
  const float zeta = __fdividef(beta - alpha, 2 * gamma), size = fabsf(zeta);
  const float root = 1 + size * size;  // √root as root / √root
  const float t = size < 1e15f ? copysignf(__fdividef(1, size + root * rsqrtf(root)), zeta) : __fdividef(1, 2 * zeta);
  c = rsqrtf(1 + t * t), s = c * t;
}
inline __device__ void rotation(double alpha, double beta, double gamma, double& c, double& s) {
  const double zeta = (beta - alpha) * __drcp_rn(2 * gamma), size = fabs(zeta);
  const double t = size < 1e15 ? copysign(__drcp_rn(size + sqrt(1 + size * size)), zeta) : __drcp_rn(2 * zeta);
  c = __drcp_rn(sqrt(1 + t * t)), s = c * t;
}

// Σ over the warp's lanes, to every lane. The butterfly adds the same two values on both lanes of each exchange
// (a + b and b + a), so every lane ends with the same bits and takes the same decisions.
template <class T>
__device__ T warp_sum(T x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(~0u, x, offset);
  return x;
}

// The circle method's player at `position` in `round`, of `players` (even): 0 stays, the others turn.
__device__ int player(int position, int round, int players) {
  if (position == 0) return 0;
  const int turned = position - 1 + round;  // below 2 (players - 1): one subtraction for the remainder
  return (turned < players - 1 ? turned : turned - (players - 1)) + 1;
}

// Columns p and q of A (and V's, or else their scales' squares), kRowsPerLane rows a lane of the pair's group,
// rotated so that they are orthogonal, unless they already are to the threshold or the group has no pair (`active`
// false: it still takes part in the group's exchanges, which every lane of the warp must). Whether they were rotated.
template <class T>
__device__ bool rotate(bool active, T* column_p, T* column_q, T* v_p, T* v_q, bool vectors, T* scale_p, T* scale_q,
                       T threshold) {
  const int row = threadIdx.x & (kGroup - 1);
  T x[kRowsPerLane], y[kRowsPerLane];
  T alpha = 0, beta = 0, gamma = 0;
#pragma unroll
  for (int k = 0; k < kRowsPerLane; ++k) {
    x[k] = active ? column_p[row + k * kGroup] : T(0);
    y[k] = active ? column_q[row + k * kGroup] : T(0);
    alpha += x[k] * x[k], beta += y[k] * y[k], gamma += x[k] * y[k];
  }
#pragma unroll
  for (int offset = kGroup / 2; offset > 0; offset >>= 1) {  // three sums interleaved, within the group
    alpha += __shfl_xor_sync(~0u, alpha, offset);
    beta += __shfl_xor_sync(~0u, beta, offset);
    gamma += __shfl_xor_sync(~0u, gamma, offset);
  }
  // Orthogonal enough, or not a number; a zero column has gamma 0, and 0 times an infinite reciprocal is no number.
  if (!active || !(fabs(gamma) * rsqrt(alpha) * rsqrt(beta) > threshold)) return false;
  T c, s;
  rotation(alpha, beta, gamma, c, s);
  if (scale_p != nullptr && row == 0) {  // without V, the columns' scales are kept apart
    const T squared = c * c + s * s;
    *scale_p *= squared, *scale_q *= squared;
  }
#pragma unroll
  for (int k = 0; k < kRowsPerLane; ++k) {
    column_p[row + k * kGroup] = c * x[k] - s * y[k];
    column_q[row + k * kGroup] = s * x[k] + c * y[k];
  }
  if (vectors) {
#pragma unroll
    for (int k = 0; k < kRowsPerLane; ++k) {
      const T vx = v_p[row + k * kGroup], vy = v_q[row + k * kGroup];
      v_p[row + k * kGroup] = c * vx - s * vy;
      v_q[row + k * kGroup] = s * vx + c * vy;
    }
  }
  return true;
}

// Orders singular values with anything not a number last, so that every column takes a place of its own.
template <class T>
__device__ T ordering_key(T norm) {
  return isnan(norm) ? T(-1) : norm;
}

// By one warp, after U's columns of nonzero norm were normalised: each column that became exactly zero takes the
// first unit vector e_i whose part orthogonal to U's other columns (those of nonzero norm and the zero ones already
// replaced; twice, as Gram-Schmidt needs) is at least 1/(2√n) long. The longest such part is at least 1/√n, so one is
// always found.
template <class T>
__device__ void replace_zero_columns(T (*columns)[kMax + 1], const T* norms, int n) {
  const int lane = threadIdx.x & 31;
  const T least = T(0.5) / sqrt(T(n));
  for (int j = 0; j < n; ++j) {
    if (norms[j] != T(0)) continue;
    for (int e = 0; e < n; ++e) {
      T x = T(lane == e);
      for (int pass = 0; pass < 2; ++pass) {
        for (int k = 0; k < n; ++k) {
          if (k == j || (norms[k] == T(0) && k > j) || isnan(norms[k])) continue;
          x -= warp_sum(x * columns[k][lane]) * columns[k][lane];
        }
      }
      const T length = sqrt(warp_sum(x * x));
      if (length >= least) {
        columns[j][lane] = x / length;
        break;
      }
    }
    __syncwarp();
  }
}

// One block per matrix, kPairsPerWarp pairs of columns a warp; rows past n are zero. Columns are kMax + 1 apart, so
// that the four pairs of a warp, reading the same rows of different columns, spread over the banks.
template <class T>
__global__ void __launch_bounds__(kMax / 2 / kPairsPerWarp * 32)
    jacobi_svd(const T* a, int n, std::int64_t lda, std::int64_t stride_a, T* s, T* u, std::int64_t ldu,
               std::int64_t stride_u, T* v, std::int64_t ldv, std::int64_t stride_v, T threshold, int max_sweeps,
               std::int32_t* infos) {
  __shared__ T columns[kMax][kMax + 1];  // A's column c, then U's, at columns[c]
  __shared__ T v_columns[kMax][kMax + 1];
  __shared__ T norms[kMax];   // the singular values, once the sweeps end
  __shared__ T scales[kMax];  // without V: the square of each column's scale from the rotations
  __shared__ int places[kMax];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const std::int64_t b = blockIdx.x;
  const bool vectors = u != nullptr;
  for (int c = warp; c < n; c += warps) {
    columns[c][lane] = lane < n ? a[b * stride_a + c * lda + lane] : T(0);
    v_columns[c][lane] = T(lane == c);
    if (lane == 0) scales[c] = T(1);
  }
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
      if (rotate(active, columns[p], columns[q], v_columns[p], v_columns[q], vectors, vectors ? nullptr : &scales[p],
                 &scales[q], threshold)) {
        rotated = 1;
      }
      __syncthreads();
    }
    converged = __syncthreads_or(rotated) == 0;
  }

  // A V holds the vectors: σ = ‖A v‖ / ‖v‖ for each column v of V as it ends, scale and all.
  for (int c = warp; c < n; c += warps) {
    const T x = columns[c][lane], norm = sqrt(warp_sum(x * x));
    const T y = v_columns[c][lane], scale = vectors ? sqrt(warp_sum(y * y)) : sqrt(scales[c]);
    if (lane == 0) norms[c] = norm / scale;
    if (vectors) {
      if (norm != T(0)) columns[c][lane] = x / norm;
      v_columns[c][lane] = y / scale;
    }
  }
  __syncthreads();
  if (warp == 0) {
    if (vectors) replace_zero_columns(columns, norms, n);
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
  const double relative = tolerance == 0 ? std::numeric_limits<T>::epsilon() : tolerance;
  const auto threshold = static_cast<T>(relative * std::sqrt(static_cast<double>(size)));
  jacobi_svd<T><<<static_cast<unsigned>(batch), 32 * warps, 0, stream>>>(a, size, lda, stride_a, s, u, ldu, stride_u, v,
                                                                         ldv, stride_v, threshold, max_sweeps, infos);
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
