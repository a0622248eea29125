// accel::serve::RequestTracer — `accel serve --otlp-endpoint`: each request answered becomes a server span with a
// child span per stage it went through, sent to an OpenTelemetry collector by an OtlpExporter (otlp_exporter.hpp).
//
//   POST /embed                  kind server; from the request's first bytes to its response written
//     ├ tokenize                 on the request's thread
//     ├ queue                    waiting for its batch
//     ├ compute                  its batch's run on the device (shared with the batch's other requests)
//     └ serialize                its response's JSON
//
// The server span is named "<method> <route>" (just the method for a path no route owns, as OpenTelemetry's HTTP
// conventions say) and has http.request.method, http.route, http.response.status_code, and for a request that
// reached a model accel.model, accel.inputs and accel.tokens; its status is ERROR for a 5xx. A request with a
// valid W3C traceparent (traceparent.hpp) continues that trace: the server span's trace id is the header's and its
// parent the header's parent-id. Without one, or with a malformed one, the request starts a trace of its own.
// Every request is traced (the sampled flag is not a reason to leave one out: the collector samples).
//
// Without --otlp-endpoint the server has no RequestTracer at all; the stages are recorded anyway (request_trace.hpp),
// which allocates nothing.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"
#include "serve/otlp_exporter.hpp"
#include "serve/otlp_json.hpp"
#include "serve/request_trace.hpp"
#include "serve/serve_options.hpp"
#include "serve/traceparent.hpp"

namespace accel::serve {

// What a request's spans say of it beyond its RequestTrace.
struct AnsweredRequest {
  std::string_view method;
  std::string_view route;  // the route's path; "other" for a path no route owns
  int status = 0;
  std::chrono::steady_clock::time_point began, ended;  // its first bytes read, its response written
};

// The server span and its stage spans of one request whose trace_id and span_id are set (RequestTracer::identify).
// Steady-clock times become Unix times by `steady_now` being `unix_now_nanos`.
[[nodiscard]] std::vector<SpanRecord> request_spans(const RequestTrace& trace, const AnsweredRequest& request,
                                                    const TraceContext* parent,
                                                    std::chrono::steady_clock::time_point steady_now,
                                                    std::uint64_t unix_now_nanos);

class RequestTracer {
 public:
  // Starts the exporter; invalid_argument for an endpoint it refuses.
  static Result<std::unique_ptr<RequestTracer>> start(const TracingOptions& options);

  // Gives `trace` its ids: the trace of `parent` (else a new random one) and a new random span id.
  static void identify(RequestTrace& trace, const std::optional<TraceContext>& parent);

  // Queues the request's spans for export (identify first); never waits for the export.
  void finish(const RequestTrace& trace, const AnsweredRequest& request, const std::optional<TraceContext>& parent);

  // Exports what is queued; later spans are dropped.
  void stop() { exporter_->stop(); }

  [[nodiscard]] ExportCounts counts() const { return exporter_->counts(); }

  // The exporter's counts in Prometheus' text format: accel_serve_trace_spans_{exported,dropped,failed}_total and
  // accel_serve_trace_export_failures_total.
  [[nodiscard]] std::string render_metrics() const;

 private:
  explicit RequestTracer(std::unique_ptr<OtlpExporter> exporter) : exporter_(std::move(exporter)) {}
  std::unique_ptr<OtlpExporter> exporter_;
};

}  // namespace accel::serve
