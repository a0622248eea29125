#include "operation/one_time_start.hpp"

#include <utility>

namespace accel {

bool OneTimeStart::claim() {
  std::lock_guard lock(mutex_);
  if (stage_ != Stage::not_begun) return false;
  stage_ = Stage::running;
  running_.store(true, std::memory_order_release);
  return true;
}

void OneTimeStart::finish(Status status) {
  {
    std::lock_guard lock(mutex_);
    status_ = std::move(status);
    stage_ = Stage::finished;
    finished_.store(true, std::memory_order_release);
    running_.store(false, std::memory_order_release);
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
  finished_cv_.wait(lock, [&] { return stage_ == Stage::finished; });
  return status_;
}

}  // namespace accel
