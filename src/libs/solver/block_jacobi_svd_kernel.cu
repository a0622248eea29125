#include <cooperative_groups.h>

#include <climits>
#include <cmath>
#include <limits>

#include "core/chained_launch.cuh"
#include "libs/solver/block_jacobi_svd_kernel.hpp"
#include "libs/solver/jacobi_rotation.cuh"
#include "libs/solver/jacobi_svd_kernel.hpp"

namespace accel::solver {
namespace {

namespace cg = cooperative_groups;

constexpr int kCluster = 8;  // blocks per matrix: the largest cluster every GPU with clusters takes
constexpr int kColumnBlocks = 2 * kCluster;
constexpr int kMaxWidth = static_cast<int>(kBlockJacobiMaxN) / kColumnBlocks;  // columns in a block of columns
constexpr int kMaxRows = static_cast<int>(kBlockJacobiMaxN) / 32;              // rows a lane
constexpr int kWarps = kMaxWidth;                                              // a warp per pair of a round
constexpr int kThreads = 32 * kWarps;
constexpr int kHeldPerWarp = 2 * kMaxWidth / kWarps;  // columns of a round each warp moves

// Between rounds a matrix's columns (A, V, scales, values) lie in global memory, read and written past L1 (__ldcg,
// __stcg): a block reads columns that other blocks wrote in the round before, after the cluster's barrier, and its
// L1 may still hold them as they were when it last read them.
template <class T>
__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads)
    block_jacobi_svd(T* a, int n, std::int64_t lda, std::int64_t stride_a, T* work, T* s, T* u, std::int64_t ldu,
                     std::int64_t stride_u, T* v, std::int64_t ldv, std::int64_t stride_v, Stopping<T> stop,
                     int max_sweeps, std::int32_t* infos) {
  extern __shared__ __align__(16) unsigned char shared[];
  __shared__ T held_scales[2 * kMaxWidth];  // without V: the squares of the held columns' scales
  __shared__ int rotated_in[2];             // by the sweep's parity: whether this block rotated, read by the cluster
  __shared__ T largest;                     // the largest magnitude of this block's columns, read by the cluster
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::int64_t b = blockIdx.x / kCluster;
  const bool vectors = u != nullptr;
  const int width = (n + kColumnBlocks - 1) / kColumnBlocks, rows = (n + 31) / 32, pitch = 32 * rows;
  T* const held = reinterpret_cast<T*>(shared);  // the round's 2 width columns of A, pitch apart, then V's
  T* const held_v = held + 2 * width * pitch;
  const std::int64_t turning_elements = vectors ? std::int64_t{n} * n : n;
  T* const matrix = a + b * stride_a;
  T* const turning = work + b * (turning_elements + n);  // V (columns n apart), or the scales' squares
  T* const norms = turning + turning_elements;           // the values in the columns' order

  if (threadIdx.x == 0) largest = T(0);
  __syncthreads();
  T mine = 0;                                 // of the elements this thread reads
  for (int g = rank; g < n; g += kCluster) {  // this block's columns: V's, or their scales, and A's largest
    if (vectors) {
      for (int i = threadIdx.x; i < n; i += kThreads) __stcg(turning + std::int64_t{g} * n + i, T(i == g));
    } else if (threadIdx.x == 0) {
      __stcg(turning + g, T(1));
    }
    for (int i = threadIdx.x; i < n; i += kThreads) mine = fmax(mine, fabs(__ldcg(matrix + g * lda + i)));
  }
  raise_to_magnitude(&largest, mine);
  cluster.sync();
  T matrix_largest = 0;
  for (int r = 0; r < kCluster; ++r) matrix_largest = fmax(matrix_largest, *cluster.map_shared_rank(&largest, r));
  const int exponent = exponent_of(matrix_largest);  // A / 2^exponent is what turns
  for (int g = rank; g < n; g += kCluster) {
    for (int i = threadIdx.x; i < n; i += kThreads) {
      __stcg(matrix + g * lda + i, times_power_of_two(__ldcg(matrix + g * lda + i), -exponent));
    }
  }
  cluster.sync();

  bool converged = false;
  for (int sweep = 0; !converged && sweep < max_sweeps; ++sweep) {
    bool rotated = false;
    for (int round = 0; round + 1 < kColumnBlocks; ++round) {
      const int first = player(rank, round, kColumnBlocks) * width;
      const int second = player(kColumnBlocks - 1 - rank, round, kColumnBlocks) * width;
      const auto column_of = [&](int h) { return h < width ? first + h : second + h - width; };
      {  // every load of the warp issued before the first store: each waits a trip to L2
        T x[kHeldPerWarp][kMaxRows], y[kHeldPerWarp][kMaxRows];
#pragma unroll
        for (int t = 0; t < kHeldPerWarp; ++t) {
          const int h = warp + t * kWarps, g = column_of(h);
#pragma unroll
          for (int k = 0; k < kMaxRows; ++k) {
            const int i = lane + 32 * k;
            const bool real = h < 2 * width && g < n && i < n;
            x[t][k] = real ? __ldcg(matrix + g * lda + i) : T(0);
            y[t][k] = vectors && real ? __ldcg(turning + std::int64_t{g} * n + i) : T(0);
          }
          if (!vectors && lane == 0 && h < 2 * width) held_scales[h] = g < n ? __ldcg(turning + g) : T(1);
        }
#pragma unroll
        for (int t = 0; t < kHeldPerWarp; ++t) {  // rows and columns past n held as zeros
          const int h = warp + t * kWarps;
#pragma unroll
          for (int k = 0; k < kMaxRows; ++k) {
            if (h < 2 * width && k < rows) {
              held[h * pitch + lane + 32 * k] = x[t][k];
              if (vectors) held_v[h * pitch + lane + 32 * k] = y[t][k];
            }
          }
        }
      }
      __syncthreads();
      const auto rotate_held = [&](bool active, int p, int q) {
        return rotate<32, kMaxRows>(active && column_of(p) < n && column_of(q) < n, rows, held + p * pitch,
                                    held + q * pitch, held_v + p * pitch, held_v + q * pitch, vectors,
                                    vectors ? nullptr : &held_scales[p], &held_scales[q], stop);
      };
      if (round == 0) {  // every pair of the 2 width columns: the sweep's pairs within a block of columns
        const int players = 2 * width;
        for (int inner = 0; inner + 1 < players; ++inner) {
          const bool paired = warp < width;
          const int p = paired ? player(warp, inner, players) : 0;
          const int q = paired ? player(players - 1 - warp, inner, players) : 0;
          rotated |= rotate_held(paired, p, q);
          __syncthreads();
        }
      } else {  // each column of the first block with each of the second's
        // Warp k holds column k of the first block in registers through the round, and meets column (k + inner) mod
        // width of the second at step `inner`, in shared memory: half the shared-memory traffic of holding both
        // there, which bounds a step.
        const bool holds = warp < width;
        T x[kMaxRows], x_v[kMaxRows];
        load_rows<32>(holds, rows, held + warp * pitch, x);
        load_rows<32>(holds && vectors, rows, held_v + warp * pitch, x_v);
        for (int inner = 0; inner < width; ++inner) {
          const int q = width + (warp + inner) % width;
          const bool active = holds && column_of(warp) < n && column_of(q) < n;
          T y[kMaxRows], c, s;
          load_rows<32>(active, rows, held + q * pitch, y);
          if (orthogonalize<32>(active, x, y, stop, c, s)) {
            rotated = true;
            store_rows<32>(rows, y, held + q * pitch);
            if (vectors) {
              load_rows<32>(true, rows, held_v + q * pitch, y);
              turn(c, s, x_v, y);
              store_rows<32>(rows, y, held_v + q * pitch);
            } else if (lane == 0) {
              const T squared = c * c + s * s;
              held_scales[warp] *= squared, held_scales[q] *= squared;
            }
          }
          __syncthreads();
        }
        if (holds) {
          store_rows<32>(rows, x, held + warp * pitch);
          if (vectors) store_rows<32>(rows, x_v, held_v + warp * pitch);
        }
        __syncthreads();
      }
      for (int h = warp; h < 2 * width; h += kWarps) {
        const int g = column_of(h);
        if (g >= n) continue;
#pragma unroll
        for (int k = 0; k < kMaxRows; ++k) {
          const int i = lane + 32 * k;
          if (k >= rows || i >= n) break;
          __stcg(matrix + g * lda + i, held[h * pitch + i]);
          if (vectors) __stcg(turning + std::int64_t{g} * n + i, held_v[h * pitch + i]);
        }
        if (!vectors && lane == 0) __stcg(turning + g, held_scales[h]);
      }
      if (round + 2 == kColumnBlocks) {
        const int any = __syncthreads_or(rotated);
        if (threadIdx.x == 0) rotated_in[sweep & 1] = any;
      }
      cluster.sync();
    }
    int any = 0;  // the other parity's flags may be written meanwhile: they were read a barrier ago
    for (int r = 0; r < kCluster; ++r) any |= *cluster.map_shared_rank(&rotated_in[sweep & 1], r);
    converged = any == 0;
  }

  // A V holds the vectors: σ = ‖A v‖ / ‖v‖ for each column v of V as it ends, scale and all; 0 for a negligible one.
  // A's columns of nonzero norm, and V's, are normalised where they lie.
  constexpr int kClusterWarps = kCluster * kWarps;
  for (int g = rank * kWarps + warp; g < n; g += kClusterWarps) {
    T* const column = matrix + g * lda;
    T* const column_v = turning + std::int64_t{g} * n;
    T x[kMaxRows], y[kMaxRows];
    T squares = 0, squares_v = 0;
#pragma unroll
    for (int k = 0; k < kMaxRows; ++k) {
      const int i = lane + 32 * k;
      x[k] = i < n ? __ldcg(column + i) : T(0);
      y[k] = vectors && i < n ? __ldcg(column_v + i) : T(0);
      squares += x[k] * x[k], squares_v += y[k] * y[k];
    }
    squares = group_sum(squares);
    const T norm = squares < stop.negligible ? T(0) : sqrt(squares);
    const T scale = vectors ? sqrt(group_sum(squares_v)) : sqrt(__ldcg(turning + g));
    if (lane == 0) __stcg(norms + g, times_power_of_two(norm / scale, exponent));
    if (vectors) {
#pragma unroll
      for (int k = 0; k < kMaxRows; ++k) {
        const int i = lane + 32 * k;
        if (i >= n) break;
        if (norm != T(0)) __stcg(column + i, x[k] / norm);
        __stcg(column_v + i, y[k] / scale);
      }
    }
  }
  cluster.sync();
  for (int g = rank * kWarps + warp; g < n; g += kClusterWarps) {  // descending, ties in column order
    const T value = __ldcg(norms + g), mine = ordering_key(value);
    int before = 0;
    for (int k = lane; k < n; k += 32) {
      const T other = ordering_key(__ldcg(norms + k));
      before += other > mine || (other == mine && k < g);
    }
    const int place = group_sum(before);
    if (lane == 0) s[b * n + place] = value;
    if (vectors) {
      for (int i = lane; i < n; i += 32) {
        u[b * stride_u + place * ldu + i] = __ldcg(matrix + g * lda + i);
        v[b * stride_v + place * ldv + i] = __ldcg(turning + std::int64_t{g} * n + i);
      }
    }
  }
  if (vectors) {
    cluster.sync();
    if (rank == 0 && warp == 0) {
      replace_zero_columns<kMaxRows>([&](int k) { return u + b * stride_u + k * ldu; }, s + b * n, n);
    }
  }
  if (rank == 0 && threadIdx.x == 0) infos[b] = converged ? 0 : n + 1;
}

}  // namespace

bool takes_block_jacobi_svd(std::int64_t m, std::int64_t n, std::int64_t batch) {
  return m == n && n > kSmallJacobiMaxN && n <= kBlockJacobiMaxN && batch >= 1 && batch <= INT_MAX / kCluster;
}

std::int64_t block_jacobi_svd_work_elements(std::int64_t n, std::int64_t batch, bool vectors) {
  return batch * ((vectors ? n * n : n) + n);
}

template <class T>
cudaError_t launch_block_jacobi_svd(T* a, std::int64_t n, std::int64_t lda, std::int64_t stride_a, std::int64_t batch,
                                    T* s, T* u, std::int64_t ldu, std::int64_t stride_u, T* v, std::int64_t ldv,
                                    std::int64_t stride_v, double tolerance, int max_sweeps, T* work,
                                    std::int32_t* infos, cudaStream_t stream) {
  if (!takes_block_jacobi_svd(n, n, batch) || max_sweeps < 1 || (u == nullptr) != (v == nullptr)) {
    return cudaErrorInvalidValue;
  }
  const int size = static_cast<int>(n);
  const int width = (size + kColumnBlocks - 1) / kColumnBlocks, pitch = (size + 31) / 32 * 32;
  const std::size_t bytes = (u != nullptr ? 2 : 1) * std::size_t{2} * width * pitch * sizeof(T);
  if (cudaError_t error = allow_shared<block_jacobi_svd<T>>(bytes); error != cudaSuccess) return error;
  block_jacobi_svd<T><<<static_cast<unsigned>(batch * kCluster), kThreads, bytes, stream>>>(
      a, size, lda, stride_a, work, s, u, ldu, stride_u, v, ldv, stride_v, stopping<T>(tolerance, size), max_sweeps,
      infos);
  return cudaGetLastError();
}

template cudaError_t launch_block_jacobi_svd<float>(float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                                    float*, float*, std::int64_t, std::int64_t, float*, std::int64_t,
                                                    std::int64_t, double, int, float*, std::int32_t*, cudaStream_t);
template cudaError_t launch_block_jacobi_svd<double>(double*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                                     double*, double*, std::int64_t, std::int64_t, double*,
                                                     std::int64_t, std::int64_t, double, int, double*, std::int32_t*,
                                                     cudaStream_t);

}  // namespace accel::solver
