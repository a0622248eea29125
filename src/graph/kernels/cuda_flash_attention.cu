// The tensor-core attention kernel for f16/bf16 and head_dim 32, 64 or 128, flash-attention style, for any
// sequence length.
//
// A CTA of 4 warps takes 64 query rows of one (sequence, head), the sequences' CTAs laid end to end
// (packed_query_ctas); each warp owns 16 rows (FlashRows, cuda_flash_tile.cuh). Key/value tiles of 32 rows stream
// through shared memory in two stages (cp.async, zero-filled past the sequence's end), and each warp takes a step
// over every tile one of its rows sees. Grouped-query heads read their key/value head's columns. A causal CTA streams
// the key tiles up to its last query row only, and each warp steps up to its own last row and masks its rows' later
// keys; a sliding-window CTA streams the tiles within the window of one of its rows only, and each warp masks its
// rows' keys outside their windows; a tile whose keys every row of a warp may see is not masked at all.
#include "core/chained_launch.cuh"
#include "graph/kernels/cuda_flash_tile.cuh"

namespace accel::graph::cuda::detail {
namespace {

constexpr int kRowsPerCta = 64;

// The CTAs an SM should hold, which caps the registers a thread may use. Chosen on the H200 (docs/PERFORMANCE.md §43):
// head_dim 32 at 80 registers (6 CTAs) ran 4 % faster than at 124 (with 64-key tiles), head_dim 64 at 96 (5 CTAs, a
// few bytes spilled) 2 % faster than at 133; head_dim 128 is held at 168 (3 CTAs), where the masks' fast path below had
// taken it to 202. Tiles are a warp's step of keys (kKeysPerStep), which for head_dim 128 also keeps both stages of K
// and V within 48 KiB of static shared memory.
__host__ __device__ constexpr int ctas_per_sm(int head_dim) { return head_dim == 32 ? 6 : (head_dim == 64 ? 5 : 3); }

template <class T, int D>
__global__ void __launch_bounds__(128, ctas_per_sm(D)) flash_attention_kernel(AttentionArgs args) {
  wait_for_prior_kernel();
  // Rows padded by 16 bytes: the 8 rows one ldmatrix or fragment load touches then fall on distinct banks.
  constexpr int kStride = D + 8;
  __shared__ alignas(16) T keys[2][kKeysPerStep * kStride];
  __shared__ alignas(16) T values[2][kKeysPerStep * kStride];

  const auto [begin, length, q0] = query_cta(args, blockIdx.x, kRowsPerCta);
  if (length == 0) return;
  const int warp = threadIdx.x / 32;
  const std::int64_t column = std::int64_t{blockIdx.y} * D;
  const std::int64_t kv_column = std::int64_t{blockIdx.y / (args.heads / args.kv_heads)} * D;
  const T* k = static_cast<const T*>(args.k) + begin * args.k_stride + kv_column;
  const T* v = static_cast<const T*>(args.v) + begin * args.v_stride + kv_column;
  const int warp_first = q0 + warp * 16, warp_last = warp_first + 15;
  FlashRows<T, D> rows(static_cast<const T*>(args.q) + begin * args.q_stride + column, args.q_stride, warp_first,
                       length);

  const auto load_tile = [&](int tile, int stage) {
    constexpr int kChunksPerRow = D / 8;
    for (int chunk = threadIdx.x; chunk < kKeysPerStep * kChunksPerRow; chunk += 128) {
      const int r = chunk / kChunksPerRow, c = chunk % kChunksPerRow * 8;
      const int key = tile * kKeysPerStep + r;
      const bool valid = key < length;
      const int source = valid ? key : 0;
      copy16(&keys[stage][r * kStride + c], k + source * args.k_stride + c, valid);
      copy16(&values[stage][r * kStride + c], v + source * args.v_stride + c, valid);
    }
    asm volatile("cp.async.commit_group;\n" ::);
  };

  const float scale = args.scale * 1.4426950408889634f;  // log2(e): exponentials as powers of 2
  const KeyMask mask{length, args.causal, args.window};
  int keys_end = args.causal ? min(length, q0 + kRowsPerCta) : length;
  int first_tile = 0;
  if (args.window > 0) {
    keys_end = min(keys_end, q0 + kRowsPerCta + args.window);
    first_tile = max(0, q0 - args.window) / kKeysPerStep;
  }
  const int key_tiles = (keys_end + kKeysPerStep - 1) / kKeysPerStep;
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
    // Whether some row of the warp sees some key of the tile, and whether every row sees every key: then no element
    // needs its mask. A warp whose rows see none of the tile leaves their state as it is.
    const int tile_first = tile * kKeysPerStep, tile_last = tile_first + kKeysPerStep - 1;
    const bool seen =
        warp_first < length && (!args.causal || tile_first <= warp_last) &&
        (args.window <= 0 || (tile_first - warp_last <= args.window && warp_first - tile_last <= args.window));
    const bool unmasked =
        tile_last < length && (!args.causal || tile_last <= warp_first) &&
        (args.window <= 0 || (warp_last - tile_first <= args.window && tile_last - warp_first <= args.window));
    if (seen) rows.step(keys[stage], values[stage], kStride, tile_first, !unmasked, mask, scale);
    __syncthreads();  // the next iteration's copies overwrite this stage
  }
  rows.store(static_cast<T*>(args.out) + begin * args.out_stride + column, args.out_stride, length);
}

}  // namespace

bool flash_attention_fits(DType dtype, const AttentionArgs& args) {
  return (dtype == DType::f16 || dtype == DType::bf16) &&
         (args.head_dim == 32 || args.head_dim == 64 || args.head_dim == 128) && args.scale > 0 && aligned16(args.q) &&
         aligned16(args.k) && aligned16(args.v) && aligned16(args.out) && args.q_stride % 8 == 0 &&
         args.k_stride % 8 == 0 && args.v_stride % 8 == 0 && args.out_stride % 8 == 0;
}

cudaError_t launch_flash_attention(DType dtype, const AttentionArgs& args, cudaStream_t stream) {
  const std::int64_t ctas = packed_query_ctas(args.rows, args.sequences, kRowsPerCta);
  if (ctas > 0x7fffffff) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(ctas), static_cast<unsigned>(args.heads));
  const auto launch = [&](auto kernel) { return launch_chained(kernel, grid, 128, 0, stream, args); };
  const auto by_head_dim = [&](auto element) {
    using T = decltype(element);
    if (args.head_dim == 32) return launch(flash_attention_kernel<T, 32>);
    if (args.head_dim == 64) return launch(flash_attention_kernel<T, 64>);
    return launch(flash_attention_kernel<T, 128>);
  };
  return dtype == DType::f16 ? by_head_dim(__half{}) : by_head_dim(__nv_bfloat16{});
}

}  // namespace accel::graph::cuda::detail
