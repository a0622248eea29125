// GoogleTest's own result printer, with its "[  SKIPPED ]" tag printed as "[   SKIP   ]".
//
// Note [Skips are exit codes]: CMake's gtest_discover_tests gives every test it registers a SKIP_REGULAR_EXPRESSION
// of "\[  SKIPPED \]", and ctest marks a test skipped when its output matches, whatever the exit code (set properties
// only add expressions; none can be taken away). A binary that skipped its tests after a failure — a suite's set-up
// that failed, then every test skipping for want of what it set up — exited 1 and was counted as skipped. Printed
// this way, the tag never matches; ctest reads the skip from the exit code alone (gtest_main.cpp: 77, ctest's
// SKIP_RETURN_CODE), and scripts/gpu-check reads "[   SKIP   ]".
#pragma once

#include <gtest/gtest.h>

#include <memory>

namespace accel::testing {

// Wraps `printer` (the default result printer, released from the listeners) and forwards every event to it.
[[nodiscard]] std::unique_ptr<::testing::TestEventListener> printer_with_skip_tag(
    std::unique_ptr<::testing::TestEventListener> printer);

}  // namespace accel::testing
