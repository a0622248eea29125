/// @file
/// One process per GPU started by mpirun: this process's communicator from MPI_COMM_WORLD, the NCCL unique id made
/// by rank 0 and sent to the others with MPI_Bcast. MPI must be initialised (MPI_Init) and stay so until it returns.
/// Every rank is refused alike (failed_precondition), after the exchange, when the ranks' devices are of more than one
/// kind, or CPU devices with more than one rank (a CPU world's ranks are CPU devices of one process). Built only where
/// MPI is found (the accel_collective_mpi library). Python's accel.collective.init_from_mpi does the same through
/// mpi4py, on any communicator.
#pragma once

#include "accel/libs/collective/communicator.hpp"

namespace accel::collective {

/// This process's communicator on `device`, from MPI_COMM_WORLD (see the file's description).
[[nodiscard]] Result<Communicator> init_from_mpi(const Device& device, CommOptions options = {});

}  // namespace accel::collective
