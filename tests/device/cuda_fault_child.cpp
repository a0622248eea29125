// Run by cuda_fault_test in a child process, because a sticky fault ends CUDA for the whole process: fills
// two streams of cuda:0 with work, injects a kernel that writes to an invalid address, and reports how every
// request was answered. Prints key=value lines; exits 0 when it ended cleanly, 77 when there is no GPU.
#include <fmt/format.h>

#include <chrono>
#include <string>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/blas/gemm.hpp"

namespace {

accel::CompletionStrategy parse(const std::string& name) {
  if (name == "host_callback") return accel::CompletionStrategy::host_callback;
  if (name == "blocking") return accel::CompletionStrategy::blocking;
  return accel::CompletionStrategy::poller;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace accel;
  System system;
  Result<Device> opened =
      Device::open(system, {.kind = DeviceKind::cuda, .completion = parse(argc > 1 ? argv[1] : "poller")});
  if (!opened.ok()) {
    fmt::print("open={}\n", opened.status().to_string());
    return opened.status().code() == Code::unavailable ? 77 : 1;
  }
  Device device = *opened;
  Device second = *device.open_stream();

  constexpr std::int64_t n = 4096;
  std::vector<float> ones(n * n, 1.0f);
  Buffer<float> a = *device.allocate<float>(n * n).wait();
  Buffer<float> c = *device.allocate<float>(n * n).wait();
  Buffer<float> d = *second.allocate<float>(n * n).wait();
  if (!device.upload(std::span<const float>(ones), a).wait().ok()) return 2;

  std::vector<Future<Done>> futures;
  const Gemm gemm{.shape = {.m = n, .n = n, .k = n}, .a = a, .b = a, .c = c};
  for (int i = 0; i < 8; ++i) futures.push_back(device.gemm(gemm));
  futures.push_back(device.inject_fault());
  for (int i = 0; i < 8; ++i) {
    futures.push_back(device.gemm(gemm));
    futures.push_back(second.gemm({.shape = gemm.shape, .a = a, .b = a, .c = d}));
  }
  std::vector<float> back(16);
  for (int i = 0; i < 8; ++i) futures.push_back(device.download(c, std::span<float>(back)));

  int ok = 0, lost = 0, other = 0, unanswered = 0;
  const auto deadline = std::chrono::seconds(60);
  for (Future<Done>& future : futures) {
    Result<Done> result = future.wait_for(deadline);
    if (result.ok())
      ++ok;
    else if (result.status().code() == Code::context_lost)
      ++lost;
    else if (result.status().code() == Code::deadline_exceeded)
      ++unanswered;
    else {
      ++other;
      fmt::print("other={}\n", result.status().to_string());
    }
  }
  fmt::print("requests={}\nok={}\ncontext_lost={}\nother_errors={}\nunanswered={}\n", futures.size(), ok, lost, other,
             unanswered);
  fmt::print("health={}\n", device.health().to_string());

  const Status after = device.allocate<float>(16).wait().status();
  fmt::print("next_request={}\n", after.to_string());
  const Status reopened = Device::open(system, {.kind = DeviceKind::cuda}).status();
  fmt::print("reopen={}\n", reopened.to_string());
  const bool poisoned = device.health().code() == Code::context_lost && after.code() == Code::context_lost &&
                        reopened.code() == Code::context_lost &&
                        after.message().find("restart the process") != std::string_view::npos;
  fmt::print("poisoned={}\n", poisoned ? 1 : 0);
  std::fflush(stdout);

  system.shutdown();
  fmt::print("clean_exit=1\n");
  return 0;
}
