// accel::cache::HashedKey — a cache key with the hash a Cache's index gives it, for a caller that asks for one key
// many times: made once, each lookup through Cache::get(const HashedKey&, ...) then compares the key's bytes but
// hashes none of them (a compiled graph's key holds the graph's whole encoding, 18,635 bytes for MiniLM: hashing
// it took 2.5 µs of every request, graph_execute_bench --phase host).
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace accel::cache {

// The hash of a key's bytes in a Cache's index.
inline std::size_t key_hash(std::string_view key) noexcept { return std::hash<std::string_view>{}(key); }

struct HashedKey {
  std::vector<std::byte> bytes;
  std::size_t hash = 0;

  static HashedKey of(std::vector<std::byte> bytes) {
    HashedKey key{std::move(bytes)};
    key.hash = key_hash(key.view());
    return key;
  }
  [[nodiscard]] std::string_view view() const noexcept {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }
};

}  // namespace accel::cache
