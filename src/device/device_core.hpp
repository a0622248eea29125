// The inside of accel::Device (include/accel/device/device.hpp holds only a pointer to a DeviceCore): what every
// address of one device shares, and each address's own actor.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accel/device/device.hpp"

namespace accel {

namespace device {
struct DeviceShared;
}  // namespace device

namespace detail {
// What every address of one device shares (Device::open's and each of its open_stream()'s): the device's actors,
// and whether it was closed. Closing stops them all; the last address to go away closes the device.
class DeviceLifetime {
 public:
  DeviceLifetime(System& system, std::shared_ptr<device::DeviceShared> shared);
  DeviceLifetime(const DeviceLifetime&) = delete;
  DeviceLifetime& operator=(const DeviceLifetime&) = delete;
  ~DeviceLifetime();

  // A new actor serving the device (its first, or a stream's); refused once the device is closed.
  [[nodiscard]] Result<ActorRef<DeviceProtocol>> spawn(std::string name);
  // Device::close.
  Future<Done> close();
  [[nodiscard]] bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
  // What a request to the closed device is answered.
  [[nodiscard]] Status closed_error() const;

 private:
  struct Closing;

  // Weak: a Device may outlive its System, and its last copy may go away on another thread while the System is
  // destroyed.
  std::weak_ptr<SystemCore> system_;
  std::shared_ptr<device::DeviceShared> shared_;
  std::atomic<bool> closed_{false};
  std::mutex mutex_;
  std::vector<ActorRef<DeviceProtocol>> actors_;
  std::shared_ptr<Closing> closing_;
};

class DeviceCore final : public BufferReleaser {
 public:
  DeviceCore(std::shared_ptr<DeviceLifetime> lifetime, ActorRef<DeviceProtocol> actor,
             std::shared_ptr<device::DeviceShared> shared);
  void release(const BufferHandle& handle) noexcept override;

  std::shared_ptr<DeviceLifetime> lifetime;
  ActorRef<DeviceProtocol> actor;
  std::shared_ptr<device::DeviceShared> shared;
  // Set where requests may skip the actor's mailbox: a stream state whose dispatch is safe from any thread
  // (an isolated device's, which only writes into the channel to its worker).
  std::shared_ptr<DeviceProtocol::Handler> direct;
};
}  // namespace detail

}  // namespace accel
