#include "serve/inference_service.hpp"

namespace accel::serve {
namespace {

double seconds_between(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

Future<embed::Embeddings> call(embed::Model& model, embed::TokenBatch tokens, RunKind kind) {
  return kind == RunKind::token_vectors ? model.embed_token_vectors(std::move(tokens))
                                        : model.embed_tokens(std::move(tokens));
}

// The device's context is gone (or being rebuilt): the batch may run again once the model is back.
bool context_gone(Code code) {
  return code == Code::context_lost || code == Code::stale_handle || code == Code::unavailable;
}

}  // namespace

InferenceService::InferenceService(std::shared_ptr<embed::Model> model, Reload reload, BatcherOptions options,
                                   Metrics& metrics)
    : reload_(std::move(reload)),
      metrics_(metrics),
      model_(std::move(model)),
      batcher_(options, [this](std::vector<PendingRun> batch) { return run(std::move(batch)); }) {}

InferenceService::~InferenceService() {
  batcher_.stop();  // every batch is answered, so no reload is under way or to come
  if (reloader_.joinable()) reloader_.join();
}

std::shared_ptr<embed::Model> InferenceService::model() const {
  std::lock_guard lock(mutex_);
  return model_;
}

Result<Future<embed::Embeddings>> InferenceService::submit(embed::TokenBatch tokens, RunKind kind, RunTimes* times) {
  const auto count = static_cast<std::uint32_t>(tokens.ids.size());
  PendingRun pending{
      .tokens = std::move(tokens), .kind = kind, .times = times, .queued = std::chrono::steady_clock::now()};
  Future<embed::Embeddings> reply = pending.reply.future();
  ACCEL_RETURN_IF_ERROR(batcher_.submit(std::move(pending), count));
  return reply;
}

Future<Done> InferenceService::run(std::vector<PendingRun> batch) {
  std::vector<PendingRun> pooled, token_vectors;
  for (PendingRun& request : batch)
    (request.kind == RunKind::token_vectors ? token_vectors : pooled).push_back(std::move(request));
  // run_kind answers every request it is given, errors included: its own result says nothing more.
  if (!pooled.empty()) static_cast<void>(co_await run_kind(std::move(pooled), RunKind::pooled));
  if (!token_vectors.empty()) static_cast<void>(co_await run_kind(std::move(token_vectors), RunKind::token_vectors));
  co_return Done{};
}

Future<Done> InferenceService::run_kind(std::vector<PendingRun> batch, RunKind kind) {
  const auto dispatched = std::chrono::steady_clock::now();
  embed::TokenBatch packed;
  for (const PendingRun& request : batch) {
    metrics_.observe_stage(Stage::queue, seconds_between(request.queued, dispatched));
    const std::span<const std::int32_t> ids(request.tokens.ids);
    const std::span<const std::int32_t> types(request.tokens.type_ids);
    for (std::size_t i = 0; i < request.tokens.sequences(); ++i) {
      const std::uint32_t begin = request.tokens.offsets[i];
      const std::uint32_t length = request.tokens.length(i);
      packed.append(ids.subspan(begin, length), types.empty() ? types : types.subspan(begin, length));
    }
  }
  metrics_.observe_batch(batch.size(), packed.sequences(), packed.ids.size());

  std::shared_ptr<embed::Model> model = this->model();
  Result<embed::Embeddings> result = co_await call(*model, packed, kind);
  if (!result.ok() && context_gone(result.code()) && reload_) {
    recovering_.store(true, std::memory_order_relaxed);
    metrics_.count_retry();
    Result<std::shared_ptr<embed::Model>> replacement = co_await replace(std::move(model));
    if (replacement.ok()) {
      model = std::move(*replacement);
      result = co_await call(*model, std::move(packed), kind);
    }
  }
  if (result.ok() || !context_gone(result.code())) recovering_.store(false, std::memory_order_relaxed);
  const double compute = seconds_between(dispatched, std::chrono::steady_clock::now());
  for (PendingRun& request : batch) {
    metrics_.observe_stage(Stage::compute, compute);
    if (request.times != nullptr)
      *request.times = {.queue_seconds = seconds_between(request.queued, dispatched), .compute_seconds = compute};
  }

  if (result.ok()) {
    answer(batch, *result, kind);
  } else if (result.code() == Code::invalid_argument && batch.size() > 1) {
    for (PendingRun& request : batch) request.reply.set(co_await call(*model, std::move(request.tokens), kind));
  } else {
    for (PendingRun& request : batch) request.reply.set(result.status());
  }
  co_return Done{};
}

Future<std::shared_ptr<embed::Model>> InferenceService::replace(std::shared_ptr<embed::Model> failed) {
  Promise<std::shared_ptr<embed::Model>> replaced;
  Future<std::shared_ptr<embed::Model>> future = replaced.future();
  std::lock_guard lock(mutex_);
  // Kept, not dropped here: this may be the failed model's own thread. A second hold of the same one may go.
  const bool current = model_ == failed;
  if (retired_.empty() || retired_.back() != failed) retired_.push_back(std::move(failed));
  if (!current) {
    replaced.set(model_);
    return future;
  }
  waiting_.push_back(std::move(replaced));
  if (reloading_) return future;
  reloading_ = true;
  // The previous reload is over: it cleared reloading_ before it answered its waiters, which need no lock.
  if (reloader_.joinable()) reloader_.join();
  reloader_ = std::thread([this] {
    Result<std::shared_ptr<embed::Model>> loaded = reload_();
    std::vector<Promise<std::shared_ptr<embed::Model>>> waiting;
    std::vector<std::shared_ptr<embed::Model>> retired;
    std::shared_ptr<embed::Model> now;
    {
      std::lock_guard lock(mutex_);
      if (loaded.ok()) model_ = std::move(*loaded);
      now = model_;
      reloading_ = false;
      waiting.swap(waiting_);
      if (loaded.ok()) retired.swap(retired_);
    }
    retired.clear();
    for (auto& waiter : waiting) waiter.set(now);
  });
  return future;
}

// Each request's sequences are the next ones of the packed batch; its rows are the next `rows` of the values: a
// row per sequence, or (token vectors) a row per token.
void InferenceService::answer(std::vector<PendingRun>& batch, const embed::Embeddings& embeddings, RunKind kind) const {
  std::size_t sequence = 0, row = 0;
  const std::size_t width = embeddings.dimensions;
  for (PendingRun& request : batch) {
    const std::size_t count = request.tokens.sequences();
    const std::size_t rows = kind == RunKind::token_vectors ? request.tokens.ids.size() : count;
    if (sequence + count > embeddings.count() || (row + rows) * width > embeddings.values.size()) {
      request.reply.set(internal_error("the model answered fewer rows than the batch had sequences or tokens"));
      continue;
    }
    embed::Embeddings own{.dimensions = embeddings.dimensions};
    const auto first = embeddings.values.begin() + static_cast<std::ptrdiff_t>(row * width);
    own.values.assign(first, first + static_cast<std::ptrdiff_t>(rows * width));
    own.tokens.assign(embeddings.tokens.begin() + static_cast<std::ptrdiff_t>(sequence),
                      embeddings.tokens.begin() + static_cast<std::ptrdiff_t>(sequence + count));
    request.reply.set(std::move(own));
    sequence += count;
    row += rows;
  }
}

}  // namespace accel::serve
