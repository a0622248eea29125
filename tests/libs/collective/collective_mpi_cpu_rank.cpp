// One rank of a world made by init_from_mpi on the CPU device, started by mpiexec (ctest: collective_mpi_cpu_*).
//   collective_mpi_cpu_rank joins     one rank: the world forms, and an all-reduce in every dtype is its input
//   collective_mpi_cpu_rank refused   several ranks: every rank is refused after the broadcast (a CPU world's ranks
//                                     are CPU devices of one process), none left waiting in it
// Exit status 0 when this rank saw what it expected.
#include <mpi.h>

#include <cstdio>
#include <random>
#include <string>
#include <string_view>

#include "accel/libs/collective/mpi.hpp"

#include "libs/collective/collective_testing.hpp"

namespace {

using namespace accel;
using namespace accel::collective;

std::string joins(const Device& device) {
  Result<Communicator> comm = init_from_mpi(device, {.timeout_ms = 20'000});
  if (!comm.ok()) return "init_from_mpi: " + std::string(comm.status().message());
  if (comm->ranks() != 1 || comm->rank() != 0) return "not rank 0 of 1";
  std::mt19937 rng(7);
  for (DType dtype : testing::kAllDTypes) {
    const std::vector<double> values = testing::random_values(rng, dtype, 37);
    Result<BufferHandle> x = testing::upload(device, dtype, values);
    if (!x.ok()) return "upload: " + std::string(x.status().message());
    Result<Done> reduced = comm->ask(all_reduce(comm->comm(), *x, *x, values.size(), dtype, ReduceOp::sum)).wait();
    if (!reduced.ok()) return "all_reduce: " + std::string(reduced.status().message());
    Result<std::vector<double>> got = testing::download(device, *x);
    if (!got.ok() || *got != values)
      return "all_reduce of one rank changed its input in " + std::string(to_string(dtype));
  }
  if (Status s = comm->destroy().wait().status(); !s.ok()) return "destroy: " + std::string(s.message());
  return {};
}

std::string refused(const Device& device) {
  Result<Communicator> comm = init_from_mpi(device, {.timeout_ms = 20'000});
  if (comm.ok()) return "a CPU device joined a world of several processes";
  const std::string_view message = comm.status().message();
  if (comm.status().code() != Code::failed_precondition ||
      message.find("a CPU world's ranks are CPU devices of one process") == std::string_view::npos) {
    return "refused, but as " + comm.status().to_string();
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string error;
  {
    System system;
    Result<Device> device = Device::open(system, {.kind = DeviceKind::cpu});
    if (!device.ok()) {
      error = "device: " + std::string(device.status().message());
    } else if (mode == "joins") {
      error = joins(*device);
    } else if (mode == "refused") {
      error = refused(*device);
    } else {
      error = "usage: collective_mpi_cpu_rank joins|refused";
    }
  }
  std::printf("mpi rank %d (%s): %s\n", rank, mode.c_str(), error.empty() ? "as expected" : error.c_str());
  std::fflush(stdout);
  MPI_Finalize();
  return error.empty() ? 0 : 1;
}
