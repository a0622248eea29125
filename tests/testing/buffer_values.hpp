// A device buffer holding host values, and a buffer's values back on the host, each waited for: the set-up and the
// check of tests that only move data (the families' testing headers keep their own, with their element types).
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "accel/device/device.hpp"
#include "testing/status_matchers.hpp"

namespace accel::testing {

template <class T>
Buffer<T> filled(const Device& device, const std::vector<T>& values) {
  Buffer<T> buffer = *device.allocate<T>(values.size()).wait();
  EXPECT_THAT(device.upload(std::span<const T>(values), buffer).wait(), IsOk());
  return buffer;
}

template <class T>
std::vector<T> contents(const Device& device, const Buffer<T>& buffer) {
  std::vector<T> values(buffer.size());
  EXPECT_THAT(device.download(buffer, std::span<T>(values)).wait(), IsOk());
  return values;
}

}  // namespace accel::testing
