// accel::serve::Metrics — what `GET /metrics` reports, in Prometheus' text format: requests by endpoint and
// status, inputs and tokens, batch sizes, queue depth, the model's runs and compile caches, and latency by stage.
//
// A server serving several models keeps one Metrics for the requests it answers (by model, endpoint and status) and
// one per model for the rest; render_metrics writes each metric family once, with a sample per model labelled
// model="<name>". A request counted before a model was chosen for it (/health, /metrics, an unknown route or model
// name, a refused key) has no model label: a name no model has would make a series per client's whim.
#pragma once

#include <array>
#include <atomic>
#include <compare>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accel/embed/model.hpp"
#include "serve/batcher.hpp"
#include "serve/histogram.hpp"

namespace accel::serve {

// Where a request's time goes: waiting for a batch, tokenising (on the request's thread), the batch's run on the
// device (shared by its requests), and writing the response body; and around them, what an outside client sees
// beyond them: the request read and routed (from its first bytes readable to the route's handler), the handler's
// wait for its batch (queue and compute, and the wake-up of its thread after), and the response written (from
// the handler's return to the last byte sent).
enum class Stage : std::uint8_t { queue, tokenize, compute, serialize, receive, wait, respond };
inline constexpr std::size_t kStageCount = 7;

// What the metrics say of one replica of a model (InferenceService::replicas).
struct ReplicaStatus {
  std::string device;  // the device's label: the --devices entry (made unique), else the device's name
  bool up = false;
  std::string reason;                                   // why it is not up; empty while up
  std::uint64_t batches = 0, requests = 0, tokens = 0;  // COUNTs of what it ran
  std::uint64_t tokens_in_flight = 0;                   // as the pool counts them (0 without one)
};

struct ModelMetrics;
class Metrics;
[[nodiscard]] std::string render_metrics(const Metrics& requests, const std::vector<ModelMetrics>& models);

class Metrics {
 public:
  Metrics();

  // `model`: the name of the model that answered the request; empty when none was chosen (no model label).
  void count_request(std::string_view endpoint, int status, std::string_view model = {});
  void count_inputs(std::uint64_t inputs, std::uint64_t tokens) noexcept;
  void observe_batch(std::uint64_t requests, std::uint64_t sequences, std::uint64_t tokens) noexcept;
  void observe_stage(Stage stage, double seconds) noexcept;
  void observe_request(double seconds) noexcept;
  void count_retry() noexcept { retries_.fetch_add(1, std::memory_order_relaxed); }

  // The exposition of this one set, without a model label; `model` is empty until the model is loaded.
  [[nodiscard]] std::string render(const QueueDepth& depth, bool ready,
                                   const std::optional<embed::ModelStats>& model) const;

 private:
  friend struct MetricsWriter;
  friend std::string render_metrics(const Metrics& requests, const std::vector<ModelMetrics>& models);
  mutable std::mutex mutex_;
  struct RequestKey {
    std::string model, endpoint;
    int status = 0;
    auto operator<=>(const RequestKey&) const = default;
  };
  std::map<RequestKey, std::uint64_t> requests_;
  std::atomic<std::uint64_t> inputs_{0};
  std::atomic<std::uint64_t> tokens_{0};
  std::atomic<std::uint64_t> retries_{0};
  Histogram batch_requests_;
  Histogram batch_sequences_;
  Histogram batch_tokens_;
  std::array<Histogram, kStageCount> stages_;
  Histogram request_seconds_;
};

// One served model's part of the exposition.
struct ModelMetrics {
  std::string name;  // its label value; empty: no model label
  const Metrics* metrics = nullptr;
  QueueDepth depth;
  bool ready = false;
  std::optional<embed::ModelStats> stats;  // empty until the model is loaded
  // Its replicas, one per device (one without --devices), labelled device="<its label>".
  std::vector<ReplicaStatus> replicas;
};

// render_metrics (declared above): `requests`' request counts, then every other family once, with one sample per
// model of `models`.

}  // namespace accel::serve
