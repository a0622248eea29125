// accel::serve::Metrics — what `GET /metrics` reports, in Prometheus' text format: requests by endpoint and
// status, inputs and tokens, batch sizes, queue depth, the model's runs and compile caches, and latency by stage.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

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

class Metrics {
 public:
  Metrics();

  void count_request(std::string_view endpoint, int status);
  void count_inputs(std::uint64_t inputs, std::uint64_t tokens) noexcept;
  void observe_batch(std::uint64_t requests, std::uint64_t sequences, std::uint64_t tokens) noexcept;
  void observe_stage(Stage stage, double seconds) noexcept;
  void observe_request(double seconds) noexcept;
  void count_retry() noexcept { retries_.fetch_add(1, std::memory_order_relaxed); }

  // The exposition; `model` is empty until the model is loaded.
  [[nodiscard]] std::string render(const QueueDepth& depth, bool ready,
                                   const std::optional<embed::ModelStats>& model) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
  std::atomic<std::uint64_t> inputs_{0};
  std::atomic<std::uint64_t> tokens_{0};
  std::atomic<std::uint64_t> retries_{0};
  Histogram batch_requests_;
  Histogram batch_sequences_;
  Histogram batch_tokens_;
  std::array<Histogram, kStageCount> stages_;
  Histogram request_seconds_;
};

}  // namespace accel::serve
