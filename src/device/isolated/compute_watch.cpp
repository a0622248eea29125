#include "device/isolated/compute_watch.hpp"

#include <time.h>

#include <algorithm>

#include "device/isolated/channel.hpp"

namespace accel::device::isolated {

ComputeWatch::ComputeWatch(std::atomic<std::int64_t>& heartbeat_ns, std::chrono::milliseconds interval)
    : heartbeat_ns_(heartbeat_ns),
      thread_([this, interval] { watch(std::max(interval, std::chrono::milliseconds(1))); }) {}

ComputeWatch::~ComputeWatch() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_requested_.notify_one();
  thread_.join();
}

std::int64_t ComputeWatch::process_cpu_ns() noexcept {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

void ComputeWatch::watch(std::chrono::milliseconds interval) {
  const std::int64_t enough = std::chrono::nanoseconds(interval).count() / 4;
  std::int64_t last = process_cpu_ns();
  std::unique_lock lock(mutex_);
  while (!stop_requested_.wait_for(lock, interval, [this] { return stopping_; })) {
    const std::int64_t now = process_cpu_ns();
    if (now - last >= enough) heartbeat_ns_.store(monotonic_ns(), std::memory_order_relaxed);
    last = now;
  }
}

}  // namespace accel::device::isolated
