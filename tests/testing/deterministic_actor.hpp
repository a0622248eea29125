// accel::testing::DeterministicActor<P> — an actor's state driven on the test thread, one request at a time.
//
// In the spirit of CAF's deterministic test coordinator: no thread, no timing. ask() and tell() queue a request
// as an ActorRef would, and nothing runs until the test calls step(), which runs the oldest request's handler on
// the calling thread through run_handler (the function the actor thread calls) and returns the Status the
// supervisor would judge. The state comes from the same factory the actor would be spawned with.
//
//   DeterministicActor<CounterProtocol> counter(make_counter, "counter");
//   ASSERT_THAT(counter.start(), IsOk());
//   Future<std::int64_t> total = counter.ask(Add{.amount = 2});
//   EXPECT_FALSE(total.ready());           // queued, not run
//   EXPECT_THAT(*counter.step(), IsOk());  // runs Add here, now
//   EXPECT_EQ(*total.wait(), 2);
//
// Not modelled: the mailbox's capacity and overflow policy, and supervision itself — a test asks directive_for()
// what the policy decides about a failure and calls restart() when it wants the state rebuilt. A handler that
// hands its reply to another thread replies when that thread does, as it would in an actor.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "accel/core/actor.hpp"

namespace accel::testing {

template <class P>
class DeterministicActor {
 public:
  using Handler = typename P::Handler;
  using Message = typename P::Message;
  using Factory = typename ActorCell<P>::Factory;

  explicit DeterministicActor(Factory factory, std::string name = "actor", SupervisionPolicy policy = {})
      : factory_(std::move(factory)), name_(std::move(name)), policy_(std::move(policy)) {}

  // Builds the state from the factory; returns the factory's error, as System::spawn would.
  Status start() {
    Result<std::unique_ptr<Handler>> built = factory_();
    if (!built.ok()) return built.status();
    if (!*built) return internal_error("the factory of '" + name_ + "' returned no state");
    state_ = std::move(*built);
    return Status();
  }

  // Destroys the state and builds a new one, as a restart does; queued requests stay queued.
  Status restart() {
    state_.reset();
    return start();
  }

  // Queues a request; its future is answered when step() reaches it.
  template <class Request>
  requires P::template accepts<std::remove_cvref_t<Request>> Future<response_t<std::remove_cvref_t<Request>>> ask(
      Request&& request) {
    using R = std::remove_cvref_t<Request>;
    Promise<response_t<R>> reply;
    Future<response_t<R>> future = reply.future();
    queue_.emplace_back(Envelope<R>{std::forward<Request>(request), std::move(reply)});
    return future;
  }

  // Queues a request whose reply nobody wants.
  template <class Request>
  requires P::template accepts<std::remove_cvref_t<Request>> void tell(Request&& request) {
    using R = std::remove_cvref_t<Request>;
    queue_.emplace_back(Envelope<R>{std::forward<Request>(request), Promise<response_t<R>>(nullptr)});
  }

  // Runs the oldest queued request on this thread and returns what the supervisor would judge; nothing when no
  // request is queued. Precondition: start() succeeded.
  std::optional<Status> step() {
    if (queue_.empty()) return std::nullopt;
    Message message = std::move(queue_.front());
    queue_.pop_front();
    return message.run(*state_, name_);
  }

  [[nodiscard]] std::size_t queued() const noexcept { return queue_.size(); }
  [[nodiscard]] Directive directive_for(const Status& failure) const { return policy_.decide(failure.code()); }

  // The state itself, for a test to look at; downcast to the concrete state type.
  [[nodiscard]] Handler& state() { return *state_; }

 private:
  Factory factory_;
  std::string name_;
  SupervisionPolicy policy_;
  std::unique_ptr<Handler> state_;
  std::deque<Message> queue_;
};

}  // namespace accel::testing
