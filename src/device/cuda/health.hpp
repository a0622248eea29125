// Whether a GPU can still be used by this process. A sticky CUDA error poisons the GPU for the rest of the
// process (measured: even cudaDeviceReset and a fresh driver context do not bring it back), so the state is
// process-wide per ordinal and one-way: every Device of that GPU, and every later open of it, sees it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "accel/core/status.hpp"

namespace accel::device::cuda {

class Health {
 public:
  explicit Health(std::string device_name) : device_name_(std::move(device_name)) {}
  // Records the first sticky error; later ones are ignored. Returns the error requests now get.
  Status poison(const Status& cause);
  [[nodiscard]] bool poisoned() const noexcept { return poisoned_.load(std::memory_order_acquire); }
  // OK, or the context_lost error every request of a poisoned device gets.
  [[nodiscard]] Status status() const;

 private:
  const std::string device_name_;
  std::atomic<bool> poisoned_{false};
  mutable std::mutex mutex_;
  Status refusal_;
};

// The one Health of GPU `ordinal` in this process.
[[nodiscard]] std::shared_ptr<Health> health_of(int ordinal);

}  // namespace accel::device::cuda
