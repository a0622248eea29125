#include "serve/metrics.hpp"

#include <fmt/format.h>

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

void scalar(std::string& out, std::string_view name, std::string_view type, std::string_view help, double value) {
  header(out, name, type, help);
  fmt::format_to(std::back_inserter(out), "{} {}\n", name, value);
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

void write_caches(std::string& out, const embed::ModelStats& model) {
  struct Field {
    std::string_view name, type, help;
    std::uint64_t CacheStats::*member;
  };
  static constexpr std::array<Field, 5> kFields{{
      {"accel_model_cache_hits_total", "counter", "Executable cache lookups answered from memory.", &CacheStats::hits},
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
    for (const CacheStats& cache : model.caches)
      fmt::format_to(std::back_inserter(out), "{}{{cache=\"{}\"}} {}\n", field.name, escaped(cache.name),
                     cache.*field.member);
  }
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

void Metrics::count_request(std::string_view endpoint, int status) {
  std::lock_guard lock(mutex_);
  ++requests_[{std::string(endpoint), status}];
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
  std::string out;
  header(out, "accel_serve_requests_total", "counter", "HTTP requests answered, by endpoint and status.");
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, count] : requests_)
      fmt::format_to(std::back_inserter(out), "accel_serve_requests_total{{endpoint=\"{}\",status=\"{}\"}} {}\n",
                     escaped(key.first), key.second, count);
  }
  scalar(out, "accel_serve_inputs_total", "counter", "Inputs (texts or token arrays) embedded.",
         static_cast<double>(inputs_.load(std::memory_order_relaxed)));
  scalar(out, "accel_serve_tokens_total", "counter", "Tokens embedded (special tokens included).",
         static_cast<double>(tokens_.load(std::memory_order_relaxed)));
  scalar(out, "accel_serve_batch_retries_total", "counter", "Batches run again after the device lost its context.",
         static_cast<double>(retries_.load(std::memory_order_relaxed)));
  scalar(out, "accel_serve_ready", "gauge", "1 once the model is loaded and warm and the device serves.", ready);
  scalar(out, "accel_serve_queue_requests", "gauge", "Requests waiting for a batch.",
         static_cast<double>(depth.requests));
  scalar(out, "accel_serve_queue_tokens", "gauge", "Tokens of the requests waiting for a batch.",
         static_cast<double>(depth.tokens));
  scalar(out, "accel_serve_batches_in_flight", "gauge", "Batches running on the device.", depth.batches_in_flight);

  header(out, "accel_serve_batch_requests", "histogram", "Requests per batch.");
  batch_requests_.write(out, "accel_serve_batch_requests", "");
  header(out, "accel_serve_batch_sequences", "histogram", "Sequences (inputs) per batch.");
  batch_sequences_.write(out, "accel_serve_batch_sequences", "");
  header(out, "accel_serve_batch_tokens", "histogram", "Tokens per batch.");
  batch_tokens_.write(out, "accel_serve_batch_tokens", "");
  header(out, "accel_serve_stage_seconds", "histogram", "Time per request in each stage.");
  for (std::size_t i = 0; i < kStageCount; ++i)
    stages_[i].write(out, "accel_serve_stage_seconds", fmt::format("stage=\"{}\"", kStageNames[i]));
  header(out, "accel_serve_request_seconds", "histogram", "Time from a request's arrival to its answer.");
  request_seconds_.write(out, "accel_serve_request_seconds", "");

  if (model) {
    scalar(out, "accel_model_runs_total", "counter", "Packed runs of the encoder.", static_cast<double>(model->runs));
    scalar(out, "accel_model_sequences_total", "counter", "Sequences the encoder ran.",
           static_cast<double>(model->sequences));
    scalar(out, "accel_model_tokens_total", "counter", "Real tokens the encoder ran.",
           static_cast<double>(model->tokens));
    scalar(out, "accel_model_padded_tokens_total", "counter", "Tokens run beyond the real ones (bucket tails).",
           static_cast<double>(model->padded_tokens));
    write_caches(out, *model);
  }
  return out;
}

}  // namespace accel::serve
