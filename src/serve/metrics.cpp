#include "serve/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace accel::serve {
namespace {

constexpr std::array<std::string_view, kStageCount> kStageNames{"queue",   "tokenize", "compute", "serialize",
                                                                "receive", "wait",     "respond"};

// From 10 µs to about 20 s: a short query on a GPU takes well under a millisecond, a full batch on the CPU seconds.
std::vector<double> latency_bounds() { return Histogram::exponential(1e-5, 2.0, 22); }

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

// Label values are ours (cache names, endpoints), but a quote or backslash would break the line.
std::string escaped(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? 'n' : c;
  }
  return out;
}

}  // namespace

Metrics::Metrics()
    : batch_requests_(Histogram::exponential(1, 2, 11)),
      batch_sequences_(Histogram::exponential(1, 2, 13)),
      batch_tokens_(Histogram::exponential(16, 2, 14)),
      stages_{Histogram(latency_bounds()), Histogram(latency_bounds()), Histogram(latency_bounds()),
              Histogram(latency_bounds()), Histogram(latency_bounds()), Histogram(latency_bounds()),
              Histogram(latency_bounds())},
      request_seconds_(latency_bounds()) {}

void Metrics::count_request(std::string_view endpoint, int status, std::string_view model) {
  std::lock_guard lock(mutex_);
  ++requests_[{std::string(model), std::string(endpoint), status}];
}

void Metrics::count_inputs(std::uint64_t inputs, std::uint64_t tokens) noexcept {
  inputs_.fetch_add(inputs, std::memory_order_relaxed);
  tokens_.fetch_add(tokens, std::memory_order_relaxed);
}

void Metrics::observe_batch(std::uint64_t requests, std::uint64_t sequences, std::uint64_t tokens) noexcept {
  batch_requests_.observe(static_cast<double>(requests));
  batch_sequences_.observe(static_cast<double>(sequences));
  batch_tokens_.observe(static_cast<double>(tokens));
}

void Metrics::observe_stage(Stage stage, double seconds) noexcept {
  stages_[static_cast<std::size_t>(stage)].observe(seconds);
}

void Metrics::observe_request(double seconds) noexcept { request_seconds_.observe(seconds); }

std::string Metrics::render(const QueueDepth& depth, bool ready, const std::optional<embed::ModelStats>& model) const {
  return render_metrics(*this, {{.name = "", .metrics = this, .depth = depth, .ready = ready, .stats = model}});
}

// Writes each family once over every model (Prometheus wants a family's samples together), each sample with the
// model's label before any of its own.
struct MetricsWriter {
  std::string& out;
  const std::vector<ModelMetrics>& models;

  static std::string labels(const ModelMetrics& model, std::string_view more) {
    std::string text;
    if (!model.name.empty()) text.append("model=\"").append(escaped(model.name)).append("\"");
    if (!more.empty()) text.append(text.empty() ? "" : ",").append(more);
    return text;
  }
  static std::string braced(const std::string& labels) {
    std::string text;
    if (!labels.empty()) text.append("{").append(labels).append("}");
    return text;
  }

  template <class Value>
  void scalar(std::string_view name, std::string_view type, std::string_view help, const Value& value_of) {
    header(out, name, type, help);
    for (const ModelMetrics& model : models)
      fmt::format_to(std::back_inserter(out), "{}{} {}\n", name, braced(labels(model, "")),
                     static_cast<double>(value_of(model)));
  }
  void histogram(std::string_view name, std::string_view help, Histogram Metrics::*member) {
    header(out, name, "histogram", help);
    for (const ModelMetrics& model : models) (model.metrics->*member).write(out, name, labels(model, ""));
  }
  void stages() {
    header(out, "accel_serve_stage_seconds", "histogram", "Time per request in each stage.");
    for (const ModelMetrics& model : models)
      for (std::size_t i = 0; i < kStageCount; ++i)
        model.metrics->stages_[i].write(out, "accel_serve_stage_seconds",
                                        labels(model, fmt::format("stage=\"{}\"", kStageNames[i])));
  }
  void model_stats(std::string_view name, std::string_view help, std::uint64_t embed::ModelStats::*member) {
    header(out, name, "counter", help);
    for (const ModelMetrics& model : models)
      if (model.stats)
        fmt::format_to(std::back_inserter(out), "{}{} {}\n", name, braced(labels(model, "")), (*model.stats).*member);
  }
  // A sample per replica of each model, labelled device="<its label>" after the model's label.
  void replicas() {
    struct Field {
      std::string_view name, type, help;
      std::uint64_t (*value)(const ReplicaStatus&);
    };
    static constexpr std::array<Field, 5> kFields{{
        {"accel_serve_replica_up", "gauge", "1 while batches go to the model's replica on the device.",
         [](const ReplicaStatus& r) -> std::uint64_t { return r.up ? 1 : 0; }},
        {"accel_serve_replica_batches_total", "counter", "Batches the replica on the device answered.",
         [](const ReplicaStatus& r) { return r.batches; }},
        {"accel_serve_replica_requests_total", "counter", "Requests the replica on the device answered.",
         [](const ReplicaStatus& r) { return r.requests; }},
        {"accel_serve_replica_tokens_total", "counter", "Tokens the replica on the device ran.",
         [](const ReplicaStatus& r) { return r.tokens; }},
        {"accel_serve_replica_tokens_in_flight", "gauge", "Tokens of the batches running on the device (--devices).",
         [](const ReplicaStatus& r) { return r.tokens_in_flight; }},
    }};
    for (const Field& field : kFields) {
      header(out, field.name, field.type, field.help);
      for (const ModelMetrics& model : models)
        for (const ReplicaStatus& replica : model.replicas)
          fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", field.name,
                         labels(model, fmt::format("device=\"{}\"", escaped(replica.device))), field.value(replica));
    }
  }
  void caches() {
    struct Field {
      std::string_view name, type, help;
      std::uint64_t CacheStats::*member;
    };
    static constexpr std::array<Field, 5> kFields{{
        {"accel_model_cache_hits_total", "counter", "Executable cache lookups answered from memory.",
         &CacheStats::hits},
        {"accel_model_cache_misses_total", "counter", "Executable cache lookups that went on to disk or a build.",
         &CacheStats::misses},
        {"accel_model_compiles_total", "counter", "Executables built (compiled) by the model's caches.",
         &CacheStats::builds},
        {"accel_model_cache_disk_loads_total", "counter", "Executables read from the persistent cache.",
         &CacheStats::disk_loads},
        {"accel_model_cache_entries", "gauge", "Executables held in memory.", &CacheStats::entries},
    }};
    for (const Field& field : kFields) {
      header(out, field.name, field.type, field.help);
      for (const ModelMetrics& model : models)
        if (model.stats)
          for (const CacheStats& cache : model.stats->caches)
            fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", field.name,
                           labels(model, fmt::format("cache=\"{}\"", escaped(cache.name))), cache.*field.member);
    }
  }
};

std::string render_metrics(const Metrics& requests, const std::vector<ModelMetrics>& models) {
  std::string out;
  header(out, "accel_serve_requests_total", "counter", "HTTP requests answered, by model, endpoint and status.");
  {
    std::lock_guard lock(requests.mutex_);
    for (const auto& [key, count] : requests.requests_) {
      const std::string model = key.model.empty() ? "" : fmt::format("model=\"{}\",", escaped(key.model));
      fmt::format_to(std::back_inserter(out), "accel_serve_requests_total{{{}endpoint=\"{}\",status=\"{}\"}} {}\n",
                     model, escaped(key.endpoint), key.status, count);
    }
  }
  MetricsWriter w{out, models};
  constexpr auto relaxed = std::memory_order_relaxed;
  w.scalar("accel_serve_inputs_total", "counter", "Inputs (texts or token arrays) embedded.",
           [&](const ModelMetrics& m) { return m.metrics->inputs_.load(relaxed); });
  w.scalar("accel_serve_tokens_total", "counter", "Tokens embedded (special tokens included).",
           [&](const ModelMetrics& m) { return m.metrics->tokens_.load(relaxed); });
  w.scalar("accel_serve_batch_retries_total", "counter", "Batches run again after the device lost its context.",
           [&](const ModelMetrics& m) { return m.metrics->retries_.load(relaxed); });
  w.scalar("accel_serve_ready", "gauge", "1 once the model is loaded and warm and the device serves.",
           [](const ModelMetrics& m) { return m.ready; });
  w.scalar("accel_serve_queue_requests", "gauge", "Requests waiting for a batch.",
           [](const ModelMetrics& m) { return m.depth.requests; });
  w.scalar("accel_serve_queue_tokens", "gauge", "Tokens of the requests waiting for a batch.",
           [](const ModelMetrics& m) { return m.depth.tokens; });
  w.scalar("accel_serve_batches_in_flight", "gauge", "Batches running on the device.",
           [](const ModelMetrics& m) { return m.depth.batches_in_flight; });
  w.histogram("accel_serve_batch_requests", "Requests per batch.", &Metrics::batch_requests_);
  w.histogram("accel_serve_batch_sequences", "Sequences (inputs) per batch.", &Metrics::batch_sequences_);
  w.histogram("accel_serve_batch_tokens", "Tokens per batch.", &Metrics::batch_tokens_);
  w.stages();
  w.histogram("accel_serve_request_seconds", "Time from a request's arrival to its answer.",
              &Metrics::request_seconds_);
  if (std::ranges::any_of(models, [](const ModelMetrics& m) { return !m.replicas.empty(); })) w.replicas();
  if (std::ranges::any_of(models, [](const ModelMetrics& m) { return m.stats.has_value(); })) {
    w.model_stats("accel_model_runs_total", "Packed runs of the encoder.", &embed::ModelStats::runs);
    w.model_stats("accel_model_sequences_total", "Sequences the encoder ran.", &embed::ModelStats::sequences);
    w.model_stats("accel_model_tokens_total", "Real tokens the encoder ran.", &embed::ModelStats::tokens);
    w.model_stats("accel_model_padded_tokens_total", "Tokens run beyond the real ones (bucket tails).",
                  &embed::ModelStats::padded_tokens);
    w.caches();
  }
  return out;
}

}  // namespace accel::serve
