// The client side of an isolated device: starts the worker process, sends requests into the channel, answers
// every request exactly once from the worker's replies, and replaces the worker when it is lost.
//
// With WorkerOptions::standby a second worker builds its context ahead of time and waits; a loss promotes it.
//
// One monitor thread per device reads replies (spinning while traffic flows, then sleeping on an eventfd and
// the worker's pidfd) and watches the worker: exit (a sticky fault makes the worker exit on purpose), death by
// a signal, or a heartbeat older than WorkerOptions::heartbeat_timeout (the worker is then killed). On a loss:
//   1. replies the lost worker published are delivered;
//   2. requests it had taken (before the request ring's tail) and not answered get `context_lost`;
//   3. a new worker starts (restart budget and back-off) with a new epoch range, so every older handle is stale;
//   4. requests it had not taken stay in the ring and run on the new worker, in order.
// When the budget is spent the device fails for good: every pending and later request gets `unavailable`.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <unordered_map>

#include "accel/core/supervision.hpp"
#include "device/device_shared.hpp"
#include "device/isolated/channel.hpp"
#include "device/isolated/staging_arena.hpp"

namespace accel::device::isolated {

// What a reply's completion may read besides the reply itself.
struct ReplyContext {
  std::span<const std::byte> staging;
  pid_t worker_pid = 0;
  std::uint64_t worker_restarts = 0;
};

// Where one request's reply goes. Exactly one of complete() or fail() is called.
class PendingReply {
 public:
  virtual ~PendingReply() = default;
  virtual void complete(std::span<const std::byte> reply, const ReplyContext& context) = 0;
  virtual void fail(const Status& status) = 0;
};

class WorkerSupervisor {
 public:
  // Starts the first worker and waits until its context is built; its error if that failed. The returned
  // pointer's deleter shuts the worker down (it may run on any thread, the monitor's included).
  static Result<std::shared_ptr<WorkerSupervisor>> start(const DeviceShared& shared);

  WorkerSupervisor(const WorkerSupervisor&) = delete;
  WorkerSupervisor& operator=(const WorkerSupervisor&) = delete;

  // Sends one message; `pending` hears of it exactly once, also when the worker is lost or the device failed.
  void send(std::uint32_t stream, std::uint16_t tag, std::span<const std::byte> payload,
            std::unique_ptr<PendingReply> pending);

  [[nodiscard]] std::uint32_t open_stream() noexcept { return next_stream_.fetch_add(1, std::memory_order_relaxed); }
  void close_stream(std::uint32_t stream);

  // A staging range for `bytes` (<= max_copy_bytes()); waits for room; nothing once the device failed.
  [[nodiscard]] std::optional<StagingRange> allocate_staging(std::uint64_t bytes);
  void release_staging(StagingRange range) { staging_.release(range); }
  [[nodiscard]] std::span<std::byte> staging_memory() const noexcept { return channel_.staging(); }
  // Copies larger than this go in pieces.
  [[nodiscard]] std::uint64_t max_copy_bytes() const noexcept;

  // OK until the restart budget was spent; then why the device failed.
  [[nodiscard]] Status health() const;

  // Stops the monitor, which asks the workers to stop (killing them after a grace period), reaps them and
  // answers every request left `cancelled`; later requests are refused. The channel stays mapped until the
  // last owner goes, since a request racing with the close may still write into it.
  void close();

 private:
  WorkerSupervisor(const DeviceShared& shared, Channel channel, std::string executable);
  ~WorkerSupervisor();
  static void shut_down(WorkerSupervisor* supervisor);

  // One worker process: the one serving the rings, or a standby.
  struct WorkerProcess {
    pid_t pid = 0;  // 0: none
    int pidfd = -1;
    int slot = 0;  // its part of the channel header
  };

  void monitor(std::promise<Status>& started);
  // Makes a worker serve: promotes the standby if it is (or becomes) ready, else starts one and waits for it.
  // Then starts a new standby if the options ask for one.
  Status start_serving();
  void spawn(WorkerProcess& process, int slot, bool promoted);
  Status wait_ready(WorkerProcess& process);
  // Waits for the process (dead or killed) to end, unless waitpid already collected it (`waited`), and retires its
  // exports to other processes.
  void reap(WorkerProcess& process, bool waited = false);
  // Why the serving worker is gone (it was reaped), or nothing while it serves. Replaces a lost standby.
  std::optional<Status> check_worker(bool idle);
  [[nodiscard]] std::int64_t next_check_ns() const noexcept;
  void check_standby();
  void recover(Status loss);
  void drain_replies();
  void fail_taken_requests(const Status& loss);
  // Fails the device for good; requests the lost worker had taken get `loss` (context_lost) if given, the
  // others `failure`.
  void fail_device(Status failure, const std::optional<Status>& loss = std::nullopt);
  void stop_worker();
  [[nodiscard]] ReplyContext reply_context() const noexcept;

  const std::string name_;
  const WorkerOptions options_;
  const std::string executable_;
  Channel channel_;
  StagingArena staging_;
  RestartTracker restarts_allowed_;
  RestartTracker standby_restarts_allowed_;  // a standby that keeps failing is given up, not the device

  std::mutex send_mutex_;  // one producer of the request ring at a time

  mutable std::mutex pending_mutex_;
  std::unordered_map<std::uint64_t, std::unique_ptr<PendingReply>> pending_;
  Status failure_;  // set once, when the device fails for good
  std::atomic<bool> failed_{false};

  std::atomic<std::uint32_t> next_stream_{0};
  WorkerProcess serving_;
  WorkerProcess standby_;
  std::atomic<pid_t> worker_pid_{0};  // serving_.pid, for replies read on other threads
  std::atomic<std::uint64_t> worker_restarts_{0};
  std::uint32_t incarnation_ = 0;
  std::int64_t last_reply_ns_ = 0;
  std::int64_t last_check_ns_ = 0;

  std::atomic<bool> stopping_{false};
  std::atomic<bool> delete_on_exit_{false};
  std::thread monitor_;
};

}  // namespace accel::device::isolated
