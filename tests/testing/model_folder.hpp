// Where a test finds the embedding model folder, and the one reason a test may skip for want of it.
// The folder is $ACCEL_MODEL_DIR where that is set (a GPU machine gets the bundle's copy; scripts/check-test-failures
// plants broken copies there), else the one scripts/setup fetches, compiled into the test.
// Only the folder's absence skips: a machine scripts/setup did not prepare. A folder that is there but does not load
// (a truncated weights file, a missing tokenizer) fails the test that loads it.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace accel::testing {

[[nodiscard]] inline std::filesystem::path model_folder(const std::filesystem::path& compiled_in) {
  const char* named = std::getenv("ACCEL_MODEL_DIR");
  return named != nullptr && *named != '\0' ? std::filesystem::path(named) : compiled_in;
}

}  // namespace accel::testing

// Skips the test when `folder` does not exist at all; anything else about the folder is the test's to check.
#define ACCEL_SKIP_WITHOUT_MODEL_FOLDER(folder) \
  if (!std::filesystem::exists(folder))         \
  GTEST_SKIP() << "no model folder at " << (folder) << " (scripts/setup fetches it)"
