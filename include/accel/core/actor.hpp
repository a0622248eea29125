/// @file
/// Actors: a state object that owns its resources, a bounded mailbox, and one thread of its own that takes one
/// request at a time. GPU contexts are bound to threads, so the thread that built a state is the only one that
/// ever touches it — including its construction and destruction.
///
/// @code
///   accel::System system;
///   auto counter = system.spawn<CounterProtocol>([] { return std::make_unique<Counter>(); },
///                                                {.name = "counter"});
///   accel::Future<std::int64_t> f = counter->ask(Add{.amount = 2});
///   std::int64_t total = *f.wait();
/// @endcode
///
/// Message path of one ask(): the request and a promise are moved into the mailbox slot (the promise's shared
/// state is the request's only allocation); the actor thread pops it, calls its state's handler, and fulfils
/// the promise with the handler's Result — or, for handlers that complete later, hands the promise on.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include "accel/core/future.hpp"
#include "accel/core/mailbox.hpp"
#include "accel/core/message.hpp"
#include "accel/core/protocol.hpp"
#include "accel/core/supervision.hpp"

namespace accel {

/// Where an actor is in its life.
enum class ActorState : std::uint8_t { starting, running, restarting, stopped };
/// The state's name, for messages.
[[nodiscard]] std::string_view to_string(ActorState state) noexcept;

/// drain: finish every queued request, then stop. fail_pending: answer queued requests `cancelled` and stop.
enum class ShutdownMode : std::uint8_t { drain, fail_pending };

/// How an actor is spawned: its name, its mailbox and its supervision policy.
struct ActorOptions {
  std::string name = "actor";       ///< the name errors and logs give the actor
  MailboxOptions mailbox{};         ///< capacity and overflow policy of the mailbox
  SupervisionPolicy supervision{};  ///< how the actor's failures are answered
};

/// Called (on the failing actor's thread) when an actor escalates.
using EscalationHandler = std::function<void(const std::string& actor, const Status& failure)>;

/// The part of an actor that does not depend on its protocol: thread, lifecycle and supervision.
class ActorCellBase {
 public:
  /// An actor that is not started yet; `escalate` is called when its supervision policy escalates.
  ActorCellBase(ActorOptions options, EscalationHandler escalate);
  ActorCellBase(const ActorCellBase&) = delete;
  ActorCellBase& operator=(const ActorCellBase&) = delete;
  virtual ~ActorCellBase();

  // -- lifecycle -----------------------------------------------------------------
  /// Starts the thread and builds the state on it; returns the factory's error if that failed.
  Status start();
  /// Asks the actor to stop; returns at once. New sends fail from now on, and so do queued requests under
  /// fail_pending, each naming `reason` (default: "stop requested") as why the actor stopped.
  void request_stop(ShutdownMode mode, Status reason = Status());
  /// Waits for the actor's thread to end. Never call from the actor's own thread.
  void join();
  /// Waits until the actor has stopped and destroyed its state; unlike join(), any number of threads may wait at
  /// once. Never call from the actor's own thread.
  void wait_stopped();

  // -- observers -------------------------------------------------------------------
  /// The name it was spawned with.
  [[nodiscard]] const std::string& name() const noexcept { return options_.name; }
  /// Where it is in its life.
  [[nodiscard]] ActorState state() const noexcept { return state_.load(std::memory_order_acquire); }
  /// How often it has restarted.
  [[nodiscard]] int restart_count() const noexcept { return restarts_.load(std::memory_order_acquire); }
  /// Why the actor stopped; OK while it runs.
  [[nodiscard]] Status stop_reason() const;
  /// Whether the caller runs on the actor's own thread.
  [[nodiscard]] bool on_actor_thread() const noexcept { return std::this_thread::get_id() == thread_.get_id(); }

 protected:
  // -- what the protocol-typed cell provides ----------------------------------------
  /// Builds the state with the factory, on the actor's thread.
  virtual Status build_state() = 0;
  /// Destroys the state, on the actor's thread.
  virtual void destroy_state() noexcept = 0;
  /// Takes one request if there is one (waiting for it); returns the failure to supervise, OK, or nothing.
  virtual std::optional<Status> process_next() = 0;
  /// Closes the mailbox: later sends fail.
  virtual void close_mailbox() = 0;
  /// Makes a waiting process_next() return.
  virtual void wake() = 0;
  /// Answers every queued request with `reply` without running it.
  virtual void fail_queued(const Status& reply) = 0;
  /// Whether no request is queued.
  [[nodiscard]] virtual bool mailbox_empty() const = 0;

  /// The error a send gets once the mailbox refused it.
  [[nodiscard]] Status describe_send_failure(const Status& push_status) const;

  const ActorOptions options_;  ///< the options the actor was spawned with

 private:
  void run(std::promise<Status>& started);
  /// Applies the supervision policy to `failure`; returns false when the actor must stop.
  bool supervise(Status failure);
  bool restart(Status failure);
  void stop_with(Status reason);
  bool sleep_unless_stopped(std::chrono::milliseconds delay);

  EscalationHandler escalate_;
  std::thread thread_;
  std::atomic<ActorState> state_{ActorState::starting};
  std::atomic<int> restarts_{0};
  RestartTracker restarts_allowed_;

  mutable std::mutex mutex_;
  std::condition_variable stop_cv_;
  std::optional<ShutdownMode> stop_mode_;
  Status stop_reason_;
  std::atomic<bool> stop_requested_{false};
};

template <class... Requests>
template <class Request>
std::optional<Envelope<Request>> Protocol<Requests...>::Handler::take_queued() {
  using Message = QueuedMessage<Protocol<Requests...>>;
  if (mailbox_ == nullptr) return std::nullopt;
  Message* next = mailbox_->peek();
  Envelope<Request>* envelope = next == nullptr ? nullptr : next->template holding<Request>();
  if (envelope == nullptr) return std::nullopt;
  std::optional<Envelope<Request>> taken(std::move(*envelope));
  (void)mailbox_->try_pop();  // what is left of it: moved from
  return taken;
}

template <class P>
class ActorCell;
namespace detail {
class SystemCore;
}  // namespace detail

/// An actor of protocol Protocol<Requests...>: its mailbox and state; System makes them, ActorRef sends to them.
template <class... Requests>
class ActorCell<Protocol<Requests...>> final : public ActorCellBase {
 public:
  using ProtocolType = Protocol<Requests...>;  ///< The protocol the actor serves.
  /// What the actor's state derives from: one handler per request type.
  using Handler = typename ProtocolType::Handler;
  using Message = typename ProtocolType::Message;  ///< One queued request and its reply.
  /// Makes the actor's state, on its thread, at start and at every restart.
  using Factory = std::function<Result<std::unique_ptr<Handler>>()>;

  /// An actor that is not started yet.
  ActorCell(Factory factory, ActorOptions options, EscalationHandler escalate)
      : ActorCellBase(std::move(options), std::move(escalate)),
        mailbox_(options_.mailbox, options_.name),
        factory_(std::move(factory)) {}
  ~ActorCell() override { join(); }

  /// Queues `request` and returns the future of its reply; a refused send fails the future.
  template <class Request>
  Future<response_t<Request>> ask(Request&& request) {
    using R = std::remove_cvref_t<Request>;
    Promise<response_t<R>> promise;
    Future<response_t<R>> future = promise.future();
    Message message(Envelope<R>{std::forward<Request>(request), std::move(promise)});
    if (Status pushed = mailbox_.push(message); !pushed.ok()) message.fail(describe_send_failure(pushed));
    return future;
  }

  /// Queues `request` without a reply; `may_block` lets a full blocking mailbox wait for room.
  template <class Request>
  Status tell(Request&& request, bool may_block) {
    using R = std::remove_cvref_t<Request>;
    Message message(Envelope<R>{std::forward<Request>(request), Promise<response_t<R>>(nullptr)});
    Status pushed = may_block ? mailbox_.push(message) : mailbox_.try_push(message);
    return pushed.ok() ? Status() : describe_send_failure(pushed);
  }

  /// Requests queued now (approximate while senders are busy).
  [[nodiscard]] std::size_t queued() const noexcept { return mailbox_.size_approx(); }

 protected:
  /// Builds the state with the factory; an exception from the factory is an internal error.
  Status build_state() override {
    Result<std::unique_ptr<Handler>> built = invoke_factory();
    if (!built.ok()) return built.status();
    if (!*built) return internal_error("the factory of '" + options_.name + "' returned no state");
    handler_ = std::move(*built);
    handler_->attach_mailbox(&mailbox_);
    return Status();
  }

  /// Destroys the state.
  void destroy_state() noexcept override { handler_.reset(); }

  std::optional<Status> process_next() override {
    if (std::optional<Message> queued = mailbox_.try_pop()) return queued->run(*handler_, options_.name);
    handler_->mailbox_empty();
    IdleHandler idle{*handler_};
    std::optional<Message> message = mailbox_.pop_wait(std::chrono::steady_clock::time_point::max(), idle);
    if (!message) return std::nullopt;
    return message->run(*handler_, options_.name);
  }

  /// Closes the mailbox: later sends fail.
  void close_mailbox() override { mailbox_.close(); }
  /// Makes a waiting pop return.
  void wake() override { mailbox_.wake(); }
  /// Answers every queued request with `reply` without running it.
  void fail_queued(const Status& reply) override {
    while (std::optional<Message> message = mailbox_.try_pop()) {
      message->fail(reply);
    }
  }
  /// Whether no request is queued.
  bool mailbox_empty() const override { return mailbox_.size_approx() == 0; }

 private:
  Result<std::unique_ptr<Handler>> invoke_factory() {
    try {
      return factory_();
    } catch (...) {
      return internal_error("the factory of '" + options_.name + "' threw: " + detail::describe_current_exception());
    }
  }

  // The state, as its mailbox's IdleConsumer.
  struct IdleHandler {
    Handler& handler;
    bool owes_replies() const noexcept { return handler.owes_replies(); }
    void look() { handler.look_after_replies(); }
    void hand_over() { handler.hand_over_replies(); }
  };

  Mailbox<Message> mailbox_;
  Factory factory_;
  std::unique_ptr<Handler> handler_;
};

/// A copyable address of an actor. Sending to a stopped actor fails with an error naming why it stopped.
template <class P>
class ActorRef {
 public:
  using Cell = ActorCell<P>;  ///< The actor this refers to.

  ActorRef() = default;
  /// A reference to `cell`.
  explicit ActorRef(std::shared_ptr<Cell> cell) : cell_(std::move(cell)) {}

  /// Sends a request and returns the future of its reply.
  template <class Request>
  requires P::template accepts<std::remove_cvref_t<Request>> Future<response_t<std::remove_cvref_t<Request>>> ask(
      Request&& request) const {
    if (!cell_)
      return make_ready_future<response_t<std::remove_cvref_t<Request>>>(
          failed_precondition("ask() on an empty actor reference"));
    return cell_->ask(std::forward<Request>(request));
  }

  /// Sends without a reply; the Status says whether it was queued (the mailbox's overflow policy applies).
  template <class Request>
  requires P::template accepts<std::remove_cvref_t<Request>> Status tell(Request&& request) const {
    if (!cell_) return failed_precondition("tell() on an empty actor reference");
    return cell_->tell(std::forward<Request>(request), true);
  }

  /// Like tell(), but never blocks, whatever the overflow policy.
  template <class Request>
  requires P::template accepts<std::remove_cvref_t<Request>> Status try_tell(Request&& request) const {
    if (!cell_) return failed_precondition("try_tell() on an empty actor reference");
    return cell_->tell(std::forward<Request>(request), false);
  }

  /// Asks the actor to stop (see ShutdownMode); returns at once.
  void stop(ShutdownMode mode = ShutdownMode::drain, Status reason = Status()) const {
    if (cell_) cell_->request_stop(mode, std::move(reason));
  }
  /// Waits for the actor's thread to end. Never call from the actor's own thread.
  void join() const {
    if (cell_) cell_->join();
  }

  /// Whether this refers to an actor.
  [[nodiscard]] bool valid() const noexcept { return cell_ != nullptr; }
  /// The actor's name.
  [[nodiscard]] const std::string& name() const { return cell_->name(); }
  /// Where the actor is in its life; stopped for an empty reference.
  [[nodiscard]] ActorState state() const { return cell_ ? cell_->state() : ActorState::stopped; }
  /// How often the actor has restarted.
  [[nodiscard]] int restart_count() const { return cell_ ? cell_->restart_count() : 0; }
  /// Why the actor stopped; OK while it runs.
  [[nodiscard]] Status stop_reason() const { return cell_ ? cell_->stop_reason() : Status(); }
  /// Requests queued now (approximate).
  [[nodiscard]] std::size_t queued() const { return cell_ ? cell_->queued() : 0; }

  /// Whether both refer to the same actor.
  friend bool operator==(const ActorRef& a, const ActorRef& b) noexcept { return a.cell_ == b.cell_; }

 private:
  friend class detail::SystemCore;
  std::shared_ptr<Cell> cell_;
};

}  // namespace accel
