// What the JIT benchmark's parts share (jit_bench.cpp, jit_tile_sweeps.cpp): random device buffers, pipelined
// timing, and the GEMM, grouped-GEMM and ResNet-50 convolution problems both sides measure.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string_view>
#include <vector>

#include "accel/device/device.hpp"
#include "common/csv_report.hpp"
#include "jit/cutlass_requests.hpp"

namespace accel::bench {

using Clock = std::chrono::steady_clock;

inline std::filesystem::path fresh_directory(std::string_view name) {
  auto dir = std::filesystem::temp_directory_path() / fmt::format("accel-jit-bench-{}-{}", name, ::getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

BufferHandle random_buffer(const Device& device, DType dtype, std::uint64_t count, std::uint64_t seed,
                           float scale = 1.0f);

// Median over rounds of (wall time of `per_round` requests submitted back to back) / per_round, in µs.
template <class Submit>
double pipelined_micros(const Device& device, Submit submit, int per_round = 20, int rounds = 7) {
  for (int i = 0; i < 3; ++i) require(submit().wait(), "warm-up");
  std::vector<double> samples;
  for (int round = 0; round < rounds; ++round) {
    std::vector<Future<Done>> pending;
    pending.reserve(per_round);
    const auto start = Clock::now();
    for (int i = 0; i < per_round; ++i) pending.push_back(submit());
    for (Future<Done>& f : pending) require(f.wait(), "request");
    samples.push_back(micros(Clock::now() - start) / per_round);
  }
  (void)device;
  return percentile(samples, 0.5);
}

inline double tflops(double flops, double us) { return flops / (us * 1e-6) / 1e12; }

struct GemmBuffers {
  BufferHandle a, b, d, bias;
};

GemmBuffers gemm_buffers(const Device& device, DType input, DType output, std::int64_t m, std::int64_t n,
                         std::int64_t k);

// Row-major A (m x k), column-major B (k x n), row-major D: the same product for both libraries.
CutlassGemm cutlass_gemm(const GemmBuffers& g, DType input, DType output, std::int64_t m, std::int64_t n,
                         std::int64_t k);
Gemm library_gemm(const GemmBuffers& g, DType input, DType output, std::int64_t m, std::int64_t n, std::int64_t k,
                  Epilogue epilogue = {});

// 32 groups, M from 16 to 2048, N = K = 4096, as one grouped request; `loop` (if given) gets the same as single GEMMs.
CutlassGroupedGemm moe_problem(const Device& device, DType dtype, double* flops, std::int64_t* total_m,
                               std::vector<Gemm>* loop);
// A ResNet-50 layer with batch 32, f16, channels last, padding rs / 2.
ConvShape resnet_shape(std::int64_t c, std::int64_t k, std::int64_t hw, std::int64_t rs, int stride);

// The tile parts (jit_tile_sweeps.cpp): CUTLASS tiles beside accel's defaults, to choose those from measurements.
void tiles_part(const Device& device);
void tile_sweeps_part(const Device& device);

}  // namespace accel::bench
