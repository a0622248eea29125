// CPU GEMM through the device actor (ask + wait per call) vs the same cblas_sgemm called directly.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <random>
#include <span>
#include <vector>

#include "accel/device/device.hpp"

namespace {

std::vector<float> random_matrix(std::int64_t n) {
  std::mt19937 rng(n);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(static_cast<std::size_t>(n * n));
  for (float& x : v) x = dist(rng);
  return v;
}

void set_counters(benchmark::State& state, std::int64_t n) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void BM_DirectOpenBlas(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  std::vector<float> a = random_matrix(n), b = random_matrix(n), c(a.size());
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  set_counters(state, n);
}

void BM_ThroughActor(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  accel::System system;
  accel::Device dev = *accel::Device::open(system);
  std::vector<float> a = random_matrix(n), b = random_matrix(n);
  auto count = static_cast<std::uint64_t>(n * n);
  accel::Buffer<float> da = *dev.allocate<float>(count).wait(), db = *dev.allocate<float>(count).wait();
  accel::Buffer<float> dc = *dev.allocate<float>(count).wait();
  if (!dev.upload(std::span<const float>(a), da).wait().ok() || !dev.upload(std::span<const float>(b), db).wait().ok())
    state.SkipWithError("upload failed");
  const accel::Gemm gemm{.shape = {.m = n, .n = n, .k = n}, .a = da, .b = db, .c = dc};
  for (auto _ : state) {
    if (!dev.gemm(gemm).wait().ok()) state.SkipWithError("gemm failed");
  }
  set_counters(state, n);
}

BENCHMARK(BM_DirectOpenBlas)->Arg(64)->Arg(256)->Arg(1024)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ThroughActor)->Arg(64)->Arg(256)->Arg(1024)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
