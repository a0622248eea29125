#include <pthread.h>

#include <future>

#include "accel/core/actor.hpp"

namespace accel {

std::string_view to_string(ActorState state) noexcept {
  switch (state) {
    case ActorState::starting: return "starting";
    case ActorState::running: return "running";
    case ActorState::restarting: return "restarting";
    case ActorState::stopped: return "stopped";
  }
  return "unknown_state";
}

ActorCellBase::ActorCellBase(ActorOptions options, EscalationHandler escalate)
    : options_(std::move(options)), escalate_(std::move(escalate)), restarts_allowed_(options_.supervision.budget) {}

ActorCellBase::~ActorCellBase() = default;

Status ActorCellBase::start() {
  std::promise<Status> started;
  std::future<Status> result = started.get_future();
  thread_ = std::thread([this, &started] { run(started); });
  return result.get();
}

void ActorCellBase::request_stop(ShutdownMode mode, Status reason) {
  {
    std::lock_guard lock(mutex_);
    if (!stop_mode_ || mode == ShutdownMode::fail_pending) stop_mode_ = mode;
    if (stop_reason_.ok()) stop_reason_ = reason.ok() ? cancelled("stop requested") : std::move(reason);
  }
  stop_requested_.store(true, std::memory_order_release);
  stop_cv_.notify_all();
  close_mailbox();
  wake();
}

void ActorCellBase::join() {
  if (!thread_.joinable()) return;
  if (on_actor_thread()) {
    // The last reference went away on the actor's own thread; it cannot wait for itself.
    request_stop(ShutdownMode::fail_pending);
    thread_.detach();
    return;
  }
  request_stop(ShutdownMode::drain);
  thread_.join();
}

void ActorCellBase::wait_stopped() {
  std::unique_lock lock(mutex_);
  stop_cv_.wait(lock, [&] { return state() == ActorState::stopped; });
}

Status ActorCellBase::stop_reason() const {
  std::lock_guard lock(mutex_);
  return state() == ActorState::stopped ? stop_reason_ : Status();
}

Status ActorCellBase::describe_send_failure(const Status& push_status) const {
  if (push_status.code() != Code::cancelled) return push_status;
  std::lock_guard lock(mutex_);
  const std::string why = stop_reason_.ok() ? std::string("stopping") : stop_reason_.to_string();
  return Status(stop_reason_.code() == Code::context_lost ? Code::context_lost : Code::cancelled,
                "actor '" + options_.name + "' is stopped (" + why + "); the request was not queued");
}

void ActorCellBase::run(std::promise<Status>& started) {
  pthread_setname_np(pthread_self(), options_.name.substr(0, 15).c_str());
  if (Status built = build_state(); !built.ok()) {
    stop_with(built);
    started.set_value(std::move(built));
    return;
  }
  state_.store(ActorState::running, std::memory_order_release);
  started.set_value(Status());

  while (true) {
    if (stop_requested_.load(std::memory_order_acquire)) {
      std::unique_lock lock(mutex_);
      const bool fail_now = stop_mode_ == ShutdownMode::fail_pending;
      lock.unlock();
      if (fail_now || mailbox_empty()) break;
    }
    std::optional<Status> outcome = process_next();
    if (!outcome || outcome->ok()) continue;
    if (!supervise(std::move(*outcome))) break;
  }
  Status reason;
  {
    std::lock_guard lock(mutex_);
    reason = stop_reason_.ok() ? cancelled("stop requested") : stop_reason_;
  }
  stop_with(std::move(reason));
}

bool ActorCellBase::supervise(Status failure) {
  switch (options_.supervision.decide(failure.code())) {
    case Directive::resume: return true;
    case Directive::restart: return restart(std::move(failure));
    case Directive::stop: {
      std::lock_guard lock(mutex_);
      stop_reason_ = std::move(failure);
      return false;
    }
    case Directive::escalate: break;
  }
  if (escalate_) escalate_(options_.name, failure);
  std::lock_guard lock(mutex_);
  stop_reason_ = failure.with_context("escalated");
  return false;
}

bool ActorCellBase::restart(Status failure) {
  while (true) {
    const std::optional<std::chrono::milliseconds> backoff = restarts_allowed_.admit(std::chrono::steady_clock::now());
    if (!backoff) {
      Status exhausted(failure.code(),
                       restarts_allowed_.describe_exhausted() + "; last failure: " + std::string(failure.message()),
                       failure.source(), failure.raw_code());
      if (escalate_) escalate_(options_.name, exhausted);
      std::lock_guard lock(mutex_);
      stop_reason_ = std::move(exhausted);
      return false;
    }
    state_.store(ActorState::restarting, std::memory_order_release);
    if (!sleep_unless_stopped(*backoff)) return false;
    destroy_state();
    Status rebuilt = build_state();
    restarts_.fetch_add(1, std::memory_order_acq_rel);
    if (rebuilt.ok()) {
      state_.store(ActorState::running, std::memory_order_release);
      return true;
    }
    failure = rebuilt.with_context("restart of '" + options_.name + "' failed");
  }
}

bool ActorCellBase::sleep_unless_stopped(std::chrono::milliseconds delay) {
  std::unique_lock lock(mutex_);
  stop_cv_.wait_for(lock, delay, [&] { return stop_mode_ == ShutdownMode::fail_pending; });
  return stop_mode_ != ShutdownMode::fail_pending;
}

void ActorCellBase::stop_with(Status reason) {
  {
    std::lock_guard lock(mutex_);
    stop_reason_ = reason;
  }
  stop_requested_.store(true, std::memory_order_release);
  close_mailbox();
  const Code reply_code = reason.code() == Code::context_lost ? Code::context_lost : Code::cancelled;
  fail_queued(Status(reply_code,
                     "actor '" + options_.name + "' stopped (" + reason.to_string() + "); the request was not executed",
                     reason.source(), reason.raw_code()));
  destroy_state();
  {
    std::lock_guard lock(mutex_);
    state_.store(ActorState::stopped, std::memory_order_release);
  }
  stop_cv_.notify_all();
}

}  // namespace accel
