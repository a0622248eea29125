/// @file
/// accel::DevicePool — several opened devices, each one's state, and a placement policy that picks one per request.
///
/// @code
///   accel::System system;
///   accel::DevicePool pool = *accel::DevicePool::open(system, "all");   // every GPU, or the CPU where there is none
///   accel::Placement placed = *pool.place(accel::PlacementPolicy::least_loaded, /*weight=*/tokens);
///   pool.device(placed.index).gemm(request).then([pool, placed](accel::Result<accel::Done> done) mutable {
///     pool.finish(placed, done.status());   // a device failure takes the device out until refresh() finds it back
///     return done;
///   });
/// @endcode
///
/// The pool counts what it placed: requests and their caller-given weight (tokens, bytes, anything additive) in
/// flight on each device, until the caller says the request finished. A device is skipped while its health() is
/// not OK, and while the pool marked it down: a request finished with the device's own failure (`context_lost`,
/// `unavailable`, or any error while health() is not OK) marks it down, and refresh() brings it back once the
/// device answers a query again (an isolated device whose worker was replaced does). A DevicePool is a cheap,
/// copyable handle; its methods may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accel/device/device.hpp"

namespace accel {

/// One entry of a device list: the text that named it and what Device::open opens for it.
struct DeviceSpec {
  std::string text;       ///< as written (or as "all" expanded): "cpu", "cpu-isolated", "cuda:1", "cuda-isolated:0"
  DeviceOptions options;  ///< kind, ordinal and isolation; the rest as the caller's base options
};

/// Parses a comma-separated device list. Entries: `cpu`, `cpu-isolated` (the CPU context in a supervised worker
/// process), `cuda[:N]`, `cuda-isolated[:N]` (N defaults to 0), a bare ordinal `N` (= `cuda:N`), and `all` (every
/// CUDA GPU of the host in process, or the CPU where there is none). An entry may repeat: each one opens a device of
/// its own. `cuda_devices` is how many GPUs the host has (Device::count(DeviceKind::cuda)); an ordinal at or past it
/// is an error. Every other field of the options is `base`'s. Errors are `invalid_argument` and name the bad entry.
[[nodiscard]] Result<std::vector<DeviceSpec>> parse_device_list(std::string_view list, int cuda_devices,
                                                                const DeviceOptions& base = {});
/// parse_device_list with the GPUs this process can open (the first call initialises the CUDA driver).
[[nodiscard]] Result<std::vector<DeviceSpec>> parse_device_list(std::string_view list, const DeviceOptions& base = {});

/// The names parse_device_choice takes, for a command's help.
inline constexpr std::string_view kDeviceChoices = "auto, cpu, cpu-isolated, cuda[:N], cuda-isolated[:N] or N";
/// Parses one device's name, as a command's `--device` takes it: `auto` (GPU 0 in process where the host has a GPU,
/// else the CPU) or any entry of a device list but `all`. Errors are `invalid_argument` and name the bad choice.
[[nodiscard]] Result<DeviceOptions> parse_device_choice(std::string_view choice, int cuda_devices,
                                                        const DeviceOptions& base = {});
/// parse_device_choice with the GPUs this process can open, counted (and the CUDA driver initialised) only where the
/// choice could name an in-process GPU: an isolated GPU's ordinal is left to its worker to find.
[[nodiscard]] Result<DeviceOptions> parse_device_choice(std::string_view choice, const DeviceOptions& base = {});

/// How DevicePool::place picks among the usable devices. Ties go to the device after the last one picked, so that
/// equal devices take turns.
enum class PlacementPolicy : std::uint8_t {
  least_loaded,      ///< the least weight in flight (e.g. tokens), then the fewest requests in flight
  round_robin,       ///< the next usable device after the last one picked
  most_free_memory,  ///< the most free memory as of the last refresh()
};
/// The enumerator's name: "least_loaded", "round_robin", "most_free_memory".
[[nodiscard]] std::string_view to_string(PlacementPolicy policy) noexcept;
/// The policy of that name (as to_string writes it, or with '-' for '_'); `invalid_argument` naming it otherwise.
[[nodiscard]] Result<PlacementPolicy> parse_placement_policy(std::string_view name);

/// A request placed on a device of the pool: give it back with DevicePool::finish once, when the request ended.
struct Placement {
  std::size_t index = 0;     ///< the device's index in the pool
  std::uint64_t weight = 0;  ///< the weight it was placed with
};

/// What the pool knows of one device.
struct PooledDeviceState {
  std::size_t index = 0;                        ///< its index in the pool
  std::string spec;                             ///< the list entry that opened it
  std::string name;                             ///< the device's name, e.g. "cpu:0"
  Isolation isolation = Isolation::in_process;  ///< in process or in a worker process
  bool usable = false;                          ///< healthy and not marked down: place() may pick it
  Status health;                                ///< the device's health(): OK, or why it failed for good
  Status down;                           ///< OK, or the failure that marked it down until refresh() finds it back
  std::uint64_t requests_in_flight = 0;  ///< placed and not finished
  std::uint64_t weight_in_flight = 0;    ///< the sum of their weights
  std::uint64_t requests_placed = 0;     ///< COUNT: requests placed on it
  std::uint64_t requests_failed = 0;     ///< COUNT: requests finished with an error
  std::uint64_t weight_placed = 0;       ///< COUNT: the sum of the placed requests' weights
  std::uint64_t times_down = 0;          ///< COUNT: times it was marked down
  /// Memory as of the last refresh(): what the device may allocate, what its buffers hold, and what is free (the
  /// capacity less what is in use; for a GPU at most what its driver reports free).
  std::uint64_t memory_capacity_bytes = 0;
  std::uint64_t memory_in_use_bytes = 0;  ///< see memory_capacity_bytes
  std::uint64_t memory_free_bytes = 0;    ///< see memory_capacity_bytes
  std::uint64_t worker_restarts = 0;      ///< isolated devices: workers that replaced a lost one (last refresh)
};

namespace detail {
/// The pool's devices and counters (src/device/pool.cpp).
struct PoolState;
}  // namespace detail

/// Several opened devices and a placement policy over them; a cheap, copyable handle.
class DevicePool {
 public:
  /// Opens every device of `specs`, in order, and queries each once (refresh()); the first device that fails to
  /// open fails the pool with its error, prefixed by its spec. An empty list is `invalid_argument`.
  static Result<DevicePool> open(System& system, std::span<const DeviceSpec> specs);
  /// Parses `list` (parse_device_list) and opens it.
  static Result<DevicePool> open(System& system, std::string_view list, const DeviceOptions& base = {});

  /// How many devices the pool holds.
  [[nodiscard]] std::size_t size() const noexcept;
  /// The device at `index` (< size()).
  [[nodiscard]] const Device& device(std::size_t index) const;
  /// The list entry that opened the device at `index`.
  [[nodiscard]] const std::string& spec(std::size_t index) const;

  /// Picks a usable device by `policy` and counts a request of `weight` in flight on it until finish().
  /// `unavailable` when no device is usable, naming why each one is not.
  [[nodiscard]] Result<Placement> place(PlacementPolicy policy, std::uint64_t weight = 1);
  /// The request placed as `placement` ended with `outcome`. A failure of the device's own (`context_lost` or
  /// `unavailable`, or any error while the device's health() is not OK) marks the device down.
  void finish(const Placement& placement, const Status& outcome);
  /// Marks the device at `index` down with `why` (not OK) until refresh() finds it answering again.
  void mark_down(std::size_t index, Status why);

  /// Queries every device (waiting for each answer, so not on a thread a device's answers need) and records its
  /// memory; a device marked down whose health() is OK and whose query succeeds is usable again. The first
  /// query error, prefixed by its device's spec; the other devices are still refreshed.
  Status refresh();
  /// refresh() of the device at `index` alone.
  Status refresh(std::size_t index);

  /// Another pool over the same devices, with counters, down-marks and turns of its own (a server gives each model
  /// one: a device one model's replica lost is down for that model until its replica is loaded again).
  [[nodiscard]] DevicePool with_own_counters() const;

  /// Every device's state, in pool order.
  [[nodiscard]] std::vector<PooledDeviceState> states() const;
  /// The state of the device at `index`.
  [[nodiscard]] PooledDeviceState state(std::size_t index) const;

 private:
  explicit DevicePool(std::shared_ptr<detail::PoolState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::PoolState> state_;
};

}  // namespace accel
