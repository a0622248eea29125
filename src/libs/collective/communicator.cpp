#include "accel/libs/collective/communicator.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstring>

#include "libs/collective/host_world.hpp"

#if ACCEL_HAVE_NCCL
#include <nccl.h>
#endif

namespace accel::collective {

Result<UniqueId> new_unique_id(DeviceKind kind) {
  if (kind == DeviceKind::cpu) return HostComms::new_unique_id();
#if ACCEL_HAVE_NCCL
  ncclUniqueId nccl_id;
  if (const ncclResult_t made = ncclGetUniqueId(&nccl_id); made != ncclSuccess) {
    return Status(Code::unavailable, fmt::format("ncclGetUniqueId: {}", ncclGetErrorString(made)), Source::nccl,
                  static_cast<std::int64_t>(made));
  }
  UniqueId id;
  static_assert(sizeof nccl_id == UniqueId::kBytes);
  std::memcpy(id.bytes.data(), &nccl_id, sizeof nccl_id);
  return id;
#else
  return not_supported("collective::new_unique_id: this build has no NCCL (no CUDA toolkit)");
#endif
}

std::uint64_t next_comm_id() noexcept {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Future<Communicator> init_rank(const Device& device, const UniqueId& id, std::int32_t ranks, std::int32_t rank,
                               CommOptions options) {
  const Comm comm{.id = next_comm_id(), .ranks = ranks, .rank = rank};
  return device
      .ask(InitComm{.comm = comm,
                    .id = id,
                    .timeout_ms = options.timeout_ms,
                    .blocking_collectives = options.blocking_collectives})
      .then([device, comm](Done) { return Communicator(device, comm); });
}

Result<std::vector<Communicator>> init_all(std::span<const Device> devices, CommOptions options) {
  if (devices.empty()) return invalid_argument("collective::init_all: no devices");
  for (const Device& device : devices) {
    if (device.kind() != devices[0].kind()) {
      return invalid_argument(
          fmt::format("collective::init_all: {} and {} are of different kinds", devices[0].name(), device.name()));
    }
  }
  ACCEL_ASSIGN_OR_RETURN(const UniqueId id, new_unique_id(devices[0].kind()));
  std::vector<Future<Communicator>> joining;
  const auto ranks = static_cast<std::int32_t>(devices.size());
  for (std::int32_t rank = 0; rank < ranks; ++rank) {
    joining.push_back(init_rank(devices[static_cast<std::size_t>(rank)], id, ranks, rank, options));
  }
  std::vector<Communicator> comms;
  Status first;
  for (Future<Communicator>& future : joining) {
    Result<Communicator> joined = future.wait();
    if (joined.ok()) {
      comms.push_back(std::move(*joined));
    } else {
      first.update(joined.status());
    }
  }
  if (!first.ok()) {
    std::vector<Future<Done>> destroyed;
    for (const Communicator& comm : comms) destroyed.push_back(comm.destroy());
    for (Future<Done>& done : destroyed) (void)done.wait();
    return first;
  }
  return comms;
}

}  // namespace accel::collective
