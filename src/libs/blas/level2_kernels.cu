// Level-2 kernels of our own (src/libs/blas/blas_kernels.hpp): Symv, Gemv of small matrices and Ger, each launched
// chained (core/chained_launch.cuh) and waiting for the kernel before it first thing.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/chained_launch.cuh"
#include "libs/blas/kernel_common.cuh"

namespace accel::blas {
namespace {

using namespace kernels;

// -- Symv ---------------------------------------------------------------------------------------------------------

constexpr int kTile = 64;
// The most workspace a batched Symv takes at once; a larger batch runs in launches of fewer members.
constexpr std::uint64_t kSymvWorkspaceBudget = std::uint64_t{64} << 20;
constexpr int kGroups = kThreads / kTile;  // thread groups of a tile, each a quarter of its columns (or rows)
constexpr int kPerGroup = kTile / kGroups;

template <class T>
struct SymvTyped : MatrixVectorTyped<T> {
  bool lower;
  std::int64_t n, first_member, blocks;
  T* partial;  // per member of the launch: blocks slots of n sums
};

// Block (I, J, m): the tile of rows I and columns J of member first_member + m, if in the stored triangle. Its rows'
// sums go to slot J of rows I; off the diagonal, its columns' sums (A's transpose) go to slot I of rows J. Every row
// gets each slot from exactly one tile.
template <class T>
__global__ void __launch_bounds__(kThreads) symv_tiles(SymvTyped<T> p) {
  wait_for_prior_kernel();
  const int bi = blockIdx.x, bj = blockIdx.y;
  if (p.lower ? bi < bj : bi > bj) return;
  const std::int64_t member = p.first_member + blockIdx.z;
  const T* a = p.a + member * p.stride_a;
  const T* x = p.x + member * p.stride_x;
  T* partial = p.partial + blockIdx.z * p.blocks * p.n;

  __shared__ T tile[kTile][kTile + 1];
  __shared__ T x_rows[kTile], x_cols[kTile];
  __shared__ T row_part[kGroups][kTile], col_part[kGroups][kTile];
  const int t = threadIdx.x, lane = t % kTile, group = t / kTile;
  const std::int64_t row0 = static_cast<std::int64_t>(bi) * kTile, col0 = static_cast<std::int64_t>(bj) * kTile;
  const bool diagonal = bi == bj;
  const std::int64_t row = row0 + lane;
#pragma unroll  // every load in flight at once: a small matrix's tiles are bound by one load's latency
  for (int k = 0; k < kPerGroup; ++k) {
    const int c = k * kGroups + group;
    const std::int64_t col = col0 + c;
    T value = 0;
    if (row < p.n && col < p.n && (!diagonal || stored(p.lower, lane, c))) value = a[row + col * p.lda];
    tile[lane][c] = value;
  }
  if (t < kTile) {
    x_rows[t] = row0 + t < p.n ? x[vector_at(row0 + t, p.incx, p.n)] : T(0);
  } else if (t < 2 * kTile) {
    const std::int64_t col = col0 + t - kTile;
    x_cols[t - kTile] = col < p.n ? x[vector_at(col, p.incx, p.n)] : T(0);
  }
  __syncthreads();
  if (diagonal) {
    for (int k = 0; k < kPerGroup; ++k) {
      const int c = k * kGroups + group;
      if (!stored(p.lower, lane, c)) tile[lane][c] = tile[c][lane];
    }
    __syncthreads();
  }
  T row_sum = 0;
#pragma unroll
  for (int k = 0; k < kPerGroup; ++k) row_sum += tile[lane][group * kPerGroup + k] * x_cols[group * kPerGroup + k];
  row_part[group][lane] = row_sum;
  if (!diagonal) {
    T col_sum = 0;
#pragma unroll
    for (int k = 0; k < kPerGroup; ++k) col_sum += tile[group * kPerGroup + k][lane] * x_rows[group * kPerGroup + k];
    col_part[group][lane] = col_sum;
  }
  __syncthreads();
  if (t < kTile) {
    if (row0 + t < p.n) {
      T sum = 0;
      for (int g = 0; g < kGroups; ++g) sum += row_part[g][t];
      partial[bj * p.n + row0 + t] = sum;
    }
  } else if (!diagonal && t < 2 * kTile) {
    const int c = t - kTile;
    if (col0 + c < p.n) {
      T sum = 0;
      for (int g = 0; g < kGroups; ++g) sum += col_part[g][c];
      partial[bi * p.n + col0 + c] = sum;
    }
  }
}

template <class T>
__global__ void symv_finish(SymvTyped<T> p) {
  wait_for_prior_kernel();
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= p.n) return;
  const T* partial = p.partial + blockIdx.y * p.blocks * p.n;
  T sum = 0;
  for (std::int64_t slot = 0; slot < p.blocks; ++slot) sum += partial[slot * p.n + i];
  T& out = p.y[(p.first_member + blockIdx.y) * p.stride_y + vector_at(i, p.incy, p.n)];
  out = p.beta == T(0) ? p.alpha * sum : p.alpha * sum + p.beta * out;
}

std::int64_t tiles_of(std::int64_t n) { return (n + kTile - 1) / kTile; }

template <class T>
cudaError_t symv(const SymvLaunch& l, std::int64_t members_at_once, void* workspace, cudaStream_t stream) {
  const std::int64_t blocks = tiles_of(l.n);
  if (blocks > kMaxGridExtent || members_at_once < 1 || members_at_once > kMaxGridExtent) return cudaErrorInvalidValue;
  SymvTyped<T> p{MatrixVectorTyped<T>::of(l), l.lower, l.n, 0, blocks, static_cast<T*>(workspace)};
  const auto tiles = static_cast<unsigned>(blocks);
  for (std::int64_t first = 0; first < l.batch; first += members_at_once) {
    p.first_member = first;
    const auto members = static_cast<unsigned>(std::min(members_at_once, l.batch - first));
    if (cudaError_t launched = launch_chained(symv_tiles<T>, dim3(tiles, tiles, members), dim3(kThreads), 0, stream, p);
        launched != cudaSuccess)
      return launched;
    if (cudaError_t launched =
            launch_chained(symv_finish<T>, dim3(static_cast<unsigned>((l.n + kThreads - 1) / kThreads), members),
                           dim3(kThreads), 0, stream, p);
        launched != cudaSuccess)
      return launched;
  }
  return cudaSuccess;
}

// -- Gemv of small matrices -----------------------------------------------------------------------------------------

// The plain form's block takes kGemvRows rows of A, its threads split n into kThreads / kGemvRows column chunks. Few
// rows (a long sum each) leave most SMs idle at 32 rows a block, so such a launch takes 8 rows a block in 32 chunks:
// four times the blocks, each warp still reading whole 32-byte sectors (8 rows of 4 columns).
constexpr int kGemvRows = 32;
constexpr int kGemvFewRows = 8;
constexpr unsigned kGemvBlocksForFewRows = 256;   // below this many blocks of 32 rows, a launch takes 8 rows a block
constexpr std::int64_t kGemvSumForFewRows = 128;  // ... where each row's sum has at least this many terms

// Elements of type T, sums and scalars of type C (f32 for 16-bit elements).
template <class T, class C>
struct GemvTyped : MatrixVectorTyped<T, C> {
  std::int64_t m, n;
};

// What y's element gets: alpha times the sum (A and x unread when alpha is 0, as in BLAS), plus beta y when beta is
// not 0 (y unread when it is), rounded to T once.
template <class T, class C>
__device__ void finish_gemv(const GemvTyped<T, C>& p, T* y, std::int64_t i, std::int64_t length, C sum) {
  T& out = y[vector_at(i, p.incy, length)];
  out = static_cast<T>(p.alpha * sum + (p.beta != C(0) ? p.beta * static_cast<C>(out) : C(0)));
}

// Element (i, j) of a Gemv's A.
struct GeneralElement {
  template <class T>
  __device__ T operator()(const T* a, std::int64_t lda, std::int64_t i, std::int64_t j) const {
    return a[i + j * lda];
  }
};

// Element (i, j) of a Symv's A: from the stored triangle, mirrored across the diagonal where (i, j) lies outside it.
struct SymmetricElement {
  bool lower;
  template <class T>
  __device__ T operator()(const T* a, std::int64_t lda, std::int64_t i, std::int64_t j) const {
    return (lower ? i >= j : i <= j) ? a[i + j * lda] : a[j + i * lda];
  }
};

// y = alpha A x + beta y: block (I, member) takes rows I of Rows, its threads' columns in kThreads / Rows chunks, each
// warp's rows read coalesced; the chunks' sums are added in a fixed order.
template <class T, class C, int Rows, class Element>
__global__ void __launch_bounds__(kThreads) gemv_plain(GemvTyped<T, C> p, Element element) {
  wait_for_prior_kernel();
  constexpr int kChunks = kThreads / Rows;
  __shared__ C sums[kChunks][Rows];
  const std::int64_t member = blockIdx.y;
  const T* a = p.a + member * p.stride_a;
  const T* x = p.x + member * p.stride_x;
  const int lane = threadIdx.x % Rows, chunk = threadIdx.x / Rows;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * Rows + lane;
  C sum = 0;
  if (row < p.m && p.alpha != C(0))
    for (std::int64_t j = chunk; j < p.n; j += kChunks)
      sum += static_cast<C>(element(a, p.lda, row, j)) * static_cast<C>(x[vector_at(j, p.incx, p.n)]);
  sums[chunk][lane] = sum;
  __syncthreads();
  if (chunk != 0 || row >= p.m) return;
  for (int c = 1; c < kChunks; ++c) sum += sums[c][lane];
  finish_gemv(p, p.y + member * p.stride_y, row, p.m, sum);
}

// y = alpha Aᵀ x + beta y: a warp per column of A (an element of y), its lanes striding down the column.
template <class T, class C>
__global__ void __launch_bounds__(kThreads) gemv_transposed(GemvTyped<T, C> p) {
  wait_for_prior_kernel();
  const std::int64_t member = blockIdx.y;
  const int lane = threadIdx.x % 32;
  const std::int64_t column = static_cast<std::int64_t>(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
  if (column >= p.n) return;
  const T* a = p.a + member * p.stride_a + column * p.lda;
  const T* x = p.x + member * p.stride_x;
  C sum = 0;
  if (p.alpha != C(0))
    for (std::int64_t i = lane; i < p.m; i += 32)
      sum += static_cast<C>(a[i]) * static_cast<C>(x[vector_at(i, p.incx, p.m)]);
  sum = warp_sum_to_first_lane(sum);
  if (lane == 0) finish_gemv(p, p.y + member * p.stride_y, column, p.n, sum);
}

template <class T, class C, class Element>
cudaError_t launch_plain(const GemvTyped<T, C>& p, unsigned members, Element element, cudaStream_t stream) {
  const auto blocks_of = [&](int rows) { return static_cast<unsigned>((p.m + rows - 1) / rows); };
  if (blocks_of(kGemvRows) * members < kGemvBlocksForFewRows && p.n >= kGemvSumForFewRows)
    return launch_chained(gemv_plain<T, C, kGemvFewRows, Element>, dim3(blocks_of(kGemvFewRows), members),
                          dim3(kThreads), 0, stream, p, element);
  return launch_chained(gemv_plain<T, C, kGemvRows, Element>, dim3(blocks_of(kGemvRows), members), dim3(kThreads), 0,
                        stream, p, element);
}

template <class T, class C = T>
cudaError_t gemv(const GemvLaunch& l, cudaStream_t stream) {
  const GemvTyped<T, C> p{MatrixVectorTyped<T, C>::of(l), l.m, l.n};
  const auto members = static_cast<unsigned>(l.batch);
  if (l.transpose) {
    constexpr std::int64_t kColumnsPerBlock = kThreads / 32;
    return launch_chained(gemv_transposed<T, C>,
                          dim3(static_cast<unsigned>((l.n + kColumnsPerBlock - 1) / kColumnsPerBlock), members),
                          dim3(kThreads), 0, stream, p);
  }
  return launch_plain(p, members, GeneralElement{}, stream);
}

// A small Symv as a plain Gemv of the symmetric matrix its triangle stands for: one launch, no workspace.
template <class T>
cudaError_t symv_by_rows(const SymvLaunch& l, cudaStream_t stream) {
  return launch_plain(GemvTyped<T, T>{MatrixVectorTyped<T>::of(l), l.n, l.n}, static_cast<unsigned>(l.batch),
                      SymmetricElement{l.lower}, stream);
}

// -- Ger --------------------------------------------------------------------------------------------------------------

// Thread (i, J, member): row i of columns J, a warp's 32 rows of a column read coalesced (ger_member); the grid strides
// over members past its z extent.
template <class T>
__global__ void __launch_bounds__(kThreads) ger_kernel(GerTyped<T> p) {
  wait_for_prior_kernel();
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (row >= p.m) return;
  for (std::int64_t member = blockIdx.z; member < p.batch; member += gridDim.z) ger_member(p, row, member);
}

template <class T>
cudaError_t ger(const GerLaunch& l, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((l.m + kThreads - 1) / kThreads),
                  static_cast<unsigned>(std::min<std::int64_t>((l.n + kGerColumns - 1) / kGerColumns, kMaxGridExtent)),
                  static_cast<unsigned>(std::min(l.batch, kMaxGridExtent)));
  return launch_chained(ger_kernel<T>, grid, dim3(kThreads), 0, stream, GerTyped<T>::of(l));
}

}  // namespace

bool small_gemv(std::int64_t m, std::int64_t n, bool transpose, std::int64_t batch) {
  return m > 0 && n > 0 && m * n <= kSmallGemvElements && (transpose ? m : n) <= kSmallGemvSum && batch >= 1 &&
         batch <= kMaxGridExtent;
}

cudaError_t launch_small_gemv(const GemvLaunch& launch, cudaStream_t stream) {
  if (!small_gemv(launch.m, launch.n, launch.transpose, launch.batch)) return cudaErrorInvalidValue;
  switch (launch.element) {
    case VectorElement::f64: return gemv<double>(launch, stream);
    case VectorElement::f16: return gemv<__half, float>(launch, stream);
    case VectorElement::bf16: return gemv<__nv_bfloat16, float>(launch, stream);
    case VectorElement::f32: break;
  }
  return gemv<float>(launch, stream);
}

cudaError_t launch_ger(const GerLaunch& launch, cudaStream_t stream) {
  if (launch.m == 0 || launch.n == 0 || launch.batch == 0 || launch.alpha == 0.0) return cudaSuccess;
  return launch.f64 ? ger<double>(launch, stream) : ger<float>(launch, stream);
}

SymvBatching symv_batching(std::int64_t n, bool f64, std::int64_t batch) {
  if (n <= kSmallSymvOrder && batch <= kMaxGridExtent) return {.members_at_once = batch, .by_rows = true};
  const std::uint64_t member = static_cast<std::uint64_t>(tiles_of(n) * n) * (f64 ? sizeof(double) : sizeof(float));
  const std::int64_t fit = member == 0 ? batch : static_cast<std::int64_t>(kSymvWorkspaceBudget / member);
  const std::int64_t members = std::max<std::int64_t>(1, std::min({fit, batch, kMaxGridExtent}));
  return {.members_at_once = members, .workspace_bytes = member * static_cast<std::uint64_t>(members)};
}

cudaError_t launch_symv(const SymvLaunch& launch, const SymvBatching& batching, void* workspace, cudaStream_t stream) {
  if (launch.n == 0 || launch.batch == 0) return cudaSuccess;
  const bool f64 = launch.element == VectorElement::f64;
  if (batching.by_rows) return f64 ? symv_by_rows<double>(launch, stream) : symv_by_rows<float>(launch, stream);
  return f64 ? symv<double>(launch, batching.members_at_once, workspace, stream)
             : symv<float>(launch, batching.members_at_once, workspace, stream);
}

}  // namespace accel::blas
