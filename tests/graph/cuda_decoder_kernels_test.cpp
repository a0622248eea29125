// The decoder ops' CUDA kernels against their CPU kernels (themselves checked against double loops in
// cpu_decoder_kernels_test), per storage type: causal and grouped-query attention on the three attention kernels (the
// tensor-core ones for f16/bf16 with head_dim 32, 64 or 128 and aligned rows, one holding a short sequence's keys in
// shared memory and one streaming them; the generic one otherwise), and the rotary position embedding, in place too;
// sliding-window attention on the resident, streaming and generic kernels; the resident kernel rotating q and k as it
// loads them against the rope and then the attention. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cuda_kernels.hpp"
#include "testing/cuda_kernel_buffers.hpp"
#include "testing/kernel_inputs.hpp"

namespace accel::graph {
namespace {

using testing::Buffer;
using testing::expect_close;
using testing::offsets_of;
using testing::random;
using testing::rounded;

class CudaDecoderKernels : public testing::CudaKernels {};

constexpr DType kTypes[] = {DType::f32, DType::f16, DType::bf16};

struct Case {
  std::vector<int> lengths;
  int heads, kv_heads, head_dim;
  bool causal;
  std::int64_t extra_stride;  // added to the fused row stride: not a multiple of 8 takes the generic kernel
  int window = 0;             // > 0: sliding-window attention
  int max_length = 0;         // > 0: the longest length the kernels are told of (a model's context), not the batch's
};

// `count` sequences of 0..70 tokens: more than the 32 one round of the kernels' search for a CTA's sequence takes.
std::vector<int> many_lengths(int count) {
  std::vector<int> lengths;
  for (int i = 0; i < count; ++i) lengths.push_back((i * 37) % 71);
  return lengths;
}

TEST_F(CudaDecoderKernels, CausalAndGroupedQueryAttentionMatchTheCpu) {
  const std::vector<Case> cases{{{1, 17, 64, 65, 0, 130}, 8, 2, 64, true, 0},
                                {{256, 3, 200}, 4, 1, 32, true, 0},
                                {{63, 64, 129, 0}, 6, 3, 64, false, 0},
                                {{5, 90, 33}, 4, 2, 8, true, 0},
                                {{40, 7, 100}, 8, 2, 64, true, 2},
                                {{33, 128, 2}, 2, 1, 128, true, 0},
                                // Past the resident kernel's lengths (512 at d 32, 128 at d 128), and within them.
                                {{600, 45, 1}, 4, 2, 32, true, 0},
                                {{200, 9}, 4, 2, 128, true, 0},
                                {{64, 17, 1, 0}, 4, 2, 128, true, 0},
                                {{20, 77}, 4, 4, 32, true, 0},
                                // Sliding windows on every kernel: within a tile, across tiles, past the sequence;
                                // resident where the longest fits (ModernBERT's passages: 128-token windows at d 64),
                                // streaming where it does not or the kernels are told of longer ones.
                                {{1, 17, 64, 65, 0, 300}, 4, 4, 64, false, 0, 64},
                                {{1, 17, 64, 65, 0, 200}, 4, 4, 64, false, 0, 64},
                                {{1, 17, 64, 65, 0, 200}, 4, 4, 64, false, 0, 64, 1024},
                                {{256, 90, 129, 3}, 12, 12, 64, false, 0, 64},
                                {{200, 33}, 4, 2, 128, false, 0, 5},
                                {{120, 33}, 4, 2, 128, false, 0, 5},
                                {{150, 9, 70}, 4, 4, 32, true, 0, 40},
                                {{600, 45, 1}, 4, 4, 32, true, 0, 40},
                                {{90, 33}, 4, 2, 8, false, 2, 3},
                                {{40, 7}, 2, 2, 64, false, 2, 1000},
                                {{40, 7}, 2, 2, 64, false, 0, 1},
                                // Told of a 32K context, as a Qwen3-Embedding folder tells the graph: the streaming
                                // and generic kernels' CTAs cover the batch's sequences, not the context's length.
                                {{200, 9, 77, 1, 64}, 4, 2, 128, true, 0, 0, 32768},
                                {{1, 17, 64, 65, 0, 130}, 4, 2, 64, false, 0, 0, 32768},
                                {{5, 90, 33}, 4, 2, 8, true, 0, 0, 32768},
                                {many_lengths(100), 2, 1, 128, true, 0, 0, 32768},
                                {many_lengths(1500), 2, 1, 64, true, 2, 0, 4096},
                                {{150, 9, 70}, 4, 4, 32, true, 0, 40, 32768}};
  for (DType dtype : kTypes) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << to_string(dtype) << ", " << c.heads << "/" << c.kv_heads << " heads, d "
                                        << c.head_dim << (c.causal ? ", causal" : "") << ", extra stride "
                                        << c.extra_stride << ", window " << c.window << ", " << c.lengths.size()
                                        << " sequences, told of " << c.max_length);
      const auto offsets = offsets_of(c.lengths);
      const std::int64_t width = std::int64_t{c.heads} * c.head_dim, kv_width = std::int64_t{c.kv_heads} * c.head_dim;
      const std::int64_t stride = width + 2 * kv_width + c.extra_stride, rows = offsets.back() + 5;
      const auto qkv = rounded(random(rows * stride), dtype);
      const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
      const Buffer dqkv(dtype, qkv), doff = Buffer::of_ints(offsets), out(dtype, rows * width);
      const auto at = [&](std::int64_t column) { return dqkv.get<std::byte>() + column * size_of(dtype); };
      const auto sequences = static_cast<std::int64_t>(c.lengths.size());
      const int max_length = c.max_length > 0 ? c.max_length : *std::max_element(c.lengths.begin(), c.lengths.end());
      finish(cuda::packed_attention(dtype, at(0), stride, at(width), stride, at(width + kv_width), stride,
                                    doff.get<std::int32_t>(), sequences, rows, max_length, c.heads, c.head_dim, scale,
                                    out.get(), width, stream_, c.kv_heads, c.causal, c.window));
      std::vector<float> expected(rows * width, NAN);
      cpu::packed_attention(qkv.data(), stride, qkv.data() + width, stride, qkv.data() + width + kv_width, stride,
                            offsets.data(), sequences, c.heads, c.head_dim, scale, expected.data(), width, c.kv_heads,
                            c.causal, c.window);
      const auto actual = out.read();
      for (std::int64_t i = offsets.back() * width; i < rows * width; ++i)
        ASSERT_TRUE(std::isnan(actual[i])) << "padding row written at " << i;
      const std::vector<float> written(actual.begin(), actual.begin() + offsets.back() * width);
      expect_close(written, {expected.begin(), expected.begin() + offsets.back() * width}, dtype, "attention");
    }
  }
}

// Offsets out of order, negative or past the rows (a corrupt input) make no kernel read or write outside its
// buffers: each sequence is clamped to the rows, and a CTA's search for its sequence lands on one of them whatever
// the order. Every kernel is run; the GPU calls run this test under compute-sanitizer's memcheck too.
TEST_F(CudaDecoderKernels, AttentionOverOffsetsOutOfOrderStaysInsideItsBuffers) {
  const std::vector<std::int32_t> offsets{0, 90, 20, 400, -7, 130, 60, 1 << 30, 3};
  const auto sequences = static_cast<std::int64_t>(offsets.size()) - 1;
  constexpr std::int64_t kRows = 140;
  struct Kernel {
    int kv_heads, head_dim, max_length;
    std::int64_t extra_stride;
  };
  for (DType dtype : kTypes) {
    for (const Kernel& k :
         {Kernel{2, 128, 32768, 0}, Kernel{2, 64, 300, 0}, Kernel{4, 32, 64, 0}, Kernel{2, 64, 32768, 2}}) {
      SCOPED_TRACE(::testing::Message() << to_string(dtype) << ", d " << k.head_dim << ", told of " << k.max_length
                                        << ", extra stride " << k.extra_stride);
      constexpr int kHeads = 4;
      const std::int64_t width = std::int64_t{kHeads} * k.head_dim, kv_width = std::int64_t{k.kv_heads} * k.head_dim;
      const std::int64_t stride = width + 2 * kv_width + k.extra_stride;
      const Buffer dqkv(dtype, rounded(random(kRows * stride), dtype)), doff = Buffer::of_ints(offsets);
      const Buffer out(dtype, kRows * width);
      const auto at = [&](std::int64_t column) { return dqkv.get<std::byte>() + column * size_of(dtype); };
      for (const bool causal : {false, true})
        finish(cuda::packed_attention(dtype, at(0), stride, at(width), stride, at(width + kv_width), stride,
                                      doff.get<std::int32_t>(), sequences, kRows, k.max_length, kHeads, k.head_dim,
                                      0.125f, out.get(), width, stream_, k.kv_heads, causal));
    }
  }
}

TEST_F(CudaDecoderKernels, AttentionRefusesKvHeadsThatDoNotDivideTheHeads) {
  EXPECT_EQ(cuda::packed_attention(DType::f16, nullptr, 0, nullptr, 0, nullptr, 0, nullptr, 1, 4, 4, 4, 32, 1.0f,
                                   nullptr, 0, stream_, 3, true),
            cudaErrorInvalidValue);
  EXPECT_EQ(cuda::packed_attention(DType::f16, nullptr, 0, nullptr, 0, nullptr, 0, nullptr, 1, 4, 4, 4, 32, 1.0f,
                                   nullptr, 0, stream_, 0, false, -1),
            cudaErrorInvalidValue);
}

TEST_F(CudaDecoderKernels, RopeMatchesTheCpuInPlaceToo) {
  const std::vector<std::int32_t> positions{0, 1, 2, 7, 0, 300, 4095, 1, 2047, 5};
  const auto rows = static_cast<std::int64_t>(positions.size());
  for (DType dtype : kTypes) {
    for (const auto& [heads, d, theta] :
         {std::tuple{4, 8, 1000.0f}, std::tuple{16, 128, 1e6f}, std::tuple{3, 2, 10.0f}}) {
      SCOPED_TRACE(::testing::Message() << to_string(dtype) << ", " << heads << " heads of " << d);
      const auto x = rounded(random(rows * heads * d), dtype);
      const Buffer dx(dtype, x), dp = Buffer::of_ints(positions), y(dtype, rows * heads * d);
      finish(cuda::rope(dtype, dx.get(), dp.get<std::int32_t>(), rows, heads, d, theta, y.get(), stream_));
      std::vector<float> expected(x.size());
      cpu::rope(x.data(), positions.data(), rows, {.heads = heads, .head_dim = d}, theta, expected.data());
      // The device's powf and sincosf may differ from glibc's by an ulp: at position 4095, 1e-3 radians at most.
      expect_close(y.read(), expected, dtype == DType::f32 ? DType::f16 : dtype, "rope");
      finish(cuda::rope(dtype, dx.get(), dp.get<std::int32_t>(), rows, heads, d, theta, dx.get(), stream_));
      EXPECT_EQ(dx.read(), y.read());
    }
  }
  EXPECT_EQ(cuda::rope(DType::f32, nullptr, nullptr, 1, 2, 3, 10.0f, nullptr, stream_), cudaErrorInvalidValue);
}

// The kernel splits a row's heads into groups by how many rows there are (a group per head for a query's few rows,
// above; one group for a batch's): 820 rows of 14 heads give 4 groups of 4, 4, 4 and 2 heads, 5,000 rows one group.
TEST_F(CudaDecoderKernels, RopeMatchesTheCpuForEveryGroupingOfHeads) {
  for (const auto& [rows, heads] : {std::pair<std::int64_t, int>{820, 14}, std::pair<std::int64_t, int>{5000, 8}}) {
    SCOPED_TRACE(::testing::Message() << rows << " rows of " << heads << " heads");
    constexpr int kHeadDim = 128;
    std::vector<std::int32_t> positions(static_cast<std::size_t>(rows));
    for (std::size_t r = 0; r < positions.size(); ++r) positions[r] = static_cast<std::int32_t>((r * 7919) % 4096);
    const auto x = rounded(random(rows * heads * kHeadDim), DType::bf16);
    const Buffer dx(DType::bf16, x), dp = Buffer::of_ints(positions), y(DType::bf16, rows * heads * kHeadDim);
    finish(cuda::rope(DType::bf16, dx.get(), dp.get<std::int32_t>(), rows, heads, kHeadDim, 1e6f, y.get(), stream_));
    std::vector<float> expected(x.size());
    cpu::rope(x.data(), positions.data(), rows, {.heads = heads, .head_dim = kHeadDim}, 1e6f, expected.data());
    expect_close(y.read(), expected, DType::bf16, "rope");
  }
}

// The packed and normalised forms against the CPU's, per storage type, for a query's rows (a warp per head) and a
// batch's (a warp per row), head dims taking 1 to 4 pairs a lane, in place too; and what they refuse.
TEST_F(CudaDecoderKernels, PackedRopeWithHeadNormsMatchesTheCpu) {
  for (DType dtype : kTypes) {
    for (const auto& [rows, heads, kv_heads, d, normed] :
         {std::tuple<std::int64_t, int, int, int, bool>{12, 16, 8, 128, true},
          {3000, 16, 8, 128, true},
          {40, 4, 2, 64, false},
          {7, 2, 1, 256, true},
          {9, 6, 0, 80, true},
          {500, 3, 3, 32, true}}) {
      SCOPED_TRACE(::testing::Message() << to_string(dtype) << ", " << rows << " rows of " << heads << "+" << kv_heads
                                        << " heads of " << d << (normed ? ", normed" : ""));
      const std::int64_t width = (std::int64_t{heads} + 2 * kv_heads) * d;
      std::vector<std::int32_t> positions(static_cast<std::size_t>(rows));
      for (std::size_t r = 0; r < positions.size(); ++r) positions[r] = static_cast<std::int32_t>((r * 7919) % 4096);
      const auto x = rounded(random(rows * width), dtype);
      const auto q_gamma = rounded(random(d), dtype), k_gamma = rounded(random(d), dtype);
      const bool keyed = normed && kv_heads > 0;
      const Buffer dx(dtype, x), dp = Buffer::of_ints(positions), y(dtype, rows * width), dq(dtype, q_gamma),
                                 dk(dtype, k_gamma);
      finish(cuda::rope(dtype, dx.get(), dp.get<std::int32_t>(), rows, heads, d, 1e6f, y.get(), stream_, kv_heads,
                        normed ? dq.get() : nullptr, keyed ? dk.get() : nullptr, 1e-6f));
      std::vector<float> expected(x.size());
      cpu::rope(x.data(), positions.data(), rows,
                {.heads = heads,
                 .kv_heads = kv_heads,
                 .head_dim = d,
                 .query_norm = normed ? q_gamma.data() : nullptr,
                 .key_norm = keyed ? k_gamma.data() : nullptr,
                 .eps = 1e-6f},
                1e6f, expected.data());
      // The device rounds the normalised head to the storage type before rotating it (the CPU, in float, does not).
      expect_close(y.read(), expected, dtype == DType::f32 ? DType::f16 : dtype, "rope");
      finish(cuda::rope(dtype, dx.get(), dp.get<std::int32_t>(), rows, heads, d, 1e6f, dx.get(), stream_, kv_heads,
                        normed ? dq.get() : nullptr, keyed ? dk.get() : nullptr, 1e-6f));
      EXPECT_EQ(dx.read(), y.read());
    }
  }
  const Buffer one(DType::bf16, std::vector<float>(512, 1.0f));
  // A head of 258, a key norm without packing, a packed query norm without a key norm.
  EXPECT_EQ(cuda::rope(DType::bf16, one.get(), nullptr, 1, 1, 258, 10.0f, one.get(), stream_, 1, nullptr, nullptr, 0),
            cudaErrorInvalidValue);
  EXPECT_EQ(
      cuda::rope(DType::bf16, one.get(), nullptr, 1, 1, 64, 10.0f, one.get(), stream_, 0, one.get(), one.get(), 1e-6f),
      cudaErrorInvalidValue);
  EXPECT_EQ(
      cuda::rope(DType::bf16, one.get(), nullptr, 1, 1, 64, 10.0f, one.get(), stream_, 1, one.get(), nullptr, 1e-6f),
      cudaErrorInvalidValue);
}

// packed_attention given a rope's arguments (the resident kernel rotating q and k as it loads them) against the rope's
// kernel and then the attention, on ModernBERT's shapes (global and windowed, d 64), a grouped causal decoder's (d 128)
// and d 32's, positions shifted per sequence; the input is left as it was, and lengths past the resident kernel's are
// refused with cudaErrorNotSupported, nothing launched.
TEST_F(CudaDecoderKernels, AttentionRotatingAsItLoadsMatchesRopeThenAttention) {
  struct Rotated {
    std::vector<int> lengths;
    int heads, kv_heads, head_dim;
    bool causal;
    int window;
  };
  for (DType dtype : {DType::f16, DType::bf16}) {
    for (const Rotated& c :
         {Rotated{{1, 17, 64, 65, 0, 200}, 12, 12, 64, false, 0}, Rotated{{256, 90, 129, 3}, 12, 12, 64, false, 64},
          Rotated{{33, 128, 2, 100}, 16, 8, 128, true, 0}, Rotated{{300, 5, 31}, 4, 2, 32, true, 0},
          Rotated{{200, 9}, 4, 2, 128, true, 0}}) {
      SCOPED_TRACE(::testing::Message() << to_string(dtype) << ", " << c.heads << "/" << c.kv_heads << " heads of "
                                        << c.head_dim << ", window " << c.window);
      const auto offsets = offsets_of(c.lengths);
      const std::int64_t width = std::int64_t{c.heads} * c.head_dim, kv_width = std::int64_t{c.kv_heads} * c.head_dim;
      const std::int64_t stride = width + 2 * kv_width, rows = offsets.back();
      std::vector<std::int32_t> positions;
      for (std::size_t s = 0; s < c.lengths.size(); ++s)
        for (int i = 0; i < c.lengths[s]; ++i) positions.push_back(i + 7 * static_cast<int>(s));
      const auto qkv = rounded(random(rows * stride), dtype);
      const Buffer dqkv(dtype, qkv), rotated(dtype, rows * stride),
          doff = Buffer::of_ints(offsets), dp = Buffer::of_ints(positions), expected(dtype, rows * width),
          actual(dtype, rows * width);
      const int max_length = *std::max_element(c.lengths.begin(), c.lengths.end());
      const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim)), theta = c.causal ? 1e6f : 160000.0f;
      const auto attention = [&](const Buffer& from, const Buffer& to, const cuda::AttentionRotary* rotary) {
        const auto at = [&](std::int64_t column) { return from.get<std::byte>() + column * size_of(dtype); };
        return cuda::packed_attention(dtype, at(0), stride, at(width), stride, at(width + kv_width), stride,
                                      doff.get<std::int32_t>(), static_cast<std::int64_t>(c.lengths.size()), rows,
                                      max_length, c.heads, c.head_dim, scale, to.get(), width, stream_, c.kv_heads,
                                      c.causal, c.window, rotary);
      };
      const cuda::AttentionRotary rotary{.positions = dp.get<std::int32_t>(), .theta = theta};
      if (c.head_dim == 128 && max_length > 128) {  // past the resident kernel's lengths at d 128
        EXPECT_EQ(attention(dqkv, actual, &rotary), cudaErrorNotSupported);
        continue;
      }
      finish(cuda::rope(dtype, dqkv.get(), dp.get<std::int32_t>(), rows, c.heads, c.head_dim, theta, rotated.get(),
                        stream_, c.kv_heads));
      finish(attention(rotated, expected, nullptr));
      finish(attention(dqkv, actual, &rotary));
      expect_close(actual.read(), expected.read(), dtype, "attention with its rope");
      EXPECT_EQ(dqkv.read(), qkv);
    }
  }
  const cuda::AttentionRotary no_positions{.positions = nullptr, .theta = 10000.0f};
  EXPECT_EQ(cuda::packed_attention(DType::f16, nullptr, 0, nullptr, 0, nullptr, 0, nullptr, 1, 4, 4, 4, 32, 1.0f,
                                   nullptr, 0, stream_, 4, false, 0, &no_positions),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace accel::graph
