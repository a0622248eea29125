// Philox4x32-10 generation on the GPU, three ways, for 1M and 64M elements (and 1 GiB of normal f32, the
// issue's PyTorch comparison point):
//   accel     rand::Generate through the device actor, requests pipelined, then all awaited;
//   kernel    accel's Philox kernel (launch_philox) called directly on a stream: the kernel without the actor;
//   curand    cuRAND's host API (a PHILOX4_32_10 generator, curandSetStream, curandGenerateUniform/Normal) on
//             that same stream: the library call a user would write. Its layout differs from ours (cuRAND's
//             host API spreads a stream over many subsequences), so only the speed is comparable.
// GB/s counts the bytes written. Also the round trip of one 1M-element request (accel) against enqueue + sync of
// the library call. Prints CSV rows: part,case,variant,metric,value.
#include <cuda_runtime.h>
#include <curand.h>
#include <fmt/format.h>

#include <chrono>
#include <string>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/rand/generate.hpp"
#include "common/csv_report.hpp"
#include "common/cuda_checks.hpp"
#include "common/open_gpu.hpp"
#include "libs/rand/philox_kernel.hpp"

namespace {

using namespace accel;
using Clock = std::chrono::steady_clock;
using bench::micros;
using bench::percentile;
using bench::require;
using bench::row;

using bench::check_cuda;
void check_curand(curandStatus_t s, const char* what) {
  bench::check_library(s, CURAND_STATUS_SUCCESS, "cuRAND", what);
}

struct Direct {
  cudaStream_t stream{};
  curandGenerator_t generator{};
  float* out{};
  std::uint64_t count;

  explicit Direct(std::uint64_t n) : count(n) {
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    check_cuda(cudaMalloc(&out, n * sizeof(float)), "malloc");
    check_curand(curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_PHILOX4_32_10), "create");
    check_curand(curandSetStream(generator, stream), "set stream");
    check_curand(curandSetPseudoRandomGeneratorSeed(generator, 42), "seed");
  }
  ~Direct() {
    cudaStreamSynchronize(stream);
    curandDestroyGenerator(generator);
    cudaFree(out);
    cudaStreamDestroy(stream);
  }
  void curand(bool normal) {
    check_curand(
        normal ? curandGenerateNormal(generator, out, count, 0, 1) : curandGenerateUniform(generator, out, count),
        "generate");
  }
  void kernel(bool normal, std::uint64_t offset) {
    const rand::PhiloxArgs args{.output = out,
                                .count = count,
                                .seed = 42,
                                .offset = offset,
                                .kind = normal ? rand::OutputKind::normal_f32 : rand::OutputKind::uniform_f32};
    check_cuda(rand::launch_philox(args, stream), "launch_philox");
  }
  void sync() { check_cuda(cudaStreamSynchronize(stream), "sync"); }
};

// GB/s of `reps` enqueues of `enqueue`, then `finish`: the median of five trials after a warm-up.
template <class Enqueue, class Finish>
double gigabytes_per_second(std::uint64_t bytes, int reps, Enqueue&& enqueue, Finish&& finish) {
  for (int i = 0; i < 3; ++i) enqueue(i);
  finish();
  std::vector<double> rates;
  for (int trial = 0; trial < 5; ++trial) {
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) enqueue(i);
    finish();
    rates.push_back(static_cast<double>(bytes) * reps / (micros(Clock::now() - t0) * 1e3));
  }
  return percentile(rates, 0.5);
}

void throughput(const Device& device, std::uint64_t n, bool normal) {
  const std::string name = fmt::format("{} {}M f32", normal ? "normal" : "uniform", n >> 20);
  const std::uint64_t bytes = n * sizeof(float);
  const int reps = static_cast<int>(std::max<std::uint64_t>(4, (std::uint64_t{4} << 30) / bytes));
  Direct direct(n);
  {
    const BufferHandle out = require(device.ask(Allocate{.dtype = DType::f32, .count = n}).wait(), "allocate");
    rand::Generate request{.distribution = normal ? rand::Distribution::normal : rand::Distribution::uniform,
                           .seed = 42,
                           .count = n,
                           .output = out};
    std::vector<Future<Done>> pending;
    row("throughput", name, "accel", "gb_per_s",
        gigabytes_per_second(
            bytes, reps,
            [&](int i) {
              request.offset = static_cast<std::uint64_t>(i) * n;
              pending.push_back(device.ask(request));
            },
            [&] {
              for (Future<Done>& f : pending) require(f.wait(), "generate");
              pending.clear();
            }));
    require(device.free(out).wait(), "free");
  }
  row("throughput", name, "kernel", "gb_per_s",
      gigabytes_per_second(
          bytes, reps, [&](int i) { direct.kernel(normal, static_cast<std::uint64_t>(i) * n); },
          [&] { direct.sync(); }));
  row("throughput", name, "curand", "gb_per_s",
      gigabytes_per_second(
          bytes, reps, [&](int) { direct.curand(normal); }, [&] { direct.sync(); }));
}

// One request at a time: what a caller waiting on each one sees.
void latency(const Device& device) {
  constexpr std::uint64_t n = 1 << 20;
  constexpr int kWarm = 100, kReps = 2000;
  const BufferHandle out = require(device.ask(Allocate{.dtype = DType::f32, .count = n}).wait(), "allocate");
  Direct direct(n);
  std::vector<double> accel_us, curand_us;
  for (int i = 0; i < kWarm + kReps; ++i) {
    const auto t0 = Clock::now();
    require(device.ask(rand::Generate{.seed = 42, .count = n, .output = out}).wait(), "generate");
    const auto t1 = Clock::now();
    direct.curand(false);
    direct.sync();
    const auto t2 = Clock::now();
    if (i >= kWarm) {
      accel_us.push_back(micros(t1 - t0));
      curand_us.push_back(micros(t2 - t1));
    }
  }
  row("latency", "uniform 1M f32", "accel", "round_trip_median_us", percentile(accel_us, 0.5));
  row("latency", "uniform 1M f32", "curand", "round_trip_median_us", percentile(curand_us, 0.5));
  require(device.free(out).wait(), "free");
}

}  // namespace

int main() {
  System system;
  const Device device = bench::open_gpu_or_skip(system, "rand_bench");
  fmt::print("part,case,variant,metric,value\n");
  for (bool normal : {false, true})
    for (std::uint64_t n : {std::uint64_t{1} << 20, std::uint64_t{64} << 20}) throughput(device, n, normal);
  throughput(device, std::uint64_t{256} << 20, true);  // 1 GiB of normal f32
  latency(device);
  return 0;
}
