/// @file
/// Communicators as the host builds them: one rank's Communicator is a device and the Comm that names the rank's
/// communicator on it, with the family's requests at hand.
///
/// @code
///   accel::System system;
///   auto dev0 = *accel::Device::open(system, {.kind = DeviceKind::cuda, .ordinal = 0});
///   auto dev1 = *accel::Device::open(system, {.kind = DeviceKind::cuda, .ordinal = 1});
///   std::vector<accel::collective::Communicator> comms = *accel::collective::init_all({dev0, dev1});
///   auto a = comms[0].ask(accel::collective::all_reduce(comms[0].comm(), x0, x0, n, DType::f32, ReduceOp::sum));
///   auto b = comms[1].ask(accel::collective::all_reduce(comms[1].comm(), x1, x1, n, DType::f32, ReduceOp::sum));
/// @endcode
///
/// One process per GPU: launcher.hpp (torchrun's environment) and mpi.hpp (mpirun).
///
/// Memory: a CUDA rank holds two NCCL communicators of its world, and their channels are connected when it joins, so
/// that no collective ever waits for a peer on the host (src/libs/collective/nccl_comm.hpp says why). That costs GPU
/// memory from the start: 1670 MiB of each H200 in a world of two (docs/PERFORMANCE.md, sections 17 and 49).
/// `CommOptions::blocking_collectives = false` keeps one communicator: 928 MiB there, and a small all-reduce takes
/// 83-115 µs instead of 16-22 µs. NCCL's own
/// variables (NCCL_BUFFSIZE, NCCL_MAX_NCHANNELS, ...) shrink it as they do for any NCCL job; accel sets
/// NCCL_NVLS_ENABLE=0 and NCCL_RUNTIME_CONNECT=0 only where the environment does not set them. Setting
/// NCCL_RUNTIME_CONNECT=1 saves the memory but moves the connection into each rank's first collective, on the blocking
/// communicator, where a missing peer could hold the device's thread; accel has not been tested that way.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/collective/collective.hpp"

namespace accel::collective {

/// How communicators are built.
struct CommOptions {
  /// For joining, and for each collective: see collective.hpp's Faults.
  std::uint32_t timeout_ms = 60'000;
  /// CUDA: a second, blocking communicator for the collectives, split from the non-blocking one every rank joins with
  /// (src/libs/collective/nccl_comm.hpp). Its collectives launch in about half the time, and it costs GPU memory
  /// (docs/PERFORMANCE.md §49 has both figures). false: one non-blocking communicator for everything.
  bool blocking_collectives = true;
};

/// A new world's id for devices of `kind`: ncclGetUniqueId for CUDA (it starts NCCL's bootstrap root in this
/// process, which must live until every rank has joined), random bytes for a CPU world.
[[nodiscard]] Result<UniqueId> new_unique_id(DeviceKind kind);
/// An id no other communicator of this process has.
[[nodiscard]] std::uint64_t next_comm_id() noexcept;

/// One rank's communicator on one device: the device and the Comm its requests name.
class Communicator {
 public:
  /// The communicator `comm` on `device`.
  Communicator(Device device, Comm comm) : device_(std::move(device)), comm_(comm) {}

  /// The device the communicator lives on.
  [[nodiscard]] const Device& device() const noexcept { return device_; }
  /// The Comm its requests name.
  [[nodiscard]] const Comm& comm() const noexcept { return comm_; }
  /// This communicator's rank.
  [[nodiscard]] std::int32_t rank() const noexcept { return comm_.rank; }
  /// The number of ranks in its world.
  [[nodiscard]] std::int32_t ranks() const noexcept { return comm_.ranks; }

  /// Sends a request of the collective family (built with this comm) to the device.
  template <class Request>
  Future<Done> ask(Request request) const {
    return device_.ask(std::move(request));
  }
  /// The steps as one group on this communicator.
  Future<Done> group(std::vector<Step> steps) const {
    return device_.ask(Group{.comm = comm_, .steps = std::move(steps)});
  }
  /// Like NCCL's, a destroy is collective across the processes of a host: it is answered once the other ranks
  /// there destroy theirs (deadline_exceeded after the communicator's timeout). A process holding several ranks
  /// sends every destroy before waiting for any.
  Future<Done> destroy() const { return device_.ask(DestroyComm{.comm = comm_}); }

 private:
  Device device_;
  Comm comm_;
};

/// Joins `device` to the world `id` as `rank` of `ranks`; answered when every rank has joined.
[[nodiscard]] Future<Communicator> init_rank(const Device& device, const UniqueId& id, std::int32_t ranks,
                                             std::int32_t rank, CommOptions options = {});
/// One communicator per device, rank i on devices[i] (ncclCommInitAll's world, each rank joined from its own
/// device's thread). The devices must be of one kind. Waits until all have joined; the first error otherwise.
[[nodiscard]] Result<std::vector<Communicator>> init_all(std::span<const Device> devices, CommOptions options = {});

}  // namespace accel::collective
