// A fresh directory per test under gtest's temporary directory, removed with everything in it afterwards, so
// tests share nothing on disk.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace accel::testing {

class ScratchDirectory {
 public:
  explicit ScratchDirectory(std::string_view prefix) {
    std::string pattern = ::testing::TempDir() + std::string(prefix) + "_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace accel::testing
