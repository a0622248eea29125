/// @file
/// One process per GPU, started by a launcher the user already runs: torchrun's environment convention here, mpirun
/// in mpi.hpp.
///
/// torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT in each process. The NCCL unique id is
/// made by rank 0 and must reach every other rank before any can join. What carries it is a plain TCP socket: rank 0
/// listens and writes the id to each rank that connects; the others connect (retrying while rank 0 is not yet
/// listening) and read it. That is the least code that needs nothing else running: torch's own TCPStore would mean
/// speaking its protocol, and a file would need a shared file system. The port is $ACCEL_BOOTSTRAP_PORT when set,
/// else MASTER_PORT + 1, because under torchrun the agent's own store already listens on MASTER_PORT. The bytes
/// read are untrusted: a reply is taken only if it is exactly the expected length, with our magic and the same
/// world size, so a stray service on that port is an error, never an id.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "accel/libs/collective/communicator.hpp"

namespace accel::collective {

/// What torchrun tells each process it starts, and where rank 0 serves the unique id.
struct LauncherEnv {
  std::int32_t rank = 0;             ///< RANK: this process's rank
  std::int32_t world_size = 0;       ///< WORLD_SIZE: the number of processes
  std::int32_t local_rank = 0;       ///< the GPU ordinal this process takes
  std::string master_addr;           ///< MASTER_ADDR: rank 0's host
  std::uint16_t master_port = 0;     ///< MASTER_PORT: torchrun's own rendezvous port on rank 0's host
  std::uint16_t bootstrap_port = 0;  ///< where rank 0 serves the unique id
};

/// How the environment is read (std::getenv by default; tests pass their own).
using GetEnv = std::function<const char*(const char*)>;

/// The torchrun variables, each checked (present, an integer in range); an error names the variable and its value.
[[nodiscard]] Result<LauncherEnv> parse_torchrun_env(const GetEnv& get_env);
/// The torchrun variables of this process's environment.
[[nodiscard]] Result<LauncherEnv> parse_torchrun_env();

/// Rank 0's side: listens on `port` (all interfaces) and sends `id` to `clients` ranks, or fails after `timeout`.
[[nodiscard]] Status serve_unique_id(const UniqueId& id, std::int32_t world_size, std::uint16_t port,
                                     std::int32_t clients, std::chrono::milliseconds timeout);
/// Another rank's side: connects to host:port (retrying until `timeout`) and reads the id.
[[nodiscard]] Result<UniqueId> fetch_unique_id(const std::string& host, std::uint16_t port, std::int32_t world_size,
                                               std::chrono::milliseconds timeout);

/// This process's communicator on `device` (normally CUDA device LOCAL_RANK), from torchrun's environment: rank 0
/// makes the id and serves it while every rank joins.
[[nodiscard]] Result<Communicator> init_from_torchrun(const Device& device, const LauncherEnv& env,
                                                      CommOptions options = {});

}  // namespace accel::collective
