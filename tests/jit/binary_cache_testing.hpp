// What the binary cache's tests share (binary_cache_test.cpp, binary_cache_processes_test.cpp): bytes from text and
// back, the files of a directory by suffix, a cache opened or the test failed, and compile functions that count their
// calls or must not be called.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jit/binary_cache.hpp"

namespace accel::jit::binary_cache_testing {

namespace fs = std::filesystem;

inline std::vector<std::byte> bytes(std::string_view text) {
  const auto* data = reinterpret_cast<const std::byte*>(text.data());
  return {data, data + text.size()};
}

inline std::string text(std::span<const std::byte> data) {
  return {reinterpret_cast<const char*>(data.data()), data.size()};
}

inline std::vector<fs::path> files_ending(const fs::path& directory, std::string_view suffix) {
  std::vector<fs::path> out;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    if (entry.path().native().ends_with(suffix)) out.push_back(entry.path());
  }
  return out;
}

inline std::unique_ptr<BinaryCache> open_cache(BinaryCacheOptions options) {
  Result<std::unique_ptr<BinaryCache>> cache = BinaryCache::open(std::move(options));
  if (!cache.ok()) ADD_FAILURE() << cache.status().to_string();
  return cache.ok() ? std::move(*cache) : nullptr;
}

inline std::unique_ptr<BinaryCache> open_cache(const fs::path& directory) {
  return open_cache({.directory = directory});
}

// A compile function that counts its calls and returns `value`.
inline CompileFunction counted(std::atomic<int>& calls, std::string value) {
  return [&calls, value = std::move(value)]() -> Result<BinaryBytes> {
    ++calls;
    return bytes(value);
  };
}

inline CompileFunction must_not_compile() {
  return []() -> Result<BinaryBytes> {
    ADD_FAILURE() << "compiled although the binary was cached";
    return internal_error("must not compile");
  };
}

}  // namespace accel::jit::binary_cache_testing
