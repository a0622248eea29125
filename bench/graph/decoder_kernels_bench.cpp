// The decoders' memory-bound graph kernels on one GPU, at Qwen3-0.6B's shapes in bf16 (16 query heads and 8
// key/value heads of 128, an MLP of 3,072): rope over the packed q|k|v projection with Qwen3's per-head q/k norms,
// written over its input (the compiled graphs' form since §61: v's heads untouched) and into a separate output (v's
// heads copied); and the gated SiLU(gate) * up pass over the stacked gate|up projection. Rows: a batch's 16,384 and
// 4,096, and a query's 12. Times: `reps` calls back to back between two CUDA events, per call, the median of 7 rounds
// after a warm-up. GB/s count the bytes each must move (rope: q's and k's heads read and written, and v's copied when
// apart; gated: 2 widths read, 1 written).
#include <cuda_runtime.h>

#include <cstdio>
#include <random>
#include <vector>

#include "common/csv_report.hpp"
#include "common/cuda_timing.hpp"
#include "common/exit_now.hpp"
#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::bench {
namespace {

constexpr DType kType = DType::bf16;
constexpr int kHeads = 16, kKvHeads = 8, kHeadDim = 128, kInner = 3072;

// `count` values drawn uniformly from [low, high), in kType on the device.
void* device_values(std::size_t count, float low, float high) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> values(count);
  for (float& v : values) v = uniform(rng);
  std::vector<std::byte> stored(count * size_of(kType));
  if (!graph::cpu::cast(DType::f32, values.data(), kType, stored.data(), static_cast<std::int64_t>(count)))
    accel::bench::exit_now(1);
  void* device = nullptr;
  check_cuda(cudaMalloc(&device, stored.size()), "cudaMalloc");
  check_cuda(cudaMemcpy(device, stored.data(), stored.size(), cudaMemcpyHostToDevice), "upload");
  return device;
}

// One row of microseconds per call and one of the GB/s of `bytes` moved per call.
template <class Call>
void time_calls(cudaStream_t stream, const char* kernel, const std::string& name, double bytes, std::int64_t rows,
                Call call) {
  const double us = median_us_per_call(stream, rows > 1000 ? 50 : 500, kernel, call);
  row(kernel, name, "accel", "us", us);
  row(kernel, name, "accel", "GB/s", bytes / (us * 1e3));
}

void rope(cudaStream_t stream, std::int64_t rows, bool in_place) {
  const std::int64_t width = std::int64_t{kHeads + 2 * kKvHeads} * kHeadDim;
  void* input = device_values(static_cast<std::size_t>(rows * width), -1.0f, 1.0f);
  void* q_norm = device_values(kHeadDim, 0.9f, 1.1f);
  void* k_norm = device_values(kHeadDim, 0.9f, 1.1f);
  void* output = input;
  if (!in_place) check_cuda(cudaMalloc(&output, static_cast<std::size_t>(rows * width) * size_of(kType)), "cudaMalloc");
  std::vector<std::int32_t> positions(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) positions[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(r % 512);
  void* device_positions = nullptr;
  check_cuda(cudaMalloc(&device_positions, positions.size() * 4), "cudaMalloc");
  check_cuda(cudaMemcpy(device_positions, positions.data(), positions.size() * 4, cudaMemcpyHostToDevice), "upload");
  const std::int64_t moved_heads = in_place ? kHeads + kKvHeads : kHeads + 2 * kKvHeads;
  time_calls(stream, "rope", fmt::format("rows {} {}", rows, in_place ? "in place" : "apart"),
             2.0 * static_cast<double>(rows * moved_heads * kHeadDim) * size_of(kType), rows, [&] {
               return graph::cuda::rope(kType, input, static_cast<const std::int32_t*>(device_positions), rows, kHeads,
                                        kHeadDim, 1e6f, output, stream, kKvHeads, q_norm, k_norm, 1e-6f);
             });
  if (!in_place) cudaFree(output);
  cudaFree(input);
  cudaFree(q_norm);
  cudaFree(k_norm);
  cudaFree(device_positions);
}

void gated(cudaStream_t stream, std::int64_t rows) {
  void* input = device_values(static_cast<std::size_t>(rows * 2 * kInner), -4.0f, 4.0f);
  void* output = nullptr;
  check_cuda(cudaMalloc(&output, static_cast<std::size_t>(rows * kInner) * size_of(kType)), "cudaMalloc");
  time_calls(stream, "gated", fmt::format("rows {} silu", rows),
             3.0 * static_cast<double>(rows * kInner) * size_of(kType), rows,
             [&] { return graph::cuda::gated(kType, input, rows, kInner, Activation::silu, output, stream); });
  cudaFree(input);
  cudaFree(output);
}

}  // namespace
}  // namespace accel::bench

int main() {
  cudaStream_t stream;
  accel::bench::check_cuda(cudaStreamCreate(&stream), "stream");
  for (std::int64_t rows : {16384, 4096, 12}) {
    for (bool in_place : {true, false}) accel::bench::rope(stream, rows, in_place);
    accel::bench::gated(stream, rows);
  }
  cudaStreamDestroy(stream);
}
