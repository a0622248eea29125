#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "accel/libs/collective/mpi.hpp"

namespace accel::collective {

Result<Communicator> init_from_mpi(const Device& device, CommOptions options) {
  int rank = 0;
  int ranks = 0;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS || MPI_Comm_size(MPI_COMM_WORLD, &ranks) != MPI_SUCCESS) {
    return failed_precondition("collective::init_from_mpi: MPI_COMM_WORLD is not usable (was MPI_Init called?)");
  }
  // Every rank takes part in both exchanges before any refuses, so that none is left waiting in them or for a world
  // that will never form: rank 0 sends a flag with the id (it may have failed to make one), and every rank its
  // device's kind.
  std::array<std::uint8_t, UniqueId::kBytes + 1> message{};
  if (rank == 0) {
    Result<UniqueId> made = new_unique_id(device.kind());
    if (made.ok()) {
      message[0] = 1;
      std::copy(made->bytes.begin(), made->bytes.end(), message.begin() + 1);
    }
  }
  auto kind = static_cast<std::uint8_t>(device.kind());
  std::vector<std::uint8_t> kinds(static_cast<std::size_t>(ranks));
  if (MPI_Bcast(message.data(), static_cast<int>(message.size()), MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
      MPI_Allgather(&kind, 1, MPI_BYTE, kinds.data(), 1, MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS) {
    return unavailable("collective::init_from_mpi: MPI_Bcast of the unique id or MPI_Allgather of the kinds failed");
  }
  const std::string where = fmt::format("collective::init_from_mpi (rank {} of {})", rank, ranks);
  if (message[0] != 1) return unavailable(where + ": rank 0 could not make a unique id");
  if (std::ranges::any_of(kinds, [&](std::uint8_t k) { return k != kind; })) {
    std::string named;
    for (std::size_t r = 0; r < kinds.size(); ++r) {
      named += fmt::format("{}rank {} {}", r == 0 ? "" : ", ", r, to_string(static_cast<DeviceKind>(kinds[r])));
    }
    return failed_precondition(
        fmt::format("{}: a world's devices are of one kind, and these are not ({})", where, named));
  }
  if (device.kind() == DeviceKind::cpu && ranks > 1) {
    return failed_precondition(
        fmt::format("{}: a CPU world's ranks are CPU devices of one process, and these {} "
                    "ranks are processes (use CUDA devices, or init_all for CPU devices of one "
                    "process)",
                    where, ranks));
  }
  UniqueId id;
  std::copy(message.begin() + 1, message.end(), id.bytes.begin());
  return init_rank(device, id, ranks, rank, options).wait();
}

}  // namespace accel::collective
