// What the family's one-sided Jacobi SVD kernels share (jacobi_svd_kernel.cu, one block per matrix of at most 32 x 32;
// block_jacobi_svd_kernel.cu, a cluster of blocks per matrix of at most 256 x 256): the pairing of columns in rounds,
// the rotation of a pair to orthogonality by LAPACK's gesvj rule, the order of the singular values, and the
// replacement of U's columns that became exactly zero. Device code, included by nvcc alone.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <limits>

namespace accel::solver {

// When a pair of columns is left as it is: orthogonal to `threshold` (a cosine: tolerance √n, or ε √n for tolerance
// 0), or either column negligible — its squared norm below `negligible`, the dtype's smallest normal number over ε².
// The kernels scale A by a power of two first, so that its largest element lies in [0.5, 1): a negligible column is
// then shorter than 1e-12 (f32; 1e-138 in f64) of A's largest, and its sums of squares would have lost their
// precision to subnormal numbers, which left rank-deficient f32 matrices turning pairs of such columns, sweep after
// sweep, about 1 in 200 times. A negligible column ends as a zero one: its singular value 0, its U replaced.
template <class T>
struct Stopping {
  T threshold;
  T negligible;
};

template <class T>
Stopping<T> stopping(double tolerance, int n) {
  constexpr double kEpsilon = std::numeric_limits<T>::epsilon();
  const double relative = tolerance == 0 ? kEpsilon : tolerance;
  return {static_cast<T>(relative * std::sqrt(static_cast<double>(n))),
          static_cast<T>(std::numeric_limits<T>::min() / (kEpsilon * kEpsilon))};
}

// x 2^e, exactly (unless it leaves the dtype's range).
inline __device__ float times_power_of_two(float x, int e) { return ldexpf(x, e); }
inline __device__ double times_power_of_two(double x, int e) { return ldexp(x, e); }

// The e of largest = f 2^e, f in [0.5, 1): A / 2^e has its largest element in [0.5, 1). 0 for a zero matrix, or one
// with an infinite element, which is left as it is.
inline __device__ int exponent_of(float largest) { return largest > 0 && isfinite(largest) ? ilogbf(largest) + 1 : 0; }
inline __device__ int exponent_of(double largest) { return largest > 0 && isfinite(largest) ? ilogb(largest) + 1 : 0; }

// *largest = max(*largest, x) for x >= 0, in shared memory: the bits of non-negative numbers order as the numbers do.
// (A NaN of A is left out by fmax before it comes here, and stays a NaN however A is scaled.)
inline __device__ void raise_to_magnitude(float* largest, float x) {
  atomicMax(reinterpret_cast<int*>(largest), __float_as_int(x));
}
inline __device__ void raise_to_magnitude(double* largest, double x) {
  atomicMax(reinterpret_cast<unsigned long long*>(largest), static_cast<unsigned long long>(__double_as_longlong(x)));
}

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

// Σ over `lanes` lanes of a warp (aligned groups, a power of two), to each of them. The butterfly adds the same two
// values on both lanes of each exchange (a + b and b + a), so every lane ends with the same bits and takes the same
// decisions.
template <int lanes = 32, class T>
__device__ T group_sum(T x) {
#pragma unroll
  for (int offset = lanes / 2; offset > 0; offset >>= 1) x += __shfl_xor_sync(~0u, x, offset);
  return x;
}

// The circle method's player at `position` in `round`, of `players` (even): 0 stays, the others turn.
__device__ inline int player(int position, int round, int players) {
  if (position == 0) return 0;
  const int turned = position - 1 + round;  // below 2 (players - 1): one subtraction for the remainder
  return (turned < players - 1 ? turned : turned - (players - 1)) + 1;
}

// (x, y) <- (c x - s y, s x + c y), row by row.
template <int kRows, class T>
__device__ void turn(T c, T s, T (&x)[kRows], T (&y)[kRows]) {
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const T p = x[k], q = y[k];
    x[k] = c * p - s * q, y[k] = s * p + c * q;
  }
}

// A pair of columns, kRows rows a lane of a group of kGroup lanes (rows a lane does not hold are zero), rotated in
// registers so that they are orthogonal, unless they already are to the threshold or the group has no pair (`active`
// false: it still takes part in the group's exchanges, which every lane of the warp must). Whether they were rotated,
// and by which c and s.
template <int kGroup, int kRows, class T>
__device__ bool orthogonalize(bool active, T (&x)[kRows], T (&y)[kRows], Stopping<T> stop, T& c, T& s) {
  T alpha = 0, beta = 0, gamma = 0;
#pragma unroll
  for (int k = 0; k < kRows; ++k) alpha += x[k] * x[k], beta += y[k] * y[k], gamma += x[k] * y[k];
#pragma unroll
  for (int offset = kGroup / 2; offset > 0; offset >>= 1) {  // three sums interleaved, within the group
    alpha += __shfl_xor_sync(~0u, alpha, offset);
    beta += __shfl_xor_sync(~0u, beta, offset);
    gamma += __shfl_xor_sync(~0u, gamma, offset);
  }
  // Negligible, orthogonal enough, or not a number.
  if (!active || !(alpha >= stop.negligible && beta >= stop.negligible) ||
      !(fabs(gamma) * rsqrt(alpha) * rsqrt(beta) > stop.threshold)) {
    return false;
  }
  rotation(alpha, beta, gamma, c, s);
  turn(c, s, x, y);
  return true;
}

// Rows row + k kGroup, k < rows <= kRows, of a column, where `row` is the lane's place in its group of kGroup; zero
// for the rows past `rows` and where the lane holds no column.
template <int kGroup, int kRows, class T>
__device__ void load_rows(bool held, int rows, const T* column, T (&x)[kRows]) {
  const int row = threadIdx.x & (kGroup - 1);
#pragma unroll
  for (int k = 0; k < kRows; ++k) x[k] = held && k < rows ? column[row + k * kGroup] : T(0);
}
template <int kGroup, int kRows, class T>
__device__ void store_rows(int rows, const T (&x)[kRows], T* column) {
  const int row = threadIdx.x & (kGroup - 1);
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    if (k < rows) column[row + k * kGroup] = x[k];
  }
}

// Columns p and q of A (and V's, or else their scales' squares) rotated to orthogonality by orthogonalize, where they
// lie: rows row + k kGroup for k < rows <= kRows, the columns' rows past their matrix's zero. Whether they were.
template <int kGroup, int kRows, class T>
__device__ bool rotate(bool active, int rows, T* column_p, T* column_q, T* v_p, T* v_q, bool vectors, T* scale_p,
                       T* scale_q, Stopping<T> stop) {
  T x[kRows], y[kRows], c, s;
  load_rows<kGroup>(active, rows, column_p, x);
  load_rows<kGroup>(active, rows, column_q, y);
  if (!orthogonalize<kGroup>(active, x, y, stop, c, s)) return false;
  store_rows<kGroup>(rows, x, column_p);
  store_rows<kGroup>(rows, y, column_q);
  if (vectors) {
    load_rows<kGroup>(true, rows, v_p, x);
    load_rows<kGroup>(true, rows, v_q, y);
    turn(c, s, x, y);
    store_rows<kGroup>(rows, x, v_p);
    store_rows<kGroup>(rows, y, v_q);
  } else if ((threadIdx.x & (kGroup - 1)) == 0) {  // without V, the columns' scales are kept apart
    const T squared = c * c + s * s;
    *scale_p *= squared, *scale_q *= squared;
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
// always found. The search for the next column goes on from the unit vector after the last one taken: those before it
// fell short and would again, as the span they are measured against only grows, so a zero matrix of 256 takes n
// tries, not n² / 2. `column(k)` is where column k's n rows lie, one apart; a lane holds rows lane + 32 k, k < kRows.
template <int kRows, class T, class Column>
__device__ void replace_zero_columns(Column column, const T* norms, int n) {
  const int lane = threadIdx.x & 31;
  const T least = T(0.5) / sqrt(T(n));
  int e = 0;
  for (int j = 0; j < n; ++j) {
    if (norms[j] != T(0)) continue;
    for (; e < n; ++e) {
      T x[kRows];
#pragma unroll
      for (int k = 0; k < kRows; ++k) x[k] = T(lane + 32 * k == e);
      for (int pass = 0; pass < 2; ++pass) {
        for (int other = 0; other < n; ++other) {
          if (other == j || (norms[other] == T(0) && other > j) || isnan(norms[other])) continue;
          const T* u = column(other);
          T dot = 0;
#pragma unroll
          for (int k = 0; k < kRows; ++k) dot += lane + 32 * k < n ? x[k] * u[lane + 32 * k] : T(0);
          dot = group_sum(dot);
#pragma unroll
          for (int k = 0; k < kRows; ++k) x[k] -= lane + 32 * k < n ? dot * u[lane + 32 * k] : T(0);
        }
      }
      T squares = 0;
#pragma unroll
      for (int k = 0; k < kRows; ++k) squares += x[k] * x[k];
      const T length = sqrt(group_sum(squares));
      if (length >= least) {
        T* to = column(j);
#pragma unroll
        for (int k = 0; k < kRows; ++k) {
          if (lane + 32 * k < n) to[lane + 32 * k] = x[k] / length;
        }
        ++e;
        break;
      }
    }
    __syncwarp();
  }
}

}  // namespace accel::solver
