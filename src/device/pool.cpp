// accel::DevicePool: the devices, the counters of what was placed on each, and the placement policies.
#include "accel/device/pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

namespace accel {
namespace detail {

struct PooledDevice {
  DeviceSpec spec;
  Device device;
  PooledDeviceState counters;  // index, spec, name and isolation set once; health filled in when read
};

struct PoolState {
  std::vector<PooledDevice> devices;  // fixed after open
  mutable std::mutex mutex;           // guards every `counters` and `cursor`
  std::size_t cursor = 0;             // the device after the last one picked
};

}  // namespace detail

namespace {

// Whether the request's error is the device's: the device lost its context or failed for good.
bool device_failure(const Status& outcome, const Device& device) {
  if (outcome.ok()) return false;
  return outcome.code() == Code::context_lost || outcome.code() == Code::unavailable || !device.health().ok();
}

std::uint64_t free_bytes(const DeviceInfo& info) {
  const std::uint64_t capacity = info.memory_capacity_bytes;
  std::uint64_t free = capacity > info.memory.in_use_bytes ? capacity - info.memory.in_use_bytes : 0;
  if (info.kind == DeviceKind::cuda && info.device_free_bytes > 0) free = std::min(free, info.device_free_bytes);
  return free;
}

// Whether `candidate` is a better pick than `best` under `policy` (candidate comes later in turn order).
bool better(PlacementPolicy policy, const PooledDeviceState& candidate, const PooledDeviceState& best) {
  switch (policy) {
    case PlacementPolicy::least_loaded:
      if (candidate.weight_in_flight != best.weight_in_flight)
        return candidate.weight_in_flight < best.weight_in_flight;
      return candidate.requests_in_flight < best.requests_in_flight;
    case PlacementPolicy::most_free_memory:
      if (candidate.memory_free_bytes != best.memory_free_bytes)
        return candidate.memory_free_bytes > best.memory_free_bytes;
      return candidate.weight_in_flight < best.weight_in_flight;
    case PlacementPolicy::round_robin: return false;
  }
  return false;
}

}  // namespace

Result<DevicePool> DevicePool::open(System& system, std::span<const DeviceSpec> specs) {
  if (specs.empty()) return invalid_argument("a device pool needs at least one device");
  auto state = std::make_shared<detail::PoolState>();
  state->devices.reserve(specs.size());
  for (const DeviceSpec& spec : specs) {
    Result<Device> device = Device::open(system, spec.options);
    if (!device.ok()) return device.status().with_context(fmt::format("device '{}'", spec.text));
    PooledDeviceState counters{
        .index = state->devices.size(), .spec = spec.text, .name = device->name(), .isolation = spec.options.isolation};
    state->devices.push_back(detail::PooledDevice{.spec = spec, .device = *device, .counters = std::move(counters)});
  }
  DevicePool pool(std::move(state));
  ACCEL_RETURN_IF_ERROR(pool.refresh());
  return pool;
}

Result<DevicePool> DevicePool::open(System& system, std::string_view list, const DeviceOptions& base) {
  ACCEL_ASSIGN_OR_RETURN(std::vector<DeviceSpec> specs, parse_device_list(list, base));
  return open(system, specs);
}

std::size_t DevicePool::size() const noexcept { return state_->devices.size(); }
const Device& DevicePool::device(std::size_t index) const { return state_->devices.at(index).device; }
const std::string& DevicePool::spec(std::size_t index) const { return state_->devices.at(index).spec.text; }

Result<Placement> DevicePool::place(PlacementPolicy policy, std::uint64_t weight) {
  const std::size_t count = state_->devices.size();
  // health() is read outside the lock: it takes the device's own locks.
  std::vector<Status> health(count);
  for (std::size_t i = 0; i < count; ++i) health[i] = state_->devices[i].device.health();
  std::lock_guard lock(state_->mutex);
  std::optional<std::size_t> best;
  for (std::size_t turn = 0; turn < count; ++turn) {
    const std::size_t i = (state_->cursor + turn) % count;
    const PooledDeviceState& candidate = state_->devices[i].counters;
    if (!health[i].ok() || !candidate.down.ok()) continue;
    if (!best || better(policy, candidate, state_->devices[*best].counters)) best = i;
    if (policy == PlacementPolicy::round_robin) break;
  }
  if (!best) {
    std::string why;
    for (std::size_t i = 0; i < count; ++i) {
      const Status& reason = health[i].ok() ? state_->devices[i].counters.down : health[i];
      why += fmt::format("{}{}: {}", i == 0 ? "" : "; ", state_->devices[i].spec.text, reason.to_string());
    }
    return unavailable(fmt::format("no device of the pool is usable ({})", why));
  }
  PooledDeviceState& chosen = state_->devices[*best].counters;
  ++chosen.requests_in_flight;
  chosen.weight_in_flight += weight;
  ++chosen.requests_placed;
  chosen.weight_placed += weight;
  state_->cursor = (*best + 1) % count;
  return Placement{.index = *best, .weight = weight};
}

void DevicePool::finish(const Placement& placement, const Status& outcome) {
  detail::PooledDevice& pooled = state_->devices.at(placement.index);
  const bool failed_device = device_failure(outcome, pooled.device);
  std::lock_guard lock(state_->mutex);
  PooledDeviceState& counters = pooled.counters;
  counters.requests_in_flight -= std::min<std::uint64_t>(counters.requests_in_flight, 1);
  counters.weight_in_flight -= std::min(counters.weight_in_flight, placement.weight);
  if (!outcome.ok()) ++counters.requests_failed;
  if (failed_device && counters.down.ok()) {
    counters.down = outcome;
    ++counters.times_down;
  }
}

void DevicePool::mark_down(std::size_t index, Status why) {
  if (why.ok()) why = unavailable("marked down");
  std::lock_guard lock(state_->mutex);
  PooledDeviceState& counters = state_->devices.at(index).counters;
  if (counters.down.ok()) ++counters.times_down;
  counters.down = std::move(why);
}

Status DevicePool::refresh() {
  Status first_error;
  for (std::size_t i = 0; i < state_->devices.size(); ++i) first_error.update(refresh(i));
  return first_error;
}

Status DevicePool::refresh(std::size_t index) {
  detail::PooledDevice& pooled = state_->devices.at(index);
  Result<DeviceInfo> info = pooled.device.info().wait();
  const bool healthy = pooled.device.health().ok();
  std::lock_guard lock(state_->mutex);
  PooledDeviceState& counters = pooled.counters;
  if (!info.ok()) {
    if (device_failure(info.status(), pooled.device) && counters.down.ok()) {
      counters.down = info.status();
      ++counters.times_down;
    }
    return info.status().with_context(fmt::format("device '{}'", pooled.spec.text));
  }
  counters.memory_capacity_bytes = info->memory_capacity_bytes;
  counters.memory_in_use_bytes = info->memory.in_use_bytes;
  counters.memory_free_bytes = free_bytes(*info);
  counters.worker_restarts = info->worker_restarts;
  if (healthy) counters.down = Status();
  return Status();
}

DevicePool DevicePool::with_own_counters() const {
  auto state = std::make_shared<detail::PoolState>();
  std::lock_guard lock(state_->mutex);
  for (const detail::PooledDevice& pooled : state_->devices) {
    const PooledDeviceState& was = pooled.counters;
    state->devices.push_back(detail::PooledDevice{.spec = pooled.spec,
                                                  .device = pooled.device,
                                                  .counters = {.index = was.index,
                                                               .spec = was.spec,
                                                               .name = was.name,
                                                               .isolation = was.isolation,
                                                               .memory_capacity_bytes = was.memory_capacity_bytes,
                                                               .memory_in_use_bytes = was.memory_in_use_bytes,
                                                               .memory_free_bytes = was.memory_free_bytes,
                                                               .worker_restarts = was.worker_restarts}});
  }
  return DevicePool(std::move(state));
}

PooledDeviceState DevicePool::state(std::size_t index) const {
  const detail::PooledDevice& pooled = state_->devices.at(index);
  Status health = pooled.device.health();
  std::lock_guard lock(state_->mutex);
  PooledDeviceState copy = pooled.counters;
  copy.health = std::move(health);
  copy.usable = copy.health.ok() && copy.down.ok();
  return copy;
}

std::vector<PooledDeviceState> DevicePool::states() const {
  std::vector<PooledDeviceState> all;
  all.reserve(state_->devices.size());
  for (std::size_t i = 0; i < state_->devices.size(); ++i) all.push_back(state(i));
  return all;
}

}  // namespace accel
