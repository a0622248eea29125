#include "device/isolated/worker_supervisor.hpp"

#include "device/device_options_codec.hpp"
#include "device/isolated/wire.hpp"
#include "device/isolated/worker_launch.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <future>
#include <vector>

namespace accel::device::isolated {
namespace {

std::int64_t to_ns(std::chrono::nanoseconds duration) { return duration.count(); }

}  // namespace

Result<std::shared_ptr<WorkerSupervisor>> WorkerSupervisor::start(const DeviceShared& shared) {
  ACCEL_ASSIGN_OR_RETURN(std::string executable, find_worker_executable(shared.options.worker));
  ACCEL_ASSIGN_OR_RETURN(Channel channel, Channel::create(shared.name, shared.options.worker.staging_bytes));

  WorkerSetupArea& area = channel.header().setup;
  ByteWriter setup(std::span<std::byte>(area.encoding, sizeof area.encoding));
  encode(setup, WorkerSetup{.device_id = shared.id, .name = shared.name, .options = shared.options});
  if (setup.overflowed()) {
    return invalid_argument(fmt::format("{}: the device's options take more than the {} bytes a worker is told",
                                        shared.name, sizeof area.encoding));
  }
  area.bytes = static_cast<std::uint32_t>(setup.size());

  std::shared_ptr<WorkerSupervisor> supervisor(new WorkerSupervisor(shared, std::move(channel), std::move(executable)),
                                               &WorkerSupervisor::shut_down);
  std::promise<Status> started;
  std::future<Status> started_future = started.get_future();
  supervisor->monitor_ = std::thread([raw = supervisor.get(), &started] { raw->monitor(started); });
  ACCEL_RETURN_IF_ERROR(started_future.get());
  return supervisor;
}

WorkerSupervisor::WorkerSupervisor(const DeviceShared& shared, Channel channel, std::string executable)
    : name_(shared.name),
      options_(shared.options.worker),
      executable_(std::move(executable)),
      channel_(std::move(channel)),
      staging_(channel_.staging().size()),
      restarts_allowed_(shared.options.worker.restarts),
      standby_restarts_allowed_(shared.options.worker.restarts) {}

WorkerSupervisor::~WorkerSupervisor() = default;

void WorkerSupervisor::close() {
  stopping_.store(true, std::memory_order_release);
  channel_.replies().wake();
  // Called in a continuation the monitor runs, the monitor stops the workers itself once it is back in its loop.
  if (std::this_thread::get_id() != monitor_.get_id() && monitor_.joinable()) monitor_.join();
}

void WorkerSupervisor::shut_down(WorkerSupervisor* supervisor) {
  if (std::this_thread::get_id() == supervisor->monitor_.get_id()) {
    // The last owner went away in a continuation on the monitor thread: it finishes and deletes on its own.
    supervisor->delete_on_exit_.store(true, std::memory_order_release);
    supervisor->close();
    supervisor->monitor_.detach();
    return;
  }
  supervisor->close();
  delete supervisor;
}

std::uint64_t WorkerSupervisor::max_copy_bytes() const noexcept {
  return staging_.capacity() / 4 / StagingArena::kAlignment * StagingArena::kAlignment;
}

Status WorkerSupervisor::health() const {
  if (!failed_.load(std::memory_order_acquire)) return Status();
  std::lock_guard lock(pending_mutex_);
  return failure_;
}

std::optional<StagingRange> WorkerSupervisor::allocate_staging(std::uint64_t bytes) {
  return staging_.allocate(bytes, [this] { return failed_.load(std::memory_order_acquire); });
}

ReplyContext WorkerSupervisor::reply_context() const noexcept {
  return ReplyContext{.staging = channel_.staging(),
                      .worker_pid = worker_pid_.load(std::memory_order_acquire),
                      .worker_restarts = worker_restarts_.load(std::memory_order_acquire)};
}

// -- sending --------------------------------------------------------------------------------------------------

void WorkerSupervisor::send(std::uint32_t stream, std::uint16_t tag, std::span<const std::byte> payload,
                            std::unique_ptr<PendingReply> pending) {
  if (sizeof(MessageHeader) + payload.size() > channel_.requests().message_bytes()) {
    pending->fail(
        internal_error(fmt::format("{}: a request of {} bytes does not fit a channel slot", name_, payload.size())));
    return;
  }
  Status refused;
  {
    std::lock_guard send_lock(send_mutex_);
    Ring& requests = channel_.requests();
    std::byte* slot = nullptr;
    for (std::uint32_t round = 0; (slot = requests.try_claim()) == nullptr; ++round) {
      if (failed_.load(std::memory_order_acquire)) break;
      if (round < 256) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
    if (slot != nullptr) {
      const MessageHeader header{.id = requests.next_position(),
                                 .stream = stream,
                                 .tag = tag,
                                 .bytes = static_cast<std::uint32_t>(payload.size())};
      std::memcpy(slot, &header, sizeof header);
      if (!payload.empty()) std::memcpy(slot + sizeof header, payload.data(), payload.size());
      std::lock_guard pending_lock(pending_mutex_);
      if (failure_.ok()) {
        pending_.emplace(header.id, std::move(pending));
        requests.publish();
      } else {
        refused = failure_;
      }
    } else {
      std::lock_guard pending_lock(pending_mutex_);
      refused = failure_;
    }
  }
  if (!refused.ok()) {
    pending->fail(refused);
    return;
  }
  // The reply will come soon: let the monitor spin for it rather than sleep through it.
  channel_.replies().nudge();
}

namespace {
class DiscardReply final : public PendingReply {
 public:
  void complete(std::span<const std::byte>, const ReplyContext&) override {}
  void fail(const Status&) override {}
};
}  // namespace

void WorkerSupervisor::close_stream(std::uint32_t stream) {
  if (stopping_.load(std::memory_order_acquire) || failed_.load(std::memory_order_acquire)) return;
  send(stream, isolated::kCloseStreamTag, {}, std::make_unique<DiscardReply>());
}

// -- the monitor thread ----------------------------------------------------------------------------------------

void WorkerSupervisor::monitor(std::promise<Status>& started) {
  pthread_setname_np(pthread_self(), fmt::format("w{}", name_).substr(0, 15).c_str());
  {
    Status first = start_serving();
    const bool ok = first.ok();
    started.set_value(std::move(first));
    if (!ok) {
      stop_worker();
      return;
    }
  }
  Ring& replies = channel_.replies();
  const auto check_interval = std::max(std::chrono::ceil<std::chrono::milliseconds>(options_.heartbeat_timeout / 8),
                                       std::chrono::milliseconds(1));
  while (!stopping_.load(std::memory_order_acquire)) {
    drain_replies();
    const std::int64_t now = monotonic_ns();
    const std::int64_t spin_left = last_reply_ns_ + to_ns(options_.spin) - now;
    // Rounded up: waking a little after the heartbeat went stale finds it stale; waking before would not.
    const std::chrono::milliseconds sleep = failed_.load(std::memory_order_acquire)
                                                ? check_interval
                                                : std::chrono::ceil<std::chrono::milliseconds>(std::chrono::nanoseconds(
                                                      std::max<std::int64_t>(next_check_ns() - now, 0)));
    const bool arrived =
        replies.wait(std::chrono::nanoseconds(std::max<std::int64_t>(spin_left, 0)), sleep, serving_.pidfd);
    if (failed_.load(std::memory_order_acquire)) continue;
    if (std::optional<Status> loss = check_worker(!arrived)) recover(std::move(*loss));
  }
  stop_worker();
  if (delete_on_exit_.load(std::memory_order_acquire)) delete this;
}

void WorkerSupervisor::drain_replies() {
  Ring& replies = channel_.replies();
  alignas(8) std::byte message[kReplySlotBytes];
  bool delivered = false;
  while (const std::byte* slot = replies.peek()) {
    MessageHeader header;
    std::memcpy(&header, slot, sizeof header);
    const std::size_t bytes = std::min<std::size_t>(header.bytes, replies.message_bytes() - sizeof header);
    std::memcpy(message, slot + sizeof header, bytes);
    replies.release();
    std::unique_ptr<PendingReply> pending;
    {
      std::lock_guard lock(pending_mutex_);
      if (auto it = pending_.find(header.id); it != pending_.end()) {
        pending = std::move(it->second);
        pending_.erase(it);
      }
    }
    if (pending) pending->complete(std::span<const std::byte>(message, bytes), reply_context());
    delivered = true;
  }
  if (delivered) last_reply_ns_ = monotonic_ns();
}

// The next look at the workers: at least every eighth of the heartbeat timeout (exits, the standby), and at
// the moment the serving worker's heartbeat goes stale unless it is stamped again, so that a hang is found
// within the timeout itself rather than up to a check interval after it.
std::int64_t WorkerSupervisor::next_check_ns() const noexcept {
  const std::int64_t timeout = to_ns(options_.heartbeat_timeout);
  const WorkerSlot& slot = channel_.header().workers[serving_.slot];
  const std::int64_t stale_at = slot.heartbeat_ns.load(std::memory_order_relaxed) + timeout + 1;
  return std::min(last_check_ns_ + timeout / 8, stale_at);
}

std::optional<Status> WorkerSupervisor::check_worker(bool idle) {
  const std::int64_t now = monotonic_ns();
  if (!idle && now < next_check_ns()) return std::nullopt;
  last_check_ns_ = now;
  check_standby();
  const pid_t pid = serving_.pid;
  int wait_status = 0;
  if (::waitpid(pid, &wait_status, WNOHANG) == pid) {
    reap(serving_, /*waited=*/true);
    return Status(Code::context_lost,
                  fmt::format("the worker process {} of {} {}", pid, name_, describe_exit(wait_status)));
  }
  const WorkerSlot& slot = channel_.header().workers[serving_.slot];
  const std::int64_t silent_ns = now - slot.heartbeat_ns.load(std::memory_order_relaxed);
  if (silent_ns > to_ns(options_.heartbeat_timeout)) {
    ::kill(pid, SIGKILL);
    reap(serving_);
    return Status(Code::context_lost, fmt::format("the worker process {} of {} stopped serving (no heartbeat for {} "
                                                  "ms) and was killed",
                                                  pid, name_, silent_ns / 1'000'000));
  }
  return std::nullopt;
}

// A standby that died, failed to build its context or stopped beating is replaced while the restart budget
// allows; past it, the device goes on without a standby.
void WorkerSupervisor::check_standby() {
  if (standby_.pid == 0) return;
  const WorkerSlot& slot = channel_.header().workers[standby_.slot];
  const WorkerState state = slot.state.load(std::memory_order_acquire);
  int wait_status = 0;
  const bool exited = ::waitpid(standby_.pid, &wait_status, WNOHANG) == standby_.pid;
  bool lost = exited;
  if (!exited && (state == WorkerState::failed ||
                  (state == WorkerState::ready && monotonic_ns() - slot.heartbeat_ns.load(std::memory_order_relaxed) >
                                                      to_ns(options_.heartbeat_timeout)))) {
    ::kill(standby_.pid, SIGKILL);
    lost = true;
  }
  if (!lost) return;
  reap(standby_, exited);
  if (standby_restarts_allowed_.admit(std::chrono::steady_clock::now())) spawn(standby_, 1 - serving_.slot, false);
}

void WorkerSupervisor::fail_taken_requests(const Status& loss) {
  const std::uint64_t taken = channel_.requests().consumed();
  std::vector<std::unique_ptr<PendingReply>> lost;
  {
    std::lock_guard lock(pending_mutex_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->first < taken) {
        lost.push_back(std::move(it->second));
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }
  const Status reply(Code::context_lost, fmt::format("{}; the request was running there and is lost. Its buffers are "
                                                     "gone too: allocate again",
                                                     loss.message()));
  for (auto& pending : lost) pending->fail(reply);
}

// The budget is decided before anyone hears of the loss: a caller answered `context_lost` must already find the
// device failed (health() and every later request) when no worker will replace the lost one.
void WorkerSupervisor::recover(Status loss) {
  drain_replies();
  // The lost worker, reaped by now, may have died inside a reply's publish: no new worker may produce before the
  // reply ring's head has caught up (the likely cause of a wedge seen under TSan after a kill, about 1 run in 100).
  channel_.replies().recover_producer();
  bool answered = false;
  while (!stopping_.load(std::memory_order_acquire)) {
    const std::optional<std::chrono::milliseconds> backoff = restarts_allowed_.admit(std::chrono::steady_clock::now());
    if (!backoff) {
      fail_device(Status(Code::unavailable, fmt::format("{}: {}; the device has failed for good. Last loss: {}", name_,
                                                        restarts_allowed_.describe_exhausted(), loss.message())),
                  answered ? std::nullopt : std::optional<Status>(loss));
      return;
    }
    if (!answered) fail_taken_requests(loss);
    answered = true;
    if (backoff->count() > 0) std::this_thread::sleep_for(*backoff);
    worker_restarts_.fetch_add(1, std::memory_order_acq_rel);
    Status started = start_serving();
    if (started.ok()) return;
    loss = std::move(started);
  }
  if (!answered) fail_taken_requests(loss);
}

void WorkerSupervisor::fail_device(Status failure, const std::optional<Status>& loss) {
  {
    std::lock_guard lock(pending_mutex_);
    failure_ = failure;
    failed_.store(true, std::memory_order_release);
  }
  // From here on nothing is published: what is pending is all there is to answer.
  if (loss) fail_taken_requests(*loss);
  std::unordered_map<std::uint64_t, std::unique_ptr<PendingReply>> lost;
  {
    std::lock_guard lock(pending_mutex_);
    lost.swap(pending_);
  }
  for (auto& [id, pending] : lost) pending->fail(failure);
}

}  // namespace accel::device::isolated
