#include "serve/model_stats_cache.hpp"

namespace accel::serve {

ModelStatsCache::ModelStatsCache(std::function<embed::ModelStats()> read, std::chrono::milliseconds period)
    : read_(std::move(read)), period_(period), thread_([this] { loop(); }) {}

ModelStatsCache::~ModelStatsCache() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

std::optional<embed::ModelStats> ModelStatsCache::latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

void ModelStatsCache::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    embed::ModelStats stats = read_();
    lock.lock();
    latest_ = std::move(stats);
    stop_cv_.wait_for(lock, period_, [&] { return stopping_; });
  }
}

}  // namespace accel::serve
