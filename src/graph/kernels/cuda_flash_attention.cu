// The tensor-core attention kernel for f16/bf16 and head_dim 32, 64 or 128, flash-attention style.
//
// A CTA of 4 warps takes 64 query rows of one (sequence, head); each warp owns 16 rows and keeps their Q fragments,
// the running softmax state and the output accumulators in registers. Key/value tiles of 32 rows stream through
// shared memory in two stages (cp.async, zero-filled past the sequence's end). Per tile a warp computes
// S = Q K^T with mma.sync m16n8k16 (float accumulation), updates the online softmax in float in the log2 domain,
// and feeds P, rounded to the storage type, straight from the S accumulators (whose layout is the next mma's A
// layout) into O += P V, V's fragments coming from ldmatrix.trans. Grouped-query heads read their key/value head's
// columns. A causal CTA streams the key tiles up to its last query row only and masks each row's later keys; a
// sliding-window CTA streams the tiles within the window of one of its rows only and masks each row's keys outside
// its window; a tile whose keys every row of the CTA may see is not masked at all. A tile whose keys are all masked for
// a row leaves the row's state as it was (before the row's first valid key its maximum stays -inf: the exponentials are
// then taken against 0 and give zeros).
#include "graph/kernels/cuda_attention.cuh"
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_mma.cuh"

namespace accel::graph::cuda::detail {
namespace {

constexpr int kRowsPerCta = 64;

// Keys per shared-memory tile, and the CTAs an SM should hold (which caps the registers a thread may use). Chosen
// on the H200 (docs/PERFORMANCE.md §42): tiles of 32 keys waste fewer products past a short sequence's end than 64
// and need fewer registers; head_dim 32 at 80 registers (6 CTAs) ran 4 % faster than at 124 (64 keys), head_dim 64 at
// 96 (5 CTAs, a few bytes spilled) 2 % faster than at 133; head_dim 128 is held at 168 (3 CTAs), where the masks'
// fast path below had taken it to 202. For head_dim 128, 32 keys also keep both stages of K and V within 48 KiB of
// static shared memory.
__host__ __device__ constexpr int keys_per_tile(int) { return 32; }
__host__ __device__ constexpr int ctas_per_sm(int head_dim) { return head_dim == 32 ? 6 : (head_dim == 64 ? 5 : 3); }

// 2^x by the special-function unit (ex2.approx, flushing denormals): P is rounded to f16/bf16 next, so its 2^-22
// relative error is far below what the rounding costs; exp2f's exact form took extra instructions per element.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* shared) {
  const auto address = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// 16 bytes from global to shared, or 16 zero bytes when !valid (cp.async's source size 0).
__device__ __forceinline__ void copy16(void* shared, const void* global, bool valid) {
  const auto address = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(valid ? 16 : 0));
}

template <class T, int D>
__global__ void __launch_bounds__(128, ctas_per_sm(D)) flash_attention_kernel(AttentionArgs args, int tiles) {
  // Rows padded by 16 bytes: the 8 rows one ldmatrix or fragment load touches then fall on distinct banks.
  constexpr int kStride = D + 8;
  constexpr int kKeysPerTile = keys_per_tile(D);
  __shared__ alignas(16) T keys[2][kKeysPerTile * kStride];
  __shared__ alignas(16) T values[2][kKeysPerTile * kStride];

  const std::int64_t s = blockIdx.x / tiles;
  const auto [begin, length] = detail::sequence_span(args.offsets, s, args.rows, args.max_length);
  const int q0 = blockIdx.x % tiles * kRowsPerCta;
  if (q0 >= length) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int group = lane / 4, quad = lane % 4;  // the mma fragments' row group and column pair
  const std::int64_t column = std::int64_t{blockIdx.y} * D;
  const std::int64_t kv_column = std::int64_t{blockIdx.y / (args.heads / args.kv_heads)} * D;
  const T* q = static_cast<const T*>(args.q) + begin * args.q_stride + column;
  const T* k = static_cast<const T*>(args.k) + begin * args.k_stride + kv_column;
  const T* v = static_cast<const T*>(args.v) + begin * args.v_stride + kv_column;

  const int row0 = q0 + warp * 16 + group, row1 = row0 + 8;
  std::uint32_t qf[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const int c = kk * 16 + quad * 2;
    const auto at = [&](int row, int col) {
      return row < length ? *reinterpret_cast<const std::uint32_t*>(q + row * args.q_stride + col) : 0u;
    };
    qf[kk][0] = at(row0, c);
    qf[kk][1] = at(row1, c);
    qf[kk][2] = at(row0, c + 8);
    qf[kk][3] = at(row1, c + 8);
  }

  const auto load_tile = [&](int tile, int stage) {
    constexpr int kChunksPerRow = D / 8;
    for (int chunk = threadIdx.x; chunk < kKeysPerTile * kChunksPerRow; chunk += 128) {
      const int r = chunk / kChunksPerRow, c = chunk % kChunksPerRow * 8;
      const int key = tile * kKeysPerTile + r;
      const bool valid = key < length;
      const int source = valid ? key : 0;
      copy16(&keys[stage][r * kStride + c], k + source * args.k_stride + c, valid);
      copy16(&values[stage][r * kStride + c], v + source * args.v_stride + c, valid);
    }
    asm volatile("cp.async.commit_group;\n" ::);
  };

  const float scale = args.scale * 1.4426950408889634f;  // log2(e): exponentials as powers of 2
  float highest[2] = {-INFINITY, -INFINITY}, total[2] = {0, 0};
  float o[D / 8][4] = {};
  int keys_end = args.causal ? min(length, q0 + kRowsPerCta) : length;
  int first_tile = 0;
  if (args.window > 0) {
    keys_end = min(keys_end, q0 + kRowsPerCta + args.window);
    first_tile = max(0, q0 - args.window) / kKeysPerTile;
  }
  const int key_tiles = (keys_end + kKeysPerTile - 1) / kKeysPerTile;
  load_tile(first_tile, 0);
  for (int tile = first_tile; tile < key_tiles; ++tile) {
    const int stage = (tile - first_tile) % 2;
    if (tile + 1 < key_tiles) {
      load_tile(tile + 1, 1 - stage);
      asm volatile("cp.async.wait_group 1;\n" ::);
    } else {
      asm volatile("cp.async.wait_group 0;\n" ::);
    }
    __syncthreads();

    float sc[kKeysPerTile / 8][4] = {};
#pragma unroll
    for (int n = 0; n < kKeysPerTile / 8; ++n) {
      const T* key_row = &keys[stage][(n * 8 + group) * kStride + quad * 2];
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        mma<T>(sc[n], qf[kk], *reinterpret_cast<const std::uint32_t*>(key_row + kk * 16),
               *reinterpret_cast<const std::uint32_t*>(key_row + kk * 16 + 8));
    }

    // Whether every key of the tile is valid for every row of the CTA: then no element needs its mask.
    const int tile_first = tile * kKeysPerTile, tile_last = tile_first + kKeysPerTile - 1;
    const bool unmasked =
        tile_last < length && (!args.causal || tile_last <= q0) &&
        (args.window <= 0 || (q0 + kRowsPerCta - 1 - tile_first <= args.window && tile_last - q0 <= args.window));
    // Fragment element e of n-tile n is key n*8 + quad*2 + e%2 of row group (e < 2) or group + 8.
    if (!unmasked) {
#pragma unroll
      for (int n = 0; n < kKeysPerTile / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = tile_first + n * 8 + quad * 2 + e % 2;
          const int row = e < 2 ? row0 : row1;
          const bool valid =
              key < length && (!args.causal || key <= row) && (args.window <= 0 || abs(key - row) <= args.window);
          if (!valid) sc[n][e] = -INFINITY;
        }
    }
    // The maximum is taken of the raw scores (the scale is positive: flash_attention_fits), and each exponential
    // is one multiply-add and one ex2.
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < kKeysPerTile / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) tile_max[e / 2] = fmaxf(tile_max[e / 2], sc[n][e]);
    float correction[2], shift[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 1));
      tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 2));
      const float next = fmaxf(highest[h], tile_max[h] * scale);  // -inf until the row's first valid key
      correction[h] = next == -INFINITY ? 1.0f : exp2_approx(highest[h] - next);
      highest[h] = next;
      shift[h] = next == -INFINITY ? 0.0f : next;
      total[h] *= correction[h];
    }
#pragma unroll
    for (int n = 0; n < kKeysPerTile / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        sc[n][e] = exp2_approx(fmaf(sc[n][e], scale, -shift[e / 2]));
        total[e / 2] += sc[n][e];
      }
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[n][e] *= correction[e / 2];

#pragma unroll
    for (int kk = 0; kk < kKeysPerTile / 16; ++kk) {
      const std::uint32_t pf[4] = {pack(sc[2 * kk][0], sc[2 * kk][1], T{}), pack(sc[2 * kk][2], sc[2 * kk][3], T{}),
                                   pack(sc[2 * kk + 1][0], sc[2 * kk + 1][1], T{}),
                                   pack(sc[2 * kk + 1][2], sc[2 * kk + 1][3], T{})};
#pragma unroll
      for (int n = 0; n < D / 8; n += 2) {
        // Lanes 0-15 address keys kk*16 + 0..15 at columns n*8, lanes 16-31 the same keys at n*8 + 8.
        std::uint32_t b[4];
        ldmatrix_x4_trans(b, &values[stage][(kk * 16 + lane % 16) * kStride + n * 8 + lane / 16 * 8]);
        mma<T>(o[n], pf, b[0], b[1]);
        mma<T>(o[n + 1], pf, b[2], b[3]);
      }
    }
    __syncthreads();  // the next iteration's copies overwrite this stage
  }

  T* out = static_cast<T*>(args.out) + begin * args.out_stride + column;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    total[h] += __shfl_xor_sync(0xffffffffu, total[h], 1);
    total[h] += __shfl_xor_sync(0xffffffffu, total[h], 2);
    const int row = h == 0 ? row0 : row1;
    if (row >= length) continue;
    const float inverse = 1.0f / total[h];
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      *reinterpret_cast<std::uint32_t*>(out + row * args.out_stride + n * 8 + quad * 2) =
          pack(o[n][2 * h] * inverse, o[n][2 * h + 1] * inverse, T{});
  }
}

}  // namespace

bool flash_attention_fits(DType dtype, const AttentionArgs& args) {
  return (dtype == DType::f16 || dtype == DType::bf16) &&
         (args.head_dim == 32 || args.head_dim == 64 || args.head_dim == 128) && args.scale > 0 && aligned16(args.q) &&
         aligned16(args.k) && aligned16(args.v) && aligned16(args.out) && args.q_stride % 8 == 0 &&
         args.k_stride % 8 == 0 && args.v_stride % 8 == 0 && args.out_stride % 8 == 0;
}

cudaError_t launch_flash_attention(DType dtype, const AttentionArgs& args, cudaStream_t stream) {
  const int tiles = (args.max_length + kRowsPerCta - 1) / kRowsPerCta;
  if (args.sequences * tiles > 0x7fffffff) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(args.sequences * tiles), static_cast<unsigned>(args.heads));
  const auto launch = [&](auto kernel) {
    kernel<<<grid, 128, 0, stream>>>(args, tiles);
    return cudaGetLastError();
  };
  const auto by_head_dim = [&](auto element) {
    using T = decltype(element);
    if (args.head_dim == 32) return launch(flash_attention_kernel<T, 32>);
    if (args.head_dim == 64) return launch(flash_attention_kernel<T, 64>);
    return launch(flash_attention_kernel<T, 128>);
  };
  return dtype == DType::f16 ? by_head_dim(__half{}) : by_head_dim(__nv_bfloat16{});
}

}  // namespace accel::graph::cuda::detail
