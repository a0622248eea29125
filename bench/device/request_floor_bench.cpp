// The floor under one small GPU request: the CUDA calls an in-process device makes for an on-device copy of 16
// floats, made directly, so that the device's own cost per request (isolated_bench pipelined copy_16) can be set
// against the calls it cannot avoid. Each variant sends 2,000 copies with up to 256 unanswered, as isolated_bench
// does, and prints µs per copy (median of 9 rounds, the variants taking turns):
//   copy             cudaMemcpyAsync (device to device, 64 bytes), one cudaStreamSynchronize at the end;
//   copy_event       and a completion event recorded after each copy (from a pool, as the device keeps them);
//   copy_event_poll  and a second thread answering the copies in order by cudaEventQuery on the oldest one,
//                    spinning, as the device's poller does;
//   copy_callback    cudaLaunchHostFunc after each copy instead of an event (the host_callback strategy's call);
//   kernel, kernel_event_poll  copy and copy_event_poll with the copy made by copy_on_device (operation/cuda_copy.hpp),
//                    the call the device makes for a copy under 1 MiB: a kernel of ours;
//   kernel_event_poll_paced   the poller waits 2 µs without a CUDA call after a query that found the copy unfinished;
//   kernel_event_poll_quiet   the poller makes no query while the sending thread is in its calls (tried in the
//                    device's poller and reverted: PERFORMANCE §70);
//   kernel_event_poll_newest  once the oldest copy has finished, the poller asks the newest, and answers every copy
//                    up to it at once when it has finished too (a stream's work finishes in order);
//   accel            the same copies through accel's in-process device, poller and host_callback strategies.
// Then the price of each call alone, 20,000 calls back to back: µs per call (the copies to and from the host
// between pinned memory and the device). Given variant names, runs only those, and `rounds` rounds of them (for a
// profiler: `request_floor_bench accel_poller 200`), without the calls alone.
//   request_floor_bench [variants,comma,separated [rounds]]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "accel/device/device.hpp"
#include "common/csv_report.hpp"
#include "common/cuda_checks.hpp"
#include "operation/cuda_copy.hpp"

namespace {

using namespace accel;
using bench::check_cuda;
using bench::micros;
using bench::percentile;
using bench::require;
using bench::row;
using Clock = std::chrono::steady_clock;

constexpr int kRequests = 2000;
constexpr int kWindow = 256;
constexpr int kRounds = 9;

struct Raw {
  cudaStream_t stream = nullptr;
  void* source = nullptr;
  void* destination = nullptr;
  std::vector<cudaEvent_t> events;  // one per window slot
};

Raw make_raw() {
  Raw raw;
  check_cuda(cudaStreamCreateWithFlags(&raw.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaMalloc(&raw.source, 64), "cudaMalloc");
  check_cuda(cudaMalloc(&raw.destination, 64), "cudaMalloc");
  raw.events.resize(kWindow);
  for (cudaEvent_t& event : raw.events)
    check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
  return raw;
}

void copy(const Raw& raw, bool by_kernel) {
  check_cuda(by_kernel ? copy_on_device(raw.destination, raw.source, 64, raw.stream)
                       : cudaMemcpyAsync(raw.destination, raw.source, 64, cudaMemcpyDeviceToDevice, raw.stream),
             "copying 64 bytes");
}

// µs per copy of one round of a raw variant.
double raw_round(Raw& raw, const std::string& variant) {
  const bool by_kernel = variant.starts_with("kernel");
  const auto start = Clock::now();
  if (variant == "copy" || variant == "kernel") {
    for (int i = 0; i < kRequests; ++i) copy(raw, by_kernel);
  } else if (variant == "copy_event") {
    for (int i = 0; i < kRequests; ++i) {
      if (i >= kWindow) check_cuda(cudaEventSynchronize(raw.events[i % kWindow]), "cudaEventSynchronize");
      copy(raw, false);
      check_cuda(cudaEventRecord(raw.events[i % kWindow], raw.stream), "cudaEventRecord");
    }
  } else if (variant.ends_with("event_poll") || variant.ends_with("event_poll_paced") ||
             variant.ends_with("event_poll_newest") || variant.ends_with("event_poll_quiet")) {
    const bool paced = variant.ends_with("paced"), newest = variant.ends_with("newest");
    const bool quiet = variant.ends_with("quiet");
    std::atomic<int> recorded{0}, answered{0};
    std::atomic<bool> sending{false};
    std::thread poller([&] {
      while (answered.load(std::memory_order_relaxed) < kRequests) {
        const int next = answered.load(std::memory_order_relaxed);
        const int last = recorded.load(std::memory_order_acquire);
        if (next >= last) continue;
        while (quiet && sending.load(std::memory_order_acquire)) {
        }
        if (cudaEventQuery(raw.events[next % kWindow]) != cudaSuccess) {
          // paced: no query for 2 µs after one that found the work unfinished
          for (const auto since = Clock::now(); paced && Clock::now() - since < std::chrono::microseconds(2);) {
          }
          continue;
        }
        // newest: when the oldest has finished, the newest is asked; if it has too, so has everything between
        const bool all = newest && last - next > 1 && cudaEventQuery(raw.events[(last - 1) % kWindow]) == cudaSuccess;
        answered.store(all ? last : next + 1, std::memory_order_release);
      }
    });
    for (int i = 0; i < kRequests; ++i) {
      while (i - answered.load(std::memory_order_acquire) >= kWindow) std::this_thread::yield();
      if (quiet) sending.store(true, std::memory_order_release);
      copy(raw, by_kernel);
      check_cuda(cudaEventRecord(raw.events[i % kWindow], raw.stream), "cudaEventRecord");
      if (quiet) sending.store(false, std::memory_order_release);
      recorded.store(i + 1, std::memory_order_release);
    }
    poller.join();
  } else if (variant == "copy_callback") {
    std::atomic<int> answered{0};
    const auto answer = [](void* count) { static_cast<std::atomic<int>*>(count)->fetch_add(1); };
    for (int i = 0; i < kRequests; ++i) {
      while (i - answered.load(std::memory_order_acquire) >= kWindow) std::this_thread::yield();
      copy(raw, false);
      check_cuda(cudaLaunchHostFunc(raw.stream, answer, &answered), "cudaLaunchHostFunc");
    }
    while (answered.load() < kRequests) std::this_thread::yield();
  }
  check_cuda(cudaStreamSynchronize(raw.stream), "cudaStreamSynchronize");
  return micros(Clock::now() - start) / kRequests;
}

struct AccelCopies {
  std::string name;
  Device device;
  Buffer<float> source, destination;
};

double accel_round(AccelCopies& copies) {
  std::deque<Future<Done>> in_flight;
  const auto start = Clock::now();
  for (int i = 0; i < kRequests; ++i) {
    if (in_flight.size() == kWindow) {
      require(in_flight.front().wait(), "copy");
      in_flight.pop_front();
    }
    in_flight.push_back(
        copies.device.ask(CopyOnDevice{.source = copies.source, .destination = copies.destination, .count = 16}));
  }
  for (auto& f : in_flight) require(f.wait(), "copy");
  return micros(Clock::now() - start) / kRequests;
}

// µs per call of `call`, made 20,000 times back to back.
template <class Call>
double per_call(Call call) {
  constexpr int kCalls = 20'000;
  const auto start = Clock::now();
  for (int i = 0; i < kCalls; ++i) call(i);
  return micros(Clock::now() - start) / kCalls;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 3 || (argc > 1 && std::string_view(argv[1]).starts_with("-"))) {
    fmt::print(stderr, "usage: request_floor_bench [variants,comma,separated [rounds]]\n");
    return 2;
  }
  const std::vector<std::string> only = argc > 1 ? bench::split_list(argv[1]) : std::vector<std::string>{};
  const int rounds = argc > 2 ? std::atoi(argv[2]) : kRounds;
  if (rounds < 1) {
    fmt::print(stderr, "request_floor_bench: rounds must be a positive number, not '{}'\n", argv[2]);
    return 2;
  }
  const auto chosen = [&](const std::string& variant) {
    return only.empty() || std::find(only.begin(), only.end(), variant) != only.end();
  };
  System system;
  Raw raw = make_raw();
  std::vector<AccelCopies> accel;
  for (const auto& [name, strategy] : {std::pair{"accel_poller", CompletionStrategy::poller},
                                       std::pair{"accel_host_callback", CompletionStrategy::host_callback}}) {
    Device device = require(Device::open(system, {.kind = DeviceKind::cuda, .completion = strategy}), "open");
    auto source = require(device.allocate<float>(16).wait(), "allocate");
    auto destination = require(device.allocate<float>(16).wait(), "allocate");
    accel.push_back({name, std::move(device), std::move(source), std::move(destination)});
  }
  const std::vector<std::string> raw_variants = {"copy",
                                                 "copy_event",
                                                 "copy_event_poll",
                                                 "copy_callback",
                                                 "kernel",
                                                 "kernel_event_poll",
                                                 "kernel_event_poll_paced",
                                                 "kernel_event_poll_newest",
                                                 "kernel_event_poll_quiet"};
  for (const std::string& name : only) {
    const bool known = std::find(raw_variants.begin(), raw_variants.end(), name) != raw_variants.end() ||
                       std::any_of(accel.begin(), accel.end(), [&](const AccelCopies& a) { return a.name == name; });
    if (!known) {
      fmt::print(stderr, "request_floor_bench: no variant '{}'\n", name);
      return 2;
    }
  }
  std::vector<std::vector<double>> raw_times(raw_variants.size()), accel_times(accel.size());
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t v = 0; v < raw_variants.size(); ++v)
      if (chosen(raw_variants[v])) raw_times[v].push_back(raw_round(raw, raw_variants[v]));
    for (std::size_t v = 0; v < accel.size(); ++v)
      if (chosen(accel[v].name)) accel_times[v].push_back(accel_round(accel[v]));
  }
  fmt::print("part,case,variant,metric,value\n");
  for (std::size_t v = 0; v < raw_variants.size(); ++v)
    if (!raw_times[v].empty())
      row("pipelined", "copy_16", raw_variants[v], "us_per_request", percentile(raw_times[v], 0.5));
  for (std::size_t v = 0; v < accel.size(); ++v)
    if (!accel_times[v].empty())
      row("pipelined", "copy_16", accel[v].name, "us_per_request", percentile(accel_times[v], 0.5));
  if (!only.empty()) return 0;

  row("call", "cudaMemcpyAsync_d2d_64B", "raw", "us_per_call", per_call([&](int) { copy(raw, false); }));
  check_cuda(cudaStreamSynchronize(raw.stream), "cudaStreamSynchronize");
  row("call", "copy_on_device_64B", "raw", "us_per_call", per_call([&](int) { copy(raw, true); }));
  check_cuda(cudaStreamSynchronize(raw.stream), "cudaStreamSynchronize");
  void* pinned = nullptr;
  check_cuda(cudaMallocHost(&pinned, 64), "cudaMallocHost");
  row("call", "cudaMemcpyAsync_h2d_64B_pinned", "raw", "us_per_call", per_call([&](int) {
        check_cuda(cudaMemcpyAsync(raw.destination, pinned, 64, cudaMemcpyHostToDevice, raw.stream), "h2d");
      }));
  check_cuda(cudaStreamSynchronize(raw.stream), "cudaStreamSynchronize");
  row("call", "cudaMemcpyAsync_d2h_64B_pinned", "raw", "us_per_call", per_call([&](int) {
        check_cuda(cudaMemcpyAsync(pinned, raw.source, 64, cudaMemcpyDeviceToHost, raw.stream), "d2h");
      }));
  check_cuda(cudaStreamSynchronize(raw.stream), "cudaStreamSynchronize");
  row("call", "cudaEventRecord", "raw", "us_per_call",
      per_call([&](int i) { check_cuda(cudaEventRecord(raw.events[i % kWindow], raw.stream), "cudaEventRecord"); }));
  row("call", "cudaEventQuery_done", "raw", "us_per_call",
      per_call([&](int i) { (void)cudaEventQuery(raw.events[i % kWindow]); }));
  row("call", "cudaStreamQuery_idle", "raw", "us_per_call", per_call([&](int) { (void)cudaStreamQuery(raw.stream); }));
  return 0;
}
