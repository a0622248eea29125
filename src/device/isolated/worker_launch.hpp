// Starting and identifying worker processes: finding the accel-worker program, posix_spawn with exactly the
// channel's descriptors, a pidfd to watch it, and a sentence for how it ended. Used by the WorkerSupervisor.
#pragma once

#include <sys/types.h>

#include <string>

#include "accel/core/result.hpp"
#include "accel/device/device.hpp"
#include "device/isolated/channel.hpp"

namespace accel::device::isolated {

// WorkerOptions::executable, else $ACCEL_WORKER, else accel-worker beside the running program, else the one this
// build made; failed_precondition naming every path tried.
[[nodiscard]] Result<std::string> find_worker_executable(const WorkerOptions& options);

// -1 where the kernel has no pidfd_open.
[[nodiscard]] int open_pidfd(pid_t pid);

// posix_spawn of `executable` serving `slot` of `channel`; the child's pid, or -1 with errno set.
[[nodiscard]] pid_t spawn_worker(const std::string& executable, const Channel& channel, int slot);

// "exited with status 3", "was killed by signal 9 (Killed)", "hit a sticky CUDA error and exited".
[[nodiscard]] std::string describe_exit(int wait_status);

}  // namespace accel::device::isolated
