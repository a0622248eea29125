// What the sparse benchmark's parts share (sparse_bench.cpp, sparse_bench_products.cpp): its host CSR matrices, their
// generator, and the timing of a runner (enqueue, finish) as CSV rows.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "accel/device/device.hpp"
#include "common/csv_report.hpp"

namespace sparse_bench {

struct Csr {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int32_t> offsets, indices;
  std::vector<float> values;
};

// `per_row(i)` sorted distinct columns in row i, spread over the row with a random offset (cheap at 1e9 entries).
template <class PerRow>
Csr make(std::int64_t rows, std::int64_t cols, PerRow&& per_row, std::mt19937_64& rng) {
  Csr a{.rows = rows, .cols = cols};
  a.offsets.reserve(static_cast<std::size_t>(rows + 1));
  a.offsets.push_back(0);
  std::uniform_real_distribution<float> value(-1, 1);
  const float table[4] = {value(rng), value(rng), value(rng), value(rng)};
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t k = std::min<std::int64_t>(per_row(i), cols);
    const std::int64_t step = k == 0 ? 1 : cols / k;
    const std::int64_t start = k == 0 ? 0 : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(step));
    for (std::int64_t t = 0; t < k; ++t) {
      a.indices.push_back(static_cast<std::int32_t>(start + t * step));
      a.values.push_back(table[(i + t) & 3]);
    }
    a.offsets.push_back(static_cast<std::int32_t>(a.indices.size()));
  }
  return a;
}

// How often a runner is timed: warm-up calls, single calls for the latency's median, and calls in one pipeline.
struct Repeats {
  int warmup = 3;
  int latency = 20;
  int pipelined = 100;  // 0: no pipelined figure
  int batches = 5;      // pipelines timed, of which the median is reported
};

// latency_us (one call and its synchronisation, median) and pipelined_us (calls enqueued together, per call, the
// median of several pipelines: one pipeline of 100 small calls took 13 µs a call in one round and 22 in the next).
template <class Runner>
void measure(Runner& runner, const std::string& name, const char* variant, Repeats repeats = {}) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < repeats.warmup; ++i) {
    runner.enqueue();
    runner.finish();
  }
  std::vector<double> us;
  for (int i = 0; i < repeats.latency; ++i) {
    const auto t0 = Clock::now();
    runner.enqueue();
    runner.finish();
    us.push_back(accel::bench::micros(Clock::now() - t0));
  }
  accel::bench::row("sparse", name, variant, "latency_us", accel::bench::percentile(us, 0.5));
  if (repeats.pipelined == 0) return;
  us.clear();
  for (int b = 0; b < repeats.batches; ++b) {
    const auto t0 = Clock::now();
    for (int i = 0; i < repeats.pipelined; ++i) runner.enqueue();
    runner.finish();
    us.push_back(accel::bench::micros(Clock::now() - t0) / repeats.pipelined);
  }
  accel::bench::row("sparse", name, variant, "pipelined_us", accel::bench::percentile(us, 0.5));
}

// C = A·A through the device actor (sparse_bench_products.cpp): the count and the product with C allocated between
// them, as a caller does (accel), and the product alone, repeated over A's fixed structure (accel_product).
void run_spgemm(accel::Device& device, const Csr& a, const std::string& name);

// C = A B (32 dense columns, f16, column-major) with A blocked ELL of `block` x `block` blocks, `slots` of them per
// block row, beside the same A as CSR (sparse_bench_products.cpp).
void run_blocked_ell(accel::Device& device, std::int64_t rows, std::int64_t cols, std::int32_t block,
                     std::int64_t slots, std::mt19937_64& rng);

}  // namespace sparse_bench
