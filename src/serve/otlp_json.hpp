// accel::serve::SpanRecord and otlp_json — spans as OTLP/HTTP's JSON encoding writes them: the body of a POST to a
// collector's /v1/traces (an ExportTraceServiceRequest, opentelemetry-proto's collector/trace/v1; its JSON mapping
// is the OTLP specification's "JSON Protobuf Encoding"):
//
//   {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "accel-serve"}}]},
//     "scopeSpans": [{"scope": {"name": "accel.serve"}, "spans": [
//       {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
//        "parentSpanId": "eee19b7ec3c1b173", "name": "POST /embed", "kind": 2,
//        "startTimeUnixNano": "1544712660000000000", "endTimeUnixNano": "1544712661000000000",
//        "attributes": [{"key": "http.response.status_code", "value": {"intValue": "200"}}],
//        "status": {}}]}]}]}
//
// As that mapping says: trace and span ids are lowercase hex (not base64), enums (kind, status code) are integers,
// 64-bit integers (times, intValue) are decimal strings, field names are lowerCamelCase, and a field at its default
// (no parent, no attributes) is left out.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "serve/traceparent.hpp"

namespace accel::serve {

// OTLP's Span.SpanKind values.
enum class SpanKind : std::uint8_t { internal = 1, server = 2 };

// An attribute's value: OTLP's AnyValue of a string, an integer, a double or a bool.
using AttributeValue = std::variant<std::string, std::int64_t, double, bool>;

struct SpanRecord {
  TraceId trace_id{};
  SpanId span_id{};
  SpanId parent_span_id{};  // all zeros: a root span
  std::string name;
  SpanKind kind = SpanKind::internal;
  std::uint64_t start_unix_nanos = 0, end_unix_nanos = 0;
  std::vector<std::pair<std::string, AttributeValue>> attributes;
  bool error = false;  // Status.code ERROR (2); otherwise the status is left unset
};

// The ExportTraceServiceRequest of `spans`, all of one resource (service.name = `service_name`) and one
// instrumentation scope ("accel.serve").
[[nodiscard]] std::string otlp_json(std::span<const SpanRecord> spans, std::string_view service_name);

}  // namespace accel::serve
