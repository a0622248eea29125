// What a DiskStore trusts (cache/directory_trust.hpp): the directories it creates are private, directories and
// entries another user could have written are refused, and a shared cache loads only entries tagged with its key.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "cache/disk_store.hpp"
#include "testing/scratch_directory.hpp"
#include "testing/status_matchers.hpp"

namespace accel::cache {
namespace {

namespace fs = std::filesystem;
using accel::testing::IsOk;
using accel::testing::ScratchDirectory;
using accel::testing::StatusIs;

// A user that owns nothing here (nobody), for directories and files "someone else" wrote.
constexpr uid_t kOtherUser = 65534;

Bytes bytes(std::string_view text) {
  const auto view = std::as_bytes(std::span(text.data(), text.size()));
  return {view.begin(), view.end()};
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, std::string_view contents, mode_t mode = 0600) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(contents.data(), static_cast<std::streamsize>(contents.size()));
  ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

mode_t mode_of(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

std::optional<std::string> load_text(DiskStore& store, std::string_view key) {
  std::optional<Bytes> value = store.load(bytes(key)).value();
  if (!value) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(value->data()), value->size());
}

// A directory made by hand with `mode` (mkdir and umask would take bits away).
fs::path directory_with_mode(const ScratchDirectory& scratch, std::string_view name, mode_t mode) {
  const fs::path path = scratch.path() / name;
  fs::create_directory(path);
  EXPECT_EQ(::chmod(path.c_str(), mode), 0) << path;
  return path;
}

const Bytes kTeamKey = bytes("the team's key, 32 bytes or so..");

// ACCEL_CACHE_KEY_FILE set for one test, and unset again after it.
class KeyFileVariable {
 public:
  explicit KeyFileVariable(const fs::path& file) { ::setenv("ACCEL_CACHE_KEY_FILE", file.c_str(), 1); }
  KeyFileVariable(const KeyFileVariable&) = delete;
  KeyFileVariable& operator=(const KeyFileVariable&) = delete;
  ~KeyFileVariable() { ::unsetenv("ACCEL_CACHE_KEY_FILE"); }
};

TEST(DiskStoreTrust, TheDirectoryAndTheParentsItCreatesAre0700) {
  ScratchDirectory scratch{"disk_store_trust_test"};
  const fs::path directory = scratch.path() / "cache" / "accel" / "jit-kernels";
  ASSERT_THAT(DiskStore::open({.directory = directory}), IsOk());
  EXPECT_EQ(mode_of(scratch.path() / "cache"), 0700u);
  EXPECT_EQ(mode_of(scratch.path() / "cache" / "accel"), 0700u);
  EXPECT_EQ(mode_of(directory), 0700u);

  std::unique_ptr<DiskStore> store = DiskStore::open({.directory = directory}).value();
  ASSERT_THAT(store->store(bytes("key"), bytes("value")), IsOk());
  EXPECT_EQ(mode_of(store->entry_path(bytes("key"))), 0600u);
}

TEST(DiskStoreTrust, ADirectoryOthersMayWriteIsRefusedNamingItsOwnerModeAndTheFix) {
  ScratchDirectory scratch{"disk_store_trust_test"};
  for (const mode_t mode : {0770u, 0720u, 0707u, 0702u, 0777u}) {
    SCOPED_TRACE(mode);
    const fs::path directory = directory_with_mode(scratch, "shared", mode);
    EXPECT_THAT(DiskStore::open({.directory = directory}),
                StatusIs(Code::failed_precondition,
                         fmt::format("{}: refused: the directory is owned by uid {} with mode {:04o}, and its group or "
                                     "others may write it",
                                     directory.native(), ::geteuid(), mode)));
    EXPECT_THAT(DiskStore::open({.directory = directory}), StatusIs(Code::failed_precondition, "chmod go-w"));
    fs::remove(directory);
  }
  // Readable by others is not a risk to this process: only writing is.
  EXPECT_THAT(DiskStore::open({.directory = directory_with_mode(scratch, "readable", 0755)}), IsOk());
}

TEST(DiskStoreTrust, ACacheOverARefusedDirectoryWorksFromMemory) {
  ScratchDirectory scratch{"disk_store_trust_test"};
  const fs::path directory = directory_with_mode(scratch, "shared", 0777);
  std::atomic<int> builds = 0;
  Cache<std::string> cache({.name = "texts",
                            .max_entries = 4,
                            .disk = DiskStore::open_or_warn({.directory = directory}, "texts"),
                            .encode = [](const std::string& value) -> std::optional<Bytes> { return bytes(value); }});
  EXPECT_TRUE(cache.directory().empty());
  const auto build = [&]() -> Result<std::string> {
    ++builds;
    return std::string("built");
  };
  EXPECT_EQ(*cache.get(bytes("key"), build).value(), "built");
  EXPECT_EQ(*cache.get(bytes("key"), build).value(), "built");
  EXPECT_EQ(builds.load(), 1);
  EXPECT_TRUE(fs::is_empty(directory));  // nothing was written where others could have planted it
}

// An entry file written by this store, then made writable by the group: what a group member planting a module
// in a directory that became group-writable after the store opened it looks like.
TEST(DiskStoreTrust, AnEntryOthersMayWriteIsRefusedAndCountedNotLoaded) {
  ScratchDirectory scratch{"disk_store_trust_test"};
  std::unique_ptr<DiskStore> store = DiskStore::open({.directory = scratch.path()}).value();
  ASSERT_THAT(store->store(bytes("key"), bytes("value")), IsOk());
  const fs::path entry = store->entry_path(bytes("key"));
  ASSERT_EQ(::chmod(scratch.path().c_str(), 0770), 0);
  ASSERT_EQ(::chmod(entry.c_str(), 0660), 0);

  EXPECT_EQ(load_text(*store, "key"), std::nullopt);
  EXPECT_EQ(store->stats().refused_entries, 1u);
  EXPECT_EQ(store->stats().misses, 1u);
  EXPECT_EQ(store->stats().hits, 0u);
  EXPECT_TRUE(fs::exists(entry));  // not this store's to judge; the rebuild's store replaces it
  EXPECT_THAT(DiskStore::open({.directory = scratch.path()}), StatusIs(Code::failed_precondition, "refused"));

  ASSERT_EQ(::chmod(entry.c_str(), 0644), 0);
  EXPECT_EQ(load_text(*store, "key"), "value");
}

TEST(DiskStoreTrust, AnEntryThatIsASymbolicLinkIsRefusedNeverFollowed) {
  ScratchDirectory scratch{"disk_store_trust_test"};
  const fs::path elsewhere = scratch.path() / "elsewhere";
  std::unique_ptr<DiskStore> other = DiskStore::open({.directory = elsewhere}).value();
  ASSERT_THAT(other->store(bytes("key"), bytes("planted")), IsOk());

  std::unique_ptr<DiskStore> store = DiskStore::open({.directory = scratch.path() / "cache"}).value();
  fs::create_symlink(other->entry_path(bytes("key")), store->entry_path(bytes("key")));
  EXPECT_EQ(load_text(*store, "key"), std::nullopt);
  EXPECT_EQ(store->stats().refused_entries, 1u);

  // Not a regular file either: refused without blocking on it.
  ASSERT_EQ(::mkfifo(store->entry_path(bytes("fifo")).c_str(), 0600), 0);
  EXPECT_EQ(load_text(*store, "fifo"), std::nullopt);
  EXPECT_EQ(store->stats().refused_entries, 2u);
}

TEST(DiskStoreTrust, ADirectoryOrEntryOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root (chown)";
  ScratchDirectory scratch{"disk_store_trust_test"};
  const fs::path directory = directory_with_mode(scratch, "theirs", 0700);
  ASSERT_EQ(::chown(directory.c_str(), kOtherUser, kOtherUser), 0);
  EXPECT_THAT(DiskStore::open({.directory = directory}),
              StatusIs(Code::failed_precondition,
                       fmt::format("{}: refused: the directory is owned by uid {} with mode 0700, and this process "
                                   "runs as uid 0",
                                   directory.native(), kOtherUser)));

  std::unique_ptr<DiskStore> store = DiskStore::open({.directory = scratch.path() / "mine"}).value();
  ASSERT_THAT(store->store(bytes("key"), bytes("value")), IsOk());
  ASSERT_EQ(::chown(store->entry_path(bytes("key")).c_str(), kOtherUser, kOtherUser), 0);
  EXPECT_EQ(load_text(*store, "key"), std::nullopt);
  EXPECT_EQ(store->stats().refused_entries, 1u);
}

TEST(DiskStoreTrust, WithAKeyASharedDirectoryIsAcceptedAndItsTaggedEntriesLoad) {
  ScratchDirectory scratch{"disk_store_trust_test"};
  const fs::path shared = directory_with_mode(scratch, "team", 02770);
  std::unique_ptr<DiskStore> alice = DiskStore::open({.directory = shared, .authentication_key = kTeamKey}).value();
  ASSERT_THAT(alice->store(bytes("key"), bytes("a module")), IsOk());
  EXPECT_EQ(mode_of(alice->entry_path(bytes("key"))), 0640u);  // the team reads it

  std::unique_ptr<DiskStore> bob = DiskStore::open({.directory = shared, .authentication_key = kTeamKey}).value();
  EXPECT_EQ(load_text(*bob, "key"), "a module");
  EXPECT_EQ(bob->stats().refused_entries, 0u);

  // Others writing is still refused: a team shares by a group.
  EXPECT_THAT(
      DiskStore::open({.directory = directory_with_mode(scratch, "world", 0777), .authentication_key = kTeamKey}),
      StatusIs(Code::failed_precondition, "others may write it"));
}

TEST(DiskStoreTrust, WithAKeyAnEntryWithoutAValidTagIsRefusedAndRebuilt) {
  ScratchDirectory scratch{"disk_store_trust_test"};
  const fs::path shared = directory_with_mode(scratch, "team", 0770);
  const fs::path private_dir = scratch.path() / "private";
  std::unique_ptr<DiskStore> keyed = DiskStore::open({.directory = shared, .authentication_key = kTeamKey}).value();
  const fs::path entry = keyed->entry_path(bytes("key"));

  // Each way of planting: an entry written without the key, one tagged with another key, a tagged entry with a
  // value byte or a tag byte changed.
  std::unique_ptr<DiskStore> unkeyed = DiskStore::open({.directory = private_dir}).value();
  ASSERT_THAT(unkeyed->store(bytes("key"), bytes("planted")), IsOk());
  std::unique_ptr<DiskStore> wrong_key =
      DiskStore::open({.directory = private_dir / "wrong", .authentication_key = bytes("another key, quite long")})
          .value();
  ASSERT_THAT(wrong_key->store(bytes("key"), bytes("planted")), IsOk());
  ASSERT_THAT(keyed->store(bytes("key"), bytes("genuine")), IsOk());
  const std::string genuine = read_file(entry);
  std::string value_changed = genuine;
  value_changed.back() ^= 0x01;
  std::string tag_changed = genuine;
  tag_changed[32] ^= 0x01;
  const std::vector<std::string> planted = {read_file(unkeyed->entry_path(bytes("key"))),
                                            read_file(wrong_key->entry_path(bytes("key"))), value_changed, tag_changed};

  for (std::size_t i = 0; i < planted.size(); ++i) {
    SCOPED_TRACE(i);
    write_file(entry, planted[i], 0664);
    std::atomic<int> builds = 0;
    Cache<std::string> cache(
        {.name = "modules",
         .max_entries = 4,
         .disk = DiskStore::open({.directory = shared, .authentication_key = kTeamKey}).value(),
         .encode = [](const std::string& value) -> std::optional<Bytes> { return bytes(value); },
         .decode = [](std::span<const std::byte> stored) -> Result<std::shared_ptr<const std::string>> {
           return std::make_shared<const std::string>(reinterpret_cast<const char*>(stored.data()), stored.size());
         }});
    const Result<std::shared_ptr<const std::string>> got = cache.get(bytes("key"), [&]() -> Result<std::string> {
      ++builds;
      return std::string("rebuilt");
    });
    ASSERT_THAT(got.status(), IsOk());
    EXPECT_EQ(**got, "rebuilt");
    EXPECT_EQ(builds.load(), 1);
    EXPECT_EQ(cache.stats().disk_rejects, 1u);
    EXPECT_EQ(load_text(*keyed, "key"), "rebuilt");  // the rebuild replaced the planted entry
  }
  // Tagged entries are not readable by a private store (and the other way round): each is refused or damaged.
  write_file(unkeyed->entry_path(bytes("key")), genuine);
  EXPECT_EQ(load_text(*unkeyed, "key"), std::nullopt);
}

TEST(DiskStoreTrust, TheKeyComesFromAFileOnlyTheTeamMayRead) {
  ScratchDirectory scratch{"disk_store_trust_test"};
  const fs::path shared = directory_with_mode(scratch, "team", 0770);
  const fs::path key_file = scratch.path() / "cache.key";
  const KeyFileVariable variable(key_file);

  write_file(key_file, "0123456789abcdef0123456789abcdef\n", 0640);
  std::unique_ptr<DiskStore> from_file = DiskStore::open({.directory = shared}).value();
  ASSERT_THAT(from_file->store(bytes("key"), bytes("value")), IsOk());
  // The newline is not part of the key.
  std::unique_ptr<DiskStore> given =
      DiskStore::open({.directory = shared, .authentication_key = bytes("0123456789abcdef0123456789abcdef")}).value();
  EXPECT_EQ(load_text(*given, "key"), "value");

  for (const mode_t mode : {0644u, 0660u, 0604u}) {
    SCOPED_TRACE(mode);
    ASSERT_EQ(::chmod(key_file.c_str(), mode), 0);
    EXPECT_THAT(DiskStore::open({.directory = shared}),
                StatusIs(Code::failed_precondition,
                         fmt::format("{} ($ACCEL_CACHE_KEY_FILE): has mode {:04o}", key_file.native(), mode)));
  }
  write_file(key_file, "short\n", 0600);
  EXPECT_THAT(DiskStore::open({.directory = shared}), StatusIs(Code::failed_precondition, "fewer than 16"));
  fs::remove(key_file);
  EXPECT_THAT(DiskStore::open({.directory = shared}), StatusIs(Code::failed_precondition, "cannot be opened"));
}

}  // namespace
}  // namespace accel::cache
