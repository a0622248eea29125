#include "cache/disk_store.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "testing/scratch_directory.hpp"
#include "testing/status_matchers.hpp"

namespace accel::cache {
namespace {

namespace fs = std::filesystem;
using accel::testing::IsOk;
using accel::testing::StatusIs;

std::vector<std::byte> bytes(std::string_view text) {
  std::vector<std::byte> out(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) out[i] = static_cast<std::byte>(text[i]);
  return out;
}

std::string text(std::span<const std::byte> data) {
  std::string out(data.size(), '\0');
  for (std::size_t i = 0; i < data.size(); ++i) out[i] = static_cast<char>(data[i]);
  return out;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
}

void set_age(const fs::path& path, std::time_t seconds) {
  const timespec when{.tv_sec = std::time(nullptr) - seconds, .tv_nsec = 0};
  const std::array<timespec, 2> times{when, when};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times.data(), 0), 0) << path;
}

using ScratchDirectory = accel::testing::ScratchDirectory;

std::unique_ptr<DiskStore> open_store(const fs::path& directory, std::uint64_t max_bytes = 1 << 20,
                                      std::uint32_t format_version = 1) {
  // value() aborts with the status printed, which is the report a failed open needs.
  return DiskStore::open({.directory = directory, .max_bytes = max_bytes, .format_version = format_version}).value();
}

std::optional<std::string> load_text(DiskStore& store, std::string_view key) {
  std::optional<std::vector<std::byte>> value = store.load(bytes(key)).value();
  if (!value) return std::nullopt;
  return text(*value);
}

std::size_t count_files(const fs::path& directory) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(directory), fs::directory_iterator()));
}

TEST(DiskStore, AStoredValueLoadsBackInANewStore) {
  ScratchDirectory dir{"disk_store_test"};
  ASSERT_THAT(open_store(dir.path())->store(bytes("plan:gemm:128"), bytes("serialized plan")), IsOk());

  std::unique_ptr<DiskStore> second = open_store(dir.path());
  EXPECT_EQ(load_text(*second, "plan:gemm:128"), "serialized plan");
  EXPECT_EQ(second->stats().hits, 1u);
  EXPECT_EQ(second->stats().misses, 0u);
}

TEST(DiskStore, AnAbsentKeyIsAMiss) {
  ScratchDirectory dir{"disk_store_test"};
  std::unique_ptr<DiskStore> store = open_store(dir.path());
  EXPECT_EQ(load_text(*store, "never stored"), std::nullopt);
  EXPECT_EQ(store->stats().misses, 1u);
  EXPECT_EQ(store->stats().corrupt_entries, 0u);
}

TEST(DiskStore, StoringAgainReplacesTheValueAndLeavesOneFile) {
  ScratchDirectory dir{"disk_store_test"};
  std::unique_ptr<DiskStore> store = open_store(dir.path());
  ASSERT_THAT(store->store(bytes("key"), bytes("first")), IsOk());
  ASSERT_THAT(store->store(bytes("key"), bytes("second, and longer")), IsOk());
  EXPECT_EQ(load_text(*store, "key"), "second, and longer");
  EXPECT_EQ(load_text(*open_store(dir.path()), "key"), "second, and longer");
  EXPECT_EQ(count_files(dir.path()), 1u);  // no temporary file left behind
  EXPECT_EQ(store->stats().stores, 2u);
}

TEST(DiskStore, AFlippedValueByteIsCountedCorruptIsAMissAndIsRemoved) {
  ScratchDirectory dir{"disk_store_test"};
  std::unique_ptr<DiskStore> store = open_store(dir.path());
  ASSERT_THAT(store->store(bytes("key"), bytes("value")), IsOk());
  const fs::path path = store->entry_path(bytes("key"));
  std::string contents = read_file(path);
  contents.back() ^= 0x01;
  write_file(path, contents);

  EXPECT_EQ(load_text(*store, "key"), std::nullopt);
  EXPECT_EQ(store->stats().corrupt_entries, 1u);
  EXPECT_EQ(store->stats().misses, 1u);
  EXPECT_FALSE(fs::exists(path));
}

TEST(DiskStore, ADamagedMagicLengthChecksumOrKeyIsCountedCorrupt) {
  // Offsets into the header (see disk_store.hpp) and into the key; the version byte is the next test's.
  for (const std::size_t offset : {0u, 7u, 12u, 16u, 23u, 24u, 31u, 32u}) {
    SCOPED_TRACE(offset);
    ScratchDirectory dir{"disk_store_test"};
    std::unique_ptr<DiskStore> store = open_store(dir.path());
    ASSERT_THAT(store->store(bytes("key"), bytes("value")), IsOk());
    const fs::path path = store->entry_path(bytes("key"));
    std::string contents = read_file(path);
    contents[offset] ^= 0x40;
    write_file(path, contents);

    EXPECT_EQ(load_text(*store, "key"), std::nullopt);
    EXPECT_EQ(store->stats().corrupt_entries, 1u);
    EXPECT_FALSE(fs::exists(path));
  }
}

TEST(DiskStore, ATruncatedOrOverlongEntryIsCountedCorruptAndRemoved) {
  ScratchDirectory dir{"disk_store_test"};
  std::unique_ptr<DiskStore> store = open_store(dir.path());
  ASSERT_THAT(store->store(bytes("key"), bytes("a value of some length")), IsOk());
  const fs::path path = store->entry_path(bytes("key"));
  const std::string whole = read_file(path);

  std::uint64_t expected_corrupt = 0;
  for (const std::size_t length :
       {std::size_t{0}, std::size_t{5}, std::size_t{31}, std::size_t{32}, std::size_t{34}, whole.size() - 1}) {
    SCOPED_TRACE(length);
    write_file(path, whole.substr(0, length));
    EXPECT_EQ(load_text(*store, "key"), std::nullopt);
    EXPECT_EQ(store->stats().corrupt_entries, ++expected_corrupt);
    EXPECT_FALSE(fs::exists(path));
  }
  write_file(path, whole + "x");
  EXPECT_EQ(load_text(*store, "key"), std::nullopt);
  EXPECT_EQ(store->stats().corrupt_entries, ++expected_corrupt);

  write_file(path, whole);
  EXPECT_EQ(load_text(*store, "key"), "a value of some length");
}

TEST(DiskStore, AnEntryOfAnotherFormatVersionIsAMissAndIsReplacedOnStore) {
  ScratchDirectory dir{"disk_store_test"};
  std::unique_ptr<DiskStore> old_version = open_store(dir.path(), 1 << 20, 1);
  ASSERT_THAT(old_version->store(bytes("key"), bytes("old layout")), IsOk());

  std::unique_ptr<DiskStore> new_version = open_store(dir.path(), 1 << 20, 2);
  EXPECT_EQ(load_text(*new_version, "key"), std::nullopt);
  EXPECT_EQ(new_version->stats().misses, 1u);
  EXPECT_EQ(new_version->stats().corrupt_entries, 0u);

  ASSERT_THAT(new_version->store(bytes("key"), bytes("new layout")), IsOk());
  EXPECT_EQ(load_text(*new_version, "key"), "new layout");
  EXPECT_EQ(load_text(*old_version, "key"), std::nullopt);
}

TEST(DiskStore, AnEntryWhoseStoredKeyDiffersIsAMissNeverAWrongValue) {
  ScratchDirectory dir{"disk_store_test"};
  std::unique_ptr<DiskStore> store = open_store(dir.path());
  ASSERT_THAT(store->store(bytes("key a"), bytes("value of a")), IsOk());
  // What a hash collision would look like: key b's file holds a good entry of key a.
  fs::copy_file(store->entry_path(bytes("key a")), store->entry_path(bytes("key b")));

  EXPECT_EQ(load_text(*store, "key b"), std::nullopt);
  EXPECT_EQ(store->stats().corrupt_entries, 0u);
  EXPECT_TRUE(fs::exists(store->entry_path(bytes("key b"))));  // good, for its own key
  EXPECT_EQ(load_text(*store, "key a"), "value of a");
}

TEST(DiskStore, EvictionKeepsTheMostRecentlyUsedEntriesWithinTheBound) {
  ScratchDirectory dir{"disk_store_test"};
  const std::string value(1000, 'v');
  const std::uint64_t entry_bytes = 32 + 1 + value.size();
  const std::uint64_t max_bytes = 4 * entry_bytes + entry_bytes / 2;
  std::unique_ptr<DiskStore> store = open_store(dir.path(), max_bytes);

  // a is the oldest entry but is read last, so it must outlive b, the least recently used one.
  const std::array<std::string_view, 4> keys = {"a", "b", "c", "d"};
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_THAT(store->store(bytes(keys[i]), bytes(value)), IsOk());
    set_age(store->entry_path(bytes(keys[i])), static_cast<std::time_t>((keys.size() - i) * 3600));
  }
  EXPECT_EQ(store->stats().evictions, 0u);
  EXPECT_EQ(load_text(*store, "a"), value);
  ASSERT_THAT(store->store(bytes("e"), bytes(value)), IsOk());

  EXPECT_GE(store->stats().evictions, 1u);
  EXPECT_TRUE(fs::exists(store->entry_path(bytes("a"))));
  EXPECT_TRUE(fs::exists(store->entry_path(bytes("e"))));
  EXPECT_FALSE(fs::exists(store->entry_path(bytes("b"))));
  std::uint64_t total = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) total += entry.file_size();
  EXPECT_LE(total, max_bytes);
}

TEST(DiskStore, AnEntryLargerThanTheBoundIsRefused) {
  ScratchDirectory dir{"disk_store_test"};
  std::unique_ptr<DiskStore> store = open_store(dir.path(), 1024);
  EXPECT_THAT(store->store(bytes("key"), bytes(std::string(1024, 'x'))),
              StatusIs(Code::invalid_argument, "exceeds max_bytes 1024"));
  EXPECT_EQ(count_files(dir.path()), 0u);
}

// Every value says which key, writer and round it belongs to, and its length and filler follow from that, so a
// value of another key or a torn write cannot pass for a right one.
std::string concurrent_value(int key, int writer, int round) {
  std::string value = std::to_string(key) + ' ' + std::to_string(writer) + ' ' + std::to_string(round) + '|';
  const std::size_t length = 500 + static_cast<std::size_t>(writer * 131 + round * 17) % 6000;
  while (value.size() < length)
    value += static_cast<char>('a' + (value.size() * 7 + static_cast<std::size_t>(key)) % 26);
  return value;
}

bool is_a_value_of(int key, const std::string& value) {
  int stored_key = -1;
  int writer = -1;
  int round = -1;
  if (std::sscanf(value.c_str(), "%d %d %d|", &stored_key, &writer, &round) != 3) return false;
  return stored_key == key && value == concurrent_value(key, writer, round);
}

TEST(DiskStore, ConcurrentStoresAndLoadsNeverSeeAPartialOrWrongValue) {
  ScratchDirectory dir{"disk_store_test"};
  constexpr int kThreads = 8;
  constexpr int kKeys = 16;
  constexpr int kRounds = 300;
  // Small enough that entries are evicted while others read them.
  std::unique_ptr<DiskStore> store = open_store(dir.path(), 48 << 10);
  std::atomic<int> wrong{0};
  std::atomic<int> failed{0};
  std::atomic<int> hits{0};
  std::vector<std::thread> threads;
  for (int writer = 0; writer < kThreads; ++writer) {
    threads.emplace_back([&, writer] {
      for (int round = 0; round < kRounds; ++round) {
        const int key = (writer + round / 2) % kKeys;  // stored in one round, loaded in the next
        const std::string name = "key " + std::to_string(key);
        if (round % 2 == 0) {
          if (!store->store(bytes(name), bytes(concurrent_value(key, writer, round))).ok()) ++failed;
          continue;
        }
        Result<std::optional<std::vector<std::byte>>> loaded = store->load(bytes(name));
        if (!loaded.ok()) {
          ++failed;
        } else if (*loaded) {
          ++hits;
          if (!is_a_value_of(key, text(**loaded))) ++wrong;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GT(hits.load(), 0);
  EXPECT_GT(store->stats().evictions, 0u);
  EXPECT_EQ(store->stats().corrupt_entries, 0u);
}

TEST(DiskStore, AnotherProcessSeesTheEntriesAndItsOwnComeBack) {
  ScratchDirectory dir{"disk_store_test"};
  std::unique_ptr<DiskStore> parent = open_store(dir.path());
  ASSERT_THAT(parent->store(bytes("parent key"), bytes("from the parent")), IsOk());

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A fresh store, as a second process would open; the exit code says which step failed.
    Result<std::unique_ptr<DiskStore>> store = DiskStore::open({.directory = dir.path()});
    if (!store.ok()) ::_exit(2);
    Result<std::optional<std::vector<std::byte>>> loaded = (*store)->load(bytes("parent key"));
    if (!loaded.ok() || !*loaded || text(**loaded) != "from the parent") ::_exit(3);
    if (!(*store)->store(bytes("child key"), bytes("from the child")).ok()) ::_exit(4);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(load_text(*parent, "child key"), "from the child");
}

// Sets environment variables for one test and puts the old values back.
class EnvironmentOverride {
 public:
  explicit EnvironmentOverride(std::vector<std::string> names) : names_(std::move(names)) {
    for (const std::string& name : names_) {
      const char* value = std::getenv(name.c_str());
      saved_.emplace_back(value == nullptr ? std::nullopt : std::optional<std::string>(value));
    }
  }
  EnvironmentOverride(const EnvironmentOverride&) = delete;
  EnvironmentOverride& operator=(const EnvironmentOverride&) = delete;
  ~EnvironmentOverride() {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (saved_[i]) {
        ::setenv(names_[i].c_str(), saved_[i]->c_str(), 1);
      } else {
        ::unsetenv(names_[i].c_str());
      }
    }
  }

 private:
  std::vector<std::string> names_;
  std::vector<std::optional<std::string>> saved_;
};

TEST(DiskStore, TheDefaultDirectoryFollowsAccelCacheDirThenXdgCacheHomeThenHome) {
  EnvironmentOverride environment({"ACCEL_CACHE_DIR", "XDG_CACHE_HOME", "HOME"});
  ::setenv("ACCEL_CACHE_DIR", "/explicit", 1);
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(DiskStore::default_directory("cudnn"), fs::path("/explicit/cudnn"));

  ::unsetenv("ACCEL_CACHE_DIR");
  EXPECT_EQ(DiskStore::default_directory("cudnn"), fs::path("/xdg/accel/cudnn"));

  ::setenv("XDG_CACHE_HOME", "relative", 1);  // the XDG spec says to ignore a relative path
  EXPECT_EQ(DiskStore::default_directory("cudnn"), fs::path("/home/someone/.cache/accel/cudnn"));
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(DiskStore::default_directory("jit"), fs::path("/home/someone/.cache/accel/jit"));
}

TEST(DiskStore, OpenErrorsNameTheDirectoryAndTheReason) {
  ScratchDirectory dir{"disk_store_test"};
  write_file(dir.path() / "a file", "not a directory");
  const fs::path below_a_file = dir.path() / "a file" / "cache";
  EXPECT_THAT(DiskStore::open({.directory = below_a_file}),
              StatusIs(Code::failed_precondition, below_a_file.string() + ": could not create the directory: Not a"));
  EXPECT_THAT(DiskStore::open({}), StatusIs(Code::invalid_argument, "no directory"));
}

TEST(DiskStore, EraseRemovesTheEntryAndAcceptsAnAbsentOne) {
  ScratchDirectory dir{"disk_store_test"};
  std::unique_ptr<DiskStore> store = open_store(dir.path());
  ASSERT_THAT(store->store(bytes("key"), bytes("value")), IsOk());
  EXPECT_THAT(store->erase(bytes("key")), IsOk());
  EXPECT_EQ(load_text(*store, "key"), std::nullopt);
  EXPECT_THAT(store->erase(bytes("key")), IsOk());
}

TEST(DiskStore, OpeningRemovesAbandonedTemporaryFilesOnly) {
  ScratchDirectory dir{"disk_store_test"};
  write_file(dir.path() / "tmp-1-1-0000000000000000", "a writer died");
  set_age(dir.path() / "tmp-1-1-0000000000000000", 2 * 3600);
  write_file(dir.path() / "tmp-1-2-0000000000000000", "a writer is busy");
  write_file(dir.path() / "README", "not ours");
  set_age(dir.path() / "README", 2 * 3600);

  open_store(dir.path());
  EXPECT_FALSE(fs::exists(dir.path() / "tmp-1-1-0000000000000000"));
  EXPECT_TRUE(fs::exists(dir.path() / "tmp-1-2-0000000000000000"));
  EXPECT_TRUE(fs::exists(dir.path() / "README"));
}

// Entries written by one build must read in the next: a change here is a format change, and needs a new magic
// (or the callers' format_version) rather than a new expectation. The name and the checksum were computed apart
// from DiskStore, with libxxhash's one-shot XXH3_128bits of the key and XXH3_64bits of key and value together.
TEST(DiskStore, TheEntryFormatIsPinned) {
  ScratchDirectory dir{"disk_store_test"};
  std::unique_ptr<DiskStore> store = open_store(dir.path(), 1 << 20, 0x01020304);
  ASSERT_THAT(store->store(bytes("golden key"), bytes("golden value")), IsOk());

  const fs::path path = store->entry_path(bytes("golden key"));
  EXPECT_EQ(path.filename().string(), "224276882fa4021345bbdfa0462310d6.entry");
  const std::string header = std::string("ACCELDS\0", 8) +                        // magic
                             std::string("\x04\x03\x02\x01", 4) +                 // format_version
                             std::string("\x0a\0\0\0", 4) +                       // key length
                             std::string("\x0c\0\0\0\0\0\0\0", 8) +               // value length
                             std::string("\x0c\xac\x7f\xeb\x00\xf4\x49\xaf", 8);  // XXH3-64 of key and value
  EXPECT_EQ(read_file(path), header + "golden key" + "golden value");
}

}  // namespace
}  // namespace accel::cache
