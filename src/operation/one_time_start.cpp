#include "operation/one_time_start.hpp"

#include <utility>

namespace accel {

bool OneTimeStart::claim() {
  std::lock_guard lock(mutex_);
  if (stage_.load(std::memory_order_relaxed) != Stage::not_begun) return false;
  stage_.store(Stage::running, std::memory_order_release);
  return true;
}

void OneTimeStart::finish(Status status) {
  {
    std::lock_guard lock(mutex_);
    status_ = std::move(status);
    stage_.store(Stage::finished, std::memory_order_release);
  }
  finished_cv_.notify_all();
}

std::jthread OneTimeStart::begin(Work work) {
  if (!claim()) return {};
  return std::jthread([this, work = std::move(work)] { finish(work()); });
}

Status OneTimeStart::run_or_wait(const Work& work) {
  if (claim()) finish(work());
  std::unique_lock lock(mutex_);
  finished_cv_.wait(lock, [&] { return stage_.load(std::memory_order_relaxed) == Stage::finished; });
  return status_;
}

}  // namespace accel
