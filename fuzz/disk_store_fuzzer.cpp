// cache::DiskStore::load of an entry file another process (or a disk fault) wrote: the input is written as the
// entry file of a key in a temporary directory, then loaded.
//
// Input: one mode byte, then the file. With the mode's low bit set the harness writes the checksum the header
// should carry over the key and value the header's lengths describe, so that inputs get past the checksum to
// the key comparison and the value; the key asked for is then the one stored (else a fixed one).
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "cache/disk_store.hpp"
#include "temporary_directory.hpp"

namespace {

constexpr std::size_t kHeaderBytes = 32;

accel::cache::DiskStore& store() {
  static accel::fuzzing::TemporaryDirectory directory("accel-fuzz-disk-store");
  static const std::unique_ptr<accel::cache::DiskStore> opened = [] {
    auto result = accel::cache::DiskStore::open({.directory = directory.path()});
    if (!result.ok()) std::abort();
    return std::move(*result);
  }();
  return *opened;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::vector<std::byte> file(reinterpret_cast<const std::byte*>(data) + 1,
                              reinterpret_cast<const std::byte*>(data) + size);
  std::vector<std::byte> key{std::byte{'k'}};
  if ((data[0] & 1) != 0 && file.size() >= kHeaderBytes) {
    std::uint32_t key_bytes = 0;
    std::uint64_t value_bytes = 0;
    std::memcpy(&key_bytes, file.data() + 12, sizeof key_bytes);
    std::memcpy(&value_bytes, file.data() + 16, sizeof value_bytes);
    const std::size_t body = file.size() - kHeaderBytes;
    if (key_bytes <= body && value_bytes <= body - key_bytes) {
      const std::uint64_t sum = XXH3_64bits(file.data() + kHeaderBytes, key_bytes + value_bytes);
      std::memcpy(file.data() + 24, &sum, sizeof sum);
      key.assign(file.begin() + kHeaderBytes, file.begin() + kHeaderBytes + key_bytes);
    }
  }
  accel::fuzzing::write_file(store().entry_path(key), file);
  (void)store().load(key);
  return 0;
}
