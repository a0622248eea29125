// cuda::packed_attention: a tensor-core kernel where one fits (cuda_resident_attention.cu for short sequences,
// cuda_flash_attention.cu for any), else a generic kernel for any storage type and head_dim <= 128. Generic: a CTA
// takes 16 query rows of one (sequence, head), the sequences' CTAs laid end to end (packed_query_ctas), 4 rows per
// warp, and streams 32-key K/V tiles through shared memory in float; each lane scores one key of the tile against
// the warp's 4 queries and owns head_dim / 32 output columns of each, the softmax kept online (running maximum
// and sum) across tiles. Grouped-query heads read their key/value head's columns; a causal CTA streams only the
// tiles up to its last query and masks each query's later keys; a sliding-window CTA streams only the tiles
// within the window of one of its queries and masks each query's keys outside its own window. A query may find
// no valid key in a tile before its window: its state stays empty (maximum -inf, no correction) until one comes.
#include <algorithm>

#include "graph/kernels/cuda_attention.cuh"
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::graph::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kQueriesPerWarp = 4;
constexpr int kQueries = kWarps * kQueriesPerWarp;
constexpr int kKeys = 32;
constexpr int kMaxHeadDim = 128;

template <class T>
__global__ void __launch_bounds__(kWarps * 32) generic_attention_kernel(detail::AttentionArgs args) {
  __shared__ float query[kQueries][kMaxHeadDim];
  // One float of padding per row: lane j reading column c of row j then hits bank (j + c) % 32.
  __shared__ float keys[kKeys][kMaxHeadDim + 1];
  __shared__ float values[kKeys][kMaxHeadDim + 1];
  const auto [begin, length, q0] = detail::query_cta(args, blockIdx.x, kQueries);
  if (length == 0) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int d = args.head_dim;
  const std::int64_t column = std::int64_t{blockIdx.y} * d;
  const std::int64_t kv_column = std::int64_t{blockIdx.y / (args.heads / args.kv_heads)} * d;
  const T* q = static_cast<const T*>(args.q) + begin * args.q_stride + column;
  const T* k = static_cast<const T*>(args.k) + begin * args.k_stride + kv_column;
  const T* v = static_cast<const T*>(args.v) + begin * args.v_stride + kv_column;
  int keys_end = args.causal ? min(length, q0 + kQueries) : length;
  int keys_begin = 0;
  if (args.window > 0) {
    keys_end = min(keys_end, q0 + kQueries + args.window);
    keys_begin = max(0, q0 - args.window) / kKeys * kKeys;
  }
  // The scale goes into the queries once, in the log2 domain, so each score's exponent is one exp2f.
  const float scale = args.scale * 1.4426950408889634f;
  for (int i = threadIdx.x; i < kQueries * d; i += blockDim.x) {
    const int r = i / d, c = i % d;
    query[r][c] = q0 + r < length ? detail::to_float(q[(q0 + r) * args.q_stride + c]) * scale : 0.0f;
  }
  float highest[kQueriesPerWarp], total[kQueriesPerWarp] = {}, o[kQueriesPerWarp][kMaxHeadDim / 32] = {};
#pragma unroll
  for (int qi = 0; qi < kQueriesPerWarp; ++qi) highest[qi] = -INFINITY;

  for (int j0 = keys_begin; j0 < keys_end; j0 += kKeys) {
    __syncthreads();  // the previous tile is consumed (and, the first time, the queries are stored)
    for (int i = threadIdx.x; i < kKeys * d; i += blockDim.x) {
      const int r = i / d, c = i % d;
      const bool valid = j0 + r < length;
      keys[r][c] = valid ? detail::to_float(k[(j0 + r) * args.k_stride + c]) : 0.0f;
      values[r][c] = valid ? detail::to_float(v[(j0 + r) * args.v_stride + c]) : 0.0f;
    }
    __syncthreads();
    const int own_key = j0 + lane;
    float score[kQueriesPerWarp] = {};
    for (int c = 0; c < d; ++c) {
      const float key = keys[lane][c];
#pragma unroll
      for (int qi = 0; qi < kQueriesPerWarp; ++qi) score[qi] += query[warp * kQueriesPerWarp + qi][c] * key;
    }
    const int chunk = min(kKeys, keys_end - j0);
#pragma unroll
    for (int qi = 0; qi < kQueriesPerWarp; ++qi) {
      const int query = q0 + warp * kQueriesPerWarp + qi;
      const bool valid = own_key < length && (!args.causal || own_key <= query) &&
                         (args.window <= 0 || abs(own_key - query) <= args.window);
      const float next = fmaxf(highest[qi], detail::warp_max(valid ? score[qi] : -INFINITY));
      const float correction = next == -INFINITY ? 1.0f : exp2f(highest[qi] - next);
      const float p = valid ? exp2f(score[qi] - next) : 0.0f;
      total[qi] = total[qi] * correction + detail::warp_sum(p);
      highest[qi] = next;
#pragma unroll
      for (int e = 0; e < kMaxHeadDim / 32; ++e) o[qi][e] *= correction;
      for (int jj = 0; jj < chunk; ++jj) {
        const float pj = __shfl_sync(0xffffffffu, p, jj);
#pragma unroll
        for (int e = 0; e < kMaxHeadDim / 32; ++e)
          if (lane + 32 * e < d) o[qi][e] += pj * values[jj][lane + 32 * e];
      }
    }
  }
#pragma unroll
  for (int qi = 0; qi < kQueriesPerWarp; ++qi) {
    const int i = q0 + warp * kQueriesPerWarp + qi;
    if (i >= length) continue;
    T* out = static_cast<T*>(args.out) + (begin + i) * args.out_stride + column;
#pragma unroll
    for (int e = 0; e < kMaxHeadDim / 32; ++e)
      if (lane + 32 * e < d) out[lane + 32 * e] = detail::from_float<T>(o[qi][e] / total[qi]);
  }
}

}  // namespace

cudaError_t packed_attention(DType dtype, const void* q, std::int64_t q_stride, const void* k, std::int64_t k_stride,
                             const void* v, std::int64_t v_stride, const std::int32_t* offsets, std::int64_t sequences,
                             std::int64_t rows, std::int32_t max_length, int heads, int head_dim, float scale,
                             void* out, std::int64_t out_stride, cudaStream_t stream, int kv_heads, bool causal,
                             int window, const AttentionRotary* rotary) {
  if (kv_heads == 0) kv_heads = heads;
  if (head_dim <= 0 || head_dim > kMaxHeadDim || heads <= 0 || heads > 65535 || max_length < 0 || kv_heads <= 0 ||
      heads % kv_heads != 0 || window < 0)
    return cudaErrorInvalidValue;
  // No sequence is longer than the rows: what is sized by the longest sequence (the resident kernel's shared memory)
  // need not be larger.
  const auto longest = static_cast<std::int32_t>(std::min<std::int64_t>(max_length, rows));
  const detail::AttentionArgs args{q,       q_stride, k,        k_stride, v,   v_stride,   offsets,  sequences, rows,
                                   longest, heads,    head_dim, scale,    out, out_stride, kv_heads, causal,    window};
  const bool resident = detail::resident_attention_fits(dtype, args);
  if (rotary != nullptr) {
    if (rotary->positions == nullptr) return cudaErrorInvalidValue;
    if (!resident) return cudaErrorNotSupported;
  }
  if (sequences == 0 || longest == 0) return cudaSuccess;
  if (resident) return detail::launch_resident_attention(dtype, args, rotary ? *rotary : AttentionRotary{}, stream);
  if (detail::flash_attention_fits(dtype, args)) return detail::launch_flash_attention(dtype, args, stream);
  const std::int64_t ctas = detail::packed_query_ctas(rows, sequences, kQueries);
  if (ctas > 0x7fffffff) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(ctas), static_cast<unsigned>(heads));
  return detail::dispatch(dtype, [&](auto tag) {
    generic_attention_kernel<decltype(tag)><<<grid, kWarps * 32, 0, stream>>>(args);
    return cudaGetLastError();
  });
}

}  // namespace accel::graph::cuda
