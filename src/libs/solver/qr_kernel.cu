#include <algorithm>
#include <climits>

#include "libs/solver/householder_blocks.cuh"
#include "libs/solver/qr_kernel.hpp"

namespace accel::solver {
namespace {

using namespace householder;  // NOLINT(google-build-using-namespace): the pieces these kernels share

// The dynamic shared memory factor_panel sums products in: 32 rows per warp, a row a lane, stored four at a time.
template <class T>
constexpr int kSlotPitch = lane_row_pitch<T>(kPanel);
template <class T>
std::size_t slot_bytes(int threads) {
  return std::size_t(threads) * kSlotPitch<T> * sizeof(T);
}

// One block per matrix: the reflectors of columns p..p+w below row p (LAPACK's geqr2 on the panel). Thread t holds
// rows p + t, p + t + threads, … (R of them) of the panel in registers, shifted as columns are done so that the column
// being reduced is row[·][0], the ones left follow it and the reflectors made so far sit at the end. One pass over the
// rows gives all a column needs: slot 0 the squared norm below the diagonal, the slots of the columns left their
// products with it (for the update), the reflectors' slots their products with it (v_lᵀ v_j, for T). A thread adds
// its rows' products, each warp sums its threads' in shared memory (lane c down slot c's column), and every warp sums
// the warps' sums alike (the same sums in the same order, so every thread takes the same reflector): one barrier a
// column. Two rows a thread halve that traffic through shared memory, which bounds a panel of many rows in f64. The
// diagonal's row is shared; the rest follows from dlarfg's formulas, as v = x / (alpha - beta) below the diagonal.
// Where `t_out` is given, T of the panel goes there.
template <class T, int R>
__global__ void __launch_bounds__(kMaxThreads)
    factor_panel(T* a, int m, std::int64_t lda, std::int64_t stride, int p, int w, T* tau, int k, T* t_out) {
  // These two alternate with the column, so that a column writes while the previous one is still read.
  __shared__ alignas(16) T diagonal_row[2][kPanel];
  __shared__ T partial[2][kMaxWarps][kPanel];
  __shared__ alignas(16) T updates[kMaxWarps][kPanel];  // vᵀ a_c of the columns left, for the warp's rows
  __shared__ T gram[kPanel][kPanel + 1];
  __shared__ T taus[kPanel];
  extern __shared__ double dynamic[];
  follow_chain();
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5, rows = m - p;
  T* products = reinterpret_cast<T*>(dynamic) + warp * 32 * kSlotPitch<T>;  // the warp's, a row a lane
  T* top = a + blockIdx.x * stride + std::int64_t{p} * lda + p;
  int at[R];  // the rows this thread holds, from the panel's top
#pragma unroll
  for (int q = 0; q < R; ++q) at[q] = t + q * static_cast<int>(blockDim.x);

  T row[R][kPanel];
#pragma unroll
  for (int q = 0; q < R; ++q) {
#pragma unroll
    for (int c = 0; c < kPanel; ++c) row[q][c] = at[q] < rows && c < w ? top[c * lda + at[q]] : T(0);
  }
#pragma unroll 1
  for (int j = 0; j < w; ++j) {
    const int s = j & 1;
    T x[R];
#pragma unroll
    for (int q = 0; q < R; ++q) x[q] = at[q] > j && at[q] < rows ? row[q][0] : T(0);
#pragma unroll
    for (int c = 0; c < kPanel; c += 4) {
      T sums[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        sums[e] = x[0] * row[0][c + e];
#pragma unroll
        for (int q = 1; q < R; ++q) sums[e] += x[q] * row[q][c + e];
      }
      store4(products + lane * kSlotPitch<T> + c, sums[0], sums[1], sums[2], sums[3]);
    }
    if (t == j) {  // row j < 32 is always a thread's first
#pragma unroll
      for (int c = 0; c < kPanel; c += 4) {
        store4(&diagonal_row[s][c], row[0][c], row[0][c + 1], row[0][c + 2], row[0][c + 3]);
      }
    }
    __syncwarp();
    T column[4] = {};  // four chains of additions, not one
#pragma unroll
    for (int r = 0; r < 32; r += 4) {
#pragma unroll
      for (int q = 0; q < 4; ++q) column[q] += products[(r + q) * kSlotPitch<T> + lane];
    }
    partial[s][warp][lane] = (column[0] + column[1]) + (column[2] + column[3]);
    __syncthreads();
    T sum = partial[s][0][lane];
    for (int q = 1; q < warps; ++q) sum += partial[s][q][lane];
    // dlarfg: H = I - tau v vᵀ takes the column to beta e_j; no reflection (tau = 0) where it is zero below j.
    const T alpha = diagonal_row[s][0], below = __shfl_sync(~0u, sum, 0);
    T beta = alpha, tau_j = T(0), scale = T(0);
    if (below != T(0)) {  // by correctly rounded reciprocals: the divisions' slow paths lay on every column's way
      beta = -copysign(sqrt(alpha * alpha + below), alpha);
      tau_j = (beta - alpha) * reciprocal(beta);
      scale = reciprocal(alpha - beta);
    }
    // Slot c's vᵀ a_c = a_jc + scale Σ_{i>j} x_i a_ic: for the columns left, the update's; for a reflector v_l,
    // v_lᵀ v_j.
    const T product = diagonal_row[s][lane] + scale * sum;
    updates[warp][lane] = lane >= 1 && lane + j < kPanel ? product : T(0);
    __syncwarp();
    bool reflected[R];
    T v[R], tv[R];
#pragma unroll
    for (int q = 0; q < R; ++q) {
      reflected[q] = at[q] >= j && at[q] < rows;
      v[q] = at[q] == j ? T(1) : row[q][0] * scale;
      tv[q] = reflected[q] ? tau_j * v[q] : T(0);
    }
#pragma unroll
    for (int c = 0; c < kPanel; c += 4) {
      T with[4];
      load4(&updates[warp][c], with);
#pragma unroll
      for (int q = 0; q < R; ++q) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (c + e >= 1) row[q][c + e] -= tv[q] * with[e];
        }
      }
    }
    const T with_reflector = __shfl_sync(~0u, product, (kPanel - j + lane) & (kPanel - 1));
    if (warp == 0 && lane < j) gram[lane][j] = with_reflector;
    if (t == 0) {
      taus[j] = tau_j;
      tau[blockIdx.x * std::int64_t{k} + p + j] = tau_j;
    }
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const T done = reflected[q] ? (at[q] == j ? beta : v[q]) : row[q][0];
#pragma unroll
      for (int c = 0; c + 1 < kPanel; ++c) row[q][c] = row[q][c + 1];
      row[q][kPanel - 1] = done;
    }
  }
#pragma unroll
  for (int q = 0; q < R; ++q) {
    if (at[q] < rows) {
#pragma unroll
      for (int c = 0; c < kPanel; ++c) {
        if (const int column = c - (kPanel - w); column >= 0) top[column * lda + at[q]] = row[q][c];
      }
    }
  }
  if (t_out != nullptr && warp == 0) {
    __syncwarp();  // gram and taus are the first warp's
    write_t(gram, taus, w, t_out + blockIdx.x * std::int64_t{w} * w);
  }
}

// Where panel `panel`'s reflectors lie in a matrix's work for Orgqr and Ormqr (rows x w), its T right after them.
template <class T>
__host__ __device__ T* panel_work(T* work, int panel, int rows) {  // T may be const
  return work + panel * (std::int64_t{kPanel} * rows + kPanel * kPanel);
}

// Blocks over (matrix, panel) before Orgqr forms Q in place of A: each panel's reflectors copied to `work` (the
// update of a later step writes over A's columns that hold them) and its T made beside them.
template <class T>
__global__ void __launch_bounds__(kMaxThreads) prepare_panels(const T* a, int m, std::int64_t lda, std::int64_t stride,
                                                              int k, const T* tau, T* work, std::int64_t work_stride) {
  __shared__ T gram[kPanel][kPanel + 1];
  __shared__ T taus[kPanel];
  extern __shared__ double dynamic[];  // sum_products's stage
  T* stage = reinterpret_cast<T*>(dynamic);
  follow_chain();
  const int t = threadIdx.x, panel = static_cast<int>(blockIdx.y), p = panel * kPanel, w = min(kPanel, k - p);
  const int rows = m - p, i = p + t;
  const std::int64_t b = blockIdx.x;
  const T* column = a + b * stride + std::int64_t{p} * lda;
  T* v_copy = panel_work(work + b * work_stride, panel, m);

  T v_row[kPanel];
#pragma unroll
  for (int l = 0; l < kPanel; ++l) {
    const bool inside = t < rows && l < w;
    const T stored = inside ? column[l * lda + i] : T(0);
    if (inside) v_copy[l * m + i] = stored;
    v_row[l] = inside ? (t > l ? stored : T(t == l)) : T(0);
  }
  if (t < w) taus[t] = tau[b * k + p + t];
  sum_products<kPanel>(v_row, v_row, stage, &gram[0][0], kPanel + 1);
  if (t < 32) write_t(gram, taus, w, v_copy + std::int64_t{m} * w);
}

// Panels of more rows than this take two rows a thread.
constexpr int kPairedRowsFrom = 128;

int threads_for(std::int64_t rows) {
  return static_cast<int>(std::min<std::int64_t>(kMaxThreads, (rows + 31) / 32 * 32));
}

// The kernels that stage rows take four warps at least: their sums over the warps and Y's quarters spread over them,
// where one warp alone waits on each step in turn (a 32-row update took twice a 256-row one's time).
int staging_threads_for(std::int64_t rows) { return std::max(4 * 32, threads_for(rows)); }

// Orgqr's work per matrix: each panel's reflectors (m x w) and T (w x w), the panels before the last full.
std::int64_t orgqr_matrix_elements(std::int64_t m, std::int64_t k) {
  const std::int64_t full = (k - 1) / kPanel, last = k - full * kPanel;
  return full * (kPanel * m + kPanel * kPanel) + m * last + last * last;
}

// Orgqr's and Ormqr's first launch: every panel's reflectors and T into `work`, orgqr_matrix_elements(rows,
// reflectors) per matrix, with the shared memory the staging kernels take allowed.
template <class T>
cudaError_t launch_prepare(const T* a, int rows, std::int64_t lda, std::int64_t stride, int reflectors, const T* tau,
                           T* work, unsigned matrices, cudaStream_t stream) {
  const int threads = staging_threads_for(rows);
  for (cudaError_t error : {allow_shared<prepare_panels<T>>(stage_bytes<T, kPanel>(threads)),
                            allow_shared<apply_block_reflector<T>>(stage_bytes<T>(threads))}) {
    if (error != cudaSuccess) return error;
  }
  const auto panels = static_cast<unsigned>((reflectors + kPanel - 1) / kPanel);
  return launch_chained(prepare_panels<T>, dim3(matrices, panels), threads, stage_bytes<T, kPanel>(threads), stream, a,
                        rows, lda, stride, reflectors, tau, work, orgqr_matrix_elements(rows, reflectors));
}

// One step of Orgqr or Ormqr: X's columns first..end below panel `panel`'s top, of every matrix, multiplied by the
// panel's block reflector, from the reflectors and T that launch_prepare left in `work` (per_matrix apart).
template <class T>
cudaError_t launch_panel_update(const T* work, std::int64_t per_matrix, int panel, int rows, int reflectors,
                                bool transpose_t, T* x, std::int64_t ldx, std::int64_t x_stride, int first, int end,
                                int identity_until, unsigned matrices, cudaStream_t stream) {
  const int p = panel * kPanel, w = std::min(kPanel, reflectors - p), threads = staging_threads_for(rows - p);
  const T* v = panel_work(work, panel, rows);
  const auto tiles = static_cast<unsigned>((end - first + kTile - 1) / kTile);
  return launch_chained(apply_block_reflector<T>, dim3(matrices, tiles), threads, stage_bytes<T>(threads), stream, v,
                        rows, per_matrix, v + std::int64_t{rows} * w, per_matrix, transpose_t, x, ldx, x_stride, rows,
                        p, w, first, end, identity_until);
}

bool fits(std::int64_t elements, std::int64_t element_bytes) {
  return elements <= kSmallQrMaxWorkspaceBytes / element_bytes;
}

}  // namespace

std::int64_t small_geqrf_workspace(std::int64_t m, std::int64_t n, std::int64_t batch) {
  const std::int64_t k = std::min(m, n);
  return k > kPanel || n > k ? batch * kPanel * kPanel : 0;  // some panel has columns right of it
}

std::int64_t small_orgqr_workspace(std::int64_t m, std::int64_t k, std::int64_t batch) {
  return batch * orgqr_matrix_elements(m, k);
}

bool takes_small_geqrf(std::int64_t m, std::int64_t n, std::int64_t batch, std::int64_t element_bytes) {
  return m >= 1 && m <= kSmallQrMaxRows && n >= 1 && n <= kSmallQrMaxColumns && batch >= 1 && batch <= INT_MAX &&
         fits(small_geqrf_workspace(m, n, 1), element_bytes * batch);
}

bool takes_small_ormqr(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, std::int64_t element_bytes) {
  return k >= 1 && k <= m && m <= kSmallQrMaxRows && n >= 1 && (n + kTile - 1) / kTile <= 65535 && batch >= 1 &&
         batch <= INT_MAX && fits(orgqr_matrix_elements(m, k), element_bytes * batch);
}

bool takes_small_orgqr(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, std::int64_t element_bytes) {
  return k >= 1 && k <= n && n <= m && m <= kSmallQrMaxRows && batch >= 1 && batch <= INT_MAX &&
         fits(orgqr_matrix_elements(m, k), element_bytes * batch);
}

template <class T>
cudaError_t launch_small_geqrf(T* a, std::int64_t m, std::int64_t n, std::int64_t lda, std::int64_t stride,
                               std::int64_t batch, T* tau, T* work, cudaStream_t stream) {
  if (!takes_small_geqrf(m, n, batch, sizeof(T))) return cudaErrorInvalidValue;
  const int rows = static_cast<int>(m), columns = static_cast<int>(n), k = std::min(rows, columns);
  const auto matrices = static_cast<unsigned>(batch);
  for (cudaError_t error : {allow_shared<factor_panel<T, 1>>(slot_bytes<T>(threads_for(rows))),
                            allow_shared<factor_panel<T, 2>>(slot_bytes<T>(threads_for(rows))),
                            allow_shared<apply_block_reflector<T>>(stage_bytes<T>(staging_threads_for(rows)))}) {
    if (error != cudaSuccess) return error;
  }
  for (int p = 0; p < k; p += kPanel) {
    const int w = std::min(kPanel, k - p);
    const bool right_of_it = columns > p + w;
    T* t_out = right_of_it ? work : nullptr;
    const bool paired = rows - p > kPairedRowsFrom;
    const int threads = threads_for(paired ? (rows - p + 1) / 2 : rows - p);
    if (cudaError_t error = launch_chained(paired ? factor_panel<T, 2> : factor_panel<T, 1>, dim3(matrices), threads,
                                           slot_bytes<T>(threads), stream, a, rows, lda, stride, p, w, tau, k, t_out);
        error != cudaSuccess) {
      return error;
    }
    if (!right_of_it) continue;
    const auto tiles = static_cast<unsigned>((columns - p - w + kTile - 1) / kTile);
    const int update_threads = staging_threads_for(rows - p);
    if (cudaError_t error = launch_chained(apply_block_reflector<T>, dim3(matrices, tiles), update_threads,
                                           stage_bytes<T>(update_threads), stream, a + p * lda, lda, stride, work,
                                           std::int64_t{w} * w, true, a, lda, stride, rows, p, w, p + w, columns, 0);
        error != cudaSuccess) {
      return error;
    }
  }
  return cudaSuccess;
}

template <class T>
cudaError_t launch_small_orgqr(T* a, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                               std::int64_t stride, std::int64_t batch, const T* tau, T* work, cudaStream_t stream) {
  if (!takes_small_orgqr(m, n, k, batch, sizeof(T))) return cudaErrorInvalidValue;
  const int rows = static_cast<int>(m), columns = static_cast<int>(n), reflectors = static_cast<int>(k);
  const auto matrices = static_cast<unsigned>(batch);
  const std::int64_t per_matrix = orgqr_matrix_elements(m, k);
  const int panels = (reflectors + kPanel - 1) / kPanel;
  if (cudaError_t error = launch_prepare(a, rows, lda, stride, reflectors, tau, work, matrices, stream);
      error != cudaSuccess) {
    return error;
  }
  // From the last panel back, each step over the columns from its own: Q = H(0) (H(1) (… [I; 0])).
  for (int panel = panels - 1; panel >= 0; --panel) {
    const int p = panel * kPanel;
    const int identity_until = panel == panels - 1 ? columns : std::min(reflectors, p + kPanel);
    if (cudaError_t error = launch_panel_update(work, per_matrix, panel, rows, reflectors, false, a, lda, stride, p,
                                                columns, identity_until, matrices, stream);
        error != cudaSuccess) {
      return error;
    }
  }
  return cudaSuccess;
}

template <class T>
cudaError_t launch_small_ormqr(const T* a, std::int64_t m, std::int64_t k, std::int64_t lda, std::int64_t stride_a,
                               std::int64_t batch, const T* tau, bool transpose, T* c, std::int64_t n, std::int64_t ldc,
                               std::int64_t stride_c, T* work, cudaStream_t stream) {
  if (!takes_small_ormqr(m, n, k, batch, sizeof(T))) return cudaErrorInvalidValue;
  const int rows = static_cast<int>(m), reflectors = static_cast<int>(k);
  const auto matrices = static_cast<unsigned>(batch);
  const std::int64_t per_matrix = orgqr_matrix_elements(m, k);
  const int panels = (reflectors + kPanel - 1) / kPanel;
  if (cudaError_t error = launch_prepare(a, rows, lda, stride_a, reflectors, tau, work, matrices, stream);
      error != cudaSuccess) {
    return error;
  }
  // Qᵀ C = B(last)ᵀ … B(0)ᵀ C applies the first panel first; Q C = B(0) … B(last) C the last.
  for (int step = 0; step < panels; ++step) {
    const int panel = transpose ? step : panels - 1 - step;
    if (cudaError_t error = launch_panel_update(work, per_matrix, panel, rows, reflectors, transpose, c, ldc, stride_c,
                                                0, static_cast<int>(n), 0, matrices, stream);
        error != cudaSuccess) {
      return error;
    }
  }
  return cudaSuccess;
}

template cudaError_t launch_small_geqrf<float>(float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                               std::int64_t, float*, float*, cudaStream_t);
template cudaError_t launch_small_geqrf<double>(double*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                                std::int64_t, double*, double*, cudaStream_t);
template cudaError_t launch_small_orgqr<float>(float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                               std::int64_t, std::int64_t, const float*, float*, cudaStream_t);
template cudaError_t launch_small_orgqr<double>(double*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                                std::int64_t, std::int64_t, const double*, double*, cudaStream_t);

template cudaError_t launch_small_ormqr<float>(const float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                               std::int64_t, const float*, bool, float*, std::int64_t, std::int64_t,
                                               std::int64_t, float*, cudaStream_t);
template cudaError_t launch_small_ormqr<double>(const double*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                                std::int64_t, const double*, bool, double*, std::int64_t, std::int64_t,
                                                std::int64_t, double*, cudaStream_t);

}  // namespace accel::solver
