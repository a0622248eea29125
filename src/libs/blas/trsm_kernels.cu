// The triangular solves of small order that a Trsm by blocks ends in (src/libs/blas/blas_kernels.hpp): a lane per
// right-hand side in each of 8 warps (16 for f32 orders past 64), each warp holding 8 of its rows in registers, T's
// strict triangle and the reciprocals of its diagonal in shared memory, read by every lane of a warp at once. A thread
// per right-hand side, substituting through all 64 rows alone, took 25 µs for 4,096 of them (a block per 64): too few
// threads, each a long chain of dependent steps.
#include <cstdint>
#include <cstring>

#include "core/chained_launch.cuh"
#include "libs/blas/kernel_common.cuh"

namespace accel::blas {
namespace {

constexpr int kRowsPerWarp = 8;
constexpr int kRhsPerBlock = 32;  // a lane each
// Orders up to this run on a kernel of 8 warps: half the steps and a quarter of T to stage.
constexpr int kSmallOrder = 64;
// A warp per 8 rows of the order.
template <int kOrder>
constexpr int kSolveThreads = kOrder / kRowsPerWarp * 32;

// 16 bytes of T, the widest load a thread makes.
template <class T>
struct Vector;
template <>
struct Vector<float> {
  using type = float4;
};
template <>
struct Vector<double> {
  using type = double2;
};
template <class T>
constexpr int kPerVector = static_cast<int>(sizeof(typename Vector<T>::type) / sizeof(T));

// A warp's 8 rows between registers and memory as 16-byte vectors (`memory` 16-byte aligned).
template <class T>
__device__ inline void load_rows(T (&rows)[kRowsPerWarp], const T* memory) {
  using V = typename Vector<T>::type;
#pragma unroll
  for (int v = 0; v < kRowsPerWarp / kPerVector<T>; ++v) {
    const V values = reinterpret_cast<const V*>(memory)[v];
    memcpy(&rows[v * kPerVector<T>], &values, sizeof(values));
  }
}
template <class T>
__device__ inline void store_rows(T* memory, const T (&rows)[kRowsPerWarp]) {
  using V = typename Vector<T>::type;
#pragma unroll
  for (int v = 0; v < kRowsPerWarp / kPerVector<T>; ++v) {
    V values;
    memcpy(&values, &rows[v * kPerVector<T>], sizeof(values));
    reinterpret_cast<V*>(memory)[v] = values;
  }
}

// T's strict triangle in shared memory, [i][j]: T(i, j) in its strict triangle, else 0. Rows padded by 16 bytes: each
// stays 16-byte aligned for the vector loads below, and the column-wise stores that fill them conflict four ways at
// most, where unpadded they would all fall on one bank. Dynamic: of order 128 it passes the 48 KiB of a static array.
template <class T, int kOrder>
constexpr std::size_t kCouplingBytes = sizeof(T) * kOrder*(kOrder + kPerVector<T>);

// Block z solves right-hand sides [32 z, 32 z + 32), lane l of every warp holding one; warp w holds rows
// [8 w, 8 w + 8) of it in registers. Step b (top down where T is lower triangular, bottom up where upper): warp b
// solves its rows against T's diagonal 8 x 8 block and hands the result to the other warps through shared memory; each
// warp whose rows are still to solve takes T's block beside them times that result out of its rows. Rows past the
// order are zeros in x and in T.
template <class T, bool kLower, int kOrder>
__global__ void __launch_bounds__(kSolveThreads<kOrder>) triangular_solve_kernel(TriangularSolveLaunch l) {
  constexpr int kThreads = kSolveThreads<kOrder>;
  wait_for_prior_kernel();
  extern __shared__ __align__(16) unsigned char dynamic[];
  auto coupling = reinterpret_cast<T(*)[kOrder + kPerVector<T>]>(dynamic);
  __shared__ T reciprocal[kOrder];                     // 1 / T(i, i), or 1 on a unit diagonal; 0 past the order
  __shared__ T solved[2][kRowsPerWarp][kRhsPerBlock];  // step b's rows, in buffer b % 2
  const int order = static_cast<int>(l.order);
  const T* t = static_cast<const T*>(l.t);
  // Unrolled so that a thread's loads are in flight at once: one after another, their round trips to L2 took longer
  // than the solve. Neighbouring threads read along T's unit stride (its columns where t_row is 1, else its rows, as
  // on the right side): read across it, each warp's load touched 32 lines.
  const bool down_columns = l.t_row == 1;
#pragma unroll
  for (int k = 0; k < kOrder * kOrder / kThreads; ++k) {
    const int e = static_cast<int>(threadIdx.x) + k * kThreads;
    const int i = down_columns ? e % kOrder : e / kOrder, j = down_columns ? e / kOrder : e % kOrder;
    const bool strict = kLower ? j < i : j > i;
    coupling[i][j] = strict && i < order && j < order ? t[i * l.t_row + j * l.t_col] : T(0);
  }
  if (threadIdx.x < kOrder) {
    const int i = static_cast<int>(threadIdx.x);
    T value = 0;
    if (i < order) value = l.unit ? T(1) : T(1) / t[i * (l.t_row + l.t_col)];
    reciprocal[i] = value;
  }
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const int row0 = warp * kRowsPerWarp;
  const std::int64_t rhs = static_cast<std::int64_t>(blockIdx.x) * kRhsPerBlock + lane;
  const bool active = rhs < l.rhs;  // inactive lanes solve zeros, for the barriers
  T* const first = static_cast<T*>(l.c) + rhs * l.c_rhs + row0 * l.c_element;
  // A lane's 8 rows as whole vectors where they are contiguous and aligned (B's columns on the left): a warp's scalar
  // loads each touched 32 sectors, 8 times over.
  const bool whole =
      l.c_element == 1 && row0 + kRowsPerWarp <= order && reinterpret_cast<std::uintptr_t>(first) % 16 == 0;
  const T alpha = static_cast<T>(l.alpha);
  T x[kRowsPerWarp];
  if (active && whole) {
    load_rows(x, first);
#pragma unroll
    for (int q = 0; q < kRowsPerWarp; ++q) x[q] *= alpha;
  } else {
    const T* c = first;
#pragma unroll
    for (int q = 0; q < kRowsPerWarp; ++q, c += l.c_element) x[q] = active && row0 + q < order ? alpha * *c : T(0);
  }
  __syncthreads();
  const int blocks = (order + kRowsPerWarp - 1) / kRowsPerWarp;
  for (int step = 0; step < blocks; ++step) {
    const int b = kLower ? step : blocks - 1 - step, buffer = step % 2;
    const bool solving = warp == b, updating = kLower ? warp > b : warp < b;
    // T's 8 x 8 block at this warp's rows and block b's columns (the diagonal one where solving), in registers before
    // anything waits on it: loaded where it is used, each load's latency stood between two steps of the solve.
    T block[kRowsPerWarp][kRowsPerWarp];
    if (solving || updating) {
#pragma unroll
      for (int q = 0; q < kRowsPerWarp; ++q) load_rows(block[q], &coupling[row0 + q][b * kRowsPerWarp]);
    }
    if (solving) {
      T inverse[kRowsPerWarp];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) inverse[r] = reciprocal[row0 + r];
#pragma unroll
      for (int r = kLower ? 0 : kRowsPerWarp - 1; kLower ? r < kRowsPerWarp : r >= 0; r += kLower ? 1 : -1) {
        x[r] *= inverse[r];
#pragma unroll
        for (int q = 0; q < kRowsPerWarp; ++q)
          if (kLower ? q > r : q < r) x[q] -= block[q][r] * x[r];
        solved[buffer][r][lane] = x[r];
      }
    }
    __syncthreads();
    if (updating) {
      T from_b[kRowsPerWarp];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) from_b[r] = solved[buffer][r][lane];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
        for (int q = 0; q < kRowsPerWarp; ++q) x[q] -= block[q][r] * from_b[r];
    }
  }
  if (!active) return;
  if (whole) {
    store_rows(first, x);
    return;
  }
  T* c = first;
#pragma unroll
  for (int q = 0; q < kRowsPerWarp; ++q, c += l.c_element)
    if (row0 + q < order) *c = x[q];
}

// Lets the kernel for T, its triangle and order take T's shared memory where that passes the default: from the plan
// before any capture (prepare_triangular_solve), so that no capture holds the call; a launch that finds it unset sets
// it.
template <class T, bool kLower, int kOrder>
cudaError_t allow_shared_memory() {
  return allow_shared<triangular_solve_kernel<T, kLower, kOrder>>(kCouplingBytes<T, kOrder>);
}

template <class T, int kOrder>
cudaError_t allow_both_triangles() {
  const cudaError_t lower = allow_shared_memory<T, true, kOrder>();
  return lower != cudaSuccess ? lower : allow_shared_memory<T, false, kOrder>();
}

template <class T, bool kLower, int kOrder>
cudaError_t launch_solve(const TriangularSolveLaunch& launch, unsigned grid, cudaStream_t stream) {
  if (const cudaError_t allowed = allow_shared_memory<T, kLower, kOrder>(); allowed != cudaSuccess) return allowed;
  return launch_chained(triangular_solve_kernel<T, kLower, kOrder>, dim3(grid), dim3(kSolveThreads<kOrder>),
                        kCouplingBytes<T, kOrder>, stream, launch);
}

template <class T, int kOrder>
cudaError_t solve(const TriangularSolveLaunch& launch, unsigned grid, cudaStream_t stream) {
  return launch.lower ? launch_solve<T, true, kOrder>(launch, grid, stream)
                      : launch_solve<T, false, kOrder>(launch, grid, stream);
}

template <class T>
cudaError_t solve(const TriangularSolveLaunch& launch, cudaStream_t stream) {
  const std::int64_t blocks = (launch.rhs + kRhsPerBlock - 1) / kRhsPerBlock;
  if (blocks > std::int64_t{1} << 31) return cudaErrorInvalidValue;
  const auto grid = static_cast<unsigned>(blocks);
  if constexpr (sizeof(T) == 8) {
    return solve<T, kSmallOrder>(launch, grid, stream);
  } else {
    return launch.order <= kSmallOrder
               ? solve<T, kSmallOrder>(launch, grid, stream)
               : solve<T, static_cast<int>(triangular_solve_order(false))>(launch, grid, stream);
  }
}

}  // namespace

cudaError_t prepare_triangular_solve(bool f64) {
  if (f64) return allow_both_triangles<double, kSmallOrder>();
  const cudaError_t small = allow_both_triangles<float, kSmallOrder>();
  return small != cudaSuccess ? small : allow_both_triangles<float, static_cast<int>(triangular_solve_order(false))>();
}

cudaError_t launch_triangular_solve(const TriangularSolveLaunch& launch, cudaStream_t stream) {
  if (launch.order < 0 || launch.order > triangular_solve_order(launch.f64) || launch.rhs < 0) {
    return cudaErrorInvalidValue;
  }
  if (launch.order == 0 || launch.rhs == 0) return cudaSuccess;
  return launch.f64 ? solve<double>(launch, stream) : solve<float>(launch, stream);
}

}  // namespace accel::blas
