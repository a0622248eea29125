#include "cache/directory_trust.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace accel::cache {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kKeyFileVariable = "ACCEL_CACHE_KEY_FILE";
// A key is a few dozen bytes; a large file named by mistake (a model, a log) must not be read whole.
constexpr std::size_t kMaxKeyFileBytes = 4096;

constexpr mode_t kGroupOrOtherWrite = S_IWGRP | S_IWOTH;

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

Status key_file_error(const fs::path& path, std::string_view why) {
  return failed_precondition(fmt::format("disk cache key file {} (${}): {}", path.native(), kKeyFileVariable, why));
}

struct MacDeleter {
  void operator()(EVP_MAC* mac) const noexcept { EVP_MAC_free(mac); }
  void operator()(EVP_MAC_CTX* context) const noexcept { EVP_MAC_CTX_free(context); }
};

}  // namespace

Result<std::vector<std::byte>> DirectoryTrust::key_from_environment() {
  const char* file = std::getenv(std::string(kKeyFileVariable).c_str());
  if (file == nullptr || *file == '\0') return std::vector<std::byte>();
  return read_key_file(file);
}

Result<std::vector<std::byte>> DirectoryTrust::read_key_file(const fs::path& path) {
  FdCloser fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)};
  if (fd.fd < 0) return key_file_error(path, fmt::format("cannot be opened: {}", std::strerror(errno)));
  struct stat file {};
  if (::fstat(fd.fd, &file) != 0) return key_file_error(path, fmt::format("cannot be read: {}", std::strerror(errno)));
  if (!S_ISREG(file.st_mode)) return key_file_error(path, "is not a regular file");
  // The key is what keeps a stranger's code out of a shared cache: anyone who may read it may forge entries, and
  // anyone who may write it may change whom the cache trusts.
  if ((file.st_mode & (S_IWGRP | S_IRWXO)) != 0) {
    return key_file_error(path, fmt::format("has mode {:04o}; a key must be readable by its owner and group only "
                                            "(chmod 0640, or 0600 for one user)",
                                            file.st_mode & 07777));
  }
  if (static_cast<std::uint64_t>(file.st_size) > kMaxKeyFileBytes) {
    return key_file_error(path,
                          fmt::format("holds {} bytes, more than a key ({} at most)", file.st_size, kMaxKeyFileBytes));
  }
  std::vector<std::byte> key(static_cast<std::size_t>(file.st_size));
  std::size_t done = 0;
  while (done < key.size()) {
    const ssize_t n = ::read(fd.fd, key.data() + done, key.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return key_file_error(path, fmt::format("cannot be read: {}", std::strerror(errno)));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  key.resize(done);
  while (!key.empty() && std::strchr(" \t\r\n", static_cast<char>(key.back())) != nullptr) key.pop_back();
  if (key.size() < kMinKeyBytes) {
    return key_file_error(path, fmt::format("holds a key of {} bytes, fewer than {} (make one with `openssl rand "
                                            "-hex 32`)",
                                            key.size(), kMinKeyBytes));
  }
  return key;
}

DirectoryTrust::DirectoryTrust(std::vector<std::byte> key) : key_(std::move(key)), user_(::geteuid()) {}

Status DirectoryTrust::check_directory(const fs::path& directory) const {
  FdCloser fd{::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  struct stat info {};
  if (fd.fd < 0 || ::fstat(fd.fd, &info) != 0) {
    return failed_precondition(
        fmt::format("disk cache {}: cannot look at the directory: {}", directory.native(), std::strerror(errno)));
  }
  const mode_t mode = info.st_mode & 07777;
  const auto refuse = [&](std::string_view why, std::string_view fix) {
    return failed_precondition(fmt::format(
        "disk cache {}: refused: the directory is owned by uid {} with mode {:04o}, and {}. Cached kernels and "
        "plans are code this process runs, so a directory someone else can write could make it run theirs. {}",
        directory.native(), info.st_uid, mode, why, fix));
  };
  if (authenticated()) {
    if ((mode & S_IWOTH) != 0) {
      return refuse("others may write it", fmt::format("A shared cache is shared by a group: chmod o-w {}, with the "
                                                       "team's group owning it (chgrp)",
                                                       directory.native()));
    }
    return Status();
  }
  if (info.st_uid != user_) {
    return refuse(fmt::format("this process runs as uid {}", user_),
                  "Use a cache directory of your own (ACCEL_CACHE_DIR), or, for a cache shared on purpose, set an "
                  "authentication key (ACCEL_CACHE_KEY_FILE; see docs/ARCHITECTURE.md, What each process trusts)");
  }
  if ((mode & kGroupOrOtherWrite) != 0) {
    return refuse("its group or others may write it",
                  fmt::format("Run chmod go-w {} (or 0700), or, for a cache shared on purpose, set an authentication "
                              "key (ACCEL_CACHE_KEY_FILE; see docs/ARCHITECTURE.md, What each process trusts)",
                              directory.native()));
  }
  return Status();
}

bool DirectoryTrust::accepts_entry(const struct stat& file) const noexcept {
  if (!S_ISREG(file.st_mode)) return false;
  // In a shared cache the tag vouches for the contents, whoever wrote the file.
  if (authenticated()) return true;
  return file.st_uid == user_ && (file.st_mode & kGroupOrOtherWrite) == 0;
}

Result<DirectoryTrust::Tag> DirectoryTrust::tag(std::span<const std::byte> header, std::span<const std::byte> key,
                                                std::span<const std::byte> value) const {
  // Fetched per call: the provider caches the fetch, and a DirectoryTrust then needs no libcrypto state of its own.
  const std::unique_ptr<EVP_MAC, MacDeleter> mac(EVP_MAC_fetch(nullptr, OSSL_MAC_NAME_HMAC, nullptr));
  const std::unique_ptr<EVP_MAC_CTX, MacDeleter> context(mac != nullptr ? EVP_MAC_CTX_new(mac.get()) : nullptr);
  char digest[] = OSSL_DIGEST_NAME_SHA2_256;
  const OSSL_PARAM parameters[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                                   OSSL_PARAM_construct_end()};
  Tag out{};
  std::size_t written = 0;
  const auto bytes = [](std::span<const std::byte> part) {
    return reinterpret_cast<const unsigned char*>(part.data());
  };
  if (context == nullptr || EVP_MAC_init(context.get(), bytes(key_), key_.size(), parameters) != 1 ||
      EVP_MAC_update(context.get(), bytes(header), header.size()) != 1 ||
      EVP_MAC_update(context.get(), bytes(key), key.size()) != 1 ||
      EVP_MAC_update(context.get(), bytes(value), value.size()) != 1 ||
      EVP_MAC_final(context.get(), reinterpret_cast<unsigned char*>(out.data()), &written, out.size()) != 1 ||
      written != out.size()) {
    return internal_error("disk cache: libcrypto could not compute an HMAC-SHA256");
  }
  return out;
}

bool DirectoryTrust::verify(const Tag& stored, std::span<const std::byte> header, std::span<const std::byte> key,
                            std::span<const std::byte> value) const {
  const Result<Tag> computed = tag(header, key, value);
  return computed.ok() && CRYPTO_memcmp(computed->data(), stored.data(), stored.size()) == 0;
}

}  // namespace accel::cache
