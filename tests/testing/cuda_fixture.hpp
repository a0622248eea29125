// Shared set-up of GPU tests: a CUDA device when there is one, else the test reports itself skipped, and host
// matrices of any element type with their exact values for references.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "accel/device/device.hpp"
#include "testing/env_number.hpp"
#include "testing/numeric_error.hpp"
#include "testing/status_matchers.hpp"

namespace accel::testing {

// Opens cuda:0 with `options`, or skips the test when this machine has no GPU (the named absence of hardware, asked of
// the driver). Any other failure to open, an isolated worker that dies at start say, fails the test.
#define ACCEL_OPEN_CUDA_OR_SKIP(system, options, device)                                      \
  if (accel::Device::count(accel::DeviceKind::cuda) == 0) GTEST_SKIP() << "no CUDA GPU here"; \
  accel::Result<accel::Device> device##_opened = accel::Device::open(system, options);        \
  ASSERT_THAT(device##_opened, accel::testing::IsOk());                                       \
  accel::Device device = *device##_opened

// The heartbeat timeout of the tests' isolated workers: WorkerOptions' default, or ACCEL_TEST_HEARTBEAT_MS. Under
// compute-sanitizer the worker's serving loop can spend longer than the default on one request's launches (racecheck
// held it past 5 s on a batch of 70,000 Symvs, and the worker was killed as hung); scripts/gpu-sanitize sets it.
inline std::chrono::milliseconds test_heartbeat_timeout() {
  const std::optional<std::uint64_t> milliseconds = positive_env_number("ACCEL_TEST_HEARTBEAT_MS");
  return milliseconds ? std::chrono::milliseconds(*milliseconds) : WorkerOptions{}.heartbeat_timeout;
}

// A CUDA device a parameterised GPU test runs on: in process with a completion strategy, or isolated.
struct GpuTestTarget {
  const char* name;
  Isolation isolation;
  CompletionStrategy completion;

  [[nodiscard]] DeviceOptions options() const {
    DeviceOptions options{.kind = DeviceKind::cuda, .isolation = isolation, .completion = completion};
    if (isolation == Isolation::worker_process) options.worker.heartbeat_timeout = test_heartbeat_timeout();
    return options;
  }
};

// Every way a CUDA device runs requests: in process with each completion strategy, and isolated.
inline const GpuTestTarget kEveryGpuTarget[] = {
    {"poller", Isolation::in_process, CompletionStrategy::poller},
    {"host_callback", Isolation::in_process, CompletionStrategy::host_callback},
    {"blocking", Isolation::in_process, CompletionStrategy::blocking},
    {"isolated", Isolation::worker_process, CompletionStrategy::poller}};

inline void PrintTo(const GpuTestTarget& target, std::ostream* out) { *out << target.name; }
inline std::string target_name(const ::testing::TestParamInfo<GpuTestTarget>& info) { return info.param.name; }

// Elements of any dtype as bytes, with the exact value of each (what a reference must compute with).
struct HostArray {
  DType dtype = DType::f32;
  std::vector<std::byte> bytes;
  std::vector<double> values;

  // A complex dtype's elements are two values each (real, imaginary): `values` and set() count parts.
  HostArray(DType type, std::size_t count) : dtype(type), bytes(count * size_of(type)), values(count * parts(type)) {}

  [[nodiscard]] std::size_t size() const { return values.size(); }
  [[nodiscard]] static std::size_t parts(DType type) { return type == DType::c64 || type == DType::c128 ? 2 : 1; }

  void set(std::size_t i, double value) {
    std::byte* at = bytes.data() + i * (size_of(dtype) / parts(dtype));
    switch (dtype) {
      case DType::c64:
      case DType::f32: {
        const float v = static_cast<float>(value);
        std::memcpy(at, &v, 4);
        values[i] = v;
        return;
      }
      case DType::c128:
      case DType::f64:
        std::memcpy(at, &value, 8);
        values[i] = value;
        return;
      case DType::f16: {
        const Half h = to_half(static_cast<float>(value));
        std::memcpy(at, &h, 2);
        values[i] = to_float(h);
        return;
      }
      case DType::bf16: {
        const BFloat16 b = to_bfloat16(static_cast<float>(value));
        std::memcpy(at, &b, 2);
        values[i] = to_float(b);
        return;
      }
      case DType::fp8_e4m3: {
        const Float8E4M3 f = to_float8_e4m3(static_cast<float>(value));
        std::memcpy(at, &f, 1);
        values[i] = to_float(f);
        return;
      }
      case DType::i32: {
        const auto v = static_cast<std::int32_t>(value);
        std::memcpy(at, &v, 4);
        values[i] = v;
        return;
      }
      default: FAIL() << "HostArray supports floating-point dtypes and i32 only";
    }
  }

  // Re-reads `values` from `bytes` (after a download).
  void decode() {
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::byte* at = bytes.data() + i * (size_of(dtype) / parts(dtype));
      switch (dtype) {
        case DType::c64:
        case DType::f32: {
          float v;
          std::memcpy(&v, at, 4);
          values[i] = v;
          break;
        }
        case DType::c128:
        case DType::f64: std::memcpy(&values[i], at, 8); break;
        case DType::f16: {
          Half h;
          std::memcpy(&h, at, 2);
          values[i] = to_float(h);
          break;
        }
        case DType::bf16: {
          BFloat16 b;
          std::memcpy(&b, at, 2);
          values[i] = to_float(b);
          break;
        }
        case DType::fp8_e4m3: {
          Float8E4M3 f;
          std::memcpy(&f, at, 1);
          values[i] = to_float(f);
          break;
        }
        case DType::i32: {
          std::int32_t v;
          std::memcpy(&v, at, 4);
          values[i] = v;
          break;
        }
        default: values[i] = NAN;
      }
    }
  }

  void fill_uniform(std::mt19937_64& rng, double low = -1.0, double high = 1.0) {
    std::uniform_real_distribution<double> uniform(low, high);
    for (std::size_t i = 0; i < values.size(); ++i) set(i, uniform(rng));
  }

  [[nodiscard]] HostSource source() const { return {bytes.data(), values.size() / parts(dtype), dtype}; }
  [[nodiscard]] HostDestination destination() { return {bytes.data(), values.size() / parts(dtype), dtype}; }
};

}  // namespace accel::testing
