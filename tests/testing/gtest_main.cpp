// The main of every test binary. It differs from GoogleTest's own in two ways:
// - The exit code says "skipped" apart from "passed": 77 (ctest's SKIP_RETURN_CODE) when every test that ran
//   skipped and none failed. A binary that failed, crashed or failed in a suite's set-up exits otherwise, and its
//   output no longer carries the tag ctest read as a skip whatever the exit code (See Note [Skips are exit codes]
//   in result_printer.hpp).
// - A failed test that drew random inputs prints the seed that replays them (testing/test_seed.hpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "testing/env_number.hpp"
#include "testing/result_printer.hpp"
#include "testing/test_seed.hpp"

namespace accel::testing {
namespace {

std::uint64_t& seed_slot() {
  static std::uint64_t seed = 0;
  return seed;
}

std::uint64_t draw_seed() {
  if (const std::optional<std::uint64_t> given = positive_env_number("ACCEL_TEST_SEED")) return *given;
  std::random_device device;
  std::uint64_t seed = 0;
  while (seed == 0) seed = (std::uint64_t{device()} << 32) | device();
  return seed;
}

class SeedReporter : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& test) override {
    if (test.result()->Failed() && test_seed_drawn()) {
      std::printf("[  SEED    ] %s.%s drew its inputs from ACCEL_TEST_SEED=%llu (set it to replay them)\n",
                  test.test_suite_name(), test.name(), static_cast<unsigned long long>(seed_slot()));
      std::fflush(stdout);
    }
  }
};

}  // namespace

std::uint64_t test_seed() {
  static const std::uint64_t seed = seed_slot() = draw_seed();
  return seed;
}

bool test_seed_drawn() { return seed_slot() != 0; }

}  // namespace accel::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest& tests = *::testing::UnitTest::GetInstance();
  ::testing::TestEventListeners& listeners = tests.listeners();
  std::unique_ptr<::testing::TestEventListener> printer(listeners.Release(listeners.default_result_printer()));
  if (printer != nullptr) listeners.Append(accel::testing::printer_with_skip_tag(std::move(printer)).release());
  listeners.Append(new accel::testing::SeedReporter());
  const int status = RUN_ALL_TESTS();
  if (status != 0) return status;
  constexpr int kAllSkipped = 77;
  if (tests.skipped_test_count() > 0 && tests.successful_test_count() == 0 && tests.failed_test_count() == 0) {
    return kAllSkipped;
  }
  return 0;
}
