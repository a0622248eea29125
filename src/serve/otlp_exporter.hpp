// accel::serve::OtlpExporter — sends spans to an OpenTelemetry collector over OTLP/HTTP with the JSON encoding
// (otlp_json.hpp): POST <endpoint>/v1/traces, Content-Type application/json, from a thread of its own.
//
// A request's thread only queues its spans (submit: a lock and a move, never I/O); the queue is bounded, and spans
// that find it full are dropped and counted, so a slow or absent collector never slows a request nor grows memory.
// The thread sends a batch once max_batch_spans are queued, else every export_interval while any are queued. A batch
// the collector refuses (any status but 2xx) or that cannot be sent is counted as failed and not sent again; the
// server goes on. stop() sends what is queued (giving up on the rest at the first failure), then joins the thread.
//
// Why not opentelemetry-cpp: Debian 12 does not package it (nor its protobuf/gRPC exporters); the JSON encoding
// over cpp-httplib is what any OTLP/HTTP collector (the OpenTelemetry Collector, Jaeger, Tempo) takes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "accel/core/result.hpp"
#include "serve/otlp_json.hpp"
#include "serve/serve_options.hpp"

namespace httplib {
class Client;
}  // namespace httplib

namespace accel::serve {

// Where an --otlp-endpoint sends to: http://host[:port][/prefix], the port 4318 (OTLP/HTTP's) when unsaid, the path
// the prefix and /v1/traces.
struct OtlpEndpoint {
  std::string host;
  int port = 4318;
  std::string path = "/v1/traces";
};

// invalid_argument naming --otlp-endpoint and what is wrong: another scheme than http, no host, a bad port, a query.
[[nodiscard]] Result<OtlpEndpoint> parse_otlp_endpoint(std::string_view url);

// COUNTs of what became of the spans submitted.
struct ExportCounts {
  std::uint64_t exported = 0;        // spans the collector took (a 2xx)
  std::uint64_t dropped = 0;         // spans submit() found no room for
  std::uint64_t failed = 0;          // spans of batches refused or not delivered
  std::uint64_t failed_batches = 0;  // those batches
};

class OtlpExporter {
 public:
  // Starts the thread; invalid_argument for an endpoint parse_otlp_endpoint refuses.
  static Result<std::unique_ptr<OtlpExporter>> start(const TracingOptions& options);
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;
  ~OtlpExporter();  // stop()

  // Queues the spans of one request, all of them or (no room for all) none, which are counted as dropped. Never
  // waits for the export.
  void submit(std::vector<SpanRecord> spans);

  // Sends what is queued and joins the thread; spans submitted after are dropped. Idempotent.
  void stop();

  [[nodiscard]] ExportCounts counts() const;

 private:
  OtlpExporter(TracingOptions options, OtlpEndpoint endpoint);
  void run();
  // POSTs `batch`; whether the collector took it.
  bool send(const std::vector<SpanRecord>& batch);

  TracingOptions options_;
  OtlpEndpoint endpoint_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<SpanRecord> queue_;
  bool stopping_ = false;
  std::atomic<std::uint64_t> exported_{0}, dropped_{0}, failed_{0}, failed_batches_{0};
  std::atomic<bool> failure_reported_{false};
  std::once_flag joined_;
  std::unique_ptr<httplib::Client> client_;  // the thread's; its connection is kept alive between batches
  std::thread thread_;
};

}  // namespace accel::serve
