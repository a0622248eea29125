// DiskStore::scan and DiskStore::clear, what `accel cache verify` and `accel cache clear` run: good entries pass,
// damaged (a flipped byte, a truncated file), foreign-owned and group-writable ones are named with their reason,
// and clear removes only the store's own files, in a directory it trusts.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cache/disk_store.hpp"
#include "testing/scratch_directory.hpp"
#include "testing/status_matchers.hpp"

namespace accel::cache {
namespace {

namespace fs = std::filesystem;
using accel::testing::ScratchDirectory;

// A user that owns nothing here (nobody). Giving a file to it needs root; as another user, a file its group may
// write stands in for one someone else could have written (the same refusal of DirectoryTrust::accepts_entry).
constexpr uid_t kOtherUser = 65534;

std::vector<std::byte> bytes(std::string_view text) {
  const auto view = std::as_bytes(std::span(text.data(), text.size()));
  return {view.begin(), view.end()};
}

void make_foreign(const fs::path& path) {
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(path.c_str(), kOtherUser, kOtherUser), 0) << path;
  } else {
    ASSERT_EQ(::chmod(path.c_str(), fs::is_directory(path) ? 0770 : 0620), 0) << path;
  }
}

class DiskStoreScanTest : public ::testing::Test {
 protected:
  // Stores `key` and returns its entry's path.
  fs::path plant(std::string_view key) {
    const Result<std::unique_ptr<DiskStore>> store = DiskStore::open({.directory = directory()});
    EXPECT_TRUE(store.ok()) << store.status().to_string();
    if (!store.ok()) return {};
    EXPECT_TRUE((*store)->store(bytes(key), bytes("value of " + std::string(key))).ok());
    return (*store)->entry_path(bytes(key));
  }
  [[nodiscard]] fs::path directory() const { return scratch_.path() / "cache"; }
  // The problem scan() reports for `path` ("?" when it does not list it).
  std::string problem_of(const fs::path& path) {
    const Result<std::vector<ScannedEntry>> entries = DiskStore::scan({.directory = directory()});
    EXPECT_TRUE(entries.ok()) << entries.status().to_string();
    if (entries.ok()) {
      for (const ScannedEntry& entry : *entries)
        if (entry.path == path) return entry.problem;
    }
    return "?";
  }
  ScratchDirectory scratch_{"disk-store-scan"};
};

TEST_F(DiskStoreScanTest, GoodEntriesHaveNoProblemAndTheirSize) {
  const fs::path a = plant("a");
  const fs::path b = plant("b");
  std::ofstream(directory() / "notes.txt") << "not an entry";
  const Result<std::vector<ScannedEntry>> entries = DiskStore::scan({.directory = directory()});
  ASSERT_TRUE(entries.ok()) << entries.status().to_string();
  ASSERT_EQ(entries->size(), 2u);  // notes.txt is not the store's
  for (const ScannedEntry& entry : *entries) {
    EXPECT_EQ(entry.problem, "") << entry.path;
    EXPECT_EQ(entry.bytes, fs::file_size(entry.path));
  }
}

TEST_F(DiskStoreScanTest, FlippedByteIsDamaged) {
  const fs::path entry = plant("flipped");
  std::fstream file(entry, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(-1, std::ios::end);
  file.put('\x7f');
  file.close();
  EXPECT_EQ(problem_of(entry), "damaged: its header, lengths or checksum do not match");
}

TEST_F(DiskStoreScanTest, TruncatedEntryIsDamaged) {
  const fs::path entry = plant("truncated");
  fs::resize_file(entry, fs::file_size(entry) - 3);
  EXPECT_EQ(problem_of(entry), "damaged: its header, lengths or checksum do not match");
}

TEST_F(DiskStoreScanTest, ForeignOrWritableEntryIsRefused) {
  const fs::path entry = plant("foreign");
  make_foreign(entry);
  EXPECT_TRUE(problem_of(entry).starts_with("refused: owned by uid")) << problem_of(entry);
}

TEST_F(DiskStoreScanTest, ScanDoesNotChangeTheDirectory) {
  const fs::path entry = plant("kept");
  fs::resize_file(entry, 10);
  ASSERT_NE(problem_of(entry), "");
  EXPECT_TRUE(fs::exists(entry));  // load() would remove it; a scan only reports
}

TEST_F(DiskStoreScanTest, MissingDirectoryHasNoEntries) {
  const Result<std::vector<ScannedEntry>> entries = DiskStore::scan({.directory = scratch_.path() / "none"});
  ASSERT_TRUE(entries.ok()) << entries.status().to_string();
  EXPECT_TRUE(entries->empty());
}

TEST_F(DiskStoreScanTest, ClearRemovesOnlyTheStoresFiles) {
  plant("a");
  const fs::path damaged = plant("b");
  fs::resize_file(damaged, 5);
  std::ofstream(directory() / "tmp-1-2-0000000000000000") << "left by a writer";
  std::ofstream(directory() / "notes.txt") << "not an entry";
  const Result<std::uint64_t> removed = DiskStore::clear({.directory = directory()});
  ASSERT_TRUE(removed.ok()) << removed.status().to_string();
  EXPECT_EQ(*removed, 3u);
  std::vector<std::string> left;
  for (const auto& file : fs::directory_iterator(directory())) left.push_back(file.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"notes.txt"});
}

TEST_F(DiskStoreScanTest, ForeignDirectoryIsRefusedByName) {
  const fs::path entry = plant("a");
  make_foreign(directory());
  const Result<std::uint64_t> removed = DiskStore::clear({.directory = directory()});
  ASSERT_FALSE(removed.ok());
  EXPECT_NE(removed.status().message().find(directory().native()), std::string::npos) << removed.status().to_string();
  EXPECT_TRUE(fs::exists(entry));
  EXPECT_FALSE(DiskStore::scan({.directory = directory()}).ok());
}

}  // namespace
}  // namespace accel::cache
