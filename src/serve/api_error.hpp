// accel::serve::ApiError — a request the server answers with an error: the HTTP status, a message naming what was
// wrong (the field, the limit), and the field and a short machine-readable code. Each endpoint writes it in its
// own API's shape: OpenAI's {"error": {"message", "type", "param", "code"}} or TEI's {"error", "error_type"}.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "accel/core/status.hpp"

namespace accel::serve {

struct ApiError {
  int status = 400;
  std::string message;
  std::string param;  // the request field at fault; empty when none
  std::string code;   // e.g. "invalid_json", "invalid_type", "too_many_inputs", "queue_full", "context_lost"

  // What an error of the model's answers: invalid_argument is the request's fault (400); resource_exhausted
  // (memory) may pass (429); unavailable, context_lost, stale_handle and failed_precondition are the device's
  // state (503); anything else is a server error (500). The code is the accel code's name.
  static ApiError from(const Status& status);
  // What the queue's refusal answers: 429 queue_full when it is full, 503 shutting_down once the server stops.
  static ApiError refused(const Status& status);

  [[nodiscard]] std::string openai_body() const;
  [[nodiscard]] std::string tei_body() const;
};

// 400 invalid_type naming `field`: it must be `expected`.
[[nodiscard]] ApiError bad_type(const std::string& field, std::string_view expected);

// Whose conventions a route follows, its error body's shape among them.
enum class ApiFamily : std::uint8_t { openai, tei };

// `error` in the family's JSON shape.
[[nodiscard]] std::string error_body(ApiFamily family, const ApiError& error);

// A parsed request or the error to answer instead.
template <class T>
using ApiResult = std::variant<T, ApiError>;

}  // namespace accel::serve
