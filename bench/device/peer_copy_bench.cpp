// Copies between two GPUs of one process (issue 46): accel's copy_between_devices against the call a CUDA user makes
// directly, cudaMemcpyPeerAsync between cudaMalloc buffers with peer access enabled, in the same process and run.
//   peer_copy_bench [--iterations N] [--from A] [--to B]
// For each size (1 MiB to 1 GiB) and direction (A -> B, B -> A; default cuda:0 and cuda:1): about 4 GiB of copies a
// round (5 to 500 copies), sent back to back and the last one waited for, best of 3 rounds, the two variants
// interleaved:
//   accel   copy_between_devices(source device, destination device, CopyOnDevice) (each a Future, none waited
//           for until the last): the destination device's stream copies peer to peer from the source's pool memory;
//   direct  N cudaMemcpyPeerAsync on a stream of the destination GPU, then cudaStreamSynchronize;
//   direct_evented  the same with an event recorded behind each copy (what a runtime that answers each copy on its
//           own records; not in the ratio).
// Prints one JSON line per size and direction: GB/s of each, their ratio, and the microseconds a copy took the
// calling thread to send (the part of the round before the last copy was waited for).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "accel/device/peer.hpp"
#include "common/exit_now.hpp"

namespace {

using namespace accel;
using Clock = std::chrono::steady_clock;

void check(const Status& status, const char* what) {
  if (!status.ok()) {
    fmt::print(stderr, "{}: {}\n", what, status.to_string());
    accel::bench::exit_now(1);
  }
}

void check_cuda(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    fmt::print(stderr, "{}: {}\n", what, cudaGetErrorString(error));
    accel::bench::exit_now(1);
  }
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// A round's seconds: all of it, and the part the calling thread spent sending (before it waited for the last copy).
struct Timing {
  double total = 0;
  double sent = 0;
};

// Raw CUDA: buffers from cudaMalloc on both GPUs, peer access enabled both ways.
struct DirectPair {
  int from = 0;
  int to = 1;
  void* source = nullptr;
  void* destination = nullptr;
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> events;

  DirectPair(int from_gpu, int to_gpu, std::size_t bytes) : from(from_gpu), to(to_gpu) {
    check_cuda(cudaSetDevice(from), "cudaSetDevice");
    check_cuda(cudaMalloc(&source, bytes), "cudaMalloc (source)");
    check_cuda(cudaMemset(source, 1, bytes), "cudaMemset");
    check_cuda(cudaSetDevice(to), "cudaSetDevice");
    check_cuda(cudaMalloc(&destination, bytes), "cudaMalloc (destination)");
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~DirectPair() {
    cudaSetDevice(to);
    for (cudaEvent_t event : events) cudaEventDestroy(event);
    cudaStreamDestroy(stream);
    cudaFree(destination);
    cudaSetDevice(from);
    cudaFree(source);
  }
  // With `evented`, an event is recorded behind each copy, as a runtime that tells each copy's end apart must.
  Timing run(std::size_t bytes, int iterations, bool evented = false) {
    cudaSetDevice(to);
    while (evented && events.size() < static_cast<std::size_t>(iterations)) {
      cudaEvent_t event = nullptr;
      check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
      events.push_back(event);
    }
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < iterations; ++i) {
      check_cuda(cudaMemcpyPeerAsync(destination, to, source, from, bytes, stream), "cudaMemcpyPeerAsync");
      if (evented) check_cuda(cudaEventRecord(events[i], stream), "cudaEventRecord");
    }
    const double sent = seconds_since(start);
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return {seconds_since(start), sent};
  }
};

void enable_peer_access(int a, int b) {
  for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    int can = 0;
    check_cuda(cudaDeviceCanAccessPeer(&can, to, from), "cudaDeviceCanAccessPeer");
    if (can == 0) continue;
    check_cuda(cudaSetDevice(to), "cudaSetDevice");
    if (cudaError_t error = cudaDeviceEnablePeerAccess(from, 0); error == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();
    } else {
      check_cuda(error, "cudaDeviceEnablePeerAccess");
    }
  }
}

Timing run_accel(const Device& source_device, const Device& destination_device, const Buffer<std::uint8_t>& source,
                 const Buffer<std::uint8_t>& destination, std::size_t bytes, int iterations) {
  std::vector<Future<Done>> copies;
  copies.reserve(iterations);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    copies.push_back(copy_between_devices(source_device, destination_device,
                                          {.source = source, .destination = destination, .count = bytes}));
  }
  const double sent = seconds_since(start);
  for (Future<Done>& copy : copies) check(copy.wait().status(), "copy_between_devices");
  return {seconds_since(start), sent};
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 20;  // at least a quarter of this many copies a round
  int first = 0;
  int second = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--iterations" && i + 1 < argc) {
      iterations = std::atoi(argv[++i]);
    } else if (arg == "--from" && i + 1 < argc) {
      first = std::atoi(argv[++i]);
    } else if (arg == "--to" && i + 1 < argc) {
      second = std::atoi(argv[++i]);
    } else {
      fmt::print(stderr, "usage: peer_copy_bench [--iterations N] [--from A] [--to B]\n");
      return 2;
    }
  }
  System system;
  Result<Device> opened_first = Device::open(system, {.kind = DeviceKind::cuda, .ordinal = first});
  check(opened_first.status(), "opening the first GPU");
  Result<Device> opened_second = Device::open(system, {.kind = DeviceKind::cuda, .ordinal = second});
  check(opened_second.status(), "opening the second GPU");
  for (const PeerLink& link : cuda_peer_links()) {
    fmt::print(stderr, "link cuda:{} -> cuda:{}: peer access {}, native atomics {}, performance rank {}\n", link.from,
               link.to, link.peer_access, link.native_atomics, link.performance_rank);
  }
  enable_peer_access(first, second);
  for (std::size_t bytes : {1ul << 20, 16ul << 20, 256ul << 20, 1ul << 30}) {
    for (bool forward : {true, false}) {
      const Device& from = forward ? *opened_first : *opened_second;
      const Device& to = forward ? *opened_second : *opened_first;
      Buffer<std::uint8_t> source = *from.allocate<std::uint8_t>(bytes).wait();
      Buffer<std::uint8_t> destination = *to.allocate<std::uint8_t>(bytes).wait();
      DirectPair direct(forward ? first : second, forward ? second : first, bytes);
      // About 4 GiB a round (at least `iterations` / 4 copies, at most 500), so that the first copy's start is a small
      // part of the time: the bandwidth is the steady one.
      const int count = std::clamp(static_cast<int>((4ul << 30) / bytes), std::max(iterations / 4, 2), 500);
      run_accel(from, to, source, destination, bytes, 2);  // warm: peer access, events, pool access
      direct.run(bytes, 2);
      Timing accel_best{1e30, 0};
      Timing direct_best{1e30, 0};
      Timing evented_best{1e30, 0};
      for (int round = 0; round < 3; ++round) {
        const Timing accel = run_accel(from, to, source, destination, bytes, count);
        const Timing raw = direct.run(bytes, count);
        if (accel.total < accel_best.total) accel_best = accel;
        if (raw.total < direct_best.total) direct_best = raw;
        const Timing evented = direct.run(bytes, count, true);
        if (evented.total < evented_best.total) evented_best = evented;
      }
      const double moved = static_cast<double>(bytes) * count / 1e9;
      fmt::print(
          "{{\"bench\":\"peer_copy\",\"from\":\"{}\",\"to\":\"{}\",\"bytes\":{},\"copies\":{},\"accel_gbps\":{:.1f},"
          "\"direct_gbps\":{:.1f},\"ratio\":{:.3f},\"direct_evented_gbps\":{:.1f},\"accel_send_us\":{:.2f},"
          "\"direct_send_us\":{:.2f}}}\n",
          from.name(), to.name(), bytes, count, moved / accel_best.total, moved / direct_best.total,
          direct_best.total / accel_best.total, moved / evented_best.total, accel_best.sent / count * 1e6,
          direct_best.sent / count * 1e6);
      std::fflush(stdout);
    }
  }
  return 0;
}
