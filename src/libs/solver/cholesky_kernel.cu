#include <algorithm>
#include <climits>

#include "core/chained_launch.cuh"
#include "libs/solver/cholesky_kernel.hpp"
#include "libs/solver/four_elements.cuh"

namespace accel::solver {
namespace {

constexpr int kPanel = 32;        // columns factored by one block at a time
constexpr int kTile = 16;         // trailing columns per block of a launch
constexpr int kMaxThreads = 256;  // a row per thread up to kSmallCholeskyMaxN

// 1 / √x: one instruction of the special function unit in f32 (within 2 ulp). In f64, the unit's approximation and
// two Newton steps, each of which squares the relative error, without the library's branches for zeros, infinities
// and subnormals: a diagonal reaches this only if positive, and one as small as a subnormal is beyond the
// factorisation anyway.
__device__ float reciprocal_square_root(float x) { return rsqrtf(x); }
__device__ double reciprocal_square_root(double x) {
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  for (int step = 0; step < 2; ++step) {
    const double e = fma(-x * y, y, 1.0);  // for y = (1 + δ) / √x, e = 1 - x y² ≈ -2δ
    y = fma(0.5 * y, e, y);
  }
  return y;
}

constexpr int kStep = 4;  // columns a step of a panel's factorisation takes

// x[c] = x[c + kStep] - Σq a[q] y[q * kPanel + c] for c < kPanel - kStep: a row shifted by a step's columns as it
// loses multiples of the step's rows of y, which all threads read alike from shared memory (broadcasts), four
// elements at a time.
template <class T>
__device__ void shift_less_multiples(T (&x)[kPanel], const T (&a)[kStep], const T* y) {
#pragma unroll
  for (int c = 0; c + kStep < kPanel; c += 4) {
    T v[kStep][4];
#pragma unroll
    for (int q = 0; q < kStep; ++q) load4(y + q * kPanel + c, v[q]);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (c + e + kStep >= kPanel) continue;
      T sum = x[c + e + kStep];
#pragma unroll
      for (int q = 0; q < kStep; ++q) sum -= a[q] * v[q][e];
      x[c + e] = sum;
    }
  }
}

// Where element (r, c), r >= c, of the triangle the factorisation reads lies: A(r, c) for a lower fill, A(c, r) for
// an upper one (whose factor U = Lᵀ is L's transpose, in the same places).
struct Triangle {
  std::int64_t row_step;
  std::int64_t column_step;
  __device__ std::int64_t at(int r, int c) const { return r * row_step + c * column_step; }
};

// L's rows first..first+kWidth over the panel before (columns p0..p0+kPanel), into shared memory at [k][c]. Unrolled
// so that a thread's loads are in flight together: they come from L2, hundreds of cycles away.
template <class T, int kWidth>
__device__ void load_panel_rows(const T* matrix, Triangle triangle, int n, int p0, int first, T (*rows)[kWidth]) {
#pragma unroll 8
  for (int e = threadIdx.x; e < kPanel * kWidth; e += blockDim.x) {
    const int k = e / kWidth, c = e - k * kWidth;
    rows[k][c] = first + c < n ? matrix[triangle.at(first + c, p0 + k)] : T(0);
  }
}

// values[c] -= Σk l[k] rows[k][c]: a row of the trailing matrix less the panel before's product.
template <class T, int kWidth>
__device__ void subtract_panel_product(const T (&l)[kPanel], const T (*rows)[kWidth], T (&values)[kWidth]) {
#pragma unroll
  for (int k = 0; k < kPanel; ++k) {
#pragma unroll
    for (int c = 0; c < kWidth; ++c) values[c] -= l[k] * rows[k][c];
  }
}

// L's row r over the panel before, into registers.
template <class T>
__device__ void load_row_of_panel_before(const T* matrix, Triangle triangle, int r, bool holds_row, int p0,
                                         T (&l)[kPanel]) {
#pragma unroll
  for (int k = 0; k < kPanel; ++k) l[k] = holds_row ? matrix[triangle.at(r, p0 + k)] : T(0);
}

// A block right of the panel: columns first..first+kTile, rows first.. (a row per thread), less the panel before's
// product.
template <class T>
__device__ void update_tile(T* matrix, Triangle triangle, int n, int p0, int first) {
  __shared__ alignas(16) T rows[kPanel][kTile];
  const int r = first + static_cast<int>(threadIdx.x);
  const bool holds_row = r < n;
  const int columns = min(kTile, n - first);
  T values[kTile];
#pragma unroll
  for (int c = 0; c < kTile; ++c) {
    values[c] = holds_row && c < columns && r >= first + c ? matrix[triangle.at(r, first + c)] : T(0);
  }
  T l[kPanel];
  load_row_of_panel_before(matrix, triangle, r, holds_row, p0, l);
  load_panel_rows<T, kTile>(matrix, triangle, n, p0, first, rows);
  __syncthreads();
  subtract_panel_product<T, kTile>(l, rows, values);
  if (!holds_row) return;
#pragma unroll
  for (int c = 0; c < kTile; ++c) {
    if (c < columns && r >= first + c) matrix[triangle.at(r, first + c)] = values[c];
  }
}

// The panel j0..j0+w whose rows the block's threads hold, thread t row j0 + t in `row` (less every panel before's
// product): its diagonal block factored by the first warp (lane t holds row t), then each row below solved against it
// (L21 = A21 L11⁻ᵀ, a row per thread), kStep columns a step. Within a step the columns pass their multipliers by
// shuffles, and each column's diagonal comes from the lane that owns it, which computes it from its own multipliers: a
// column waits on a shuffle and an rsqrt (where a square root and a rounded reciprocal were a chain of subroutines),
// not on shared memory. The step's multipliers under the diagonal then go to shared memory, aligned so that every
// thread reads them as 16-byte broadcasts, and every row drops the step's columns at once. Both loops are rolled, with
// the row shifted so that the step's columns are always row[0..kStep) (an index known only at run time would move the
// row to local memory): their bodies stay in the instruction cache. Each multiplier L(j0 + t, j0 + i) goes to store(i,
// value): those of the rows below as they are found, those of the diagonal block from shared memory once it is
// factored, while the rows below are solved (its upper part is never stored). A diagonal that is not positive ends the
// factorisation, as in LAPACK's potf2: it is stored in its place, and the order of its leading minor returned to every
// thread (0 if none).
template <class T, class Store>
__device__ int factor_held_panel(T (&row)[kPanel], int t, int w, bool holds_row, int j0, Store store) {
  __shared__ alignas(16) T under[kPanel][kPanel];   // L(i0 + kStep + c, i) at [i][c], i0 the step's first column
  __shared__ T inverse[kPanel];                     // 1 / L(i, i)
  __shared__ T within[kPanel][kStep];               // L(i, i0 + q) at [i][q], q < i - i0
  __shared__ T diagonal_block[kPanel][kPanel + 1];  // L(t, c) at [t][c], written out once the block is factored
  __shared__ int failed;
  __shared__ T failed_diagonal;
  if (t < 32) {
#pragma unroll
    for (int c = 0; c < kPanel; ++c) {
      under[c][t] = T(0);
      // Lanes past a panel of w < 32 columns hold an identity's rows: the diagonal block factors as if bordered by
      // one, whole steps at a time, and its own columns are as they would be alone.
      if (t >= w) row[c] = c == t ? T(1) : T(0);
    }
    __syncwarp();
    int failure = 0;
    T d = __shfl_sync(~0u, row[0], 0);  // the diagonal at hand, less every column before
    // No branch in a step hangs on a lane or on a diagonal: a step goes on past a diagonal that is not positive (its
    // columns then hold NaNs, which nothing writes out) and stops after it, and each lane writes what it found into
    // shared memory unconditionally. On the H100 a column's store to global memory and its early exit took about 90
    // and 60 cycles of the 310 a column took with both (docs/PERFORMANCE.md, section 22).
#pragma unroll 1
    for (int i = 0; i < kPanel; i += kStep) {
      T l[kStep];              // L(t, i + k)
      T across[kStep][kStep];  // L(i + k, i + q) at [k][q], q < k, from lane i + k
      int bad = kStep;         // the step's first column whose diagonal is not positive
      T bad_diagonal = T(0);
#pragma unroll
      for (int k = 0; k < kStep; ++k) {
        if (k > 0) {
          T own = row[k];
#pragma unroll
          for (int q = 0; q < k; ++q) own -= l[q] * l[q];
          d = __shfl_sync(~0u, own, i + k);
        }
        const bool positive = d > T(0);
        bad_diagonal = bad == kStep && !positive ? d : bad_diagonal;
        bad = bad == kStep && !positive ? k : bad;
        const T s = reciprocal_square_root(d);
        T a = row[k];
#pragma unroll
        for (int q = 0; q < k; ++q) a -= l[q] * across[k][q];
        l[k] = t == i + k ? d * s : a * s;
        diagonal_block[t][i + k] = l[k];
        inverse[i + k] = s;  // the same in every lane
#pragma unroll
        for (int next = k + 1; next < kStep; ++next) across[next][k] = __shfl_sync(~0u, l[k], i + next);
      }
      if (bad != kStep) {
        failure = j0 + i + bad + 1;
        failed_diagonal = bad_diagonal;
        break;
      }
      T own = row[kStep];
#pragma unroll
      for (int q = 0; q < kStep; ++q) own -= l[q] * l[q];
      d = __shfl_sync(~0u, own, (i + kStep) % 32);
#pragma unroll
      for (int q = 0; q < kStep; ++q) {
        if (t >= i + kStep) under[i + q][t - i - kStep] = l[q];
#pragma unroll
        for (int k = q + 1; k < kStep; ++k) within[i + k][q] = across[k][q];  // the same in every lane
      }
      __syncwarp();
      shift_less_multiples(row, l, &under[i][0]);
    }
    if (t == 0) failed = failure;
  }
  __syncthreads();
  const int failure = failed;
  if (t < 32) {                                            // the diagonal block, while the rows below are solved
    const int done = failure != 0 ? failure - 1 - j0 : w;  // columns factored
    if (t < w) {
#pragma unroll
      for (int c = 0; c < kPanel; ++c) {
        if (c < done && c <= t) store(c, diagonal_block[t][c]);
      }
      if (t == done && failure != 0) store(t, failed_diagonal);
    }
    return failure;
  }
  if (failure != 0 || !holds_row) return failure;
#pragma unroll 1
  for (int i = 0; i < kPanel; i += kStep) {
    T x[kStep];
#pragma unroll
    for (int k = 0; k < kStep; ++k) {
      T a = row[k];
#pragma unroll
      for (int q = 0; q < k; ++q) a -= x[q] * within[i + k][q];
      x[k] = a * inverse[i + k];
      store(i + k, x[k]);
    }
    shift_less_multiples(row, x, &under[i][0]);
  }
  return failure;
}

// The panel j0..j0+w of a matrix whose later launches go on from global memory: less the panel before's product,
// factored, each multiplier written out as it is found. Once a diagonal is not positive, no later launch touches the
// matrix.
template <class T>
__device__ void factor_panel(T* matrix, Triangle triangle, int n, int j0, std::int32_t* info) {
  __shared__ alignas(16) T rows[kPanel][kPanel];
  if (j0 > 0 && *info != 0) return;
  const int t = static_cast<int>(threadIdx.x), m = n - j0, w = min(kPanel, m), r = j0 + t;
  const bool holds_row = t < m;
  T row[kPanel];
#pragma unroll
  for (int c = 0; c < kPanel; ++c) row[c] = holds_row && c < w && c <= t ? matrix[triangle.at(r, j0 + c)] : T(0);
  if (j0 > 0) {
    T l[kPanel];
    load_row_of_panel_before(matrix, triangle, r, holds_row, j0 - kPanel, l);
    load_panel_rows<T, kPanel>(matrix, triangle, n, j0 - kPanel, j0, rows);
    __syncthreads();
    subtract_panel_product<T, kPanel>(l, rows, row);
  }
  T* out = matrix + triangle.at(r, j0);
  const int failure =
      factor_held_panel(row, t, w, holds_row, j0, [=](int i, T value) { out[i * triangle.column_step] = value; });
  if (t == 0 && (j0 == 0 || failure != 0)) *info = failure;
}

// One launch per panel, over (matrix, column block): block 0 factors the panel at j0, the others bring the columns
// right of it up to date with the panel before (which the launch before factored).
template <class T>
__global__ void factor_step(T* a, int n, Triangle triangle, std::int64_t stride, int j0, std::int32_t* infos) {
  follow_chain();
  T* matrix = a + blockIdx.x * stride;
  if (blockIdx.y == 0) {
    factor_panel(matrix, triangle, n, j0, infos + blockIdx.x);
  } else {
    update_tile(matrix, triangle, n, j0 - kPanel, j0 + kPanel + (static_cast<int>(blockIdx.y) - 1) * kTile);
  }
}

}  // namespace

template <class T>
cudaError_t launch_small_cholesky(T* a, std::int64_t n, std::int64_t lda, std::int64_t stride, std::int64_t batch,
                                  bool upper, std::int32_t* infos, cudaStream_t stream) {
  if (n < 1 || n > kSmallCholeskyMaxN || batch < 1 || batch > INT_MAX) return cudaErrorInvalidValue;
  const Triangle triangle = upper ? Triangle{lda, 1} : Triangle{1, lda};
  const int size = static_cast<int>(n);
  for (int j0 = 0; j0 < size; j0 += kPanel) {
    const int threads = std::min(kMaxThreads, (size - j0 + 31) / 32 * 32);
    const int tiles = j0 == 0 ? 0 : (std::max(0, size - j0 - kPanel) + kTile - 1) / kTile;
    if (cudaError_t error =
            launch_chained(factor_step<T>, dim3(static_cast<unsigned>(batch), static_cast<unsigned>(1 + tiles)),
                           threads, 0, stream, a, size, triangle, stride, j0, infos);
        error != cudaSuccess) {
      return error;
    }
  }
  return cudaSuccess;
}

template cudaError_t launch_small_cholesky<float>(float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool,
                                                  std::int32_t*, cudaStream_t);
template cudaError_t launch_small_cholesky<double>(double*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                                   bool, std::int32_t*, cudaStream_t);

}  // namespace accel::solver
