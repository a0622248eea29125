#include "accel/device/device.hpp"

#include <fmt/format.h>

#include "device/cpu_device.hpp"
#include "device/device_core.hpp"
#include "device/device_shared.hpp"
#include "device/isolated/isolated_backend.hpp"
#if ACCEL_HAVE_CUDA
#include "device/cuda/cuda_backend.hpp"
#endif

namespace accel {
namespace {

std::atomic<std::uint32_t> next_device_id{1};

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

// Who waits for a close to be done: Device::close() may be called again, by any holder, while it runs.
struct DeviceLifetime::Closing {
  std::mutex mutex;
  bool done = false;
  std::vector<Promise<Done>> waiters;

  Future<Done> wait() {
    std::lock_guard lock(mutex);
    if (done) return make_ready_future<Done>(Done{});
    return waiters.emplace_back().future();
  }
  void finish() {
    std::vector<Promise<Done>> answered;
    {
      std::lock_guard lock(mutex);
      done = true;
      answered.swap(waiters);
    }
    for (Promise<Done>& waiter : answered) waiter.set(Done{});
  }
};

DeviceLifetime::DeviceLifetime(System& system, std::shared_ptr<device::DeviceShared> shared)
    : system_(system.core()), shared_(std::move(shared)), closing_(std::make_shared<Closing>()) {}

DeviceLifetime::~DeviceLifetime() { (void)close(); }

Result<ActorRef<DeviceProtocol>> DeviceLifetime::spawn(std::string name) {
  std::lock_guard lock(mutex_);
  if (closed()) return closed_error();
  ActorOptions actor_options{
      .name = std::move(name), .mailbox = shared_->options.mailbox, .supervision = shared_->options.supervision};
  const std::shared_ptr<SystemCore> system = system_.lock();
  if (!system) return failed_precondition(fmt::format("{}: the System that opened it was destroyed", shared_->name));
  ACCEL_ASSIGN_OR_RETURN(
      ActorRef<DeviceProtocol> actor,
      system->spawn<DeviceProtocol>([shared = shared_]() { return shared->backend->make_stream_state(shared); },
                                    std::move(actor_options)));
  actors_.push_back(actor);
  return actor;
}

Future<Done> DeviceLifetime::close() {
  std::vector<ActorRef<DeviceProtocol>> actors;
  {
    std::lock_guard lock(mutex_);
    if (closed()) return closing_->wait();
    closed_.store(true, std::memory_order_release);
    actors.swap(actors_);
  }
  Future<Done> done = closing_->wait();
  // The backend goes last, once no actor uses it. Let go of it before answering, so that a caller who waited for
  // the close and then drops the last Device frees everything on its own thread.
  auto teardown = [shared = shared_, closing = closing_]() mutable {
    shared->backend->close();
    shared.reset();
    closing->finish();
  };
  if (const std::shared_ptr<SystemCore> system = system_.lock()) {
    system->stop(actors, cancelled(fmt::format("{} was closed", shared_->name)), std::move(teardown));
  } else {
    teardown();  // the System's destruction has stopped and joined every actor already
  }
  return done;
}

Status DeviceLifetime::closed_error() const {
  return failed_precondition(
      fmt::format("{} is closed (Device::close); open the device again to use it", shared_->name));
}

DeviceCore::DeviceCore(std::shared_ptr<DeviceLifetime> lifetime_of_device, ActorRef<DeviceProtocol> actor_ref,
                       std::shared_ptr<device::DeviceShared> shared_state)
    : lifetime(std::move(lifetime_of_device)),
      actor(std::move(actor_ref)),
      shared(std::move(shared_state)),
      direct(shared->backend->make_direct_stream()) {}

void DeviceCore::release(const BufferHandle& handle) noexcept {
  if (lifetime->closed()) return;  // the device's memory went with it
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
  auto lifetime = std::make_shared<detail::DeviceLifetime>(system, shared);
  ACCEL_ASSIGN_OR_RETURN(ActorRef<DeviceProtocol> actor, lifetime->spawn(shared->name));
  return Device(std::make_shared<detail::DeviceCore>(std::move(lifetime), std::move(actor), std::move(shared)));
}

DeviceKind Device::default_kind() { return count(DeviceKind::cuda) > 0 ? DeviceKind::cuda : DeviceKind::cpu; }

int Device::count(DeviceKind kind) {
  if (kind == DeviceKind::cpu) return 1;
#if ACCEL_HAVE_CUDA
  return device::cuda_device_count();
#else
  return 0;
#endif
}

Result<Device> Device::open_default(System& system, DeviceOptions options) {
  options.ordinal = 0;
  options.kind = default_kind();
  return open(system, std::move(options));
}

Result<Device> Device::open_stream() const {
  const std::shared_ptr<device::DeviceShared>& shared = core_->shared;
  // The device's state first: a closed or failed device is refused for that, as every request is, on every kind,
  // rather than for a lack of streams that no reopening would change.
  ACCEL_RETURN_IF_ERROR(health());
  if (!shared->backend->has_streams()) {
    return not_supported(
        fmt::format("{} runs every request synchronously on one thread and has no streams; send "
                    "to this Device instead",
                    shared->name));
  }
  const std::uint32_t index = shared->streams_opened.fetch_add(1, std::memory_order_relaxed) + 1;
  ACCEL_ASSIGN_OR_RETURN(ActorRef<DeviceProtocol> actor,
                         core_->lifetime->spawn(fmt::format("{}/{}", shared->name, index)));
  return Device(std::make_shared<detail::DeviceCore>(core_->lifetime, std::move(actor), shared));
}

Status Device::health() const {
  if (core_->lifetime->closed()) return core_->lifetime->closed_error();
  return core_->shared->backend->health();
}

DeviceKind Device::kind() const noexcept { return core_->shared->options.kind; }
Isolation Device::isolation() const noexcept { return core_->shared->options.isolation; }
const ActorRef<DeviceProtocol>& Device::actor() const noexcept { return core_->actor; }
bool Device::closed() const noexcept { return core_->lifetime->closed(); }
Future<Done> Device::close() const { return core_->lifetime->close(); }
Status Device::closed_error() const { return core_->lifetime->closed_error(); }
DeviceProtocol::Handler* Device::direct_handler() const noexcept { return core_->direct.get(); }
std::weak_ptr<detail::BufferReleaser> Device::buffer_releaser() const noexcept { return core_; }
Status Device::import_dtype_error(const ExportedBuffer& exported, DType wanted) {
  return invalid_argument(fmt::format("ImportBuffer: the exported buffer holds {} elements of {}, not {}",
                                      exported.count, to_string(exported.dtype), to_string(wanted)));
}
const std::string& Device::name() const noexcept { return core_->shared->name; }
std::uint32_t Device::id() const noexcept { return core_->shared->id; }

}  // namespace accel
