// The accel command line: `demo` (a real workload through the actors) and `info` (devices and libraries).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "accel/device/device.hpp"
#include "cli/demo.hpp"
#include "cli/library_list.hpp"

namespace {

void print_caches(const accel::DeviceInfo& info) {
  for (const accel::CacheStats& cache : info.caches) {
    fmt::print("  cache {}: {} entries, {} hits, {} misses, {} builds, {} disk loads{}\n", cache.name, cache.entries,
               cache.hits, cache.misses, cache.builds, cache.disk_loads,
               cache.directory.empty() ? std::string() : fmt::format(", in {}", cache.directory));
  }
}

int run_info() {
  accel::System system;
  accel::Result<accel::Device> cpu = accel::Device::open(system, {.kind = accel::DeviceKind::cpu});
  if (cpu) {
    accel::Result<accel::DeviceInfo> info = cpu->info().wait();
    if (info) fmt::print("{}: {}\n", info->name, accel::cli::library_list(*info));
  }
  accel::Result<accel::Device> gpu = accel::Device::open(system, {.kind = accel::DeviceKind::cuda});
  if (!gpu) {
    fmt::print("cuda:0: unavailable ({})\n", gpu.status().to_string());
  } else if (accel::Result<accel::DeviceInfo> info = gpu->info().wait(); info) {
    fmt::print("{}: compute capability {}.{}, {:.1f} GiB, {}, completion by {}\n", info->name,
               info->compute_capability / 10, info->compute_capability % 10, info->memory_capacity_bytes / 1073741824.0,
               accel::cli::library_list(*info), to_string(info->completion));
    print_caches(*info);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"accel: NVIDIA's GPU libraries as supervised actors behind one async API"};
  app.require_subcommand(1);

  accel::cli::DemoOptions demo;
  CLI::App* demo_cmd = app.add_subcommand("demo", "GEMMs of several sizes through the actors, checked and timed");
  demo_cmd->add_option("--device", demo.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  demo_cmd->add_option("--sizes", demo.sizes, "square GEMM sizes")->delimiter(',');
  demo_cmd->add_option("--repeats", demo.repeats, "timed repetitions per size")->check(CLI::PositiveNumber);

  CLI::App* info_cmd = app.add_subcommand("info", "devices and library versions");

  CLI11_PARSE(app, argc, argv);
  if (*demo_cmd) return accel::cli::run_demo(demo);
  if (*info_cmd) return run_info();
  return 1;
}
