// What a recorded chain of small requests saves over sending them one by one (issue 47): 20 small GEMMs, each
// reading the previous one's product, and an FFT of the last, on one device; then issue 47's pipeline with host
// copies: upload X (n x n, pinned host memory), r2c FFT of its rows, c2r back, C = Y W, C scaled by 1/n (blas::Scal),
// C downloaded (pinned host memory). An isolated device cannot record host copies: the pipeline's recorded variant
// is left out there (a line on stderr says so).
//   recording_bench [--cpu] [--isolated] [--size N] [--gemms N] [--iterations N]
//                   [--completion poller|host_callback|blocking] [--only VARIANT]
// Default: cuda:0 in process, 64 x 64 f32 GEMMs, 20 of them (--gemms 0: the FFT alone, what a launch costs besides
// the GEMMs), 200 timed iterations after 20 warm-ups, the device's default completion strategy, every variant (--only:
// that one alone, for a profile of it). Variants:
//   one_by_one         the requests (21 by default) sent back to back, the last one waited for (the device
//                      pipelines them);
//   one_by_one_waited  each request waited for before the next is sent;
//   recorded           Recording::launch() of the same requests, waited for;
//   recorded_polled    the same, the caller looking at its future's ready() in a loop that never yields or sleeps
//                      (how much of a launch's time is the caller's waiting).
// Metrics: end-to-end µs per chain (p50, p90) and the host µs the caller spends sending (host_p50). Prints CSV rows
// (common/csv_report.hpp). On a CUDA device a launch is one RunRecorded request: its steps captured into a CUDA
// graph at the first launch and replayed by one cudaGraphLaunch after (the device's "recorded-graphs" cache).
#include <fmt/format.h>

#include <chrono>
#include <complex>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accel/device/recording.hpp"
#include "common/completion_option.hpp"
#include "common/csv_report.hpp"
#include "common/exit_now.hpp"

#if ACCEL_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using namespace accel;
using bench::micros;
using bench::require;
using Clock = std::chrono::steady_clock;

struct Options {
  DeviceOptions device{.kind = DeviceKind::cuda};
  std::int64_t size = 64;
  int gemms = 20;
  int iterations = 200;
  std::string only;  // empty: every variant
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
    } else if (arg == "--gemms" && i + 1 < argc && std::atoi(argv[i + 1]) >= 0 && std::atoi(argv[i + 1]) <= 1000) {
      options.gemms = std::atoi(argv[++i]);
    } else if (arg == "--iterations" && i + 1 < argc) {
      options.iterations = std::atoi(argv[++i]);
    } else if (arg == "--only" && i + 1 < argc) {
      options.only = argv[++i];
    } else if (arg == "--completion" && i + 1 < argc && bench::completion_of(argv[i + 1])) {
      options.device.completion = *bench::completion_of(argv[++i]);
    } else {
      fmt::print(stderr,
                 "usage: recording_bench [--cpu] [--isolated] [--size N] [--gemms 0-1000] [--iterations N] "
                 "[--completion poller|host_callback|blocking] [--only VARIANT]\n");
      accel::bench::exit_now(2);
    }
  }
  return options;
}

void check(const Status& status, const char* what) {
  if (!status.ok()) {
    fmt::print(stderr, "{}: {}\n", what, status.to_string());
    accel::bench::exit_now(1);
  }
}

// GEMMs X_{i+1} = W X_i over n x n matrices (twenty by default), then a batched r2c FFT of the rows of the last X.
struct Chain {
  std::int64_t n = 0;
  Buffer<float> w;
  std::vector<Buffer<float>> x;
  Buffer<std::complex<float>> spectrum;

  std::vector<Gemm> gemms() const {
    std::vector<Gemm> out;
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
      out.push_back({.shape = {.m = n, .n = n, .k = n}, .a = w, .b = x[i], .c = x[i + 1], .alpha = 1.0 / n});
    }
    return out;
  }
  Fft fft() const {
    return {.shape = {.type = FftType::r2c, .precision = DType::f32, .rank = 1, .n = {n, 0, 0}, .batch = n},
            .input = x.back(),
            .output = spectrum};
  }
};

Chain make_chain(const Device& device, std::int64_t n, int gemms) {
  Chain chain{.n = n};
  std::vector<float> values(n * n);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  chain.w = require(device.allocate<float>(n * n).wait(), "allocate");
  require(device.upload(std::span<const float>(values), chain.w).wait(), "upload");
  for (int i = 0; i <= gemms; ++i) {
    chain.x.push_back(require(device.allocate<float>(n * n).wait(), "allocate"));
    require(device.upload(std::span<const float>(values), chain.x.back()).wait(), "upload");
  }
  chain.spectrum = require(device.allocate<std::complex<float>>(n * (n / 2 + 1)).wait(), "allocate");
  return chain;
}

// Host memory of `count` floats: pinned where CUDA is built in (a recorded host copy needs it), plain otherwise.
struct HostFloats {
  float* data = nullptr;
  std::size_t count = 0;
  std::unique_ptr<float[]> plain;
  explicit HostFloats(std::size_t n) : count(n) {
#if ACCEL_HAVE_CUDA
    void* pinned = nullptr;
    if (cudaHostAlloc(&pinned, n * sizeof(float), cudaHostAllocPortable) == cudaSuccess) {
      data = static_cast<float*>(pinned);
      return;
    }
#endif
    plain = std::make_unique<float[]>(n);
    data = plain.get();
  }
  ~HostFloats() {
#if ACCEL_HAVE_CUDA
    if (!plain) (void)cudaFreeHost(data);
#endif
  }
  HostFloats(const HostFloats&) = delete;
  HostFloats& operator=(const HostFloats&) = delete;
  std::span<float> span() const { return {data, count}; }
};

// Upload X, r2c FFT of its rows into E, c2r back into Y (n X), C = Y W, C scaled by 1/n, C downloaded.
struct Pipeline {
  std::int64_t n = 0;
  Buffer<float> x, y, w, c;
  Buffer<std::complex<float>> e;

  [[nodiscard]] Fft fft(FftType type) const {
    const bool forward = type == FftType::r2c;
    return {.shape = {.type = type,
                      .precision = DType::f32,
                      .rank = 1,
                      .n = {n, 0, 0},
                      .batch = n,
                      .direction = forward ? FftDirection::forward : FftDirection::inverse},
            .input = forward ? BufferHandle(x) : BufferHandle(e),
            .output = forward ? BufferHandle(e) : BufferHandle(y)};
  }
  [[nodiscard]] Gemm gemm() const { return {.shape = {.m = n, .n = n, .k = n}, .a = y, .b = w, .c = c}; }
  [[nodiscard]] blas::Scal scale() const { return {.n = n * n, .alpha = 1.0 / static_cast<double>(n), .x = c}; }
};

Pipeline make_pipeline(const Chain& chain, const Device& device) {
  const std::int64_t n = chain.n;
  Pipeline p{.n = n, .w = chain.w};
  p.x = require(device.allocate<float>(n * n).wait(), "allocate");
  p.y = require(device.allocate<float>(n * n).wait(), "allocate");
  p.c = require(device.allocate<float>(n * n).wait(), "allocate");
  p.e = require(device.allocate<std::complex<float>>(n * (n / 2 + 1)).wait(), "allocate");
  return p;
}

enum class Waiting { wait, poll };

// Times `send` (which returns the future of its last request) `iterations` times after 20 warm-ups; the future is
// waited for, or (Waiting::poll) looked at until ready without yielding. A variant --only leaves out is not sent.
template <class Send>
void measure(const Options& options, std::string_view name, std::string_view variant, Send&& send,
             Waiting waiting = Waiting::wait) {
  if (!options.only.empty() && options.only != variant) return;
  const int iterations = options.iterations;
  std::vector<double> total, host;
  for (int i = 0; i < 20 + iterations; ++i) {
    const Clock::time_point start = Clock::now();
    Future<Done> last = send();
    const Clock::time_point sent = Clock::now();
    if (waiting == Waiting::poll) {
      while (!last.ready()) {
      }
    }
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
  const Chain chain = make_chain(device, options.size, options.gemms);
  const std::vector<Gemm> gemms = chain.gemms();
  Recording recording(device);
  for (const Gemm& gemm : gemms) check(recording.record(gemm), "record");
  check(recording.record(chain.fft()), "record");

  const std::string completion = options.device.completion == CompletionStrategy::poller
                                     ? std::string()
                                     : fmt::format(" ({})", to_string(options.device.completion));
  const std::string name = fmt::format("{}{} {} gemm {}x{} + fft{}", device.name(),
                                       options.device.isolation == Isolation::worker_process ? " isolated" : "",
                                       options.gemms, options.size, options.size, completion);
  measure(options, name, "one_by_one", [&] {
    for (const Gemm& gemm : gemms) static_cast<void>(device.ask(gemm));
    return device.ask(chain.fft());
  });
  measure(options, name, "one_by_one_waited", [&] {
    for (const Gemm& gemm : gemms) require(device.ask(gemm).wait(), "gemm");
    return device.ask(chain.fft());
  });
  measure(options, name, "recorded", [&] { return recording.launch(); });
  measure(
      options, name, "recorded_polled", [&] { return recording.launch(); }, Waiting::poll);

  const Pipeline pipeline = make_pipeline(chain, device);
  const std::size_t elements = static_cast<std::size_t>(options.size * options.size);
  const HostFloats in(elements), out(elements);
  for (std::size_t i = 0; i < elements; ++i) in.data[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  const CopyToDevice upload{.source = HostSource::of(std::span<const float>(in.span())), .destination = pipeline.x};
  const CopyToHost download{.source = pipeline.c, .destination = HostDestination::of(out.span())};
  const std::string pipeline_name = fmt::format(
      "{}{} upload + fft + ifft + gemm + scal + download {}x{}{}", device.name(),
      options.device.isolation == Isolation::worker_process ? " isolated" : "", options.size, options.size, completion);
  measure(options, pipeline_name, "one_by_one", [&] {
    static_cast<void>(device.ask(upload));
    static_cast<void>(device.ask(pipeline.fft(FftType::r2c)));
    static_cast<void>(device.ask(pipeline.fft(FftType::c2r)));
    static_cast<void>(device.ask(pipeline.gemm()));
    static_cast<void>(device.ask(pipeline.scale()));
    return device.ask(download);
  });
  measure(options, pipeline_name, "one_by_one_waited", [&] {
    require(device.ask(upload).wait(), "upload");
    require(device.ask(pipeline.fft(FftType::r2c)).wait(), "fft");
    require(device.ask(pipeline.fft(FftType::c2r)).wait(), "inverse fft");
    require(device.ask(pipeline.gemm()).wait(), "gemm");
    require(device.ask(pipeline.scale()).wait(), "scal");
    return device.ask(download);
  });
  if (options.device.isolation == Isolation::worker_process) {
    fmt::print(stderr,
               "recording_bench: the pipeline's recorded variant is left out (an isolated device cannot "
               "record host copies)\n");
    return 0;
  }
  Recording recorded_pipeline(device);
  check(recorded_pipeline.record(upload), "record");
  check(recorded_pipeline.record(pipeline.fft(FftType::r2c)), "record");
  check(recorded_pipeline.record(pipeline.fft(FftType::c2r)), "record");
  check(recorded_pipeline.record(pipeline.gemm()), "record");
  check(recorded_pipeline.record(pipeline.scale()), "record");
  check(recorded_pipeline.record(download), "record");
  measure(options, pipeline_name, "recorded", [&] { return recorded_pipeline.launch(); });
  return 0;
}
