// A disk tier whose writes fail (a full or read-only disk, a directory removed under a running process): the
// store answers each failure, logs the first one only, and counts them all.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include "cache/disk_store.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::cache {
namespace {

std::vector<std::byte> bytes(std::string_view text) {
  std::vector<std::byte> out(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) out[i] = static_cast<std::byte>(text[i]);
  return out;
}

// The default logger replaced by one that writes into a string, for the test's lifetime.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(
        std::make_shared<spdlog::logger>("captured", std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  [[nodiscard]] std::string text() const { return text_.str(); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream text_;
};

std::size_t count_of(const std::string& text, std::string_view part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

TEST(DiskStoreFailure, FailingWritesAreAnsweredLoggedOnceAndCounted) {
  accel::testing::ScratchDirectory scratch{"disk_store_failure_test"};
  const std::filesystem::path directory = scratch.path() / "cache";
  Result<std::unique_ptr<DiskStore>> store = DiskStore::open({.directory = directory, .max_bytes = 1 << 20});
  ASSERT_TRUE(store.ok()) << store.status().to_string();
  std::filesystem::remove_all(directory);  // every later write fails, as on a full or read-only disk

  CapturedLog log;
  for (int i = 0; i < 5; ++i) {
    const Status stored = (*store)->store(bytes("key " + std::to_string(i)), bytes("value"));
    EXPECT_FALSE(stored.ok());
    EXPECT_NE(stored.message().find(directory.native()), std::string::npos) << stored.to_string();
  }
  EXPECT_EQ((*store)->stats().failed_stores, 5u);
  EXPECT_EQ((*store)->stats().stores, 0u);
  EXPECT_EQ(count_of(log.text(), "stay in memory only"), 1u) << log.text();

  // The store keeps answering loads (misses) without logging more.
  Result<std::optional<std::vector<std::byte>>> loaded = (*store)->load(bytes("key 0"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_FALSE(loaded->has_value());
  EXPECT_EQ(count_of(log.text(), "accel:"), 1u) << log.text();
}

}  // namespace
}  // namespace accel::cache
