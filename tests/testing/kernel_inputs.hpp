// Random inputs of the graph kernel tests (CPU and CUDA): values, and offsets of packed sequences.
#pragma once

#include <cstdint>
#include <random>
#include <vector>
#include "testing/test_seed.hpp"

namespace accel::graph::testing {

inline std::mt19937& rng() {
  static std::mt19937 generator(accel::testing::test_seed());
  return generator;
}

inline std::vector<float> random(std::int64_t count, float low = -2.0f, float high = 2.0f) {
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& v : values) v = uniform(rng());
  return values;
}

// The offsets of sequences of `lengths`, packed end to end.
inline std::vector<std::int32_t> offsets_of(const std::vector<int>& lengths) {
  std::vector<std::int32_t> offsets{0};
  for (int length : lengths) offsets.push_back(offsets.back() + length);
  return offsets;
}

}  // namespace accel::graph::testing
