// accel::graph::cuda::packed_attention on one GPU, with its PyTorch peer in bench/peers/torch_graph_attention.py
// (same lengths, same layout, same timing): 128 sequences of 16..256 tokens packed end to end, Q/K/V column slices
// of one fused [rows, 3 * heads * head_dim] buffer, as the BERT encoder runs it (all-MiniLM-L6-v2: 12 heads of 32).
// Times: `reps` calls back to back between two CUDA events, per call, the median of 7 rounds after a warm-up.
// FLOP/s count the two products, 4 L^2 head_dim per sequence and head.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "common/csv_report.hpp"
#include "common/exit_now.hpp"
#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::bench {
namespace {

constexpr int kSequences = 128;

void check(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(error));
  accel::bench::exit_now(1);
}

// The peer draws the same lengths: 16 + (97 i mod 241), every length in 16..256.
std::vector<std::int32_t> offsets() {
  std::vector<std::int32_t> result{0};
  for (int i = 0; i < kSequences; ++i) result.push_back(result.back() + 16 + (97 * i) % 241);
  return result;
}

void run(DType dtype, int heads, int head_dim) {
  const auto offs = offsets();
  const std::int64_t rows = offs.back(), hidden = std::int64_t{heads} * head_dim, stride = 3 * hidden;
  double flops = 0;
  for (int s = 0; s < kSequences; ++s) flops += 4.0 * std::pow(offs[s + 1] - offs[s], 2) * head_dim * heads;

  std::vector<float> host(static_cast<std::size_t>(rows * stride));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : host) v = uniform(rng);
  std::vector<std::byte> stored(host.size() * size_of(dtype));
  if (!graph::cpu::cast(DType::f32, host.data(), dtype, stored.data(), static_cast<std::int64_t>(host.size())))
    accel::bench::exit_now(1);
  void *qkv = nullptr, *out = nullptr, *device_offsets = nullptr;
  check(cudaMalloc(&qkv, stored.size()), "cudaMalloc");
  check(cudaMalloc(&out, rows * hidden * size_of(dtype)), "cudaMalloc");
  check(cudaMalloc(&device_offsets, offs.size() * 4), "cudaMalloc");
  check(cudaMemcpy(qkv, stored.data(), stored.size(), cudaMemcpyHostToDevice), "upload");
  check(cudaMemcpy(device_offsets, offs.data(), offs.size() * 4, cudaMemcpyHostToDevice), "upload");
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "stream");
  const auto* base = static_cast<const std::byte*>(qkv);
  const auto call = [&] {
    check(graph::cuda::packed_attention(dtype, base, stride, base + hidden * size_of(dtype), stride,
                                        base + 2 * hidden * size_of(dtype), stride,
                                        static_cast<const std::int32_t*>(device_offsets), kSequences, rows, 256, heads,
                                        head_dim, 1.0f / std::sqrt(static_cast<float>(head_dim)), out, hidden, stream),
          "packed_attention");
  };
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  for (int i = 0; i < 20; ++i) call();
  constexpr int kReps = 50;
  std::vector<double> rounds;
  for (int round = 0; round < 7; ++round) {
    check(cudaEventRecord(start, stream), "record");
    for (int i = 0; i < kReps; ++i) call();
    check(cudaEventRecord(stop, stream), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    rounds.push_back(ms * 1e3 / kReps);
  }
  const double us = percentile(rounds, 0.5);
  const std::string name = fmt::format("s{} h{} d{} {}", kSequences, heads, head_dim, to_string(dtype));
  row("attention", name, "accel", "us", us);
  row("attention", name, "accel", "tflops", flops / (us * 1e6));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
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
    for (int head_dim : {32, 64}) accel::bench::run(dtype, 12, head_dim);
}
