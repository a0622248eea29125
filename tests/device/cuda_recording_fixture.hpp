// What the CUDA recording tests share (cuda_recording_test, cuda_recording_host_copies_test): downloads, a relative
// error, the device's "recorded-graphs" counters, and a fixture run on every GPU target with random values.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "accel/device/device.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/status_matchers.hpp"
#include "testing/test_seed.hpp"

namespace accel::testing {

template <class T>
inline std::vector<T> download(const Device& device, const Buffer<T>& buffer) {
  std::vector<T> values(buffer.size());
  EXPECT_THAT(device.download(buffer, std::span<T>(values)).wait(), IsOk());
  return values;
}

// sqrt(Σ |got - want|²) / sqrt(Σ |want|²).
template <class T>
inline double relative_error(const std::vector<T>& got, const std::vector<T>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    diff += std::norm(std::complex<double>(got[i]) - std::complex<double>(want[i]));
    norm += std::norm(std::complex<double>(want[i]));
  }
  return std::sqrt(diff / std::max(norm, 1e-300));
}

// The device's "recorded-graphs" counters (its default stream's), reported once the stream has launched a
// recording (`used`): zeros before. An isolated device's reply may cut its list of caches to fit a slot: null
// then, and only then.
inline std::optional<CacheStats> recorded_graphs(const Device& device, const GpuTestTarget& target, bool used) {
  Result<DeviceInfo> info = device.info().wait();
  EXPECT_THAT(info, IsOk());
  if (!info.ok()) return std::nullopt;
  const CacheStats* stats = info->cache("recorded-graphs");
  if (target.isolation != Isolation::in_process) return stats ? std::optional<CacheStats>(*stats) : std::nullopt;
  if (!used) {
    EXPECT_EQ(stats, nullptr) << "an unused stream reports no recorded graphs";
    return CacheStats{};
  }
  EXPECT_NE(stats, nullptr);
  return stats ? std::optional<CacheStats>(*stats) : std::nullopt;
}

class CudaRecordingFixture : public ::testing::TestWithParam<GpuTestTarget> {
 protected:
  std::vector<float> random(std::size_t n) {
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng_);
    return v;
  }

  System system_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

}  // namespace accel::testing
