// What a process's first GEMM costs on an accel CUDA device, from the moment Device::open returns. cuBLASLt loads and
// makes its one-time first call (100-130 ms on the H100, cuda_startup_bench) once per process; the device starts
// that when it opens, on a thread of its own, so the first GEMM pays only what is left of it (all of it before the
// device did so: 145-484 ms in issue 42). cuda_startup_bench is the floor with raw CUDA calls and nothing of accel;
// this is accel's side of it. Run it in a fresh process each time, since the load is once per process; set
// ACCEL_LAUNCH_NS=$(date +%s%N) to include the time before main.
//   first_gemm_bench [--isolated] [--delay-ms N]
// --isolated opens the device in a worker process; --delay-ms waits N ms after the open before the first request
// (what a program does meanwhile: read weights, tokenize), so that the first GEMM finds the load further along.
// Prints one JSON line of milliseconds per step.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "accel/device/device.hpp"
#include "common/csv_report.hpp"
#include "common/exit_now.hpp"
#include "common/launch_clock.hpp"

namespace {

using namespace accel;
using bench::require;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Options {
  bool isolated = false;
  int delay_ms = 0;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--isolated") {
      options.isolated = true;
    } else if (arg == "--delay-ms" && i + 1 < argc) {
      options.delay_ms = std::atoi(argv[++i]);
    } else {
      fmt::print(stderr, "usage: first_gemm_bench [--isolated] [--delay-ms N]\n");
      accel::bench::exit_now(2);
    }
  }
  return options;
}

// Row-major f16 C(m×n) = A(m×k)·B(k×n), the embedding model's GEMM kind (the shapes cuda_startup_bench times).
struct GemmOperands {
  Buffer<Half> a, b, c;
  Gemm request(std::int64_t m, std::int64_t n, std::int64_t k) const {
    return Gemm{
        .shape = {.m = m, .n = n, .k = k, .input_type = DType::f16, .output_type = DType::f16}, .a = a, .b = b, .c = c};
  }
};

GemmOperands upload_operands(const Device& device, std::size_t elements) {
  std::vector<Half> host(elements);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = to_half(static_cast<float>((i * 37) % 101) / 101.0f - 0.5f);
  GemmOperands operands{require(device.allocate<Half>(elements).wait(), "allocate A"),
                        require(device.allocate<Half>(elements).wait(), "allocate B"),
                        require(device.allocate<Half>(elements).wait(), "allocate C")};
  require(device.upload(std::span<const Half>(host), operands.a).wait(), "upload A");
  require(device.upload(std::span<const Half>(host), operands.b).wait(), "upload B");
  return operands;
}

std::string cublaslt_version(const DeviceInfo& info) {
  for (const LibraryVersion& library : info.libraries)
    if (library.name == "cuBLASLt") return library.version;
  return "absent";
}

}  // namespace

int main(int argc, char** argv) {
  const auto main_wall = std::chrono::system_clock::now();
  const Clock::time_point main_start = Clock::now();
  const Options options = parse(argc, argv);
  std::vector<std::pair<std::string, double>> steps;
  if (const std::optional<double> before_main = bench::ms_before_main(main_wall))
    steps.emplace_back("until_main", *before_main);

  System system;
  const Clock::time_point open_start = Clock::now();
  Device device =
      require(Device::open(system, {.kind = DeviceKind::cuda,
                                    .isolation = options.isolated ? Isolation::worker_process : Isolation::in_process}),
              "opening cuda:0");
  steps.emplace_back("open", ms_since(open_start));
  if (options.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(options.delay_ms));

  constexpr std::int64_t kM = 64, kN = 1536, kK = 384;
  const Clock::time_point upload_start = Clock::now();
  const GemmOperands operands = upload_operands(device, kN * kK);
  steps.emplace_back("allocate_upload", ms_since(upload_start));

  auto time_gemm = [&](const char* name, std::int64_t n) {
    const Clock::time_point start = Clock::now();
    require(device.gemm(operands.request(kM, n, kK)).wait(), name);
    steps.emplace_back(name, ms_since(start));
  };
  time_gemm("first_gemm", 1152);
  steps.emplace_back("open_to_first_gemm_result", ms_since(open_start));
  steps.emplace_back("main_to_first_gemm_result", ms_since(main_start));
  time_gemm("same_shape_gemm", 1152);
  time_gemm("second_shape_gemm", kN);

  const DeviceInfo info = require(device.info().wait(), "info");
  std::string line = fmt::format("{{\"figure\": \"accel_first_gemm\", \"isolation\": \"{}\", \"delay_ms\": {}",
                                 options.isolated ? "worker_process" : "in_process", options.delay_ms);
  line += fmt::format(", \"gpu\": \"{}\", \"cublaslt\": \"{}\"", info.name, cublaslt_version(info));
  for (const auto& [name, ms] : steps) line += fmt::format(", \"{}\": {:.3f}", name, ms);
  fmt::print("{}}}\n", line);
  return 0;
}
