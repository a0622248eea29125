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
//
// Served on several devices (`accel serve --devices`), the service holds a replica of the model per device of a
// DevicePool and runs up to `in_flight` batches per replica at once, each on the replica whose device has the
// fewest tokens in flight. A batch that lost its replica's context marks the device down in the pool (no batch
// goes there), starts that replica's reload in the background and runs once more on another replica, if one is up;
// otherwise its requests get the error. Once the reload is done the pool finds the device answering and the
// replica serves again; a reload that fails is tried again (backing off to every 2 s) while the device is healthy.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "accel/core/future.hpp"
#include "accel/device/pool.hpp"
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

// Loads a model again on the same device; empty where the device cannot come back (no retry then).
using ModelReload = std::function<Result<std::shared_ptr<embed::Model>>()>;

// How the pool's device at `index` is named in /health and the log: its list entry, with "#index" when the entry is
// listed twice ("cuda:0#1").
[[nodiscard]] std::string replica_label(const DevicePool& pool, std::size_t index);

// One replica of the model: the one loaded on device i of the service's pool (or on the one device without a pool).
struct ReplicaModel {
  std::shared_ptr<embed::Model> model;
  ModelReload reload;
};

class InferenceService {
 public:
  using Reload = ModelReload;

  InferenceService(std::shared_ptr<embed::Model> model, Reload reload, BatcherOptions options, Metrics& metrics);
  // `replicas[i]` runs on `pool`'s device i (one replica per device); without a pool, one replica on its device.
  InferenceService(std::vector<ReplicaModel> replicas, std::optional<DevicePool> pool, BatcherOptions options,
                   Metrics& metrics);
  InferenceService(const InferenceService&) = delete;
  InferenceService& operator=(const InferenceService&) = delete;
  ~InferenceService();

  // The rows of `tokens`' sequences (`kind` says which), in order, to come; or at once, the queue's refusal:
  // resource_exhausted when it is full, failed_precondition once stopping.
  // `times`, if given, must live until the answer comes: it is written just before.
  [[nodiscard]] Result<Future<embed::Embeddings>> submit(embed::TokenBatch tokens, RunKind kind = RunKind::pooled,
                                                         RunTimes* times = nullptr);

  // Answers everything queued, then refuses.
  void stop();

  [[nodiscard]] QueueDepth depth() const { return batcher_.depth(); }
  // Without a pool: true from a batch that lost the device's context until a batch runs again. With one: true
  // while no replica is up.
  [[nodiscard]] bool recovering() const;
  // Whether the service runs replicas over a DevicePool.
  [[nodiscard]] bool pooled() const noexcept { return pool_.has_value(); }
  // The model now served (a new one after a reload); with replicas, the first one's.
  [[nodiscard]] std::shared_ptr<embed::Model> model() const;
  // Every replica's state, in device order.
  [[nodiscard]] std::vector<ReplicaStatus> replicas() const;
  // The model's statistics over every replica: their runs, sequences and tokens added up, and each cache added up by
  // name over the replicas' devices (a device two replicas share counted once).
  [[nodiscard]] embed::ModelStats stats() const;

 private:
  struct Replica;
  static std::vector<std::unique_ptr<Replica>> make_replicas(std::vector<ReplicaModel> models,
                                                             const std::optional<DevicePool>& pool);
  static BatcherOptions scaled(BatcherOptions options, std::size_t replicas);

  Future<Done> run(std::vector<PendingRun> batch);
  // One kind's requests of a batch, packed into one model call.
  Future<Done> run_kind(std::vector<PendingRun> batch, RunKind kind);
  [[nodiscard]] std::shared_ptr<embed::Model> model_of(std::size_t replica) const;
  // The model to retry on: `failed` reloaded, or the one that already replaced it.
  Future<std::shared_ptr<embed::Model>> replace(std::size_t replica, std::shared_ptr<embed::Model> failed);
  // The replica's device lost the context under `placed`: it goes down in the pool and its model is loaded again.
  void lose(std::size_t replica, const Placement& placed, const Status& why, std::shared_ptr<embed::Model> failed);
  void answer(std::vector<PendingRun>& batch, const embed::Embeddings& embeddings, RunKind kind) const;

  Metrics& metrics_;
  std::optional<DevicePool> pool_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Replica>> replicas_;  // fixed after construction
  std::atomic<bool> stopping_{false};
  Batcher<PendingRun> batcher_;  // last: its thread starts once the members it uses are there
};

}  // namespace accel::serve
