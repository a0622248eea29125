// accel::graph::cuda::packed_attention on one GPU, with its PyTorch peer in bench/peers/torch_graph_attention.py
// (same lengths, same layout, same timing): 128 sequences of 16..256 tokens packed end to end, Q/K/V column slices
// of one fused [rows, (heads + 2 kv_heads) * head_dim] buffer, as the compiled graphs run it: the BERT encoder's
// (all-MiniLM-L6-v2: 12 heads of 32; BERT-base's 64) and a decoder's causal grouped-query attention (Qwen3-0.6B: 16
// query and 8 key/value heads of 128, bf16). The decoder runs twice: with the longest length the graph is given as
// the bench models' folders give it (256) and as Qwen3-Embedding's own does (32,768), which sizes the grid of a kernel
// that gives each sequence a CTA per 64 rows of that length. ModernBERT-base's local layers (12 heads of 64, f16, each
// token seeing 64 on either side) run as a sliding window.
// Times: `reps` calls back to back between two CUDA events, per call, the median of 7 rounds after a warm-up.
// FLOP/s count the two products: 4 L^2 head_dim per sequence and head, half of it (2 L (L + 1) head_dim) when causal,
// 4 head_dim a (query, key) pair within the window when windowed.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/csv_report.hpp"
#include "common/cuda_timing.hpp"
#include "common/exit_now.hpp"
#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::bench {
namespace {

constexpr int kSequences = 128;

// The peer draws the same lengths: 16 + (97 i mod 241), every length in 16..256.
std::vector<std::int32_t> offsets() {
  std::vector<std::int32_t> result{0};
  for (int i = 0; i < kSequences; ++i) result.push_back(result.back() + 16 + (97 * i) % 241);
  return result;
}

struct Case {
  DType dtype;
  int heads, kv_heads, head_dim;
  bool causal;
  std::int32_t max_length;  // the longest length the kernel is told of
  int window = 0;           // > 0: each query sees the keys this many positions on either side
};

void run(const Case& c) {
  const auto offs = offsets();
  const std::int64_t rows = offs.back(), width = std::int64_t{c.heads} * c.head_dim;
  const std::int64_t kv_width = std::int64_t{c.kv_heads} * c.head_dim, stride = width + 2 * kv_width;
  double flops = 0;
  for (int s = 0; s < kSequences; ++s) {
    const std::int64_t n = offs[s + 1] - offs[s];
    double pairs = c.causal ? n * (n + 1) / 2.0 : static_cast<double>(n) * n;
    if (c.window > 0) {  // the (query, key) pairs within the window
      pairs = 0;
      for (std::int64_t i = 0; i < n; ++i)
        pairs += static_cast<double>(std::min(n - 1, i + c.window) - std::max<std::int64_t>(0, i - c.window) + 1);
    }
    flops += 4.0 * pairs * c.head_dim * c.heads;
  }

  std::vector<float> host(static_cast<std::size_t>(rows * stride));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : host) v = uniform(rng);
  std::vector<std::byte> stored(host.size() * size_of(c.dtype));
  if (!graph::cpu::cast(DType::f32, host.data(), c.dtype, stored.data(), static_cast<std::int64_t>(host.size())))
    accel::bench::exit_now(1);
  void *qkv = nullptr, *out = nullptr, *device_offsets = nullptr;
  check_cuda(cudaMalloc(&qkv, stored.size()), "cudaMalloc");
  check_cuda(cudaMalloc(&out, rows * width * size_of(c.dtype)), "cudaMalloc");
  check_cuda(cudaMalloc(&device_offsets, offs.size() * 4), "cudaMalloc");
  check_cuda(cudaMemcpy(qkv, stored.data(), stored.size(), cudaMemcpyHostToDevice), "upload");
  check_cuda(cudaMemcpy(device_offsets, offs.data(), offs.size() * 4, cudaMemcpyHostToDevice), "upload");
  cudaStream_t stream;
  check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  const auto* base = static_cast<const std::byte*>(qkv);
  const std::size_t element = size_of(c.dtype);
  const double us = median_us_per_call(stream, 50, "packed_attention", [&] {
    return graph::cuda::packed_attention(
        c.dtype, base, stride, base + width * element, stride, base + (width + kv_width) * element, stride,
        static_cast<const std::int32_t*>(device_offsets), kSequences, rows, c.max_length, c.heads, c.head_dim,
        1.0f / std::sqrt(static_cast<float>(c.head_dim)), out, width, stream, c.kv_heads, c.causal, c.window);
  });
  const std::string name = c.causal
                               ? fmt::format("s{} h{}/{} d{} causal {} max{}", kSequences, c.heads, c.kv_heads,
                                             c.head_dim, to_string(c.dtype), c.max_length)
                               : fmt::format("s{} h{} d{} {}{}", kSequences, c.heads, c.head_dim, to_string(c.dtype),
                                             c.window > 0 ? fmt::format(" window{}", c.window) : "");
  row("attention", name, "accel", "us", us);
  row("attention", name, "accel", "tflops", flops / (us * 1e6));
  cudaStreamDestroy(stream);
  cudaFree(qkv);
  cudaFree(out);
  cudaFree(device_offsets);
}

}  // namespace
}  // namespace accel::bench

int main() {
  using accel::DType;
  for (DType dtype : {DType::f16, DType::bf16, DType::f32})
    for (int head_dim : {32, 64}) accel::bench::run({dtype, 12, 12, head_dim, false, 256});
  for (std::int32_t max_length : {256, 32768}) accel::bench::run({DType::bf16, 16, 8, 128, true, max_length});
  accel::bench::run({DType::f16, 12, 12, 64, false, 256, 64});
}
