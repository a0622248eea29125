// Two opened devices for tests of what moves between them (copies between devices): the pair, random values exact in
// every element type, and the check of a range copied from one to the other.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/device/peer.hpp"
#include "testing/buffer_values.hpp"
#include "testing/status_matchers.hpp"
#include "testing/test_seed.hpp"

namespace accel::testing {

class DevicePair {
 protected:
  // Opens `first` as a() and `second` as b(); a failure to open fails the test (check HasFatalFailure after).
  void open_pair(const DeviceOptions& first, const DeviceOptions& second) {
    Result<Device> opened_first = Device::open(system_, first);
    Result<Device> opened_second = Device::open(system_, second);
    ASSERT_THAT(opened_first, IsOk());
    ASSERT_THAT(opened_second, IsOk());
    a_.emplace(*opened_first);
    b_.emplace(*opened_second);
  }
  [[nodiscard]] const Device& a() const { return *a_; }
  [[nodiscard]] const Device& b() const { return *b_; }
  // Integers in [-1000, 1000] as T: exact in every element type, so that copies compare equal.
  template <class T>
  std::vector<T> random_values(std::size_t n) {
    std::uniform_int_distribution<int> uniform(-1000, 1000);
    std::vector<T> values(n);
    for (T& x : values) x = static_cast<T>(uniform(rng_));
    return values;
  }

  // A random buffer of n floats on `from`, its last n / 2 + 1 copied into a random buffer of n + offset floats on `to`
  // at `offset` (copy_between_devices): `to`'s buffer holds exactly that after.
  void expect_range_copied(const Device& from, const Device& to, std::size_t n, std::uint64_t offset) {
    const std::vector<float> source = random_values<float>(n);
    std::vector<float> target = random_values<float>(n + offset);
    Buffer<float> on_from = filled(from, source);
    Buffer<float> on_to = filled(to, target);
    const std::uint64_t count = n / 2 + 1;
    const CopyOnDevice copy{.source = on_from,
                            .source_offset = n - count,
                            .destination = on_to,
                            .destination_offset = offset,
                            .count = count};
    ASSERT_THAT(copy_between_devices(from, to, copy).wait(), IsOk());
    std::copy(source.end() - static_cast<std::ptrdiff_t>(count), source.end(),
              target.begin() + static_cast<std::ptrdiff_t>(offset));
    EXPECT_EQ(contents(to, on_to), target);
  }

  System system_;

 private:
  std::optional<Device> a_;
  std::optional<Device> b_;
  std::mt19937_64 rng_{test_seed()};
};

}  // namespace accel::testing
