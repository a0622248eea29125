// GoogleTest matchers for Status and Result: tests name the error they expect (there is deliberately no
// "is not OK" matcher).
#pragma once

#include <gmock/gmock.h>

#include "accel/core/result.hpp"

namespace accel::testing {

template <class T>
const Status& status_of(const Result<T>& r, Status& storage) {
  storage = r.status();
  return storage;
}
inline const Status& status_of(const Status& s, Status&) { return s; }

MATCHER(IsOk, "is OK") {
  Status storage;
  const Status& s = status_of(arg, storage);
  *result_listener << s.to_string();
  return s.ok();
}

MATCHER_P(StatusIs, code, "has code " + std::string(to_string(code))) {
  Status storage;
  const Status& s = status_of(arg, storage);
  *result_listener << s.to_string();
  return s.code() == code;
}

MATCHER_P2(StatusIs, code, substring,
           "has code " + std::string(to_string(code)) + " and mentions '" + substring + "'") {
  Status storage;
  const Status& s = status_of(arg, storage);
  *result_listener << s.to_string();
  return s.code() == code && s.message().find(substring) != std::string_view::npos;
}

}  // namespace accel::testing
