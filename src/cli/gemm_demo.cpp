#include "cli/gemm_demo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <span>

#include "accel/device/device.hpp"
#include "cli/device_choice.hpp"
#include "cli/library_list.hpp"

namespace accel::cli {
namespace {

// Row-major C = A * B in double precision: the reference the device's result is compared with.
std::vector<double> reference_gemm(const std::vector<float>& a, const std::vector<float>& b, std::int64_t m,
                                   std::int64_t n, std::int64_t k) {
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p) {
      const double aip = a[i * k + p];
      for (std::int64_t j = 0; j < n; ++j) c[i * n + j] += aip * b[p * n + j];
    }
  return c;
}

double relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-300));
}

struct Row {
  std::int64_t size;
  double median_us;
  double gflops;
  double error;
};

Result<Row> run_size(const Device& device, std::int64_t size, int repeats, std::mt19937& rng) {
  const auto count = static_cast<std::uint64_t>(size * size);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(count), b(count), c(count, NAN);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);

  ACCEL_ASSIGN_OR_RETURN(Buffer<float> da, device.allocate<float>(count).wait());
  ACCEL_ASSIGN_OR_RETURN(Buffer<float> db, device.allocate<float>(count).wait());
  ACCEL_ASSIGN_OR_RETURN(Buffer<float> dc, device.allocate<float>(count).wait());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const float>(a), da).wait().status());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const float>(b), db).wait().status());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const float>(c), dc).wait().status());

  const Gemm gemm{.shape = {.m = size, .n = size, .k = size}, .a = da, .b = db, .c = dc};
  ACCEL_RETURN_IF_ERROR(device.gemm(gemm).wait().status());  // warm-up, and the result that is checked
  ACCEL_RETURN_IF_ERROR(device.download(dc, std::span<float>(c)).wait().status());
  const double error = relative_error(c, reference_gemm(a, b, size, size, size));

  std::vector<double> times_us;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    ACCEL_RETURN_IF_ERROR(device.gemm(gemm).wait().status());
    times_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times_us.begin(), times_us.begin() + times_us.size() / 2, times_us.end());
  const double median = times_us[times_us.size() / 2];
  return Row{size, median, 2.0 * static_cast<double>(size * size * size) / (median * 1e3), error};
}

}  // namespace

int run_gemm_demo(const GemmDemoOptions& options) {
  System system;
  Result<Device> device = open_device(system, options.device);
  if (!device) {
    fmt::print(stderr, "accel demo: {}\n", device.status().to_string());
    return 1;
  }
  Result<DeviceInfo> info = device->info().wait();
  fmt::print("accel demo on {} ({})\n", device->name(), info ? library_list(*info) : info.status().to_string());
  fmt::print("f32 GEMM C = A*B through the device actor, checked against a float64 reference\n\n");
  fmt::print("{:>6} {:>14} {:>10} {:>12} {:>6}\n", "n", "median (us)", "GFLOP/s", "rel. error", "check");

  constexpr double kTolerance = 1e-5;  // f32 arithmetic lands far under this against a float64 reference
  std::mt19937 rng(std::random_device{}());
  bool all_ok = true;
  for (std::int64_t size : options.sizes) {
    Result<Row> row = run_size(*device, size, options.repeats, rng);
    if (!row) {
      fmt::print("{:>6} failed: {}\n", size, row.status().to_string());
      all_ok = false;
      continue;
    }
    const bool ok = row->error <= kTolerance;
    all_ok = all_ok && ok;
    fmt::print("{:>6} {:>14.1f} {:>10.2f} {:>12.2e} {:>6}\n", row->size, row->median_us, row->gflops, row->error,
               ok ? "ok" : "FAIL");
  }
  fmt::print("\n{}\n", all_ok ? "all results match the reference" : "SOME RESULTS DID NOT MATCH");
  return all_ok ? 0 : 1;
}

}  // namespace accel::cli
