// The CPU device's collectives: a world of CPU devices of one process, each rank on its own device's thread. A
// rank posts what it sends as messages into FIFOs, one per (from, to) pair and per channel (collective or
// point-to-point), and takes what it receives from them in order; since every rank issues its collectives in the
// same order (as NCCL requires), the n-th message of a pair is the n-th call's. A group posts every step's messages
// before it takes any, so that sends and receives between the same ranks in one group cannot wait for each other.
// Reductions take the ranks' contributions in rank order (host_reduce.hpp), so every rank gets the same bits.
//
// Why a real implementation rather than not_supported: it is the reference the GPU tests compare NCCL with, and it
// runs the communicator's state machine (join, timeout, abort, stale handles, a new world after) in CI, where NCCL
// cannot run. Its limit: the world is within one process, so isolated CPU devices (a worker process each) cannot
// form one; their InitComm times out naming that.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>

#include "accel/core/result.hpp"
#include "accel/libs/collective/collective.hpp"
#include "libs/collective/step_checks.hpp"
#include "operation/operation.hpp"

namespace accel::collective {

class HostWorld;

// One rank's communicator in a CPU world.
class HostComm {
 public:
  HostComm(std::shared_ptr<HostWorld> world, Comm comm, std::chrono::milliseconds timeout)
      : world_(std::move(world)), comm_(comm), timeout_(timeout) {}

  // Runs the checked steps as one group; a timeout or a peer's inconsistency aborts this communicator.
  [[nodiscard]] Status run(std::string_view request, const CheckedSteps& checked, std::span<const BufferView> views);
  // OK while usable; the cause of its abort after.
  [[nodiscard]] Status health() const;
  [[nodiscard]] const Comm& comm() const noexcept { return comm_; }

 private:
  Status abort(Status cause);

  std::shared_ptr<HostWorld> world_;
  Comm comm_;
  std::chrono::milliseconds timeout_;
  Status failure_;
};

// The process's CPU communicators, by id.
class HostComms {
 public:
  static HostComms& instance();

  // Joins the world named by `id` and waits until every rank has; then the communicator is `comm.id`.
  [[nodiscard]] Status init(const InitComm& request);
  [[nodiscard]] Status destroy(const Comm& comm);
  // The communicator of `comm` (checked against its fields), or stale_handle naming why it is not usable.
  [[nodiscard]] Result<std::shared_ptr<HostComm>> find(std::string_view request, const Comm& comm);
  // A fresh id for a CPU world (random bytes; no bootstrap is needed within one process).
  [[nodiscard]] static UniqueId new_unique_id();

 private:
  HostComms() = default;
  struct Table;
  Table& table();
};

}  // namespace accel::collective
