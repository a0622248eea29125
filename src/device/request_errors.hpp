// A library request's errors name the request first, once: "blas::Gemv: operand 'a' is a null buffer handle".
// The families' own checks mostly do already; the device's checks of operands (null, stale, out of range, dtype,
// aliasing) and some libraries' refusals do not know which request they check.
#pragma once

#include <string_view>

#include "accel/core/result.hpp"

namespace accel::device {

[[nodiscard]] inline Status named_for(std::string_view request, Status status) {
  if (status.ok() || status.message().starts_with(request)) return status;
  return status.with_context(request);
}

template <class T>
[[nodiscard]] Result<T> named_for(std::string_view request, Result<T> result) {
  if (result.ok()) return result;
  return named_for(request, result.status());
}

}  // namespace accel::device
