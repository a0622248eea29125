// The seed of a test's random inputs: ACCEL_TEST_SEED when set (to replay a failure), else drawn once per process.
// The gtest main (gtest_main.cpp) prints it beside every failure, so a failure seen once in hundreds of runs can be
// run again with the same inputs: `ACCEL_TEST_SEED=<printed> ./tests/<binary> --gtest_filter=<test>`.
#pragma once

#include <cstdint>

namespace accel::testing {

// The same value for the whole process; never 0 (so that a printed 0 always means "no seed was drawn").
[[nodiscard]] std::uint64_t test_seed();

// Whether test_seed() was called in this process (the main prints the seed only for tests that used one).
[[nodiscard]] bool test_seed_drawn();

}  // namespace accel::testing
