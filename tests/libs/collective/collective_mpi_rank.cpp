// One rank of an NCCL world started by mpirun, one process per GPU: the communicator comes from MPI_COMM_WORLD
// (init_from_mpi: rank 0's unique id sent by MPI_Bcast), then every collective and dtype is checked against integer
// arithmetic (process_world_check.hpp). Each process takes the GPU of its rank among the ranks of its host.
//   mpirun -np 2 collective_mpi_rank
// Exit status 0 when this rank passed; rank 0 prints one line per rank's result.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "accel/libs/collective/mpi.hpp"

#include "process_world_check.hpp"

namespace {

using namespace accel;
using namespace accel::collective;

// The rank of this process among those of its host: the GPU ordinal it takes.
int local_rank() {
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int rank = 0;
  MPI_Comm_rank(host, &rank);
  MPI_Comm_free(&host);
  return rank;
}

std::string run_rank() {
  System system;
  Result<Device> device = Device::open(system, {.kind = DeviceKind::cuda, .ordinal = local_rank()});
  if (!device.ok()) return "device: " + std::string(device.status().message());
  Result<Communicator> comm = init_from_mpi(*device, {.timeout_ms = 60'000});
  if (!comm.ok()) return "init_from_mpi: " + std::string(comm.status().message());
  for (DType dtype : testing::kAllDTypes) {
    if (std::string error = testing::check_across_processes(*comm, dtype); !error.empty()) return error;
  }
  if (Status s = comm->destroy().wait().status(); !s.ok()) return "destroy: " + std::string(s.message());
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string error = run_rank();
  std::printf("mpi rank %d of %d: %s\n", rank, ranks,
              error.empty() ? "every collective and dtype passed" : ("FAILED: " + error).c_str());
  std::fflush(stdout);
  int failed = error.empty() ? 0 : 1;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
