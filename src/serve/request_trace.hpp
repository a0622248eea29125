// accel::serve::RequestTrace — what one request did, filled in as it goes through its route (RouteContext::trace)
// and read once its response is written: by the access log (access_log.hpp) and, with --otlp-endpoint, by the
// request's spans (request_tracing.hpp).
//
// It lives in a thread-local of the server and is reset per request; it holds no heap memory but the model's name,
// so recording a stage costs two clock reads the route makes anyway and a store into a fixed array, traced or not.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

#include "serve/metrics.hpp"
#include "serve/traceparent.hpp"

namespace accel::serve {

// One stage of a request (tokenize, queue, compute or serialize), on the steady clock.
struct StageTime {
  Stage stage = Stage::queue;
  std::chrono::steady_clock::time_point start, end;
};

struct RequestTrace {
  static constexpr std::size_t kMaxStages = 16;  // a route runs a few stages; more are not recorded

  std::string model;
  std::uint64_t inputs = 0;
  std::uint64_t tokens = 0;
  double total_seconds = 0, queue_seconds = 0, tokenize_seconds = 0, compute_seconds = 0, serialize_seconds = 0;
  // The stages it went through, in the order they began.
  std::array<StageTime, kMaxStages> stages{};
  std::uint8_t stage_count = 0;
  // Its trace, once known (when the response is written): the traceparent's, or a new one when traced; zero when
  // neither (no tracing and no valid traceparent). span_id is the server span's (zero when not traced).
  TraceId trace_id{};
  SpanId span_id{};

  void record(Stage stage, std::chrono::steady_clock::time_point start,
              std::chrono::steady_clock::time_point end) noexcept {
    if (stage_count < kMaxStages) stages[stage_count++] = {stage, start, end};
  }
};

}  // namespace accel::serve
