#include "serve/request_tracing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <thread>

namespace accel::serve {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view stage_name(Stage stage) {
  switch (stage) {
    case Stage::queue: return "queue";
    case Stage::tokenize: return "tokenize";
    case Stage::compute: return "compute";
    case Stage::serialize: return "serialize";
    default: return "stage";
  }
}

// Random ids from a generator per thread, seeded from the system's entropy: ids need to be unique, not secret.
template <class Id>
Id random_id() {
  thread_local std::mt19937_64 generator{[] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device()};
    return std::mt19937_64(seed);
  }()};
  Id id{};
  while (is_zero(id)) {
    for (std::size_t i = 0; i < id.size(); i += 8) {
      const std::uint64_t bits = generator();
      for (std::size_t j = 0; j < 8 && i + j < id.size(); ++j) id[i + j] = static_cast<std::uint8_t>(bits >> 8 * j);
    }
  }
  return id;
}

}  // namespace

std::vector<SpanRecord> request_spans(const RequestTrace& trace, const AnsweredRequest& request,
                                      const TraceContext* parent, Clock::time_point steady_now,
                                      std::uint64_t unix_now_nanos) {
  const auto unix_nanos = [&](Clock::time_point at) {
    const auto offset = std::chrono::duration_cast<std::chrono::nanoseconds>(at - steady_now).count();
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(unix_now_nanos) + offset);
  };
  std::vector<SpanRecord> spans;
  spans.reserve(1 + trace.stage_count);
  const bool routed = request.route != "other";
  SpanRecord& server = spans.emplace_back();
  server.trace_id = trace.trace_id;
  server.span_id = trace.span_id;
  if (parent) server.parent_span_id = parent->parent_id;
  server.name = routed ? fmt::format("{} {}", request.method, request.route) : std::string(request.method);
  server.kind = SpanKind::server;
  server.start_unix_nanos = unix_nanos(request.began);
  server.end_unix_nanos = unix_nanos(request.ended);
  server.error = request.status >= 500;
  server.attributes = {{"http.request.method", std::string(request.method)},
                       {"http.response.status_code", std::int64_t{request.status}}};
  if (routed) server.attributes.emplace_back("http.route", std::string(request.route));
  if (!trace.model.empty()) {
    server.attributes.emplace_back("accel.model", trace.model);
    server.attributes.emplace_back("accel.inputs", static_cast<std::int64_t>(trace.inputs));
    server.attributes.emplace_back("accel.tokens", static_cast<std::int64_t>(trace.tokens));
  }
  for (std::size_t i = 0; i < trace.stage_count; ++i) {
    const StageTime& stage = trace.stages[i];
    SpanRecord& child = spans.emplace_back();
    child.trace_id = trace.trace_id;
    child.span_id = random_id<SpanId>();
    child.parent_span_id = trace.span_id;
    child.name = stage_name(stage.stage);
    child.kind = SpanKind::internal;
    child.start_unix_nanos = unix_nanos(stage.start);
    child.end_unix_nanos = unix_nanos(stage.end);
  }
  return spans;
}

Result<std::unique_ptr<RequestTracer>> RequestTracer::start(const TracingOptions& options) {
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<OtlpExporter> exporter, OtlpExporter::start(options));
  return std::unique_ptr<RequestTracer>(new RequestTracer(std::move(exporter)));
}

void RequestTracer::identify(RequestTrace& trace, const std::optional<TraceContext>& parent) {
  trace.trace_id = parent ? parent->trace_id : random_id<TraceId>();
  trace.span_id = random_id<SpanId>();
}

void RequestTracer::finish(const RequestTrace& trace, const AnsweredRequest& request,
                           const std::optional<TraceContext>& parent) {
  const auto unix_now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  exporter_->submit(
      request_spans(trace, request, parent ? &*parent : nullptr, Clock::now(), static_cast<std::uint64_t>(unix_now)));
}

std::string RequestTracer::render_metrics() const {
  const ExportCounts counts = exporter_->counts();
  std::string out;
  const auto counter = [&](std::string_view name, std::string_view help, std::uint64_t value) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} counter\n{} {}\n", name, help, name, name, value);
  };
  counter("accel_serve_trace_spans_exported_total", "Spans the OTLP collector took.", counts.exported);
  counter("accel_serve_trace_spans_dropped_total", "Spans dropped because the export queue was full.", counts.dropped);
  counter("accel_serve_trace_spans_failed_total", "Spans of exports the collector refused or that failed.",
          counts.failed);
  counter("accel_serve_trace_export_failures_total", "Exports (POSTs of a batch of spans) that failed.",
          counts.failed_batches);
  return out;
}

}  // namespace accel::serve
