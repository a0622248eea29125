#include "accel/device/device.hpp"

#include <fmt/format.h>

#include "device/cpu_device.hpp"
#include "device/device_shared.hpp"

namespace accel {
namespace {

std::atomic<std::uint32_t> next_device_id{1};

}  // namespace

std::string_view to_string(DeviceKind kind) noexcept { return kind == DeviceKind::cpu ? "cpu" : "cuda"; }

namespace detail {

DeviceCore::DeviceCore(ActorRef<DeviceProtocol> actor_ref, std::shared_ptr<device::DeviceShared> shared_state)
    : actor(std::move(actor_ref)), shared(std::move(shared_state)) {}

void DeviceCore::release(const BufferHandle& handle) noexcept {
  // Never blocks: the last owner may go away on the device's own thread (in a continuation).
  Status sent = actor.try_tell(Free{.buffer = handle});
  if (sent.code() == Code::resource_exhausted) {
    std::lock_guard lock(shared->released_mutex);
    shared->released.push_back(handle);
  }
}

}  // namespace detail

Result<Device> Device::open(System& system, DeviceOptions options) {
  auto shared = std::make_shared<device::DeviceShared>();
  shared->id = next_device_id.fetch_add(1, std::memory_order_relaxed);
  shared->name = fmt::format("{}:{}", to_string(options.kind), options.ordinal);
  shared->options = options;

  if (options.kind == DeviceKind::cuda) {
    return not_supported(fmt::format("{}: this build of accel has no CUDA device tier", shared->name));
  }
  if (options.ordinal != 0)
    return invalid_argument(fmt::format("there is one CPU device (cpu:0), not cpu:{}", options.ordinal));

  ActorOptions actor_options{.name = shared->name, .mailbox = options.mailbox, .supervision = options.supervision};
  ACCEL_ASSIGN_OR_RETURN(ActorRef<DeviceProtocol> actor,
                         system.spawn<DeviceProtocol>(
                             [shared]() -> Result<std::unique_ptr<DeviceProtocol::Handler>> {
                               return std::make_unique<device::CpuDevice>(shared);
                             },
                             std::move(actor_options)));
  return Device(std::make_shared<detail::DeviceCore>(std::move(actor), std::move(shared)));
}

Result<Device> Device::open_default(System& system, DeviceOptions options) {
  options.kind = DeviceKind::cpu;
  options.ordinal = 0;
  return open(system, std::move(options));
}

DeviceKind Device::kind() const noexcept { return core_->shared->options.kind; }
const std::string& Device::name() const noexcept { return core_->shared->name; }
std::uint32_t Device::id() const noexcept { return core_->shared->id; }

}  // namespace accel
