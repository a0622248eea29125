// accel::serve::TraceContext — the W3C Trace Context `traceparent` request header
// (https://www.w3.org/TR/trace-context/#traceparent-header), parsed strictly:
//
//   traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
//                ^^ version  ^^ trace-id (32 hex)    ^^ parent-id (16) ^^ trace-flags
//
// Every field is lowercase hex of its exact width, the separators are single dashes, and neither id is all zeros.
// Version 00 is exactly 55 characters. Version ff is invalid. A later version is read as the spec says a parser of
// version 00 reads one: at least 55 characters, the three fields of version 00 at their places, and after the
// flags either the end or a dash (what follows is that version's and is ignored). Anything else is not a
// traceparent, and the server starts a new trace rather than refusing the request.
//
// The parser allocates nothing (ids are fixed arrays), so that the server may read the header of every request.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace accel::serve {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

struct TraceContext {
  TraceId trace_id{};
  SpanId parent_id{};        // the caller's span: the parent of the server's span
  std::uint8_t flags = 0;    // trace-flags; bit 0 is `sampled`
  std::uint8_t version = 0;  // 00, or the later version the header said

  [[nodiscard]] bool sampled() const noexcept { return (flags & 1u) != 0; }
  bool operator==(const TraceContext&) const = default;
};

// The context `header` carries; nothing when it is not a valid traceparent (see above).
[[nodiscard]] std::optional<TraceContext> parse_traceparent(std::string_view header) noexcept;

// The header of `context`, as the version 00 writes it (a later version's is written as 00: the only one we know).
[[nodiscard]] std::string format_traceparent(const TraceContext& context);

// Lowercase hex of an id, as traceparent and OTLP's JSON write trace and span ids.
[[nodiscard]] std::string to_hex(const TraceId& id);
[[nodiscard]] std::string to_hex(const SpanId& id);

// Whether an id is all zeros (an invalid id: "no parent" for a span).
[[nodiscard]] bool is_zero(const TraceId& id) noexcept;
[[nodiscard]] bool is_zero(const SpanId& id) noexcept;

}  // namespace accel::serve
