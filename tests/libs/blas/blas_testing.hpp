// What the BLAS level 1-3 tests share: a device, buffers filled from host vectors and read back, random values, and
// where element i of a strided vector lies (a negative increment walks backwards from the span's end, as in BLAS).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "accel/device/device.hpp"
#include "testing/status_matchers.hpp"
#include "testing/test_seed.hpp"

namespace accel::blas::testing {

// Where element i of an n-element vector with increment inc lies in its buffer.
inline std::int64_t vector_at(std::int64_t i, std::int64_t n, std::int64_t inc) {
  return inc > 0 ? i * inc : (n - 1 - i) * -inc;
}
// Elements an n-element vector with increment inc spans.
inline std::uint64_t vector_span(std::int64_t n, std::int64_t inc) {
  return n == 0 ? 0 : static_cast<std::uint64_t>((n - 1) * (inc < 0 ? -inc : inc) + 1);
}

// sqrt(Σ (got - want)²) / sqrt(Σ want²), every element finite.
template <class T>
double relative_error(const std::vector<T>& got, const std::vector<double>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(static_cast<double>(got[i]))) return INFINITY;
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-300));
}

// Relative tolerances for sums of a few hundred products of values in [-1, 1].
template <class T>
constexpr double kTolerance = sizeof(T) == 4 ? 2e-5 : 1e-12;

class BlasDeviceTest : public ::testing::Test {
 protected:
  template <class T>
  std::vector<T> random(std::uint64_t n) {
    std::uniform_real_distribution<double> dist(-1, 1);
    std::vector<T> v(std::max<std::uint64_t>(n, 1));
    for (T& x : v) x = static_cast<T>(dist(rng_));
    return v;
  }
  template <class T>
  Buffer<T> upload(const std::vector<T>& values) {
    return upload(device_, values);
  }
  template <class T>
  Buffer<T> upload(const Device& device, const std::vector<T>& values) {
    Buffer<T> buffer = *device.allocate<T>(values.size()).wait();
    EXPECT_THAT(device.upload(std::span<const T>(values), buffer).wait(), accel::testing::IsOk());
    return buffer;
  }
  template <class T>
  std::vector<T> download(const Buffer<T>& buffer) {
    return download(device_, buffer);
  }
  template <class T>
  std::vector<T> download(const Device& device, const Buffer<T>& buffer) {
    std::vector<T> values(buffer.size());
    EXPECT_THAT(device.download(buffer, std::span<T>(values)).wait(), accel::testing::IsOk());
    return values;
  }
  template <class Request>
  Status run(const Request& request) {
    return device_.ask(request).wait().status();
  }
  // Runs a reduction into a fresh result buffer of R and returns its value.
  template <class R, class Request>
  R reduce(Request request) {
    Buffer<R> result = upload(std::vector<R>{R(-7)});
    request.result = result;
    EXPECT_THAT(run(request), accel::testing::IsOk());
    return download(result)[0];
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

}  // namespace accel::blas::testing
