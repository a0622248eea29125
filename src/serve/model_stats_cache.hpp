// accel::serve::ModelStatsCache — the model's statistics as of about a second ago, for /metrics.
//
// Model::stats() asks the device for its caches' counts, and that request waits behind the batch the device is
// running (seconds, for a large batch on the CPU): a scrape must not. A thread of its own asks, once a period,
// and a scrape reads what it found last.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "accel/embed/model.hpp"

namespace accel::serve {

class ModelStatsCache {
 public:
  // `read` is Model::stats of the model served now (which a reload replaces).
  ModelStatsCache(std::function<embed::ModelStats()> read, std::chrono::milliseconds period);
  ModelStatsCache(const ModelStatsCache&) = delete;
  ModelStatsCache& operator=(const ModelStatsCache&) = delete;
  ~ModelStatsCache();

  // Empty until the first answer.
  [[nodiscard]] std::optional<embed::ModelStats> latest() const;

 private:
  void loop();

  std::function<embed::ModelStats()> read_;
  std::chrono::milliseconds period_;
  mutable std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::optional<embed::ModelStats> latest_;
  std::thread thread_;
};

}  // namespace accel::serve
