/// @file
/// A protocol is the typed interface of an actor: the list of request types it accepts. Each request is a
/// plain struct (handles, shapes, dtypes, scalars, options — no closures, no pointers the receiver did not
/// issue) that names its reply type:
///
/// @code
///   struct Allocate {
///     static constexpr const char* kName = "Allocate";
///     using Response = BufferHandle;
///     DType dtype = DType::f32;
///     std::uint64_t count = 0;
///   };
///   using DeviceProtocol = accel::Protocol<Allocate, Free, ...>;
/// @endcode
///
/// An actor's state implements DeviceProtocol::Handler: one `handle` per request type. A state that misses
/// one is abstract, so spawning it does not compile — the compiler checks coverage.
#pragma once

#include <optional>
#include <string_view>
#include <type_traits>

#include "accel/core/future.hpp"
#include "accel/core/result.hpp"

namespace accel {

template <class Request>
using response_t = typename Request::Response;  ///< The reply type of a request (its `Response`).

/// The request's `kName`, or "request" for a type without one: what errors and logs call it.
template <class Request>
constexpr std::string_view request_name() {
  if constexpr (requires { Request::kName; })
    return Request::kName;
  else
    return "request";
}

/// One queued request and where its reply goes. `reply` is empty for tell().
template <class Request>
struct Envelope {
  Request request;                     ///< the request
  Promise<response_t<Request>> reply;  ///< where its reply goes
};

/// The handler of one request type.
template <class Request>
class Handles {
 public:
  using Response = response_t<Request>;
  virtual ~Handles() = default;

  /// The synchronous handler: the returned Result is the reply.
  virtual Result<Response> handle(Request& request) = 0;

  /// What the actor calls. Handlers that reply later (when GPU work completes) override this, keep `reply`
  /// and fulfil it then. The returned Status is what the supervisor judges: an error here is a failure of the
  /// actor, not only of the request.
  virtual Status dispatch(Request& request, Promise<Response>& reply) {
    Result<Response> result = handle(request);
    Status status = result.status();
    reply.set(std::move(result));
    return status;
  }
};

template <class P>
class QueuedMessage;  // accel/core/message.hpp
template <class T>
class Mailbox;  // accel/core/mailbox.hpp

/// A list of request types: what a family exports (`include/accel/libs/<family>/requests.hpp`), and what protocols
/// are concatenated from.
template <class... Requests>
struct RequestList {};

namespace detail {
template <class... Lists>
struct ConcatLists;
template <>
struct ConcatLists<> {
  using type = RequestList<>;
};
template <class... A>
struct ConcatLists<RequestList<A...>> {
  using type = RequestList<A...>;
};
template <class... A, class... B, class... Rest>
struct ConcatLists<RequestList<A...>, RequestList<B...>, Rest...> {
  using type = typename ConcatLists<RequestList<A..., B...>, Rest...>::type;
};
}  // namespace detail

/// One RequestList of every request of `Lists`, in order.
template <class... Lists>
using ConcatRequests = typename detail::ConcatLists<Lists...>::type;

/// The typed interface of an actor: the request types it accepts (see the file's description).
template <class... Requests>
struct Protocol {
  static_assert(sizeof...(Requests) > 0, "a protocol needs at least one request type");

  /// One queued request of this protocol, of any of its types (accel/core/message.hpp).
  using Message = QueuedMessage<Protocol>;

  /// What an actor's state derives from.
  class Handler : public Handles<Requests>... {
   public:
    ~Handler() override = default;
    /// Whether replies this state deferred (dispatch() kept the promise) are still to be given. While they are,
    /// the actor's thread stays awake for the next request (MailboxOptions::stay_awake). Called on that thread.
    [[nodiscard]] virtual bool owes_replies() const noexcept { return false; }
    /// Called on that thread when it finds the mailbox empty, before it waits for the next request: a state that
    /// holds replies back to answer a burst of requests together answers them now, or starts to watch their work.
    virtual void mailbox_empty() {}
    /// Called on that thread on every look while it waits for the next request: a state that watches the work of
    /// its deferred replies itself answers what has finished (Mailbox's IdleConsumer).
    virtual void look_after_replies() {}
    /// Called on that thread once as the wait ends, before it sleeps or runs the next request: what the state still
    /// watches goes to whoever answers it while the thread is busy or asleep. Whoever runs a state calls it after
    /// mailbox_empty() before anything else.
    virtual void hand_over_replies() {}

    /// The request queued next, taken out of the mailbox, if it is a `Request`: a state that does the work of
    /// consecutive requests of one type together (a CUDA stream's burst of linked steps, one launch) takes them while
    /// it handles the first, and answers each through its envelope's reply. Empty when nothing is queued, the next
    /// request is of another type, or no actor runs the state. On the actor's thread only (accel/core/actor.hpp).
    template <class Request>
    std::optional<Envelope<Request>> take_queued();

    /// The mailbox take_queued() reads: set by the actor that runs this state.
    void attach_mailbox(Mailbox<QueuedMessage<Protocol>>* mailbox) noexcept { mailbox_ = mailbox; }

   private:
    Mailbox<QueuedMessage<Protocol>>* mailbox_ = nullptr;
  };

  /// Whether `Request` is one of the protocol's request types.
  template <class Request>
  static constexpr bool accepts = (std::is_same_v<Request, Requests> || ...);
};

namespace detail {
template <class List>
struct ProtocolOfList;
template <class... Requests>
struct ProtocolOfList<RequestList<Requests...>> {
  using type = Protocol<Requests...>;
};
}  // namespace detail

/// The protocol that accepts every request of `List`.
template <class List>
using ProtocolOf = typename detail::ProtocolOfList<List>::type;

}  // namespace accel
