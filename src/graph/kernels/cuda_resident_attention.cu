// The tensor-core attention kernel for sequences whose keys and values fit in shared memory whole (an encoder's
// batch of passages: at most a few hundred tokens each).
//
// A CTA of 4 warps takes one (sequence, head). It copies the sequence's key and value rows for its head into
// shared memory once (cp.async, zero-filled up to the next 32 keys), and then each warp takes 16-row blocks of the
// sequence's queries in turn (FlashRows, cuda_flash_tile.cuh), stepping over the resident keys with no further
// copies or barriers. Against cuda_flash_attention.cu, which gives each 64 query rows a CTA of their own, the keys
// are read from memory once per (sequence, head), not once per 64 rows, and a short sequence's last rows cost a
// 16-row block, not a 64-row one. Causal blocks step up to their last row only; a sliding-window block (ModernBERT's
// local layers) steps over the keys within the window of one of its rows only, and masks each row's keys outside
// its own window. Given a rope's arguments (AttentionRotary), q and k arrive as the rope's input and are
// rotated as they are loaded, which saves the rope's pass over them (cuda_steps.cpp runs the two as one step).
#include <algorithm>
#include <type_traits>

#include "core/chained_launch.cuh"
#include "graph/kernels/cuda_flash_tile.cuh"

namespace accel::graph::cuda::detail {
namespace {

constexpr int kWarps = 4;
constexpr int kRowsPerBlock = 16;

// Shared memory a CTA takes: every key and value row of the longest sequence, rounded up to a whole step of
// keys, each row padded by 16 bytes (the 8 rows one ldmatrix or fragment load touches then fall on distinct banks).
__host__ __device__ constexpr int stride_of(int head_dim) { return head_dim + 8; }
std::size_t resident_bytes(const AttentionArgs& args, std::size_t element_size) {
  const auto keys = static_cast<std::size_t>(whole_steps(args.max_length));
  return 2 * keys * static_cast<std::size_t>(stride_of(args.head_dim)) * element_size;
}

// Sequences of up to 512 tokens at head_dim 32, 256 at 64 and 128 at 128: all-MiniLM's 256 at head_dim 32 take 40
// KiB (5 CTAs an SM), a BERT-base's 256 at 64 take 72 KiB (3 CTAs). At the limit an SM holds two CTAs; longer
// sequences take the streaming kernel. The CTAs an SM should hold cap the registers a thread may use.
constexpr std::size_t kSharedLimit = 80 * 1024;
__host__ __device__ constexpr int ctas_per_sm(int head_dim) { return head_dim == 32 ? 5 : (head_dim == 64 ? 4 : 3); }

// What a CTA's rotation reads, in shared memory (filled while its keys arrive): each row's position and the inverse
// frequencies. Read from global memory per row instead, their round trips cost more than the rope's pass (§75).
template <int D>
struct Rotation {
  float positions[16384 / D];  // the most rows the kernel holds at this head_dim (kSharedLimit)
  float inverse_frequencies[D / 2];
};

// Rotates the resident keys of rows 0..length-1 in place as cuda::rope does: a warp per row, lane l holding pairs
// l, l + 32, ... of it. Each (sequence, head) CTA rotates its own keys once.
template <class T, int D>
__device__ void rotate_keys(T* keys, int length, const Rotation<D>& rotation) {
  constexpr int kHalf = D / 2, kPairs = (kHalf + 31) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  for (int r = warp; r < length; r += kWarps) {
    T* row = keys + r * stride_of(D);
    const float position = rotation.positions[r];
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
      const int i = lane + 32 * p;
      if (i >= kHalf) continue;
      float a = to_float(row[i]), b = to_float(row[i + kHalf]), sine, cosine;
      reduced_sincos(position * rotation.inverse_frequencies[i], &sine, &cosine);
      rotate_pair(a, b, cosine, sine);
      row[i] = from_float<T>(a);
      row[i + kHalf] = from_float<T>(b);
    }
  }
}

// Only the rotating kernels declare it, so the others' shared memory is as it was.
template <int D>
__device__ Rotation<D>& rotation_storage() {
  __shared__ Rotation<D> rotation;
  return rotation;
}

// kWindowed: a sliding window's bounds and masks, compiled out where there is none (the encoders' global attention,
// which the window's per-step arithmetic made 2-4 % slower, docs/PERFORMANCE.md §74). Rotary, empty or one
// AttentionRotary: q and k arrive unrotated, and are rotated as they are loaded: the keys once in shared memory, each
// block's queries in their fragments. A parameter of its own: as a member of AttentionArgs it cost the generic kernel
// 22 registers (12-16 % slower) and the streaming one stack, and a body shared by two kernels through a device function
// cost these ~1 % (§75); so the unrotated forms compile as they did before the rotation.
template <class T, int D, bool kWindowed, class... Rotary>
__global__ void __launch_bounds__(kWarps * 32, ctas_per_sm(D))
    resident_attention_kernel(AttentionArgs args, Rotary... rotary) {
  constexpr bool kRotary = sizeof...(Rotary) == 1;
  static_assert(sizeof...(Rotary) == 0 || (kRotary && (std::is_same_v<Rotary, AttentionRotary> && ...)));
  wait_for_prior_kernel();
  constexpr int kStride = stride_of(D);
  extern __shared__ __align__(16) unsigned char resident_shared[];
  const auto [begin, length] = detail::sequence_span(args.offsets, blockIdx.x, args.rows, args.max_length);
  if (length == 0) return;
  const int capacity = whole_steps(args.max_length);
  T* keys = reinterpret_cast<T*>(resident_shared);
  T* values = keys + capacity * kStride;

  const std::int64_t column = std::int64_t{blockIdx.y} * D;
  const std::int64_t kv_column = std::int64_t{blockIdx.y / (args.heads / args.kv_heads)} * D;
  const T* k = static_cast<const T*>(args.k) + begin * args.k_stride + kv_column;
  const T* v = static_cast<const T*>(args.v) + begin * args.v_stride + kv_column;
  const int loaded = whole_steps(length);
  constexpr int kChunksPerRow = D / 8;
  for (int chunk = threadIdx.x; chunk < loaded * kChunksPerRow; chunk += kWarps * 32) {
    const int r = chunk / kChunksPerRow, c = chunk % kChunksPerRow * 8;
    const bool valid = r < length;
    const int source = valid ? r : 0;
    copy16(keys + r * kStride + c, k + source * args.k_stride + c, valid);
    copy16(values + r * kStride + c, v + source * args.v_stride + c, valid);
  }
  asm volatile("cp.async.commit_group;\n" ::);
  // Each block's queries are read while the keys (or the block before) are still coming.
  const T* q = static_cast<const T*>(args.q) + begin * args.q_stride + column;
  const int warp = static_cast<int>(threadIdx.x / 32);
  FlashRows<T, D> rows(q, args.q_stride, warp * kRowsPerBlock, length);
  Rotation<D>* rotation = nullptr;
  if constexpr (kRotary) {
    const AttentionRotary rope{rotary...};
    rotation = &rotation_storage<D>();
    for (int r = static_cast<int>(threadIdx.x); r < length; r += kWarps * 32)
      rotation->positions[r] = static_cast<float>(rope.positions[begin + r]);
    if (threadIdx.x < D / 2)
      rotation->inverse_frequencies[threadIdx.x] = rope_inverse_frequency(static_cast<int>(threadIdx.x), D, rope.theta);
  }
  asm volatile("cp.async.wait_group 0;\n" ::);
  __syncthreads();
  if constexpr (kRotary) {
    rotate_keys<T, D>(keys, length, *rotation);
    rows.rotate(rotation->positions, length, rotation->inverse_frequencies);
    __syncthreads();
  }

  const float scale = args.scale * 1.4426950408889634f;  // log2(e): exponentials as powers of 2
  const int window = kWindowed ? args.window : 0;
  const KeyMask mask{length, args.causal, window};
  T* out = static_cast<T*>(args.out) + begin * args.out_stride + column;
  const int blocks = (length + kRowsPerBlock - 1) / kRowsPerBlock;
  for (int block = warp; block < blocks; block += kWarps) {
    const int first = block * kRowsPerBlock, last = first + kRowsPerBlock - 1;
    int keys_end = args.causal ? min(length, last + 1) : length;
    int keys_begin = 0;
    if constexpr (kWindowed) {
      keys_end = min(keys_end, last + window + 1);
      keys_begin = max(0, first - window) / kKeysPerStep * kKeysPerStep;
    }
    for (int key0 = keys_begin; key0 < keys_end; key0 += kKeysPerStep) {
      const int key_last = key0 + kKeysPerStep - 1;
      // Unmasked only where every row of the block sees every key of the step.
      const bool masked = key_last >= length || (args.causal && key_last > first) ||
                          (kWindowed && (last - key0 > window || key_last - first > window));
      rows.step(keys + key0 * kStride, values + key0 * kStride, kStride, key0, masked, mask, scale);
    }
    const FlashRows<T, D> next(q, args.q_stride, first + kWarps * kRowsPerBlock, length);
    rows.store(out, args.out_stride, length);
    rows = next;
    if constexpr (kRotary) rows.rotate(rotation->positions, length, rotation->inverse_frequencies);
  }
}

// Launches one of the kernel's forms over a CTA per (sequence, head), with `args` and its rotation, if any.
template <auto kKernel, class... Rotary>
cudaError_t launch(const AttentionArgs& args, std::size_t shared, cudaStream_t stream, const Rotary&... rotary) {
  // Allowed its limit at once: a graph's first run, uncaptured, makes the call, and no capture of a longer bucket does.
  if (const cudaError_t error = allow_shared<kKernel>(shared > 48 * 1024 ? kSharedLimit : shared); error != cudaSuccess)
    return error;
  const dim3 grid(static_cast<unsigned>(args.sequences), static_cast<unsigned>(args.heads));
  return launch_chained(kKernel, grid, kWarps * 32, shared, stream, args, rotary...);
}

}  // namespace

bool resident_attention_fits(DType dtype, const AttentionArgs& args) {
  return flash_attention_fits(dtype, args) && resident_bytes(args, 2) <= kSharedLimit;
}

cudaError_t launch_resident_attention(DType dtype, const AttentionArgs& args, const AttentionRotary& rotary,
                                      cudaStream_t stream) {
  if (args.sequences > 0x7fffffff) return cudaErrorInvalidValue;
  const std::size_t shared = resident_bytes(args, 2);
  const auto by_head_dim = [&](auto element) {
    using T = decltype(element);
    const auto by_window = [&]<int D>() {
      const auto by_rotary = [&]<bool kWindowed>() {
        return rotary.positions != nullptr
                   ? launch<resident_attention_kernel<T, D, kWindowed, AttentionRotary>>(args, shared, stream, rotary)
                   : launch<resident_attention_kernel<T, D, kWindowed>>(args, shared, stream);
      };
      return args.window > 0 ? by_rotary.template operator()<true>() : by_rotary.template operator()<false>();
    };
    if (args.head_dim == 32) return by_window.template operator()<32>();
    if (args.head_dim == 64) return by_window.template operator()<64>();
    return by_window.template operator()<128>();
  };
  return dtype == DType::f16 ? by_head_dim(__half{}) : by_head_dim(__nv_bfloat16{});
}

}  // namespace accel::graph::cuda::detail
