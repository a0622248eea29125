#include "serve/traceparent.hpp"

#include <algorithm>
#include <cstddef>
#include <span>

namespace accel::serve {
namespace {

constexpr std::size_t kVersion00Size = 55;  // 2 + 1 + 32 + 1 + 16 + 1 + 2
constexpr std::size_t kTraceIdAt = 3, kParentIdAt = 36, kFlagsAt = 53;

// The value of a lowercase hex digit; -1 for anything else (an uppercase digit included, as the spec says).
int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Reads 2 * bytes.size() lowercase hex digits of `text` at `at` into `bytes`; false if any is not one.
bool read_hex(std::string_view text, std::size_t at, std::span<std::uint8_t> bytes) noexcept {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const int high = hex_value(text[at + 2 * i]);
    const int low = hex_value(text[at + 2 * i + 1]);
    if (high < 0 || low < 0) return false;
    bytes[i] = static_cast<std::uint8_t>(high << 4 | low);
  }
  return true;
}

template <std::size_t N>
std::string hex_of(const std::array<std::uint8_t, N>& bytes) {
  constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * N, '0');
  for (std::size_t i = 0; i < N; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

}  // namespace

std::optional<TraceContext> parse_traceparent(std::string_view header) noexcept {
  if (header.size() < kVersion00Size) return std::nullopt;
  std::uint8_t version = 0;
  if (!read_hex(header, 0, std::span(&version, 1)) || version == 0xff) return std::nullopt;
  // Version 00 is exactly its fields; a later one may go on after the flags, behind a dash.
  if (version == 0 ? header.size() != kVersion00Size : header.size() > kVersion00Size && header[kVersion00Size] != '-')
    return std::nullopt;
  if (header[kTraceIdAt - 1] != '-' || header[kParentIdAt - 1] != '-' || header[kFlagsAt - 1] != '-')
    return std::nullopt;
  TraceContext context{.version = version};
  if (!read_hex(header, kTraceIdAt, context.trace_id) || !read_hex(header, kParentIdAt, context.parent_id) ||
      !read_hex(header, kFlagsAt, std::span(&context.flags, 1)))
    return std::nullopt;
  if (is_zero(context.trace_id) || is_zero(context.parent_id)) return std::nullopt;
  return context;
}

std::string format_traceparent(const TraceContext& context) {
  constexpr char kDigits[] = "0123456789abcdef";
  const char flags[] = {kDigits[context.flags >> 4], kDigits[context.flags & 0xf], '\0'};
  return "00-" + to_hex(context.trace_id) + "-" + to_hex(context.parent_id) + "-" + flags;
}

std::string to_hex(const TraceId& id) { return hex_of(id); }
std::string to_hex(const SpanId& id) { return hex_of(id); }

bool is_zero(const TraceId& id) noexcept {
  return std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; });
}
bool is_zero(const SpanId& id) noexcept {
  return std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; });
}

}  // namespace accel::serve
