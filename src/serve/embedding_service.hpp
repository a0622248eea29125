// accel::serve::EmbeddingService — tokenised requests in, embeddings out, through the batcher and one
// Model::embed_tokens call per batch.
//
// Each request's sequences are packed behind the others of its batch; the batch's embeddings are cut back into
// one Embeddings per request, and each request is answered on its own: a batch the model refuses as invalid
// (which the parsers' checks should have caught) is run again one request at a time, so that only the request
// at fault fails. A batch that lost the device's context (an isolated worker replaced under it) is run once more,
// on the replacement; if that fails too, its requests get the error (context_lost, 503) and the server goes on.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "accel/core/future.hpp"
#include "accel/embed/model.hpp"
#include "serve/batcher.hpp"
#include "serve/metrics.hpp"

namespace accel::serve {

struct PendingEmbedding {
  embed::TokenBatch tokens;
  Promise<embed::Embeddings> reply;
  std::chrono::steady_clock::time_point queued;
};

class EmbeddingService {
 public:
  EmbeddingService(std::shared_ptr<embed::Model> model, BatcherOptions options, Metrics& metrics);

  // The embeddings of `tokens`' sequences, in order, to come; or at once, the queue's refusal: resource_exhausted
  // when it is full, failed_precondition once stopping.
  [[nodiscard]] Result<Future<embed::Embeddings>> submit(embed::TokenBatch tokens);

  // Answers everything queued, then refuses.
  void stop() { batcher_.stop(); }

  [[nodiscard]] QueueDepth depth() const { return batcher_.depth(); }
  // True from a batch that lost the device's context until a batch runs again.
  [[nodiscard]] bool recovering() const noexcept { return recovering_.load(std::memory_order_relaxed); }
  [[nodiscard]] embed::Model& model() const noexcept { return *model_; }

 private:
  Future<Done> run(std::vector<PendingEmbedding> batch);
  void answer(std::vector<PendingEmbedding>& batch, const embed::Embeddings& embeddings) const;

  std::shared_ptr<embed::Model> model_;
  Metrics& metrics_;
  std::atomic<bool> recovering_{false};
  Batcher<PendingEmbedding> batcher_;  // last: its thread stops before the members it uses go
};

}  // namespace accel::serve
