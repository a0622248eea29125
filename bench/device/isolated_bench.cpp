// Isolated devices (context in a worker process) side by side with in-process devices, same process, same GPU:
//   roundtrip   one request at a time, submit → reply: a request the device answers without GPU work (Free of
//               a null handle, answered invalid_argument on the device's own thread) and a 64³ f32 GEMM;
//               median and p99 in µs, the variants taking turns. Isolated is measured with the default spin
//               (100 µs) and with none.
//   pipelined   2000 GEMMs of 64³ with up to 256 in flight: µs per GEMM, median of 9 rounds taken in turns; and
//               as many on-device copies of 16 floats (a request whose work is next to nothing: the device's own
//               cost of a request).
//   recovery    a real fault (CUDA: a kernel writing to an invalid address; CPU: the worker aborts) until the
//               first successful request on the replacement worker: median and p99 in ms over 20 faults,
//               without and with a standby worker.
// Runs on cuda:0 when there is a GPU, else on the CPU. Prints CSV rows: part,case,variant,metric,value.
//   isolated_bench [roundtrip,pipelined,recovery]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "accel/device/device.hpp"
#include "common/csv_report.hpp"
#include "common/exit_now.hpp"

namespace {

using namespace accel;
using Clock = std::chrono::steady_clock;

using bench::micros;
using bench::percentile;
using bench::require;
using bench::row;

struct Variant {
  std::string name;
  DeviceOptions options;
};

std::vector<Variant> variants(DeviceKind kind) {
  DeviceOptions in_process{.kind = kind};
  DeviceOptions isolated{.kind = kind, .isolation = Isolation::worker_process};
  DeviceOptions isolated_no_spin = isolated;
  isolated_no_spin.worker.spin = std::chrono::microseconds(0);
  return {{"in_process", in_process}, {"isolated", isolated}, {"isolated_nospin", isolated_no_spin}};
}

struct GemmOperands {
  Buffer<float> a, b, c;
  Gemm request() const { return Gemm{.shape = {.m = 64, .n = 64, .k = 64}, .a = a, .b = b, .c = c}; }
};

GemmOperands make_gemm(const Device& dev) {
  std::vector<float> host(64 * 64);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((i * 37) % 101) / 101.0f - 0.5f;
  GemmOperands g{require(dev.allocate<float>(host.size()).wait(), "allocate"),
                 require(dev.allocate<float>(host.size()).wait(), "allocate"),
                 require(dev.allocate<float>(host.size()).wait(), "allocate")};
  require(dev.upload(std::span<const float>(host), g.a).wait(), "upload");
  require(dev.upload(std::span<const float>(host), g.b).wait(), "upload");
  return g;
}

// Every variant open at once, each with its GEMM operands, so that the variants can take turns.
struct OpenVariant {
  std::string name;
  Device dev;
  GemmOperands g;
};

std::vector<OpenVariant> open_variants(System& system, DeviceKind kind) {
  std::vector<OpenVariant> opened;
  for (const Variant& variant : variants(kind)) {
    Device dev = require(Device::open(system, variant.options), "open");
    GemmOperands g = make_gemm(dev);
    opened.push_back({variant.name, dev, std::move(g)});
  }
  return opened;
}

template <class Submit>
std::vector<double> time_round_trips(int count, Submit submit) {
  for (int i = 0; i < count / 10; ++i) submit();
  std::vector<double> samples;
  samples.reserve(count);
  for (int i = 0; i < count; ++i) {
    const auto start = Clock::now();
    submit();
    samples.push_back(micros(Clock::now() - start));
  }
  return samples;
}

// The variants take turns in 10 rounds (2000 empty requests and 500 GEMMs each), as in pipelined() below.
void round_trip(System& system, DeviceKind kind) {
  std::vector<OpenVariant> opened = open_variants(system, kind);
  std::vector<std::vector<double>> empty(opened.size()), gemm(opened.size());
  for (int round = 0; round < 10; ++round) {
    for (std::size_t i = 0; i < opened.size(); ++i) {
      OpenVariant& v = opened[i];
      std::vector<double> samples = time_round_trips(2'000, [&] { (void)v.dev.free(BufferHandle{}).wait(); });
      empty[i].insert(empty[i].end(), samples.begin(), samples.end());
      samples = time_round_trips(500, [&] { require(v.dev.gemm(v.g.request()).wait(), "gemm"); });
      gemm[i].insert(gemm[i].end(), samples.begin(), samples.end());
    }
  }
  for (std::size_t i = 0; i < opened.size(); ++i) {
    row("roundtrip", "empty_request", opened[i].name, "median_us", percentile(empty[i], 0.5));
    row("roundtrip", "empty_request", opened[i].name, "p99_us", percentile(empty[i], 0.99));
    row("roundtrip", "gemm_64", opened[i].name, "median_us", percentile(gemm[i], 0.5));
    row("roundtrip", "gemm_64", opened[i].name, "p99_us", percentile(gemm[i], 0.99));
  }
}

// The variants take turns, round after round, so that a slow spell of the machine does not fall on one of them.
void pipelined(System& system, DeviceKind kind) {
  constexpr int kRequests = 2000;
  constexpr std::size_t kWindow = 256;
  constexpr int kRounds = 9;
  std::vector<OpenVariant> opened = open_variants(system, kind);
  const auto per_request = [&](const char* what, auto request_of) {
    std::vector<std::vector<double>> times(opened.size());
    for (int round = 0; round < kRounds; ++round) {
      for (std::size_t v = 0; v < opened.size(); ++v) {
        std::deque<Future<Done>> in_flight;
        const auto start = Clock::now();
        for (int i = 0; i < kRequests; ++i) {
          if (in_flight.size() == kWindow) {
            require(in_flight.front().wait(), what);
            in_flight.pop_front();
          }
          in_flight.push_back(opened[v].dev.ask(request_of(opened[v].g)));
        }
        for (auto& f : in_flight) require(f.wait(), what);
        times[v].push_back(micros(Clock::now() - start) / kRequests);
      }
    }
    for (std::size_t v = 0; v < opened.size(); ++v)
      row("pipelined", what, opened[v].name, "us_per_request", percentile(times[v], 0.5));
  };
  per_request("gemm_64", [](const GemmOperands& g) { return g.request(); });
  per_request("copy_16",
              [](const GemmOperands& g) { return CopyOnDevice{.source = g.a, .destination = g.c, .count = 16}; });
}

// With a standby, each fault waits a second first, so that the standby replaced after the previous fault is ready.
void recovery(System& system, DeviceKind kind) {
  const FaultKind fault = kind == DeviceKind::cuda ? FaultKind::illegal_address : FaultKind::worker_crash;
  const std::string name = std::string(to_string(fault));
  for (const bool standby : {false, true}) {
    DeviceOptions options{.kind = kind, .isolation = Isolation::worker_process};
    options.worker.restarts = {.max_restarts = 1000,
                               .window = std::chrono::milliseconds(600'000),
                               .initial_backoff = std::chrono::milliseconds(0)};
    options.worker.standby = standby;
    Device dev = require(Device::open(system, options), "open");
    std::vector<double> lost_ms, recovered_ms;
    for (int trial = 0; trial < 20; ++trial) {
      if (standby) std::this_thread::sleep_for(std::chrono::seconds(1));
      GemmOperands g = make_gemm(dev);
      const auto start = Clock::now();
      Result<Done> faulted = dev.inject_fault(fault).wait();
      if (faulted.status().code() != Code::context_lost) {
        fmt::print(stderr, "the fault was answered {}\n", faulted.status().to_string());
        accel::bench::exit_now(1);
      }
      lost_ms.push_back(micros(Clock::now() - start) / 1000.0);
      require(dev.info().wait(), "first request after the fault");
      recovered_ms.push_back(micros(Clock::now() - start) / 1000.0);
    }
    const std::string variant = standby ? "isolated_standby" : "isolated";
    row("recovery", name, variant, "answered_lost_median_ms", percentile(lost_ms, 0.5));
    row("recovery", name, variant, "first_ok_median_ms", percentile(recovered_ms, 0.5));
    row("recovery", name, variant, "first_ok_p99_ms", percentile(recovered_ms, 0.99));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string parts = argc > 1 ? argv[1] : "roundtrip,pipelined,recovery";
  System system;
  DeviceKind kind = DeviceKind::cpu;
  if (Result<Device> probe = Device::open_default(system); probe.ok()) kind = probe->kind();
  constexpr int kClockReads = 100'000;
  const auto clock_start = Clock::now();
  for (int i = 0; i < kClockReads; ++i) (void)Clock::now();
  fmt::print(stderr, "isolated_bench on {}; one clock read costs {:.0f} ns here\n", to_string(kind),
             micros(Clock::now() - clock_start) * 1000.0 / kClockReads);
  fmt::print("part,case,variant,metric,value\n");
  if (parts.find("roundtrip") != std::string::npos) round_trip(system, kind);
  if (parts.find("pipelined") != std::string::npos) pipelined(system, kind);
  if (parts.find("recovery") != std::string::npos) recovery(system, kind);
  return 0;
}
