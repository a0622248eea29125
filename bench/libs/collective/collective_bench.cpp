// NCCL collectives through accel on the GPUs of one process (every GPU of the machine, or as many as the first
// argument says; on one GPU a world of one rank, which times what a request costs the host): all-reduce (f32, sum)
// from 4 B to 1 GiB, all-gather and reduce-scatter at 16 MiB and 256 MiB. Each size: warm-up, then `iterations`
// requests sent back to back on every rank and waited for at the end; time is the mean per request. Bus bandwidth as
// nccl-tests and the peer (bench/peers/torch_distributed.py) compute it: all-reduce algbw * 2(n-1)/n, the others
// algbw * (n-1)/n, where bytes are the all-reduce's buffer, the all-gather's output and the reduce-scatter's input.
// `--one-communicator`: every call on the non-blocking communicator (CommOptions::blocking_collectives = false).
// CSV: op,bytes,time_us,algbw_gbps,busbw_gbps
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "accel/libs/collective/communicator.hpp"
#include "common/exit_now.hpp"

using namespace accel;
using namespace accel::collective;

namespace {

template <class Make>
double time_us(const std::vector<Communicator>& comms, int iterations, Make&& make) {
  const auto run = [&](int count) {
    std::vector<Future<Done>> last;
    for (int i = 0; i < count; ++i) {
      last.clear();
      for (const Communicator& comm : comms) last.push_back(comm.ask(make(comm)));
    }
    for (Future<Done>& done : last) {
      if (Status s = done.wait().status(); !s.ok()) {
        std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
        accel::bench::exit_now(1);
      }
    }
  };
  run(5);
  const auto start = std::chrono::steady_clock::now();
  run(iterations);
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / iterations;
}

void row(const char* op, std::uint64_t bytes, double us, double bus_factor) {
  const double algbw = static_cast<double>(bytes) / (us * 1e3);
  std::printf("%s,%llu,%.2f,%.2f,%.2f\n", op, static_cast<unsigned long long>(bytes), us, algbw, algbw * bus_factor);
}

}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
    std::fprintf(stderr, "collective_bench needs a GPU, found %d\n", count);
    return 77;  // skipped, as every other GPU benchmark ends where it finds none (common/open_gpu.hpp)
  }
  int ranks = count;
  CommOptions options;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--one-communicator") {
      options.blocking_collectives = false;
    } else {
      ranks = std::atoi(argv[i]);
    }
  }
  if (ranks < 1 || ranks > count) {
    std::fprintf(stderr, "collective_bench: %d ranks asked for, %d GPUs here\n", ranks, count);
    return 1;
  }
  System system;
  std::vector<Device> devices;
  for (int i = 0; i < ranks; ++i) devices.push_back(*Device::open(system, {.kind = DeviceKind::cuda, .ordinal = i}));
  const auto used_mib = [] {
    std::size_t free = 0, total = 0;
    cudaSetDevice(0);
    cudaMemGetInfo(&free, &total);
    return static_cast<double>(total - free) / (1 << 20);
  };
  const double before = used_mib();
  Result<std::vector<Communicator>> comms = init_all(devices, options);
  if (!comms.ok()) {
    std::fprintf(stderr, "%s\n", std::string(comms.status().message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "GPU 0 memory taken by its communicator%s: %.0f MiB\n",
               options.blocking_collectives ? "s (non-blocking and split blocking)" : " (one non-blocking)",
               used_mib() - before);
  const auto n = static_cast<double>(ranks);
  const std::uint64_t max_elements = (1ull << 30) / 4;
  std::vector<BufferHandle> buffers, outputs;
  for (const Device& device : devices) {
    buffers.push_back(*device.ask(Allocate{.dtype = DType::f32, .count = max_elements}).wait());
    outputs.push_back(*device.ask(Allocate{.dtype = DType::f32, .count = max_elements}).wait());
  }
  std::printf("op,bytes,time_us,algbw_gbps,busbw_gbps\n");
  for (std::uint64_t bytes = 4; bytes <= (1ull << 30); bytes *= 4) {
    const std::uint64_t elements = bytes / 4;
    const int iterations = bytes <= (1u << 20) ? 1000 : bytes <= (64u << 20) ? 100 : 20;
    const double us = time_us(*comms, iterations, [&](const Communicator& c) {
      const BufferHandle x = buffers[static_cast<std::size_t>(c.rank())];
      return all_reduce(c.comm(), x, x, elements, DType::f32, ReduceOp::sum);
    });
    row("all_reduce", bytes, us, 2 * (n - 1) / n);
  }
  for (std::uint64_t bytes : {16ull << 20, 256ull << 20}) {
    const std::uint64_t part = bytes / 4 / static_cast<std::uint64_t>(ranks);  // elements per rank
    const int iterations = bytes <= (16u << 20) ? 200 : 50;
    const double gather = time_us(*comms, iterations, [&](const Communicator& c) {
      const auto r = static_cast<std::size_t>(c.rank());
      return all_gather(c.comm(), buffers[r], outputs[r], part, DType::f32);
    });
    row("all_gather", bytes, gather, (n - 1) / n);
    const double scatter = time_us(*comms, iterations, [&](const Communicator& c) {
      const auto r = static_cast<std::size_t>(c.rank());
      return reduce_scatter(c.comm(), buffers[r], outputs[r], part, DType::f32, ReduceOp::sum);
    });
    row("reduce_scatter", bytes, scatter, (n - 1) / n);
  }
  std::vector<Future<Done>> destroyed;
  for (const Communicator& comm : *comms) destroyed.push_back(comm.destroy());
  for (Future<Done>& done : destroyed) (void)done.wait();
  return 0;
}
