// accel::serve::InferenceService — tokenised requests of any kind in (texts for a dense or SPLADE model, text
// pairs with their type ids for a cross-encoder), the model's rows out, through the batcher and one
// Model::embed_tokens call per batch. What a row means (an embedding, a sparse vector, scores) is the model's
// head; the service only packs sequences by tokens and cuts the rows back per request.
//
// Each request's sequences are packed behind the others of its batch; the batch's rows are cut back into
// one Embeddings per request, and each request is answered on its own: a batch the model refuses as invalid
// (which the parsers' checks should have caught) is run again one request at a time, so that only the request
// at fault fails.
//
// A batch that lost the device's context — an isolated worker killed or faulted under it — gets one retry. The
// device replaces the worker, but every buffer of the old one is gone, the model's weights with them, so the model
// is loaded again first (`reload`, on a thread of the service's: not on the model's own thread, whose model is
// being dropped), and the batch runs on the new one. If the reload or the retry fails, the batch's requests get
// the error (503 context_lost) and the server goes on; the next batch tries again.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "accel/core/future.hpp"
#include "accel/embed/model.hpp"
#include "serve/batcher.hpp"
#include "serve/metrics.hpp"

namespace accel::serve {

// What a request's sequences are run for: a row each from the model's head, or a row per token from its encoder
// (Model::embed_token_vectors). A batch holding both runs each kind as a run of its own.
enum class RunKind : std::uint8_t { pooled, token_vectors };

// A request's time in the service: its wait for a batch, and its batch's run (shared with the batch's others).
struct RunTimes {
  double queue_seconds = 0;
  double compute_seconds = 0;
};

struct PendingRun {
  embed::TokenBatch tokens;
  RunKind kind = RunKind::pooled;
  RunTimes* times = nullptr;  // the caller's, written before `reply` is set; may be null
  Promise<embed::Embeddings> reply;
  std::chrono::steady_clock::time_point queued;
};

class InferenceService {
 public:
  // Loads the model again on the same device; empty where the device cannot come back (no retry then).
  using Reload = std::function<Result<std::shared_ptr<embed::Model>>()>;

  InferenceService(std::shared_ptr<embed::Model> model, Reload reload, BatcherOptions options, Metrics& metrics);
  InferenceService(const InferenceService&) = delete;
  InferenceService& operator=(const InferenceService&) = delete;
  ~InferenceService();

  // The rows of `tokens`' sequences (`kind` says which), in order, to come; or at once, the queue's refusal:
  // resource_exhausted when it is full, failed_precondition once stopping.
  // `times`, if given, must live until the answer comes: it is written just before.
  [[nodiscard]] Result<Future<embed::Embeddings>> submit(embed::TokenBatch tokens, RunKind kind = RunKind::pooled,
                                                         RunTimes* times = nullptr);

  // Answers everything queued, then refuses.
  void stop() { batcher_.stop(); }

  [[nodiscard]] QueueDepth depth() const { return batcher_.depth(); }
  // True from a batch that lost the device's context until a batch runs again.
  [[nodiscard]] bool recovering() const noexcept { return recovering_.load(std::memory_order_relaxed); }
  // The model now served (a new one after a reload).
  [[nodiscard]] std::shared_ptr<embed::Model> model() const;

 private:
  Future<Done> run(std::vector<PendingRun> batch);
  // One kind's requests of a batch, packed into one model call.
  Future<Done> run_kind(std::vector<PendingRun> batch, RunKind kind);
  // The model to retry on: `failed` reloaded, or the one that already replaced it.
  Future<std::shared_ptr<embed::Model>> replace(std::shared_ptr<embed::Model> failed);
  void answer(std::vector<PendingRun>& batch, const embed::Embeddings& embeddings, RunKind kind) const;

  Reload reload_;
  Metrics& metrics_;
  mutable std::mutex mutex_;
  std::shared_ptr<embed::Model> model_;
  bool reloading_ = false;
  std::vector<Promise<std::shared_ptr<embed::Model>>> waiting_;  // for the reload under way
  // Replaced models, dropped off their own threads: a model's destructor joins its thread, and a batch that failed
  // on it runs there.
  std::vector<std::shared_ptr<embed::Model>> retired_;
  std::thread reloader_;
  std::atomic<bool> recovering_{false};
  Batcher<PendingRun> batcher_;  // last: its thread starts once the members it uses are there
};

}  // namespace accel::serve
