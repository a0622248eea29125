#include "serve/otlp_json.hpp"

#include <nlohmann/json.hpp>

namespace accel::serve {
namespace {

using nlohmann::json;

json any_value(const AttributeValue& value) {
  struct Visit {
    json operator()(const std::string& v) const { return {{"stringValue", v}}; }
    json operator()(std::int64_t v) const { return {{"intValue", std::to_string(v)}}; }
    json operator()(double v) const { return {{"doubleValue", v}}; }
    json operator()(bool v) const { return {{"boolValue", v}}; }
  };
  return std::visit(Visit{}, value);
}

json span_json(const SpanRecord& span) {
  json out{{"traceId", to_hex(span.trace_id)},
           {"spanId", to_hex(span.span_id)},
           {"name", span.name},
           {"kind", static_cast<int>(span.kind)},
           {"startTimeUnixNano", std::to_string(span.start_unix_nanos)},
           {"endTimeUnixNano", std::to_string(span.end_unix_nanos)}};
  if (!is_zero(span.parent_span_id)) out["parentSpanId"] = to_hex(span.parent_span_id);
  if (!span.attributes.empty()) {
    json attributes = json::array();
    for (const auto& [key, value] : span.attributes) attributes.push_back({{"key", key}, {"value", any_value(value)}});
    out["attributes"] = std::move(attributes);
  }
  out["status"] = span.error ? json{{"code", 2}} : json::object();
  return out;
}

}  // namespace

std::string otlp_json(std::span<const SpanRecord> spans, std::string_view service_name) {
  json list = json::array();
  for (const SpanRecord& span : spans) list.push_back(span_json(span));
  const json resource{
      {"attributes", json::array({{{"key", "service.name"}, {"value", {{"stringValue", service_name}}}}})}};
  const json body{{"resourceSpans", json::array({{{"resource", resource},
                                                  {"scopeSpans", json::array({{{"scope", {{"name", "accel.serve"}}},
                                                                               {"spans", std::move(list)}}})}}})}};
  // A name or model that is not UTF-8 must not make the batch unwritable.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace accel::serve
