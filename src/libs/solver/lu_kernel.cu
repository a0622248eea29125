#include <algorithm>
#include <cfloat>
#include <climits>

#include "core/chained_launch.cuh"
#include "libs/solver/lu_kernel.hpp"

namespace accel::solver {
namespace {

constexpr int kPanel = 32;        // columns factored by one block at a time
constexpr int kTile = 16;         // columns of the trailing matrix per block of the update
constexpr int kMaxThreads = 256;  // a row per thread up to kSmallLuMaxN
// What a launch may take without raising the attribute: 48 KiB in all, less the panel kernel's static arrays (under
// 1 KiB).
constexpr std::size_t kDefaultDynamicBytes = 47 * 1024;

template <class T>
struct Real;
template <>
struct Real<float> {
  static __device__ float magnitude(float x) { return fabsf(x); }
  static __device__ float reciprocal(float x) { return __frcp_rn(x); }
  static constexpr float kSafeMinimum = FLT_MIN;
};
template <>
struct Real<double> {
  static __device__ double magnitude(double x) { return fabs(x); }
  static __device__ double reciprocal(double x) { return __drcp_rn(x); }
  static constexpr double kSafeMinimum = DBL_MIN;
};

__device__ unsigned warp_max(unsigned x) {
#if __CUDA_ARCH__ >= 800
  return __reduce_max_sync(~0u, x);
#else
  for (int offset = 16; offset > 0; offset /= 2) x = max(x, __shfl_xor_sync(~0u, x, offset));
  return x;
#endif
}

__device__ unsigned warp_min(unsigned x) { return ~warp_max(~x); }

// A row's claim to be the pivot: its magnitude's bits (a non-negative floating-point number orders as its bits do),
// high then low word, and the row. The largest magnitude wins, the first row on a tie, as LAPACK's i?amax.
struct Candidate {
  unsigned high = 0;
  unsigned low = 0;
  unsigned row = UINT_MAX;
};

__device__ Candidate claim(float magnitude, int row) { return {__float_as_uint(magnitude), 0, unsigned(row)}; }
__device__ Candidate claim(double magnitude, int row) {
  const auto bits = static_cast<unsigned long long>(__double_as_longlong(magnitude));
  return {static_cast<unsigned>(bits >> 32), static_cast<unsigned>(bits), unsigned(row)};
}

__device__ bool beats(const Candidate& x, const Candidate& y) {
  if (x.high != y.high) return x.high > y.high;
  if (x.low != y.low) return x.low > y.low;
  return x.row < y.row;
}

// The warp's best claim, by three reductions of one instruction each (on sm_80 and later).
__device__ Candidate warp_best(const Candidate& mine) {
  Candidate best;
  best.high = warp_max(mine.high);
  best.low = warp_max(mine.high == best.high ? mine.low : 0u);
  best.row = warp_min(mine.high == best.high && mine.low == best.low ? mine.row : UINT_MAX);
  return best;
}

// One block per matrix: the panel of rows j0..n and columns j0..j0+w, factored column by column (LAPACK's getf2).
// Thread t holds a row of the panel in registers (n <= kSmallLuMaxN rows, a row per thread) and where that row is
// now: an interchange swaps two threads' positions, not their rows. The row is shifted as it is reduced, so the
// column being factored is always row[0]; L's multipliers go to shared memory, in the thread's column. Only the
// pivot's row is shared each column (two barriers: after the pivot's search, after its row is written), and each
// thread writes its row where it ended. Few instructions a column matter more than anything here: one warp per small
// matrix issues them one after the other, so the column loop is not unrolled (unrolled, every instruction is fetched
// once and the warp waits on the instruction cache, as measured on the H100).
template <class T>
__global__ void factor_panel(T* a, int n, std::int64_t lda, std::int64_t stride, int j0, int w, std::int32_t* ipiv,
                             std::int32_t* infos) {
  __shared__ alignas(16) T pivot_row[kPanel];
  __shared__ Candidate warp_bests[kMaxThreads / 32];
  extern __shared__ double shared[];
  T* multipliers = reinterpret_cast<T*>(shared);  // column i of thread t at [i * blockDim.x + t]
  follow_chain();
  const int m = n - j0, t = threadIdx.x, threads = blockDim.x;
  T* top = a + blockIdx.x * stride + std::int64_t{j0} * lda + j0;
  std::int32_t* pivots = ipiv + blockIdx.x * std::int64_t{n} + j0;
  std::int32_t* info = infos + blockIdx.x;

  int position = t < m ? t : INT_MAX;  // no row: never a candidate, never updated
  T row[kPanel];
#pragma unroll
  for (int c = 0; c < kPanel; ++c) row[c] = t < m && c < w ? top[c * lda + t] : T(0);
  std::int32_t first_zero = 0;  // thread 0's: it alone reads and writes the info
  if (t == 0) first_zero = j0 == 0 ? 0 : *info;

  const int warps = (threads + 31) / 32;
#pragma unroll 1
  for (int i = 0; i < w; ++i) {
    const bool open = position >= i && position != INT_MAX;
    Candidate pivot = warp_best(open ? claim(Real<T>::magnitude(row[0]), position) : Candidate{});
    if (warps > 1 && t % 32 == 0) warp_bests[t / 32] = pivot;
    __syncthreads();  // and every row has read the pivot's row of the column before
    if (warps > 1) {
      pivot = warp_bests[0];
      for (int k = 1; k < warps; ++k) {
        if (beats(warp_bests[k], pivot)) pivot = warp_bests[k];
      }
    }
    // Row i always claims, so the pivot is a row of the panel; a zero column has row i win (the first of equals), so
    // nothing is interchanged, as getf2 does.
    const int p = static_cast<int>(pivot.row);
    const bool chosen = position == p;
    if (chosen) {
#pragma unroll
      for (int c = 0; c < kPanel; ++c) pivot_row[c] = row[c];
    }
    if (t == 0) {
      pivots[i] = j0 + p + 1;
      if ((pivot.high | pivot.low) == 0 && first_zero == 0) first_zero = j0 + i + 1;
    }
    if (position == i) position = p;
    if (chosen) position = i;
    __syncthreads();
    if (position > i && position != INT_MAX) {
      // L's multiplier and the rank-1 update of the row; a zero pivot leaves the column unscaled, as getf2 does.
      const T value = pivot_row[0];
      T l = row[0];
      if (value != T(0)) {
        l = Real<T>::magnitude(value) >= Real<T>::kSafeMinimum ? l * Real<T>::reciprocal(value) : l / value;
      }
      multipliers[i * threads + t] = l;
#pragma unroll
      for (int c = 0; c + 1 < kPanel; ++c) row[c] = row[c + 1] - l * pivot_row[c + 1];
    }
  }
  if (t == 0) *info = first_zero;
  if (position == INT_MAX) return;
  for (int c = 0; c < min(position, w); ++c) top[c * lda + position] = multipliers[c * threads + t];
#pragma unroll
  for (int k = 0; k < kPanel; ++k) {
    if (position + k < w) top[std::int64_t{position + k} * lda + position] = row[k];
  }
}

// Blocks over (matrix, column tile) outside the panel just factored, a row of the tile per thread, in registers.
// Each applies the panel's interchanges to rows j0..n of its kTile columns; a tile right of the panel then solves
// L11 U12 = A12 for its part of U's block row (by the first warp, whose lanes hold rows 0..w, L11's row in each lane)
// and updates its part of the trailing matrix, A22 -= L21 U12 (L21's row in each thread's registers, U12 in shared
// memory). Every load from global memory is issued before its first use: the panel's results are in L2, hundreds of
// cycles away, and a loop waiting on each would spend its time there.
template <class T>
__global__ void update_around_panel(T* a, int n, std::int64_t lda, std::int64_t stride, int j0, int w,
                                    const std::int32_t* ipiv, int left_tiles) {
  __shared__ alignas(16) T u12[kPanel * kTile];  // row k of U12 at [k * kTile]
  follow_chain();
  const int m = n - j0, r = threadIdx.x;
  T* matrix = a + blockIdx.x * stride;
  const std::int32_t* pivots = ipiv + blockIdx.x * std::int64_t{n} + j0;
  const bool left = static_cast<int>(blockIdx.y) < left_tiles;
  const int first = left ? blockIdx.y * kTile : j0 + w + (blockIdx.y - left_tiles) * kTile;
  const int columns = min(kTile, (left ? j0 : n) - first);

  // Where row r comes from: the panel's interchanges undone from the last.
  int from = r;
  {
    int swapped_with[kPanel];
#pragma unroll
    for (int i = 0; i < kPanel; ++i) swapped_with[i] = i < w ? pivots[i] - 1 - j0 : i;
#pragma unroll
    for (int i = kPanel - 1; i >= 0; --i) from = from == i ? swapped_with[i] : from == swapped_with[i] ? i : from;
  }
  T row[kTile];
#pragma unroll
  for (int c = 0; c < kTile; ++c) row[c] = r < m && c < columns ? matrix[(first + c) * lda + j0 + from] : T(0);
  __syncthreads();  // every row read before any is written back

  if (!left) {
    if (r < 32) {
      T l11_row[kPanel];
#pragma unroll
      for (int k = 0; k < kPanel; ++k) l11_row[k] = k < r && r < w ? matrix[(j0 + k) * lda + j0 + r] : T(0);
#pragma unroll
      for (int k = 0; k < kPanel; ++k) {
#pragma unroll
        for (int c = 0; c < kTile; ++c) row[c] -= l11_row[k] * __shfl_sync(~0u, row[c], k);
      }
      if (r < w) {
#pragma unroll
        for (int c = 0; c < kTile; ++c) u12[r * kTile + c] = row[c];
      }
    }
    __syncthreads();
    if (r >= w && r < m) {
      T l21_row[kPanel];
#pragma unroll
      for (int k = 0; k < kPanel; ++k) l21_row[k] = k < w ? matrix[(j0 + k) * lda + j0 + r] : T(0);
#pragma unroll
      for (int k = 0; k < kPanel; ++k) {
#pragma unroll
        for (int c = 0; c < kTile; ++c) row[c] -= l21_row[k] * u12[k * kTile + c];
      }
    }
  }
  if (r < m) {
#pragma unroll
    for (int c = 0; c < kTile; ++c) {
      if (c < columns) matrix[(first + c) * lda + j0 + r] = row[c];
    }
  }
}

// The panel's multipliers: beyond the default 48 KiB in f64 at n = kSmallLuMaxN.
template <class T>
std::size_t multiplier_bytes(int w, int threads) {
  return std::size_t(w) * threads * sizeof(T);
}

}  // namespace

template <class T>
cudaError_t launch_small_lu(T* a, std::int64_t n, std::int64_t lda, std::int64_t stride, std::int64_t batch,
                            std::int32_t* ipiv, std::int32_t* infos, cudaStream_t stream) {
  if (n < 1 || n > kSmallLuMaxN || batch < 1 || batch > INT_MAX) return cudaErrorInvalidValue;
  const int size = static_cast<int>(n);
  // Raised only where the first panel's multipliers need it (f64 past 160 rows), and then on every such request, not
  // once: the attribute is the current device's.
  const int first_threads = std::min(kMaxThreads, (size + 31) / 32 * 32);
  if (const std::size_t most = multiplier_bytes<T>(std::min(kPanel, size), first_threads);
      most > kDefaultDynamicBytes) {
    if (cudaError_t error =
            cudaFuncSetAttribute(factor_panel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(most));
        error != cudaSuccess) {
      return error;
    }
  }
  for (int j0 = 0; j0 < size; j0 += kPanel) {
    const int w = std::min(kPanel, size - j0), m = size - j0;
    const int threads = std::min(kMaxThreads, (m + 31) / 32 * 32);
    if (cudaError_t error =
            launch_chained(factor_panel<T>, dim3(static_cast<unsigned>(batch)), threads,
                           multiplier_bytes<T>(w, threads), stream, a, size, lda, stride, j0, w, ipiv, infos);
        error != cudaSuccess) {
      return error;
    }
    const int left_tiles = (j0 + kTile - 1) / kTile, right_tiles = (m - w + kTile - 1) / kTile;
    if (left_tiles + right_tiles == 0) continue;
    if (cudaError_t error = launch_chained(
            update_around_panel<T>, dim3(static_cast<unsigned>(batch), static_cast<unsigned>(left_tiles + right_tiles)),
            threads, 0, stream, a, size, lda, stride, j0, w, ipiv, left_tiles);
        error != cudaSuccess) {
      return error;
    }
  }
  return cudaSuccess;
}

template cudaError_t launch_small_lu<float>(float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                            std::int32_t*, std::int32_t*, cudaStream_t);
template cudaError_t launch_small_lu<double>(double*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                             std::int32_t*, std::int32_t*, cudaStream_t);

}  // namespace accel::solver
