// The W3C traceparent parser (serve/traceparent.hpp), which reads a header of every request `accel serve --otlp-
// endpoint` answers: any bytes, as cpp-httplib hands the header's value over. What it accepts must keep the spec's
// rules (non-zero ids, at least 55 characters, version ff never, version 00 exactly 55), and written back as version
// 00 it must parse to the same ids and flags (the very header, for version 00).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "serve/traceparent.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel::serve;
  const std::string_view header(reinterpret_cast<const char*>(data), size);
  const std::optional<TraceContext> context = parse_traceparent(header);
  if (!context) return 0;
  if (size < 55 || context->version == 0xff || (context->version == 0 && size != 55)) std::abort();
  if (is_zero(context->trace_id) || is_zero(context->parent_id)) std::abort();
  const std::string written = format_traceparent(*context);
  const std::optional<TraceContext> again = parse_traceparent(written);
  if (!again || again->trace_id != context->trace_id || again->parent_id != context->parent_id ||
      again->flags != context->flags || again->version != 0)
    std::abort();
  if (context->version == 0 && written != header) std::abort();
  // Every id the parser read is the header's own text.
  if (header.substr(3, 32) != to_hex(context->trace_id) || header.substr(36, 16) != to_hex(context->parent_id))
    std::abort();
  return 0;
}
