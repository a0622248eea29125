// An in-memory LRU of built plans, keyed by their full identity bytes, safe under concurrent requesters, with
// one build per key: requesters that miss a key while it is being built wait for that build instead of
// starting their own. A failed build is not cached; everyone who waited for it gets its error.
//
// Keys are compared byte for byte (std::string equality), never trusted by hash alone.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include "accel/core/result.hpp"
#include "accel/device/requests.hpp"

namespace accel::cache {

template <class Plan>
class PlanCache {
 public:
  explicit PlanCache(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}
  PlanCache(const PlanCache&) = delete;
  PlanCache& operator=(const PlanCache&) = delete;

  // The plan of `key`: cached, or made by `build()` (called without the cache's lock held) on a miss.
  template <class Build>
  Result<std::shared_ptr<const Plan>> find_or_build(std::span<const std::byte> key, Build&& build) {
    std::string id(reinterpret_cast<const char*>(key.data()), key.size());
    std::unique_lock lock(mutex_);
    if (auto it = index_.find(id); it != index_.end()) {
      ++stats_.hits;
      recent_.splice(recent_.begin(), recent_, it->second);
      return it->second->plan;
    }
    if (auto it = building_.find(id); it != building_.end()) {
      ++stats_.hits;
      std::shared_ptr<Pending> pending = it->second;
      pending->done.wait(lock, [&] { return pending->result.has_value(); });
      return *pending->result;
    }
    ++stats_.misses;
    auto pending = std::make_shared<Pending>();
    building_.emplace(id, pending);
    lock.unlock();
    Result<std::shared_ptr<const Plan>> built = internal_error("a plan build threw");
    try {
      built = build();
    } catch (const std::exception& error) {
      built = internal_error(std::string("a plan build threw: ") + error.what());
    } catch (...) {
    }
    lock.lock();
    building_.erase(id);
    if (built.ok()) insert(std::move(id), *built);
    pending->result = built;
    pending->done.notify_all();
    return built;
  }

  // hits counts requesters who found the plan built or being built; misses counts builds.
  [[nodiscard]] PlanCacheStats stats() const {
    std::lock_guard lock(mutex_);
    PlanCacheStats stats = stats_;
    stats.entries = index_.size();
    stats.capacity = capacity_;
    return stats;
  }

 private:
  struct Entry {
    std::string id;
    std::shared_ptr<const Plan> plan;
  };
  struct Pending {
    std::condition_variable done;
    std::optional<Result<std::shared_ptr<const Plan>>> result;
  };

  void insert(std::string id, std::shared_ptr<const Plan> plan) {
    recent_.push_front(Entry{id, std::move(plan)});
    index_[std::move(id)] = recent_.begin();
    while (index_.size() > capacity_) {
      index_.erase(recent_.back().id);
      recent_.pop_back();
      ++stats_.evictions;
    }
  }

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> recent_;  // most recently used first
  std::unordered_map<std::string, typename std::list<Entry>::iterator> index_;
  std::unordered_map<std::string, std::shared_ptr<Pending>> building_;
  PlanCacheStats stats_;
};

}  // namespace accel::cache
