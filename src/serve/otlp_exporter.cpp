#include "serve/otlp_exporter.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <charconv>
#include <cstdio>

namespace accel::serve {

Result<OtlpEndpoint> parse_otlp_endpoint(std::string_view url) {
  const auto refuse = [&](std::string_view why) {
    return invalid_argument(fmt::format("--otlp-endpoint '{}': {} (expected http://host[:port][/path])", url, why));
  };
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) return refuse("only http:// is supported");
  std::string_view rest = url.substr(kScheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos) return refuse("a query or fragment is not an endpoint");
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view prefix = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) return refuse("credentials in the URL are not supported");
  OtlpEndpoint endpoint;
  // A bracketed IPv6 address may hold colons of its own.
  const std::size_t close = authority.starts_with('[') ? authority.find(']') : 0;
  if (close == std::string_view::npos) return refuse("an unclosed '['");
  const std::size_t colon = authority.find(':', close);
  endpoint.host = std::string(authority.substr(0, colon));
  if (endpoint.host.starts_with('[')) endpoint.host = endpoint.host.substr(1, endpoint.host.size() - 2);
  if (endpoint.host.empty()) return refuse("no host");
  if (colon != std::string_view::npos) {
    const std::string_view port = authority.substr(colon + 1);
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), endpoint.port);
    if (port.empty() || error != std::errc() || end != port.data() + port.size() || endpoint.port < 1 ||
        endpoint.port > 65535)
      return refuse("the port is not a number from 1 to 65535");
  }
  while (prefix.ends_with('/')) prefix.remove_suffix(1);
  endpoint.path = std::string(prefix) + "/v1/traces";
  return endpoint;
}

Result<std::unique_ptr<OtlpExporter>> OtlpExporter::start(const TracingOptions& options) {
  ACCEL_ASSIGN_OR_RETURN(OtlpEndpoint endpoint, parse_otlp_endpoint(options.otlp_endpoint));
  if (options.max_queue_spans == 0 || options.max_batch_spans == 0)
    return invalid_argument("tracing: max_queue_spans and max_batch_spans must be positive");
  std::unique_ptr<OtlpExporter> exporter(new OtlpExporter(options, std::move(endpoint)));
  exporter->thread_ = std::thread([raw = exporter.get()] { raw->run(); });
  return exporter;
}

OtlpExporter::OtlpExporter(TracingOptions options, OtlpEndpoint endpoint)
    : options_(std::move(options)),
      endpoint_(std::move(endpoint)),
      client_(std::make_unique<httplib::Client>(endpoint_.host, endpoint_.port)) {
  client_->set_keep_alive(true);
  client_->set_connection_timeout(options_.export_timeout);
  client_->set_read_timeout(options_.export_timeout);
  client_->set_write_timeout(options_.export_timeout);
}

OtlpExporter::~OtlpExporter() { stop(); }

void OtlpExporter::submit(std::vector<SpanRecord> spans) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() + spans.size() > options_.max_queue_spans) {
      dropped_.fetch_add(spans.size(), std::memory_order_relaxed);
      return;
    }
    for (SpanRecord& span : spans) queue_.push_back(std::move(span));
    wake = queue_.size() >= options_.max_batch_spans;
  }
  if (wake) wake_.notify_one();
}

void OtlpExporter::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  std::call_once(joined_, [this] {
    if (thread_.joinable()) thread_.join();
  });
}

ExportCounts OtlpExporter::counts() const {
  constexpr auto relaxed = std::memory_order_relaxed;
  return {exported_.load(relaxed), dropped_.load(relaxed), failed_.load(relaxed), failed_batches_.load(relaxed)};
}

void OtlpExporter::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    // A batch is due when full, else every export_interval while spans are queued, and at the end.
    wake_.wait_for(lock, options_.export_interval,
                   [&] { return stopping_ || queue_.size() >= options_.max_batch_spans; });
    if (queue_.empty()) {
      if (stopping_) return;
      continue;
    }
    const std::size_t taken = std::min(queue_.size(), options_.max_batch_spans);
    std::vector<SpanRecord> batch(std::make_move_iterator(queue_.begin()),
                                  std::make_move_iterator(queue_.begin() + static_cast<std::ptrdiff_t>(taken)));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(taken));
    lock.unlock();
    const bool sent = send(batch);
    lock.lock();
    if (!sent && stopping_) {
      // Shutting down with a collector that does not take spans: the rest would fail too, each after a timeout.
      failed_.fetch_add(queue_.size(), std::memory_order_relaxed);
      failed_batches_.fetch_add(queue_.empty() ? 0 : 1, std::memory_order_relaxed);
      queue_.clear();
      return;
    }
  }
}

bool OtlpExporter::send(const std::vector<SpanRecord>& batch) {
  const httplib::Result result =
      client_->Post(endpoint_.path, otlp_json(batch, options_.service_name), "application/json");
  if (result && result->status >= 200 && result->status < 300) {
    exported_.fetch_add(batch.size(), std::memory_order_relaxed);
    return true;
  }
  failed_.fetch_add(batch.size(), std::memory_order_relaxed);
  failed_batches_.fetch_add(1, std::memory_order_relaxed);
  // Said once, so that a collector that is down does not flood the log; /metrics counts every failure.
  if (!failure_reported_.exchange(true)) {
    const std::string why = result ? fmt::format("HTTP {}", result->status) : httplib::to_string(result.error());
    fmt::print(stderr,
               "accel serve: exporting spans to http://{}:{}{} failed ({}); further failures are counted in "
               "accel_serve_trace_spans_failed_total\n",
               endpoint_.host, endpoint_.port, endpoint_.path, why);
  }
  return false;
}

}  // namespace accel::serve
