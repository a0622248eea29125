#include "serve/inference_service.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace accel::serve {
namespace {

using namespace std::chrono_literals;

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

// A replica's device can no longer run the batch: its context is gone, or the device was closed or failed for good
// (its requests then answer `cancelled` or `failed_precondition`, and its health says why).
bool device_gone(const Status& status, const embed::Model& model) {
  return context_gone(status.code()) || !model.device().health().ok();
}

// Adds `more`'s counters into `total` (CacheStats labels each COUNT or SUM: both add up over caches).
void add_cache(CacheStats& total, const CacheStats& more) {
  for (std::uint64_t CacheStats::*member :
       {&CacheStats::hits, &CacheStats::misses, &CacheStats::evictions, &CacheStats::entries, &CacheStats::capacity,
        &CacheStats::bytes, &CacheStats::capacity_bytes, &CacheStats::builds, &CacheStats::build_failures,
        &CacheStats::build_micros, &CacheStats::disk_loads, &CacheStats::load_micros, &CacheStats::disk_stores,
        &CacheStats::disk_skips, &CacheStats::disk_rejects, &CacheStats::other_process_builds, &CacheStats::not_ready})
    total.*member += more.*member;
}

}  // namespace

struct InferenceService::Replica {
  std::shared_ptr<embed::Model> model;  // guarded by mutex_, as are reloading, waiting and retired
  Reload reload;
  std::string label;
  bool reloading = false;
  std::vector<Promise<std::shared_ptr<embed::Model>>> waiting;  // for the reload under way
  // Replaced models, dropped off their own threads: a model's destructor joins its thread, and a batch that failed
  // on it runs there.
  std::vector<std::shared_ptr<embed::Model>> retired;
  std::thread reloader;
  std::atomic<bool> recovering{false};
  std::atomic<std::uint64_t> batches{0}, requests{0}, tokens{0};
};

std::string replica_label(const DevicePool& pool, std::size_t index) {
  // A plain loop: clang 14's ranges reject views::iota.
  bool repeated = false;
  for (std::size_t j = 0; j < pool.size(); ++j) repeated = repeated || (j != index && pool.spec(j) == pool.spec(index));
  return repeated ? fmt::format("{}#{}", pool.spec(index), index) : pool.spec(index);
}

std::vector<std::unique_ptr<InferenceService::Replica>> InferenceService::make_replicas(
    std::vector<ReplicaModel> models, const std::optional<DevicePool>& pool) {
  std::vector<std::unique_ptr<Replica>> replicas;
  for (std::size_t i = 0; i < models.size(); ++i) {
    auto replica = std::make_unique<Replica>();
    replica->label = models[i].model->device().name();
    if (pool && i < pool->size()) replica->label = replica_label(*pool, i);
    replica->model = std::move(models[i].model);
    replica->reload = std::move(models[i].reload);
    replicas.push_back(std::move(replica));
  }
  return replicas;
}

BatcherOptions InferenceService::scaled(BatcherOptions options, std::size_t replicas) {
  options.replicas = static_cast<unsigned>(std::max<std::size_t>(1, replicas));
  options.in_flight = std::max(1u, options.in_flight) * options.replicas;
  return options;
}

InferenceService::InferenceService(std::shared_ptr<embed::Model> model, Reload reload, BatcherOptions options,
                                   Metrics& metrics)
    : InferenceService(std::vector<ReplicaModel>{{.model = std::move(model), .reload = std::move(reload)}},
                       std::nullopt, options, metrics) {}

InferenceService::InferenceService(std::vector<ReplicaModel> replicas, std::optional<DevicePool> pool,
                                   BatcherOptions options, Metrics& metrics)
    : metrics_(metrics),
      pool_(std::move(pool)),
      replicas_(make_replicas(std::move(replicas), pool_)),
      batcher_(scaled(options, replicas_.size()),
               [this](std::vector<PendingRun> batch) { return run(std::move(batch)); }) {}

InferenceService::~InferenceService() { stop(); }

void InferenceService::stop() {
  stopping_.store(true);
  batcher_.stop();  // every batch is answered; a replica's reload may still be under way (with a pool)
  std::vector<std::thread> reloaders;
  {
    std::lock_guard lock(mutex_);  // no batch runs now, so no reload starts: these are the last
    for (auto& replica : replicas_) reloaders.push_back(std::move(replica->reloader));
  }
  for (std::thread& reloader : reloaders)
    if (reloader.joinable()) reloader.join();
}

std::shared_ptr<embed::Model> InferenceService::model() const { return model_of(0); }

std::shared_ptr<embed::Model> InferenceService::model_of(std::size_t replica) const {
  std::lock_guard lock(mutex_);
  return replicas_[replica]->model;
}

embed::ModelStats InferenceService::stats() const {
  embed::ModelStats total;
  std::vector<std::uint32_t> devices;
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    const std::shared_ptr<embed::Model> model = model_of(i);
    const embed::ModelStats stats = model->stats();
    total.runs += stats.runs;
    total.sequences += stats.sequences;
    total.tokens += stats.tokens;
    total.padded_tokens += stats.padded_tokens;
    if (std::find(devices.begin(), devices.end(), model->device().id()) != devices.end()) continue;
    devices.push_back(model->device().id());
    for (const CacheStats& cache : stats.caches) {
      const auto same = std::find_if(total.caches.begin(), total.caches.end(),
                                     [&](const CacheStats& seen) { return seen.name == cache.name; });
      if (same == total.caches.end()) {
        total.caches.push_back(cache);
      } else {
        add_cache(*same, cache);
      }
    }
  }
  return total;
}

bool InferenceService::recovering() const {
  if (!pool_) return replicas_.front()->recovering.load(std::memory_order_relaxed);
  for (const ReplicaStatus& replica : replicas())
    if (replica.up) return false;
  return true;
}

std::vector<ReplicaStatus> InferenceService::replicas() const {
  std::vector<ReplicaStatus> all;
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    const Replica& replica = *replicas_[i];
    ReplicaStatus status{.device = replica.label,
                         .batches = replica.batches.load(std::memory_order_relaxed),
                         .requests = replica.requests.load(std::memory_order_relaxed),
                         .tokens = replica.tokens.load(std::memory_order_relaxed)};
    if (pool_) {
      const PooledDeviceState state = pool_->state(i);
      status.up = state.usable;
      status.tokens_in_flight = state.weight_in_flight;
      if (!state.health.ok()) {
        status.reason = state.health.to_string();
      } else if (!state.down.ok()) {
        status.reason = "being replaced after " + state.down.to_string();
      }
    } else {
      const Status health = model_of(i)->device().health();
      status.up = health.ok() && !replica.recovering.load(std::memory_order_relaxed);
      if (!health.ok()) {
        status.reason = health.to_string();
      } else if (!status.up) {
        status.reason = "the device lost its context and is being replaced";
      }
    }
    all.push_back(std::move(status));
  }
  return all;
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
  const std::uint64_t weight = packed.ids.size();

  std::size_t replica = 0;
  std::optional<Placement> placed;
  Result<embed::Embeddings> result = unavailable("no replica of the model is up");
  if (pool_) {
    Result<Placement> place = pool_->place(PlacementPolicy::least_loaded, weight);
    if (place.ok()) {
      placed = *place;
      replica = place->index;
    } else {
      result = place.status();
    }
  }
  std::shared_ptr<embed::Model> model = model_of(replica);
  if (!pool_ || placed) result = co_await call(*model, packed, kind);
  if (!result.ok() && placed && device_gone(result.status(), *model)) {
    // The replica is taken out and reloaded; the batch runs once more on another replica, if one is up.
    metrics_.count_retry();
    lose(replica, *placed, result.status(), model);
    placed.reset();
    if (Result<Placement> again = pool_->place(PlacementPolicy::least_loaded, weight); again.ok()) {
      placed = *again;
      replica = again->index;
      model = model_of(replica);
      result = co_await call(*model, packed, kind);
      if (!result.ok() && device_gone(result.status(), *model)) {
        lose(replica, *placed, result.status(), model);
        placed.reset();
      }
    }
  } else if (!result.ok() && context_gone(result.code()) && !pool_ && replicas_.front()->reload) {
    replicas_.front()->recovering.store(true, std::memory_order_relaxed);
    metrics_.count_retry();
    Result<std::shared_ptr<embed::Model>> replacement = co_await replace(0, std::move(model));
    if (replacement.ok()) {
      model = std::move(*replacement);
      result = co_await call(*model, std::move(packed), kind);
    }
  }
  if (!pool_ && (result.ok() || !context_gone(result.code())))
    replicas_.front()->recovering.store(false, std::memory_order_relaxed);
  if (placed) pool_->finish(*placed, result.status());
  if (result.ok()) {
    Replica& ran = *replicas_[replica];
    ran.batches.fetch_add(1, std::memory_order_relaxed);
    ran.requests.fetch_add(batch.size(), std::memory_order_relaxed);
    ran.tokens.fetch_add(weight, std::memory_order_relaxed);
  }
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

void InferenceService::lose(std::size_t index, const Placement& placed, const Status& why,
                            std::shared_ptr<embed::Model> failed) {
  Replica& replica = *replicas_[index];
  {
    // Under the lock that a reload swaps the model under: a device marked down here is cleared by that reload's
    // refresh, which follows the swap.
    std::lock_guard lock(mutex_);
    if (replica.model != failed) {  // an older model's failure: the replica was loaded again since
      pool_->finish(placed, Status());
      return;
    }
    pool_->finish(placed, why);
    pool_->mark_down(placed.index, why);
  }
  replica.recovering.store(true, std::memory_order_relaxed);
  if (replica.reload) static_cast<void>(replace(index, std::move(failed)));
}

Future<std::shared_ptr<embed::Model>> InferenceService::replace(std::size_t index,
                                                                std::shared_ptr<embed::Model> failed) {
  Promise<std::shared_ptr<embed::Model>> replaced;
  Future<std::shared_ptr<embed::Model>> future = replaced.future();
  Replica& replica = *replicas_[index];
  std::lock_guard lock(mutex_);
  // Kept, not dropped here: this may be the failed model's own thread. A second hold of the same one may go.
  const bool current = replica.model == failed;
  if (replica.retired.empty() || replica.retired.back() != failed) replica.retired.push_back(std::move(failed));
  if (!current) {
    replaced.set(replica.model);
    return future;
  }
  replica.waiting.push_back(std::move(replaced));
  if (replica.reloading) return future;
  replica.reloading = true;
  // The previous reload is over: it cleared `reloading` before it answered its waiters, which need no lock.
  if (replica.reloader.joinable()) replica.reloader.join();
  replica.reloader = std::thread([this, index, &replica] {
    Result<std::shared_ptr<embed::Model>> loaded = replica.reload();
    // With a pool, no batch comes to a replica that is down: its reload is tried again (after 100 ms, doubling to
    // 2 s) while the device is healthy, until the service stops.
    for (auto wait = 100ms; pool_ && !loaded.ok() && !stopping_.load() && pool_->device(index).health().ok();
         wait = std::min(2 * wait, std::chrono::milliseconds(2000))) {
      for (auto slept = 0ms; slept < wait && !stopping_.load(); slept += 50ms) std::this_thread::sleep_for(50ms);
      if (!stopping_.load()) loaded = replica.reload();
    }
    std::vector<Promise<std::shared_ptr<embed::Model>>> waiting;
    std::vector<std::shared_ptr<embed::Model>> retired;
    std::shared_ptr<embed::Model> now;
    {
      std::lock_guard lock(mutex_);
      if (loaded.ok()) replica.model = std::move(*loaded);
      now = replica.model;
      replica.reloading = false;
      waiting.swap(replica.waiting);
      if (loaded.ok()) retired.swap(replica.retired);
    }
    retired.clear();
    if (pool_ && loaded.ok() && pool_->refresh(index).ok()) replica.recovering.store(false, std::memory_order_relaxed);
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
