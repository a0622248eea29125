// accel::cache::Cache<Value> — the one in-memory cache of built things (plans, compiled binaries, loaded modules),
// keyed by the full bytes of what the value depends on and compared in full, never by hash alone.
//
//  - LRU, bounded by entries and/or bytes (a value's size from CacheOptions::size_of); the least recently used
//    go first, and a value larger than max_bytes on its own is handed out but not kept.
//  - One build per key: requesters that miss a key while it is being built wait for that build. A failed build
//    is not cached and everyone who waited gets its error; a build that throws is an internal error.
//  - An optional persistent tier over a DiskStore: a miss reads the disk (through a decode) before building,
//    and a built value is written back (through its encoding). An entry that does not decode is erased, counted
//    as rejected and built again. Disk errors only cost the build the disk would have saved.
//  - Optional background builds on a BuildPool: get_async() answers with a future, get_if_ready() with the value
//    if it is there, and otherwise starts (or joins) its build and answers "not yet".
//  - Optional locking across processes: with a disk tier, a build holds the key's KeyLock in the directory, so
//    another process waits for it and loads its result instead of building the same key.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "accel/core/cache_stats.hpp"
#include "accel/core/result.hpp"
#include "cache/cache_options.hpp"
#include "cache/hashed_key.hpp"
#include "cache/key_lock.hpp"
#include "core/elapsed.hpp"

namespace accel::cache {

template <class Value>
class Cache {
 public:
  using Ptr = std::shared_ptr<const Value>;
  using Future = std::shared_future<Result<Ptr>>;

  explicit Cache(CacheOptions<Value> options) : options_(std::move(options)) {}
  // Queued background builds are answered `cancelled`, running ones finish, and a build waiting for another
  // process's lock gives up (cancelled).
  ~Cache() {
    closing_.store(true);
    options_.pool.reset();
  }
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // In memory only; a hit counts and refreshes the entry. A miss counts nothing: the get() or put() that the
  // caller goes on to counts it.
  [[nodiscard]] Ptr peek(std::span<const std::byte> key) {
    std::lock_guard lock(mutex_);
    return find_locked(view(key));
  }

  // Memory, then the disk tier (a value loaded is kept in memory); never builds. Errors reading the disk are
  // returned; an undecodable entry is a rejected miss.
  [[nodiscard]] Result<std::optional<Ptr>> find(std::span<const std::byte> key) {
    const std::string_view id = view(key);
    {
      std::lock_guard lock(mutex_);
      if (Ptr found = find_locked(id)) return std::optional<Ptr>(std::move(found));
      ++stats_.misses;
    }
    if (options_.disk == nullptr || !options_.decode) return std::optional<Ptr>();
    ACCEL_ASSIGN_OR_RETURN(std::optional<Ptr> loaded, load(disk_key(id), options_.decode));
    if (loaded) {
      std::lock_guard lock(mutex_);
      insert_locked(id, *loaded);
    }
    return loaded;
  }

  // The value of `key`: found, or loaded from disk with CacheOptions::decode, or made by `build` on this thread.
  // `build` returns Result<Value>, Result<std::shared_ptr<const Value>> or Result<Built<Value>>.
  template <class BuildFn>
  [[nodiscard]] Result<Ptr> get(std::span<const std::byte> key, BuildFn&& build) {
    return get(key, std::forward<BuildFn>(build), options_.decode);
  }

  // As above, decoding disk entries with `decode` (Result<Value> or Result<Ptr> of the bytes), for values whose
  // decoding needs the requester's context.
  template <class BuildFn, class DecodeFn>
  [[nodiscard]] Result<Ptr> get(std::span<const std::byte> key, BuildFn&& build, DecodeFn&& decode) {
    const std::string_view id = view(key);
    std::shared_ptr<Pending> pending;
    {
      std::unique_lock lock(mutex_);
      if (Ptr found = find_locked(id)) return found;
      if (auto it = pending_.find(id); it != pending_.end()) {
        ++stats_.hits;
        Future future = it->second->future;
        lock.unlock();
        return future.get();
      }
      ++stats_.misses;
      pending = std::make_shared<Pending>();
      pending_.emplace(std::string(id), pending);
    }
    return complete(id, *pending, produce(id, build, decode));
  }

  // As above, for a key whose hash its caller made once (cache/hashed_key.hpp): a hit hashes nothing.
  template <class BuildFn, class DecodeFn>
  [[nodiscard]] Result<Ptr> get(const HashedKey& key, BuildFn&& build, DecodeFn&& decode) {
    {
      std::lock_guard lock(mutex_);
      if (Ptr found = find_locked(Prehashed{key.view(), key.hash})) return found;
    }
    return get(key.bytes, std::forward<BuildFn>(build), std::forward<DecodeFn>(decode));
  }

  // The value of `key`, built on the pool on a miss (the build and the disk read both run there). One build per
  // key whichever way it was asked for.
  template <class BuildFn>
  [[nodiscard]] Future get_async(std::span<const std::byte> key, BuildFn&& build) {
    const std::string_view id = view(key);
    std::shared_ptr<Pending> pending;
    {
      std::lock_guard lock(mutex_);
      if (Ptr found = find_locked(id)) return ready(std::move(found));
      if (auto it = pending_.find(id); it != pending_.end()) {
        ++stats_.hits;
        return it->second->future;
      }
      ++stats_.misses;
      pending = std::make_shared<Pending>();
      pending_.emplace(std::string(id), pending);
    }
    auto job = std::make_shared<Job>(
        Job{.key = std::string(id), .pending = pending, .build = [build = std::forward<BuildFn>(build)]() mutable {
              return to_built(build());
            }});
    if (options_.pool == nullptr) {
      run(*job);
      return pending->future;
    }
    options_.pool->submit({.run = [this, job] { run(*job); }, .cancel = [this, job] { cancel(*job); }});
    return pending->future;
  }

  // The value if it is in memory or its build has just finished; otherwise starts its build on the pool (or
  // joins the one running) and answers nullopt.
  template <class BuildFn>
  [[nodiscard]] std::optional<Result<Ptr>> get_if_ready(std::span<const std::byte> key, BuildFn&& build) {
    Future future = get_async(key, std::forward<BuildFn>(build));
    if (future.wait_for(std::chrono::seconds(0)) == std::future_status::ready) return future.get();
    std::lock_guard lock(mutex_);
    ++stats_.not_ready;
    return std::nullopt;
  }

  // Keeps `value` as the value of `key` (replacing any), for callers that made it themselves; counts a miss.
  void put(std::span<const std::byte> key, Ptr value) {
    std::lock_guard lock(mutex_);
    ++stats_.misses;
    insert_locked(view(key), std::move(value));
  }

  void erase(std::span<const std::byte> key) {
    std::lock_guard lock(mutex_);
    erase_locked(view(key));
  }

  // True while a build of `key` is queued or running in this process.
  [[nodiscard]] bool building(std::span<const std::byte> key) const {
    std::lock_guard lock(mutex_);
    return pending_.find(view(key)) != pending_.end();
  }

  [[nodiscard]] CacheStats stats() const {
    const DiskStoreStats disk = options_.disk != nullptr ? options_.disk->stats() : DiskStoreStats{};
    std::lock_guard lock(mutex_);
    CacheStats stats = stats_;
    stats.name = options_.name;
    stats.directory = directory().string();
    // The store catches damaged and untrusted entries; decode failures are counted here.
    stats.disk_rejects += disk.corrupt_entries + disk.refused_entries;
    stats.entries = index_.size();
    stats.capacity = options_.max_entries;
    stats.bytes = bytes_;
    stats.capacity_bytes = options_.max_bytes;
    return stats;
  }

  // The persistent tier's directory; empty when there is none.
  [[nodiscard]] std::filesystem::path directory() const {
    return options_.disk != nullptr ? options_.disk->directory() : std::filesystem::path();
  }

 private:
  struct Entry {
    std::string key;
    Ptr value;
    std::uint64_t bytes = 0;
  };
  struct Pending {
    std::promise<Result<Ptr>> promise;
    Future future = promise.get_future().share();
  };
  struct Job {
    std::string key;
    std::shared_ptr<Pending> pending;
    std::function<Result<Built<Value>>()> build;
  };
  // Lookups by string_view, so that a hit allocates nothing, or by a key and the hash its caller made.
  struct Prehashed {
    std::string_view key;
    std::size_t hash;
  };
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept { return key_hash(key); }
    std::size_t operator()(const Prehashed& key) const noexcept { return key.hash; }
  };
  struct KeyEqual {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
    bool operator()(const Prehashed& a, std::string_view b) const noexcept { return a.key == b; }
    bool operator()(std::string_view a, const Prehashed& b) const noexcept { return a == b.key; }
  };
  using Recent = std::list<Entry>;  // most recently used first

  static std::string_view view(std::span<const std::byte> key) noexcept {
    return {reinterpret_cast<const char*>(key.data()), key.size()};
  }
  static std::span<const std::byte> bytes_of(std::string_view id) noexcept {
    return std::as_bytes(std::span(id.data(), id.size()));
  }
  static Future ready(Result<Ptr> result) {
    std::promise<Result<Ptr>> promise;
    promise.set_value(std::move(result));
    return promise.get_future().share();
  }

  // A build's or a decode's result as Built<Value>, whichever of the allowed forms it came in.
  template <class R>
  static Result<Built<Value>> to_built(R result) {
    using T = std::remove_cvref_t<decltype(*result)>;
    if (!result.ok()) return result.status();
    if constexpr (std::is_same_v<T, Built<Value>>) {
      return std::move(*result);
    } else if constexpr (std::is_same_v<T, Ptr>) {
      return Built<Value>{std::move(*result), std::nullopt};
    } else {
      static_assert(std::is_same_v<T, Value>, "a build returns Result of Value, shared_ptr<const Value> or Built");
      return Built<Value>{std::make_shared<const Value>(std::move(*result)), std::nullopt};
    }
  }
  template <class F>
  static bool callable(const F& f) noexcept {
    if constexpr (std::is_constructible_v<bool, const F&>) {
      return static_cast<bool>(f);
    } else {
      return true;
    }
  }

  Bytes disk_key(std::string_view id) const {
    Bytes key = options_.disk_key_prefix;
    const std::span<const std::byte> bytes = bytes_of(id);
    key.insert(key.end(), bytes.begin(), bytes.end());
    return key;
  }

  template <class Id>
  Ptr find_locked(const Id& id) {
    auto it = index_.find(id);
    if (it == index_.end()) return nullptr;
    ++stats_.hits;
    recent_.splice(recent_.begin(), recent_, it->second);
    return it->second->value;
  }

  // Replaces the value of a key already there (a disk load by find() may race a build of the same key).
  void insert_locked(std::string_view id, Ptr value) {
    const std::uint64_t bytes = options_.size_of ? options_.size_of(*value) : 0;
    if (auto it = index_.find(id); it != index_.end()) {
      bytes_ = bytes_ - it->second->bytes + bytes;
      it->second->value = std::move(value);
      it->second->bytes = bytes;
      recent_.splice(recent_.begin(), recent_, it->second);
    } else {
      recent_.push_front(Entry{std::string(id), std::move(value), bytes});
      try {
        index_.emplace(recent_.front().key, recent_.begin());
      } catch (...) {
        recent_.pop_front();
        throw;
      }
      bytes_ += bytes;
    }
    while (!recent_.empty() && ((options_.max_entries != 0 && index_.size() > options_.max_entries) ||
                                (options_.max_bytes != 0 && bytes_ > options_.max_bytes))) {
      drop_locked(std::prev(recent_.end()));
      ++stats_.evictions;
    }
  }

  void erase_locked(std::string_view id) {
    if (auto it = index_.find(id); it != index_.end()) drop_locked(it->second);
  }

  void drop_locked(typename Recent::iterator entry) {
    bytes_ -= entry->bytes;
    index_.erase(index_.find(std::string_view(entry->key)));
    recent_.erase(entry);
  }

  // The pending build's end: the value kept (if it is one), the waiters answered. Nothing here may leave the
  // waiters hanging, so a failure to keep the value only costs its caching.
  Result<Ptr> complete(std::string_view id, Pending& pending, Result<Ptr> result) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = pending_.find(id); it != pending_.end()) pending_.erase(it);
      // Both under one lock, so a request finds the key's build or its value, never neither.
      try {
        if (result.ok()) insert_locked(id, *result);
      } catch (...) {
      }
    }
    pending.promise.set_value(result);
    return result;
  }

  void run(Job& job) { (void)complete(job.key, *job.pending, produce(job.key, job.build, options_.decode)); }

  void cancel(Job& job) {
    (void)complete(job.key, *job.pending, cancelled(options_.name + " cache closed before this build started"));
  }

  // Disk (when there is one and a decode), then a build. Errors reading the disk are misses here: the build that
  // follows answers all the same.
  template <class BuildFn, class DecodeFn>
  Result<Ptr> produce(std::string_view id, BuildFn& build, DecodeFn& decode) {
    try {
      if (options_.disk == nullptr || !callable(decode)) return build_and_store(build, {});
      const Bytes key = disk_key(id);
      Result<std::optional<Ptr>> loaded = load(key, decode);
      if (loaded.ok() && loaded->has_value()) return std::move(**loaded);
      if (!options_.lock_across_processes) return build_and_store(build, key);
      ACCEL_ASSIGN_OR_RETURN(const KeyLock lock,
                             KeyLock::acquire(options_.disk->directory(), key, [this] { return closing_.load(); }));
      if (lock.held()) {
        loaded = load(key, decode);
        if (loaded.ok() && loaded->has_value()) {
          count([](CacheStats& s) { ++s.other_process_builds; });
          return std::move(**loaded);
        }
      }
      return build_and_store(build, key);
    } catch (const std::exception& error) {
      return internal_error(options_.name + ": a build threw: " + error.what());
    } catch (...) {
      return internal_error(options_.name + ": a build threw");
    }
  }

  template <class DecodeFn>
  Result<std::optional<Ptr>> load(const Bytes& key, DecodeFn& decode) {
    const auto start = std::chrono::steady_clock::now();
    ACCEL_ASSIGN_OR_RETURN(std::optional<Bytes> stored, options_.disk->load(key));
    if (!stored) return std::optional<Ptr>();
    Result<Built<Value>> decoded = internal_error(options_.name + ": decoding a disk entry threw");
    try {
      decoded = to_built(decode(std::span<const std::byte>(*stored)));
    } catch (...) {
    }
    if (!decoded.ok() || decoded->value == nullptr) {
      (void)options_.disk->erase(key);
      count([](CacheStats& s) { ++s.disk_rejects; });
      return std::optional<Ptr>();
    }
    const std::uint64_t micros = micros_since(start);
    count([&](CacheStats& s) {
      ++s.disk_loads;
      s.load_micros += micros;
    });
    return std::optional<Ptr>(std::move(decoded->value));
  }

  // `key` is the disk key; empty when the value stays in memory.
  template <class BuildFn>
  Result<Ptr> build_and_store(BuildFn& build, const Bytes& key) {
    const auto start = std::chrono::steady_clock::now();
    Result<Built<Value>> built = internal_error(options_.name + ": a build threw");
    try {
      built = to_built(build());
    } catch (const std::exception& error) {
      built = internal_error(options_.name + ": a build threw: " + error.what());
    } catch (...) {
    }
    if (built.ok() && built->value == nullptr) built = internal_error(options_.name + ": a build returned no value");
    const std::uint64_t micros = micros_since(start);
    count([&](CacheStats& s) {
      ++s.builds;
      s.build_micros += micros;
      if (!built.ok()) ++s.build_failures;
    });
    if (!built.ok()) return built.status();
    if (!key.empty()) store(key, *built);
    return std::move(built->value);
  }

  // A value that cannot be written (no encoding, an encoder that throws, a full disk) is still good here.
  void store(const Bytes& key, Built<Value>& built) {
    try {
      if (!built.encoded && options_.encode) built.encoded = options_.encode(*built.value);
    } catch (...) {
      built.encoded.reset();
    }
    Status stored = built.encoded ? options_.disk->store(key, *built.encoded) : Status();
    const bool written = built.encoded.has_value() && stored.ok();
    count([&](CacheStats& s) { ++(written ? s.disk_stores : s.disk_skips); });
  }

  template <class Change>
  void count(Change change) {
    std::lock_guard lock(mutex_);
    change(stats_);
  }

  CacheOptions<Value> options_;
  std::atomic<bool> closing_{false};
  mutable std::mutex mutex_;
  Recent recent_;
  std::unordered_map<std::string_view, typename Recent::iterator, KeyHash, KeyEqual> index_;  // views of entries' keys
  std::unordered_map<std::string, std::shared_ptr<Pending>, KeyHash, std::equal_to<>> pending_;
  std::uint64_t bytes_ = 0;
  CacheStats stats_;
};

}  // namespace accel::cache
