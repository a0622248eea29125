#include <mpi.h>

#include <fmt/format.h>

#include "accel/libs/collective/mpi.hpp"

namespace accel::collective {

Result<Communicator> init_from_mpi(const Device& device, CommOptions options) {
  int rank = 0;
  int ranks = 0;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS || MPI_Comm_size(MPI_COMM_WORLD, &ranks) != MPI_SUCCESS) {
    return failed_precondition("collective::init_from_mpi: MPI_COMM_WORLD is not usable (was MPI_Init called?)");
  }
  // Every rank takes part in the broadcast, so rank 0 sends a flag with the id: a rank 0 that could not make one
  // tells the others, rather than leaving them to join a world that will never form.
  std::array<std::uint8_t, UniqueId::kBytes + 1> message{};
  if (rank == 0) {
    Result<UniqueId> made = new_unique_id(device.kind());
    if (made.ok()) {
      message[0] = 1;
      std::copy(made->bytes.begin(), made->bytes.end(), message.begin() + 1);
    }
  }
  if (MPI_Bcast(message.data(), static_cast<int>(message.size()), MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
    return unavailable("collective::init_from_mpi: MPI_Bcast of the unique id failed");
  }
  if (message[0] != 1) return unavailable("collective::init_from_mpi: rank 0 could not make a unique id");
  UniqueId id;
  std::copy(message.begin() + 1, message.end(), id.bytes.begin());
  return init_rank(device, id, ranks, rank, options).wait();
}

}  // namespace accel::collective
