#include "accel/device/device.hpp"

#include <fmt/format.h>

#include "device/cpu_device.hpp"
#include "device/device_shared.hpp"
#include "device/isolated/isolated_backend.hpp"
#if ACCEL_HAVE_CUDA
#include "device/cuda/cuda_backend.hpp"
#endif

namespace accel {
namespace {

std::atomic<std::uint32_t> next_device_id{1};

Result<ActorRef<DeviceProtocol>> spawn_stream(System& system, const std::shared_ptr<device::DeviceShared>& shared,
                                              std::string name) {
  ActorOptions actor_options{
      .name = std::move(name), .mailbox = shared->options.mailbox, .supervision = shared->options.supervision};
  return system.spawn<DeviceProtocol>([shared]() { return shared->backend->make_stream_state(shared); },
                                      std::move(actor_options));
}

}  // namespace

std::string_view to_string(DeviceKind kind) noexcept { return kind == DeviceKind::cpu ? "cpu" : "cuda"; }

std::string_view to_string(Isolation isolation) noexcept {
  return isolation == Isolation::in_process ? "in_process" : "worker_process";
}

std::string_view to_string(FaultKind kind) noexcept {
  switch (kind) {
    case FaultKind::illegal_address: return "illegal_address";
    case FaultKind::worker_crash: return "worker_crash";
    case FaultKind::worker_hang: return "worker_hang";
  }
  return "unknown_fault";
}

std::string_view to_string(CompletionStrategy strategy) noexcept {
  switch (strategy) {
    case CompletionStrategy::poller: return "poller";
    case CompletionStrategy::host_callback: return "host_callback";
    case CompletionStrategy::blocking: return "blocking";
  }
  return "unknown_strategy";
}

namespace detail {

DeviceCore::DeviceCore(System& owner, ActorRef<DeviceProtocol> actor_ref,
                       std::shared_ptr<device::DeviceShared> shared_state)
    : system(&owner),
      actor(std::move(actor_ref)),
      shared(std::move(shared_state)),
      direct(shared->backend->make_direct_stream()) {}

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

  if (options.kind == DeviceKind::cpu && options.ordinal != 0)
    return invalid_argument(fmt::format("there is one CPU device (cpu:0), not cpu:{}", options.ordinal));
  if (options.isolation == Isolation::worker_process) {
    ACCEL_ASSIGN_OR_RETURN(shared->backend, device::open_isolated_backend(*shared));
  } else if (options.kind == DeviceKind::cuda) {
#if ACCEL_HAVE_CUDA
    ACCEL_ASSIGN_OR_RETURN(shared->backend, device::open_cuda_backend(*shared));
#else
    return not_supported(fmt::format("{}: this build of accel has no CUDA device tier", shared->name));
#endif
  } else {
    shared->backend = device::make_cpu_backend();
  }
  ACCEL_ASSIGN_OR_RETURN(ActorRef<DeviceProtocol> actor, spawn_stream(system, shared, shared->name));
  return Device(std::make_shared<detail::DeviceCore>(system, std::move(actor), std::move(shared)));
}

Result<Device> Device::open_default(System& system, DeviceOptions options) {
  options.ordinal = 0;
#if ACCEL_HAVE_CUDA
  if (device::cuda_device_count() > 0) {
    options.kind = DeviceKind::cuda;
    return open(system, options);
  }
#endif
  options.kind = DeviceKind::cpu;
  return open(system, std::move(options));
}

Result<Device> Device::open_stream() const {
  const std::shared_ptr<device::DeviceShared>& shared = core_->shared;
  if (!shared->backend->has_streams()) {
    return not_supported(
        fmt::format("{} runs every request synchronously on one thread and has no streams; send "
                    "to this Device instead",
                    shared->name));
  }
  ACCEL_RETURN_IF_ERROR(shared->backend->health());
  const std::uint32_t index = shared->streams_opened.fetch_add(1, std::memory_order_relaxed) + 1;
  ACCEL_ASSIGN_OR_RETURN(ActorRef<DeviceProtocol> actor,
                         spawn_stream(*core_->system, shared, fmt::format("{}/{}", shared->name, index)));
  return Device(std::make_shared<detail::DeviceCore>(*core_->system, std::move(actor), shared));
}

Status Device::health() const { return core_->shared->backend->health(); }

DeviceKind Device::kind() const noexcept { return core_->shared->options.kind; }
const std::string& Device::name() const noexcept { return core_->shared->name; }
std::uint32_t Device::id() const noexcept { return core_->shared->id; }

}  // namespace accel
