// What a device's facade and every incarnation of its context state share: identity, options, the epoch
// counter that survives restarts (so handles of a previous state are stale, never confused with new ones),
// the backend that builds stream states, and buffers released by their owners while the mailbox was full.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accel/device/device.hpp"

namespace accel::device {

struct DeviceShared;

// One kind of device (CPU, CUDA): builds the state of each actor that serves the device.
class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  // Called on the new actor's thread, again on every restart of that actor.
  [[nodiscard]] virtual Result<std::unique_ptr<DeviceProtocol::Handler>> make_stream_state(
      std::shared_ptr<DeviceShared> shared) = 0;
  // A stream state that callers may use from any thread at once, so that their requests skip the actor's
  // mailbox; null (the default) where requests must go through the actor.
  [[nodiscard]] virtual std::shared_ptr<DeviceProtocol::Handler> make_direct_stream() { return nullptr; }
  [[nodiscard]] virtual bool has_streams() const noexcept = 0;
  [[nodiscard]] virtual Status health() const = 0;
  // Device::close, once every actor of the device has stopped: releases what outlives the stream states (an
  // isolated device's worker process, a CUDA context's memory). A request that raced with the close may still
  // reach a direct stream afterwards; it must be answered with an error, not served.
  virtual void close() {}
};

struct DeviceShared {
  std::uint32_t id = 0;
  std::string name;
  DeviceOptions options;
  std::atomic<std::uint32_t> last_epoch{0};
  std::atomic<std::uint32_t> streams_opened{0};
  std::shared_ptr<DeviceBackend> backend;
  // Called now and then by a request that waits long on purpose (a JIT compile), so that an isolated worker's
  // supervisor does not take the wait for a hang. Set before the backend opens; empty in process.
  std::function<void()> keep_alive;

  std::mutex released_mutex;
  std::vector<BufferHandle> released;

  std::uint32_t next_epoch() { return last_epoch.fetch_add(1, std::memory_order_acq_rel) + 1; }
  std::vector<BufferHandle> take_released() {
    std::lock_guard lock(released_mutex);
    return std::exchange(released, {});
  }
};

}  // namespace accel::device
