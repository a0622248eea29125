/// @file
/// One queued request of a protocol, whatever its type: what an actor's mailbox holds. The envelope (the request
/// and where its reply goes) is stored in place, in room sized for the protocol's largest envelope, next to the
/// operations the mailbox and the actor need, chosen when the message was made.
///
/// Not a std::variant over the protocol's requests: a variant's move and destructor visit every alternative, so a
/// translation unit that sent one device request compiled the moves and destructors of all ~80 of them (5 s of
/// every test's compile at -O3). Here a sender instantiates only its own request's operations.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "accel/core/protocol.hpp"

namespace accel {

/// Runs `state`'s handler for one request, as an actor's thread does: the handler replies through
/// `envelope.reply` and returns the Status the supervisor judges; an exception that escapes it becomes an
/// `internal` reply and failure. Public so that a state can be driven without a thread, one request at a time
/// (tests/testing/deterministic_actor.hpp).
template <class Request>
Status run_handler(std::type_identity_t<Handles<Request>>& state, Envelope<Request>& envelope,
                   std::string_view actor_name) {
  try {
    return state.dispatch(envelope.request, envelope.reply);
  } catch (...) {
    Status failure = internal_error(std::string(request_name<Request>()) + " handler of '" + std::string(actor_name) +
                                    "' threw: " + detail::describe_current_exception());
    envelope.reply.set(failure);
    return failure;
  }
}

/// One queued request of Protocol<Requests...> and its reply, stored in place (see the file's description).
template <class... Requests>
class QueuedMessage<Protocol<Requests...>> {
 public:
  using Handler = typename Protocol<Requests...>::Handler;  ///< What runs the request: the actor's state.

  /// A message holding `envelope`, moved in.
  template <class Request>
  requires Protocol<Requests...>::template accepts<Request> explicit QueuedMessage(Envelope<Request>&& envelope)
      : operations_(&kOperations<Request>) {
    ::new (static_cast<void*>(storage_)) Envelope<Request>(std::move(envelope));
  }
  /// Moves the envelope; `other` is left to be destroyed.
  QueuedMessage(QueuedMessage&& other) noexcept : operations_(other.operations_) {
    operations_->move(storage_, other.storage_);
  }
  QueuedMessage(const QueuedMessage&) = delete;
  QueuedMessage& operator=(const QueuedMessage&) = delete;
  QueuedMessage& operator=(QueuedMessage&&) = delete;
  ~QueuedMessage() { operations_->destroy(storage_); }

  /// Runs the handler of the request's type on `state` (run_handler) and returns what the supervisor judges.
  Status run(Handler& state, std::string_view actor_name) { return operations_->run(storage_, state, actor_name); }
  /// Answers the request with `reply` without running it.
  void fail(const Status& reply) { operations_->fail(storage_, reply); }
  /// The envelope, if the message holds a `Request`.
  template <class Request>
  requires Protocol<Requests...>::template accepts<Request> Envelope<Request>* holding() noexcept {
    return operations_->index == index_of<Request>() ? &envelope_in<Request>(storage_) : nullptr;
  }

 private:
  struct Operations {
    // The request type's place in the protocol: the same in every translation unit and shared library, where the
    // address of its Operations need not be.
    std::size_t index;
    Status (*run)(void* storage, Handler& state, std::string_view actor_name);
    void (*fail)(void* storage, const Status& reply);
    void (*move)(void* to, void* from) noexcept;
    void (*destroy)(void* storage) noexcept;
  };

  template <class Request>
  static Envelope<Request>& envelope_in(void* storage) noexcept {
    return *std::launder(static_cast<Envelope<Request>*>(storage));
  }

  template <class Request>
  static constexpr std::size_t index_of() noexcept {
    constexpr bool kIs[] = {std::is_same_v<Request, Requests>...};
    return static_cast<std::size_t>(std::find(std::begin(kIs), std::end(kIs), true) - std::begin(kIs));
  }

  template <class Request>
  static constexpr Operations kOperations{
      .index = index_of<Request>(),
      .run =
          [](void* storage, Handler& state, std::string_view actor_name) {
            return run_handler<Request>(state, envelope_in<Request>(storage), actor_name);
          },
      .fail = [](void* storage, const Status& reply) { envelope_in<Request>(storage).reply.set(reply); },
      .move = [](void* to,
                 void* from) noexcept { ::new (to) Envelope<Request>(std::move(envelope_in<Request>(from))); },
      .destroy = [](void* storage) noexcept { envelope_in<Request>(storage).~Envelope<Request>(); },
  };

  alignas(Envelope<Requests>...) std::byte storage_[std::max({sizeof(Envelope<Requests>)...})];
  const Operations* operations_;
};

}  // namespace accel
