// `accel cache` and `accel info --json` run as programs, each with its own ACCEL_CACHE_DIR: list (text and JSON),
// verify on planted good, damaged (a flipped byte, a truncated file) and foreign-owned entries, clear of one cache
// and the refusal of another user's directory, and warm followed by a fresh process that compiles nothing.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "cache/disk_store.hpp"
#include "testing/model_folder.hpp"
#include "testing/run_cli.hpp"
#include "testing/scratch_directory.hpp"

namespace {

namespace fs = std::filesystem;
using accel::testing::Ran;

const fs::path kModel = accel::testing::model_folder(ACCEL_TEST_MODEL_FOLDER);
// Exit code of a failed verify or a refused directory (cli/text_input.hpp).
constexpr int kBadCache = 6;
// nobody. As root a file is given to it (chown); as another user a group-writable file or directory stands in, which
// the trust check refuses the same way (cache/directory_trust.hpp).
constexpr uid_t kOtherUser = 65534;

void make_foreign(const fs::path& path) {
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(path.c_str(), kOtherUser, kOtherUser), 0) << path;
  } else {
    ASSERT_EQ(::chmod(path.c_str(), fs::is_directory(path) ? 0770 : 0620), 0) << path;
  }
}

class CacheCommandTest : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("ACCEL_CACHE_DIR", scratch_.path().c_str(), 1); }
  void TearDown() override { ::unsetenv("ACCEL_CACHE_DIR"); }

  // Stores `key` in the cache `name` under the root and returns its entry's path.
  fs::path plant(const std::string& name, const std::string& key) {
    auto store = accel::cache::DiskStore::open({.directory = scratch_.path() / name});
    EXPECT_TRUE(store.ok()) << store.status().to_string();
    if (!store.ok()) return {};
    const auto bytes = [](const std::string& text) { return std::as_bytes(std::span(text.data(), text.size())); };
    EXPECT_TRUE((*store)->store(bytes(key), bytes("value of " + key)).ok());
    return (*store)->entry_path(bytes(key));
  }
  // The cache `name` of `cache list --json`'s output (null when absent or the output is not JSON).
  static nlohmann::json listed(const Ran& ran, const std::string& name) {
    const nlohmann::json out = nlohmann::json::parse(ran.out, nullptr, false);
    if (out.is_discarded() || !out.contains("caches")) return nullptr;
    for (const nlohmann::json& cache : out["caches"])
      if (cache.value("name", "") == name) return cache;
    return nullptr;
  }
  accel::testing::ScratchDirectory scratch_{"cache-command"};
};

TEST_F(CacheCommandTest, ListsEachCacheAsJson) {
  plant("planted", "a");
  plant("planted", "b");
  const Ran ran = accel::testing::run_cli("cache list --json 2>/dev/null");
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  const nlohmann::json planted = listed(ran, "planted");
  ASSERT_TRUE(planted.is_object()) << ran.out;
  EXPECT_EQ(planted["entries"], 2);
  EXPECT_EQ(planted["bad_entries"], 0);
  EXPECT_GT(planted["bytes"].get<std::uint64_t>(), 0u);
  // The CPU device's persistent cache, with this process's counters.
  const nlohmann::json executables = listed(ran, "graph-executables");
  ASSERT_TRUE(executables.is_object()) << ran.out;
  EXPECT_EQ(executables["directory"], (scratch_.path() / "graph-executables").string());
  EXPECT_TRUE(executables["this_process"].contains("hits"));
}

TEST_F(CacheCommandTest, ListsAsText) {
  plant("planted", "a");
  const Ran ran = accel::testing::run_cli("cache list");
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  EXPECT_NE(ran.out.find("planted: " + (scratch_.path() / "planted").string() + ": 1 entries"), std::string::npos)
      << ran.out;
}

TEST_F(CacheCommandTest, VerifyPassesGoodEntries) {
  plant("planted", "a");
  const Ran ran = accel::testing::run_cli("cache verify");
  EXPECT_EQ(ran.exit_code, 0) << ran.out;
  EXPECT_NE(ran.out.find("1 entries checked, 0 bad"), std::string::npos) << ran.out;
}

TEST_F(CacheCommandTest, VerifyNamesEachBadEntryWithItsReason) {
  plant("planted", "good");
  const fs::path flipped = plant("planted", "flipped");
  const fs::path truncated = plant("planted", "truncated");
  const fs::path foreign = plant("planted", "foreign");
  {
    std::fstream file(flipped, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-1, std::ios::end);
    file.put('\x7f');
  }
  fs::resize_file(truncated, fs::file_size(truncated) - 1);
  make_foreign(foreign);
  const Ran ran = accel::testing::run_cli("cache verify");
  EXPECT_EQ(ran.exit_code, kBadCache) << ran.out;
  EXPECT_NE(ran.out.find(flipped.string() + ": damaged"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find(truncated.string() + ": damaged"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find(foreign.string() + ": refused: owned by uid"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("4 entries checked, 3 bad"), std::string::npos) << ran.out;
}

TEST_F(CacheCommandTest, ClearRemovesOneCachesEntriesOnly) {
  const fs::path planted = plant("planted", "a");
  const fs::path other = plant("other", "b");
  std::ofstream(scratch_.path() / "planted" / "notes.txt") << "not an entry";
  const Ran ran = accel::testing::run_cli("cache clear planted");
  EXPECT_EQ(ran.exit_code, 0) << ran.out;
  EXPECT_FALSE(fs::exists(planted));
  EXPECT_TRUE(fs::exists(scratch_.path() / "planted" / "notes.txt"));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_NE(accel::testing::run_cli("cache clear nonesuch").exit_code, 0);
}

TEST_F(CacheCommandTest, ClearRefusesAnotherUsersDirectoryByName) {
  const fs::path entry = plant("foreign", "a");
  make_foreign(scratch_.path() / "foreign");
  const Ran ran = accel::testing::run_cli("cache clear foreign");
  EXPECT_EQ(ran.exit_code, kBadCache) << ran.out;
  EXPECT_NE(ran.out.find((scratch_.path() / "foreign").string() + ": refused"), std::string::npos) << ran.out;
  EXPECT_TRUE(fs::exists(entry));
}

TEST_F(CacheCommandTest, InfoJsonParses) {
  const Ran ran = accel::testing::run_cli("info --json 2>/dev/null");
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  const nlohmann::json out = nlohmann::json::parse(ran.out, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << ran.out;
  ASSERT_FALSE(out["devices"].empty()) << ran.out;
  EXPECT_EQ(out["devices"][0]["kind"], "cpu");
  EXPECT_TRUE(out["devices"][0]["caches"].is_array());
}

// The compiles and disk loads `cache warm` reports ("... N compiled, M loaded from the cache ...").
std::pair<int, int> warm_counts(const Ran& ran) {
  std::smatch match;
  if (!std::regex_search(ran.out, match, std::regex(R"((\d+) compiled, (\d+) loaded)"))) return {-1, -1};
  return {std::stoi(match[1]), std::stoi(match[2])};
}

TEST_F(CacheCommandTest, WarmThenAFreshProcessCompilesNothing) {
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kModel);
  const std::string warm = "cache warm --batch-tokens 256 --model " + kModel.string();
  const Ran first = accel::testing::run_cli(warm);
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const auto [built, first_loads] = warm_counts(first);
  EXPECT_GT(built, 0) << first.out;
  // A new process runs every bucket again: each executable is loaded from the cache, none compiled.
  const Ran second = accel::testing::run_cli(warm);
  ASSERT_EQ(second.exit_code, 0) << second.out;
  const auto [rebuilt, loaded] = warm_counts(second);
  EXPECT_EQ(rebuilt, 0) << second.out;
  EXPECT_EQ(loaded, built) << second.out;
}

}  // namespace
