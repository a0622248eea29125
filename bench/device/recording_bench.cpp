// What a recorded chain of small requests saves over sending them one by one (issue 47): 20 small GEMMs, each
// reading the previous one's product, and an FFT of the last, on one device.
//   recording_bench [--cpu] [--isolated] [--size N] [--iterations N]
// Default: cuda:0 in process, 64 x 64 f32 GEMMs, 200 timed iterations after 20 warm-ups. Variants:
//   one_by_one         the 21 requests sent back to back, the last one waited for (the device pipelines them);
//   one_by_one_waited  each request waited for before the next is sent;
//   recorded           Recording::launch() of the same 21 requests, waited for.
// Metrics: end-to-end µs per chain (p50, p90) and the host µs the caller spends sending (host_p50). Prints CSV rows
// (common/csv_report.hpp). On a CUDA device a launch is one RunRecorded request: the 21 steps captured into a CUDA
// graph at the first launch and replayed by one cudaGraphLaunch after (the device's "recorded-graphs" cache).
#include <fmt/format.h>

#include <chrono>
#include <complex>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "accel/device/recording.hpp"
#include "common/csv_report.hpp"

namespace {

using namespace accel;
using bench::micros;
using bench::require;
using Clock = std::chrono::steady_clock;

struct Options {
  DeviceOptions device{.kind = DeviceKind::cuda};
  std::int64_t size = 64;
  int iterations = 200;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--cpu") {
      options.device.kind = DeviceKind::cpu;
    } else if (arg == "--isolated") {
      options.device.isolation = Isolation::worker_process;
    } else if (arg == "--size" && i + 1 < argc) {
      options.size = std::atoll(argv[++i]);
    } else if (arg == "--iterations" && i + 1 < argc) {
      options.iterations = std::atoi(argv[++i]);
    } else {
      fmt::print(stderr, "usage: recording_bench [--cpu] [--isolated] [--size N] [--iterations N]\n");
      std::exit(2);
    }
  }
  return options;
}

void check(const Status& status, const char* what) {
  if (!status.ok()) {
    fmt::print(stderr, "{}: {}\n", what, status.to_string());
    std::exit(1);
  }
}

// Twenty GEMMs X_{i+1} = W X_i over n x n matrices, then a batched r2c FFT of the rows of the last X.
struct Chain {
  static constexpr int kGemms = 20;
  std::int64_t n = 0;
  Buffer<float> w;
  std::vector<Buffer<float>> x;
  Buffer<std::complex<float>> spectrum;

  std::vector<Gemm> gemms() const {
    std::vector<Gemm> out;
    for (int i = 0; i < kGemms; ++i) {
      out.push_back({.shape = {.m = n, .n = n, .k = n}, .a = w, .b = x[i], .c = x[i + 1], .alpha = 1.0 / n});
    }
    return out;
  }
  Fft fft() const {
    return {.shape = {.type = FftType::r2c, .precision = DType::f32, .rank = 1, .n = {n, 0, 0}, .batch = n},
            .input = x[kGemms],
            .output = spectrum};
  }
};

Chain make_chain(const Device& device, std::int64_t n) {
  Chain chain{.n = n};
  std::vector<float> values(n * n);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  chain.w = require(device.allocate<float>(n * n).wait(), "allocate");
  require(device.upload(std::span<const float>(values), chain.w).wait(), "upload");
  for (int i = 0; i <= Chain::kGemms; ++i) {
    chain.x.push_back(require(device.allocate<float>(n * n).wait(), "allocate"));
    require(device.upload(std::span<const float>(values), chain.x.back()).wait(), "upload");
  }
  chain.spectrum = require(device.allocate<std::complex<float>>(n * (n / 2 + 1)).wait(), "allocate");
  return chain;
}

// Times `send` (which returns the future of its last request) `iterations` times after 20 warm-ups.
template <class Send>
void measure(std::string_view name, std::string_view variant, int iterations, Send&& send) {
  std::vector<double> total, host;
  for (int i = 0; i < 20 + iterations; ++i) {
    const Clock::time_point start = Clock::now();
    Future<Done> last = send();
    const Clock::time_point sent = Clock::now();
    require(last.wait(), "chain");
    if (i < 20) continue;
    total.push_back(micros(Clock::now() - start));
    host.push_back(micros(sent - start));
  }
  bench::row("recording", name, variant, "p50_us", bench::percentile(total, 0.5));
  bench::row("recording", name, variant, "p90_us", bench::percentile(total, 0.9));
  bench::row("recording", name, variant, "host_p50_us", bench::percentile(host, 0.5));
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  System system;
  const Device device = require(Device::open(system, options.device), "Device::open");
  const Chain chain = make_chain(device, options.size);
  const std::vector<Gemm> gemms = chain.gemms();
  Recording recording(device);
  for (const Gemm& gemm : gemms) check(recording.record(gemm), "record");
  check(recording.record(chain.fft()), "record");

  const std::string name =
      fmt::format("{}{} 20 gemm {}x{} + fft", device.name(),
                  options.device.isolation == Isolation::worker_process ? " isolated" : "", options.size, options.size);
  measure(name, "one_by_one", options.iterations, [&] {
    for (const Gemm& gemm : gemms) static_cast<void>(device.ask(gemm));
    return device.ask(chain.fft());
  });
  measure(name, "one_by_one_waited", options.iterations, [&] {
    for (const Gemm& gemm : gemms) require(device.ask(gemm).wait(), "gemm");
    return device.ask(chain.fft());
  });
  measure(name, "recorded", options.iterations, [&] { return recording.launch(); });
  return 0;
}
