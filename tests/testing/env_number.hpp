// The tests' numeric knobs from the environment (ACCEL_TEST_SEED, ACCEL_TEST_HEARTBEAT_MS).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace accel::testing {

// The positive decimal number the environment variable `name` holds, or nullopt where it is unset or empty. Any other
// value ends the test binary with exit status 2, naming it: a mistyped knob must not run the tests another way.
inline std::optional<std::uint64_t> positive_env_number(const char* name) {
  const char* given = std::getenv(name);
  if (given == nullptr || *given == '\0') return std::nullopt;
  char* end = nullptr;
  const unsigned long long parsed = std::strtoull(given, &end, 10);
  if (end != nullptr && *end == '\0' && parsed != 0 && *given != '-') return parsed;
  std::fprintf(stderr, "%s=%s is not a positive decimal number\n", name, given);
  std::exit(2);
}

}  // namespace accel::testing
