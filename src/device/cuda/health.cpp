#include "device/cuda/health.hpp"

#include <fmt/format.h>

#include <map>

namespace accel::device::cuda {

Status Health::poison(const Status& cause) {
  std::lock_guard lock(mutex_);
  if (!poisoned_.load(std::memory_order_relaxed)) {
    refusal_ = Status(Code::context_lost,
                      fmt::format("{} is poisoned by a sticky CUDA error ({}). This process can no longer use that "
                                  "GPU, and every buffer handle of the device is stale; restart the process, or "
                                  "use an isolated device, whose worker process is replaced after such a fault",
                                  device_name_, cause.to_string()),
                      cause.source(), cause.raw_code());
    poisoned_.store(true, std::memory_order_release);
  }
  return refusal_;
}

Status Health::status() const {
  if (!poisoned()) return Status();
  std::lock_guard lock(mutex_);
  return refusal_;
}

std::shared_ptr<Health> health_of(int ordinal) {
  static std::mutex mutex;
  static std::map<int, std::shared_ptr<Health>> registry;
  std::lock_guard lock(mutex);
  std::shared_ptr<Health>& health = registry[ordinal];
  if (!health) health = std::make_shared<Health>(fmt::format("cuda:{}", ordinal));
  return health;
}

}  // namespace accel::device::cuda
