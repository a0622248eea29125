// The handlers of every library request, written once per device kind: OperationHandlers<Self, Base, List>
// implements Handles<Request> for each Request of List by calling Self's generic
//   Result<Response> handle_operation<Request>(Request&)          (the synchronous form)
//   Status dispatch_operation<Request>(Request&, Promise<Response>&)  (replying later where the device does)
// so that adding a family to LibraryRequests (include/accel/device/protocol.hpp) touches no device.
#pragma once

#include "accel/core/protocol.hpp"

namespace accel::device {

template <class Self, class Base, class List>
class OperationHandlers;

template <class Self, class Base>
class OperationHandlers<Self, Base, RequestList<>> : public Base {};

template <class Self, class Base, class Request, class... Rest>
class OperationHandlers<Self, Base, RequestList<Request, Rest...>>
    : public OperationHandlers<Self, Base, RequestList<Rest...>> {
 public:
  Result<response_t<Request>> handle(Request& request) override {
    return static_cast<Self&>(*this).template handle_operation<Request>(request);
  }
  Status dispatch(Request& request, Promise<response_t<Request>>& reply) override {
    return static_cast<Self&>(*this).template dispatch_operation<Request>(request, reply);
  }
};

// Calls `f.template operator()<Request>()` for each Request of List.
template <class List>
struct ForEachRequest;
template <class... Requests>
struct ForEachRequest<RequestList<Requests...>> {
  template <class F>
  static void apply(F&& f) {
    (f.template operator()<Requests>(), ...);
  }
};

}  // namespace accel::device
