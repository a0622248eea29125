#include "cache/disk_store.hpp"

#include "accel/core/byte_codec.hpp"
#include "cache/disk_entry.hpp"
#include "cache/posix_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY  // for XXH3_state_t on the stack
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <set>
#include <string>

namespace accel::cache {
namespace {

namespace fs = std::filesystem;

constexpr std::array<char, 8> kMagic = {'A', 'C', 'C', 'E', 'L', 'D', 'S', '\0'};
constexpr std::array<char, 8> kAuthenticatedMagic = {'A', 'C', 'C', 'E', 'L', 'D', 'A', '\0'};
constexpr std::size_t kHeaderBytes = 32;
// Header and tag, read together.
constexpr std::size_t kPrefixBytes = kHeaderBytes + DirectoryTrust::kTagBytes;
constexpr std::string_view kEntrySuffix = ".entry";
constexpr std::size_t kEntryNameLength = 32 + kEntrySuffix.size();
constexpr std::string_view kTempPrefix = "tmp-";
// Writing an entry takes milliseconds; a temporary file an hour old belongs to a writer that died.
constexpr std::time_t kStaleTempSeconds = 60 * 60;

struct Header {
  std::uint32_t format_version = 0;
  std::uint32_t key_bytes = 0;
  std::uint64_t value_bytes = 0;
  std::uint64_t checksum = 0;
};

const std::array<char, 8>& magic(bool authenticated) { return authenticated ? kAuthenticatedMagic : kMagic; }

std::array<std::byte, kHeaderBytes> encode(const Header& header, bool authenticated) {
  std::array<std::byte, kHeaderBytes> out{};
  ByteWriter writer(out);
  writer.raw(magic(authenticated).data(), kMagic.size())
      .fields(header.format_version, header.key_bytes, header.value_bytes, header.checksum);
  return out;
}

// Nothing when the magic is not the one of this kind of store.
std::optional<Header> decode(std::span<const std::byte, kHeaderBytes> in, bool authenticated) {
  if (std::memcmp(in.data(), magic(authenticated).data(), kMagic.size()) != 0) return std::nullopt;
  Header header;
  ByteReader reader(std::span<const std::byte>(in).subspan(kMagic.size()));
  reader.fields(header.format_version, header.key_bytes, header.value_bytes, header.checksum);
  return header;
}

std::uint64_t checksum(std::span<const std::byte> key, std::span<const std::byte> value) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, key.data(), key.size());
  XXH3_64bits_update(&state, value.data(), value.size());
  return XXH3_64bits_digest(&state);
}

}  // namespace

Result<Reading> read_entry(int fd, std::uint64_t file_bytes, std::optional<std::span<const std::byte>> key,
                           std::uint32_t format_version, const DirectoryTrust& trust, const fs::path& path) {
  const auto read_error = [&] {
    const int error = errno;
    return os_error(path.parent_path(), "could not read " + path.filename().native(), error);
  };
  const bool authenticated = trust.authenticated();
  const Reading unusable{.verdict = authenticated ? Verdict::refused : Verdict::damaged};
  const std::size_t prefix_bytes = authenticated ? kPrefixBytes : kHeaderBytes;
  if (file_bytes < prefix_bytes) return unusable;
  std::array<std::byte, kPrefixBytes> prefix{};
  const ssize_t prefix_read = read_at(fd, std::span(prefix).first(prefix_bytes), 0);
  if (prefix_read < 0) return read_error();
  if (static_cast<std::size_t>(prefix_read) < prefix_bytes) return unusable;
  const std::span<const std::byte, kHeaderBytes> raw_header(prefix.data(), kHeaderBytes);
  const std::optional<Header> header = decode(raw_header, authenticated);
  if (!header) return unusable;
  const std::uint64_t body_bytes = file_bytes - prefix_bytes;
  if (header->key_bytes > body_bytes || header->value_bytes != body_bytes - header->key_bytes) return unusable;

  std::vector<std::byte> stored_key(header->key_bytes);
  Reading reading{.verdict = Verdict::hit, .value = std::vector<std::byte>(header->value_bytes)};
  const ssize_t key_read = read_at(fd, stored_key, static_cast<off_t>(prefix_bytes));
  if (key_read < 0) return read_error();
  const ssize_t value_read = read_at(fd, reading.value, static_cast<off_t>(prefix_bytes + header->key_bytes));
  if (value_read < 0) return read_error();
  // The file may have been truncated since fstat; short reads are damage like any other.
  if (static_cast<std::size_t>(key_read) != stored_key.size() ||
      static_cast<std::size_t>(value_read) != reading.value.size()) {
    return unusable;
  }
  if (authenticated) {
    DirectoryTrust::Tag stored_tag{};
    std::memcpy(stored_tag.data(), prefix.data() + kHeaderBytes, stored_tag.size());
    if (!trust.verify(stored_tag, raw_header, stored_key, reading.value)) return unusable;
  }
  if (key && header->format_version != format_version) return Reading{.verdict = Verdict::other_version};
  if (checksum(stored_key, reading.value) != header->checksum) return unusable;
  if (key && !std::ranges::equal(stored_key, *key)) return Reading{.verdict = Verdict::other_key};
  return reading;
}

namespace {

// Creates the missing directories of `directory`, each with mode 0700: a cache holds code this process runs, so
// nobody else may write where it lives (DirectoryTrust). Directories already there keep their modes.
Status create_private_directories(const fs::path& directory) {
  fs::path prefix;
  for (const fs::path& part : directory) {
    prefix /= part;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return os_error(directory, "could not create the directory", errno);
    }
  }
  return Status();
}

// Removes `path` only if it still names the file that was read: a writer may have renamed a good entry over it
// since, and that one must stay. The check and the unlink are not atomic; losing that race costs an entry, never
// a wrong value. A file already gone is what a concurrent reader's removal looks like.
void remove_if_unchanged(const fs::path& path, const struct stat& read) {
  struct stat now {};
  if (::lstat(path.c_str(), &now) == 0 && now.st_ino == read.st_ino && now.st_dev == read.st_dev) {
    ::unlink(path.c_str());
  }
}

// Process id and counter are unique on this host; the random part keeps names apart where hosts or PID
// namespaces share the directory (a network file system, containers sharing a volume). The file is created with
// O_EXCL, so a clash fails the store rather than mixing two writers' bytes; that also covers getrandom failing.
std::string temp_name() {
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t random = 0;
  if (::getrandom(&random, sizeof random, GRND_NONBLOCK) != sizeof random) random = 0;
  return fmt::format("{}{}-{}-{:016x}", kTempPrefix, ::getpid(), counter.fetch_add(1, std::memory_order_relaxed),
                     random);
}

}  // namespace

bool is_entry_name(std::string_view name) {
  return name.size() == kEntryNameLength && name.ends_with(kEntrySuffix) &&
         name.find_first_not_of("0123456789abcdef") == kEntryNameLength - kEntrySuffix.size();
}

bool is_temp_name(std::string_view name) { return name.starts_with(kTempPrefix); }

Result<DirectoryTrust> trust_of(DiskStoreOptions& options) {
  if (options.authentication_key.empty()) {
    ACCEL_ASSIGN_OR_RETURN(options.authentication_key, DirectoryTrust::key_from_environment());
  }
  return DirectoryTrust(std::exchange(options.authentication_key, {}));
}

Result<std::unique_ptr<DiskStore>> DiskStore::open(DiskStoreOptions options) {
  if (options.directory.empty()) {
    return invalid_argument("disk cache: no directory given (default_directory() finds none without a home)");
  }
  ACCEL_ASSIGN_OR_RETURN(DirectoryTrust trust, trust_of(options));
  ACCEL_RETURN_IF_ERROR(create_private_directories(options.directory));
  ACCEL_RETURN_IF_ERROR(trust.check_directory(options.directory));
  if (::access(options.directory.c_str(), R_OK | W_OK | X_OK) != 0) {
    return os_error(options.directory, "cannot read and write the directory", errno);
  }
  std::unique_ptr<DiskStore> store(new DiskStore(std::move(options), std::move(trust)));
  ACCEL_RETURN_IF_ERROR(store->scan_and_evict());
  return store;
}

std::unique_ptr<DiskStore> DiskStore::open_or_warn(DiskStoreOptions options, std::string_view what) {
  Result<std::unique_ptr<DiskStore>> store = open(options);
  if (store.ok()) return std::move(*store);
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard lock(mutex);
  if (warned.insert(options.directory.native()).second) {
    spdlog::warn("accel: {} stay in memory only: {}", what, store.status().to_string());
  }
  return nullptr;
}

fs::path DiskStore::default_directory(std::string_view component) {
  if (const char* dir = std::getenv("ACCEL_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return fs::path(dir) / component;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && fs::path(xdg).is_absolute()) {
    return fs::path(xdg) / "accel" / component;
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return fs::path(home) / ".cache" / "accel" / component;
  }
  // Services and containers may run without HOME; the password database still knows the home.
  passwd entry{};
  passwd* found = nullptr;
  std::array<char, 16384> buffer{};
  if (::getpwuid_r(::getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr &&
      found->pw_dir != nullptr && *found->pw_dir != '\0') {
    return fs::path(found->pw_dir) / ".cache" / "accel" / component;
  }
  return {};
}

fs::path DiskStore::entry_path(std::span<const std::byte> key) const {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(key.data(), key.size()));
  return directory() / fmt::format("{:02x}{}", fmt::join(canonical.digest, ""), kEntrySuffix);
}

Result<std::optional<std::vector<std::byte>>> DiskStore::load(std::span<const std::byte> key) {
  const fs::path path = entry_path(key);
  const auto refused = [this] {
    count([](DiskStoreStats& s) {
      ++s.misses;
      ++s.refused_entries;
    });
    return std::nullopt;
  };
  // O_NOFOLLOW: a symbolic link is refused, never followed; O_NONBLOCK: a FIFO in its place cannot hang the open.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ELOOP) return refused();
    if (error != ENOENT) return os_error(directory(), "could not open " + path.filename().native(), error);
    count([](DiskStoreStats& s) { ++s.misses; });
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    const int error = errno;
    return os_error(directory(), "could not stat " + path.filename().native(), error);
  }
  // Judged on the descriptor that will be read, so the file cannot be swapped between the check and the read.
  if (!trust_.accepts_entry(st)) return refused();
  ACCEL_ASSIGN_OR_RETURN(Reading reading, read_entry(fd.get(), static_cast<std::uint64_t>(st.st_size), key,
                                                     options_.format_version, trust_, path));
  if (reading.verdict == Verdict::hit) {
    // Eviction removes the oldest modification time first. An entry we may read but not touch (another user's)
    // just ages.
    ::futimens(fd.get(), nullptr);
    count([](DiskStoreStats& s) { ++s.hits; });
    return std::move(reading.value);
  }
  // Left in place for the rebuild's store to replace: this process cannot vouch for what it would remove.
  if (reading.verdict == Verdict::refused) return refused();
  // A stored key that differs is a hash collision: that entry is good, for its own key.
  if (reading.verdict != Verdict::other_key) remove_if_unchanged(path, st);
  count([damaged = reading.verdict == Verdict::damaged](DiskStoreStats& s) {
    ++s.misses;
    s.corrupt_entries += damaged ? 1 : 0;
  });
  return std::nullopt;
}

Status DiskStore::store(std::span<const std::byte> key, std::span<const std::byte> value) {
  Status written = write_entry(key, value);
  if (written.ok()) return written;
  count([](DiskStoreStats& s) { ++s.failed_stores; });
  if (!store_failure_logged_.exchange(true))
    spdlog::warn(
        "accel: {}; entries of this cache stay in memory only until writes succeed (later failures are "
        "counted, not logged)",
        written.to_string());
  return written;
}

Status DiskStore::write_entry(std::span<const std::byte> key, std::span<const std::byte> value) {
  if (key.size() > std::numeric_limits<std::uint32_t>::max()) {
    return invalid_argument(fmt::format("disk cache {}: a key of {} bytes is longer than an entry can hold (4 GiB)",
                                        directory().native(), key.size()));
  }
  const std::uint64_t entry_bytes =
      kHeaderBytes + (trust_.authenticated() ? DirectoryTrust::kTagBytes : 0) + key.size() + value.size();
  if (entry_bytes > options_.max_bytes) {
    return invalid_argument(fmt::format("disk cache {}: an entry of {} bytes (key {}, value {}) exceeds max_bytes {}",
                                        directory().native(), entry_bytes, key.size(), value.size(),
                                        options_.max_bytes));
  }
  const bool authenticated = trust_.authenticated();
  const std::array<std::byte, kHeaderBytes> header = encode({.format_version = options_.format_version,
                                                             .key_bytes = static_cast<std::uint32_t>(key.size()),
                                                             .value_bytes = value.size(),
                                                             .checksum = checksum(key, value)},
                                                            authenticated);
  DirectoryTrust::Tag tag{};
  if (authenticated) {
    ACCEL_ASSIGN_OR_RETURN(tag, trust_.tag(header, key, value));
  }
  const fs::path temp = directory() / temp_name();
  FileDescriptor fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, trust_.entry_mode()));
  if (fd.get() < 0) {
    const int error = errno;
    return os_error(directory(), "could not create " + temp.filename().native(), error);
  }
  const auto abandon = [&](std::string_view what) {
    const int error = errno;
    ::unlink(temp.c_str());
    return os_error(directory(), fmt::format("could not {} {}", what, temp.filename().native()), error);
  };
  if (!write_all(fd.get(), header) || !write_all(fd.get(), std::span(tag).first(authenticated ? tag.size() : 0)) ||
      !write_all(fd.get(), key) || !write_all(fd.get(), value)) {
    return abandon("write");
  }
  if (fd.close() != 0) return abandon("close");
  if (::rename(temp.c_str(), entry_path(key).c_str()) != 0) return abandon("rename into place");
  count([](DiskStoreStats& s) { ++s.stores; });

  // The entry is stored whatever the scan finds; a scan that fails (the directory was removed under us) is
  // tried again by the next store past the bound.
  if (estimated_bytes_.fetch_add(entry_bytes) + entry_bytes > options_.max_bytes) static_cast<void>(scan_and_evict());
  return Status();
}

Status DiskStore::erase(std::span<const std::byte> key) {
  const fs::path path = entry_path(key);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    const int error = errno;
    return os_error(directory(), "could not remove " + path.filename().native(), error);
  }
  return Status();
}

DiskStoreStats DiskStore::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

Status DiskStore::scan_and_evict() {
  std::unique_lock lock(scan_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return Status();
  // Stores that finish during the scan add to the fresh estimate; where the scan listed their files too they
  // count twice, which errs high, as the estimate may.
  const std::uint64_t previous = estimated_bytes_.exchange(0);

  struct Entry {
    timespec modified;
    std::uint64_t bytes;
    fs::path path;
  };
  std::vector<Entry> entries;
  std::uint64_t total = 0;
  const std::time_t now = ::time(nullptr);
  std::error_code error;
  for (fs::directory_iterator it(directory(), error), end; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().native();
    struct stat st {};
    // A file gone by now was evicted or renamed by another process.
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (is_temp_name(name)) {
      if (now - st.st_mtim.tv_sec > kStaleTempSeconds) ::unlink(path.c_str());
      continue;
    }
    if (!is_entry_name(name)) continue;
    entries.push_back({.modified = st.st_mtim, .bytes = static_cast<std::uint64_t>(st.st_size), .path = path});
    total += entries.back().bytes;
  }
  if (error) {
    estimated_bytes_.fetch_add(previous);
    return os_error(directory(), "could not list the directory", error.value());
  }

  if (total > options_.max_bytes) {
    // Down to 7/8 of the bound, so that a full cache scans once per max_bytes/8 stored, not on every store.
    const std::uint64_t target = options_.max_bytes - options_.max_bytes / 8;
    std::ranges::sort(entries, [](const Entry& a, const Entry& b) {
      return a.modified.tv_sec != b.modified.tv_sec ? a.modified.tv_sec < b.modified.tv_sec
                                                    : a.modified.tv_nsec < b.modified.tv_nsec;
    });
    std::uint64_t evicted = 0;
    for (const Entry& entry : entries) {
      if (total <= target) break;
      if (::unlink(entry.path.c_str()) == 0) {
        ++evicted;
      } else if (errno != ENOENT) {
        continue;  // still there, still counted
      }
      total -= entry.bytes;
    }
    count([evicted](DiskStoreStats& s) { s.evictions += evicted; });
  }
  estimated_bytes_.fetch_add(total);
  return Status();
}

}  // namespace accel::cache
