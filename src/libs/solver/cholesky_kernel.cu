#include <algorithm>
#include <climits>

#include "libs/solver/chained_launch.cuh"
#include "libs/solver/cholesky_kernel.hpp"

namespace accel::solver {
namespace {

constexpr int kPanel = 32;        // columns factored by one block at a time
constexpr int kTile = 16;         // trailing columns per block of a launch
constexpr int kMaxThreads = 256;  // a row per thread up to kSmallCholeskyMaxN

__device__ float square_root(float x) { return sqrtf(x); }
__device__ double square_root(double x) { return sqrt(x); }
__device__ float reciprocal(float x) { return __frcp_rn(x); }
__device__ double reciprocal(double x) { return __drcp_rn(x); }

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

// The panel j0..j0+w: less the panel before's product, its diagonal block factored by the first warp (lane t holds
// row t; each column's multipliers are shuffled to the lanes below), then each row below solved against it (L21 =
// A21 L11⁻ᵀ, a row per thread, L11 in shared memory). Both loops over columns are rolled, with the row shifted so that
// the column at hand is always row[0] (an index known only at run time would move the row to local memory): their
// bodies stay in the instruction cache and their registers few. Each multiplier is written out as it is found; the
// diagonal block's upper part is never read nor written. A diagonal that is not positive ends the factorisation, as
// in LAPACK's potf2: info is its order, it is left in place, and no later launch touches the matrix.
template <class T>
__device__ void factor_panel(T* matrix, Triangle triangle, int n, int j0, std::int32_t* info) {
  __shared__ alignas(16) T rows[kPanel][kPanel];
  __shared__ T l11_columns[kPanel][kPanel + 1];  // L11(k, i) at [i][k]
  __shared__ int failed;
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
  if (t < 32) {
    int failure = 0;
#pragma unroll 1
    for (int i = 0; i < w; ++i) {
      const T d = __shfl_sync(~0u, row[0], i);
      if (!(d > T(0))) {
        failure = j0 + i + 1;
        if (t == i) matrix[triangle.at(r, j0 + i)] = d;
        break;
      }
      const T diagonal = square_root(d);
      const T li = t == i ? diagonal : row[0] * reciprocal(diagonal);
      if (t >= i && t < w) {
        matrix[triangle.at(r, j0 + i)] = li;
        l11_columns[i][t] = li;
      }
#pragma unroll
      for (int c = 0; c + 1 < kPanel; ++c) row[c] = row[c + 1] - li * __shfl_sync(~0u, li, i + 1 + c);
    }
    if (t == 0) failed = failure;
  }
  __syncthreads();
  if (t == 0 && (j0 == 0 || failed != 0)) *info = failed;
  if (failed != 0 || !holds_row || t < w) return;
#pragma unroll 1
  for (int i = 0; i < kPanel; ++i) {
    const T x = row[0] * reciprocal(l11_columns[i][i]);
    matrix[triangle.at(r, j0 + i)] = x;
#pragma unroll
    for (int c = 0; c + 1 < kPanel; ++c) {
      row[c] = row[c + 1] - (i + 1 + c < kPanel ? x * l11_columns[i][i + 1 + c] : T(0));
    }
  }
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
