// The worker processes' lives, on the monitor thread: starting one and waiting until it serves, reaping one that
// ended, stopping them all when the device closes. (worker_supervisor.cpp has the rest of the monitor's work.)
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "device/isolated/worker_launch.hpp"
#include "device/isolated/worker_supervisor.hpp"
#include "device/sharing/export_table.hpp"

namespace accel::device::isolated {
namespace {

// How long a worker asked to stop may take before it is killed.
constexpr std::chrono::milliseconds kStopGrace{5'000};

}  // namespace

void WorkerSupervisor::reap(WorkerProcess& process, bool waited) {
  int wait_status = 0;
  if (process.pid > 0) {
    // Once waited for, its id may already be another child's: it is not waited for again.
    while (!waited && ::waitpid(process.pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    sharing::retire_exports_of(process.pid);  // its buffers are gone: their importers' next use is stale_handle
  }
  if (process.pidfd >= 0) ::close(process.pidfd);
  const int slot = process.slot;
  process = WorkerProcess{.slot = slot};
  if (&process == &serving_) worker_pid_.store(0, std::memory_order_release);
}

void WorkerSupervisor::spawn(WorkerProcess& process, int slot, bool promoted) {
  WorkerSlot& part = channel_.header().workers[slot];
  part.epoch_base = ++incarnation_ << 16;  // each worker has 65536 context epochs of its own
  part.state.store(WorkerState::starting, std::memory_order_release);
  part.promoted.store(promoted ? 1 : 0, std::memory_order_release);
  part.stop_requested.store(0, std::memory_order_release);
  part.heartbeat_ns.store(monotonic_ns(), std::memory_order_release);
  part.start_error_code = 0;
  part.start_error[0] = '\0';
  process = WorkerProcess{.slot = slot};
  const pid_t pid = spawn_worker(executable_, channel_, slot);
  if (pid <= 0) return;
  process.pid = pid;
  process.pidfd = open_pidfd(pid);
}

Status WorkerSupervisor::wait_ready(WorkerProcess& process) {
  if (process.pid <= 0) {
    return Status(Code::unavailable,
                  fmt::format("{}: could not start a worker process: {}", name_, std::strerror(errno)), Source::os,
                  errno);
  }
  const WorkerSlot& slot = channel_.header().workers[process.slot];
  const std::int64_t deadline = monotonic_ns() + std::chrono::nanoseconds(options_.start_timeout).count();
  while (true) {
    const WorkerState state = slot.state.load(std::memory_order_acquire);
    if (state == WorkerState::ready) return Status();
    const pid_t pid = process.pid;
    if (state == WorkerState::failed) {
      Status why = start_failure(slot);
      reap(process);
      return why;
    }
    int wait_status = 0;
    if (::waitpid(pid, &wait_status, WNOHANG) == pid) {
      reap(process, /*waited=*/true);
      return Status(Code::unavailable, fmt::format("{}: the worker {} ({}) {} before it was ready", name_, pid,
                                                   executable_, describe_exit(wait_status)));
    }
    if (monotonic_ns() > deadline || stopping_.load(std::memory_order_acquire)) {
      ::kill(pid, SIGKILL);
      reap(process);
      return Status(Code::deadline_exceeded,
                    fmt::format("{}: the worker was not ready within {} ms", name_, options_.start_timeout.count()));
    }
    pollfd fds[1] = {{.fd = process.pidfd, .events = POLLIN, .revents = 0}};
    ::poll(fds, process.pidfd >= 0 ? 1 : 0, 1);
  }
}

Status WorkerSupervisor::start_serving() {
  if (standby_.pid > 0 && wait_ready(standby_).ok()) {
    serving_ = std::exchange(standby_, WorkerProcess{.slot = 1 - standby_.slot});
    channel_.header().workers[serving_.slot].promoted.store(1, std::memory_order_release);
  }
  if (serving_.pid == 0) {
    spawn(serving_, standby_.pid > 0 ? 1 - standby_.slot : 0, true);
    ACCEL_RETURN_IF_ERROR(wait_ready(serving_));
  }
  worker_pid_.store(serving_.pid, std::memory_order_release);
  last_reply_ns_ = last_check_ns_ = monotonic_ns();
  if (options_.standby && standby_.pid == 0) spawn(standby_, 1 - serving_.slot, false);
  return Status();
}

void WorkerSupervisor::stop_worker() {
  for (WorkerProcess* process : {&serving_, &standby_}) {
    if (process->pid > 0) {
      channel_.header().workers[process->slot].stop_requested.store(1, std::memory_order_release);
    }
  }
  channel_.requests().wake();
  const std::int64_t deadline = monotonic_ns() + std::chrono::nanoseconds(kStopGrace).count();
  for (WorkerProcess* process : {&serving_, &standby_}) {
    if (process->pid <= 0) continue;
    int wait_status = 0;
    while (true) {
      const pid_t waited = ::waitpid(process->pid, &wait_status, WNOHANG);
      if (waited == process->pid || (waited < 0 && errno != EINTR)) break;
      drain_replies();
      if (monotonic_ns() > deadline) {
        ::kill(process->pid, SIGKILL);
        ::waitpid(process->pid, &wait_status, 0);
        break;
      }
      pollfd fds[1] = {{.fd = process->pidfd, .events = POLLIN, .revents = 0}};
      ::poll(fds, process->pidfd >= 0 ? 1 : 0, 1);
    }
    reap(*process, /*waited=*/true);
  }
  drain_replies();
  fail_device(cancelled(fmt::format("{} was closed before the request was answered", name_)));
}

}  // namespace accel::device::isolated
