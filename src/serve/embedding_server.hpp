// accel::serve::EmbeddingServer — the HTTP/1.1 front of one or more models, each behind an InferenceService of its
// own (served_models.hpp): every route of the route tables (openai_routes.hpp: POST /v1/embeddings, /v1/rerank,
// GET /v1/models; tei_routes.hpp: POST /embed, /embed_sparse, /embed_all, /rerank, /predict, /similarity,
// /tokenize, /decode, GET /info), GET /health and GET /metrics (Prometheus, labelled by model). All routes are
// served whatever the model; one its head does not fit says why (424). A request is for the model its "model"
// field names (GET: ?model=), else the first.
//
// Threads: cpp-httplib's pool serves connections (one thread per connection while it is open); a request is
// parsed and tokenised on its connection's thread, queued, and waited for there; the batcher's thread forms
// batches; the model's device answers them. The server listens before the models are there (start(), then
// attach()), so /health says 503 until every one is loaded and warm.
//
// With ServeOptions::access_log, each request answered is written as a JSON line (access_log.hpp). With
// ServeOptions::tracing's otlp_endpoint, each becomes spans sent to an OpenTelemetry collector (request_tracing.hpp),
// continuing the trace of a W3C traceparent header; /metrics then counts the spans exported, dropped and failed.
//
// Errors are JSON in the shape of the route's API family (ApiError, error_body), also those cpp-httplib answers
// itself (404 for an unknown route, 413 for a body over max_body_bytes, 408 for a request that did not arrive whole
// within request_timeout_seconds).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "accel/core/result.hpp"
#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "serve/access_log.hpp"
#include "serve/embed_request.hpp"
#include "serve/endpoint.hpp"
#include "serve/inference_service.hpp"
#include "serve/metrics.hpp"
#include "serve/request_tracing.hpp"
#include "serve/serve_options.hpp"
#include "serve/served_models.hpp"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace accel::serve {

class HttpListener;

class EmbeddingServer {
 public:
  explicit EmbeddingServer(ServeOptions options);
  EmbeddingServer(const EmbeddingServer&) = delete;
  EmbeddingServer& operator=(const EmbeddingServer&) = delete;
  ~EmbeddingServer();

  // Binds and serves on threads of its own; returns the port bound. Until attach(), /health and the embedding
  // endpoints answer 503.
  Result<int> start();

  // Serves `model` (loaded and warmed by Model::load) from now on; `device` is the one it runs on, whose health
  // /health reports. `reload` loads the model again after the device lost its context (InferenceService).
  void attach(std::shared_ptr<embed::Model> model, Device device, InferenceService::Reload reload = {});
  // Serves every one of `models` from now on, the first by default; invalid_argument (and nothing attached) for
  // none, or two of one name.
  [[nodiscard]] Status attach(std::vector<ServedModel> models);

  // Graceful: stops accepting connections, answers every request already taken (waiting for their batches),
  // closes kept-alive connections once idle, then returns. Idempotent.
  void stop();

  [[nodiscard]] bool serving() const noexcept { return serving_.load(); }

 private:
  [[nodiscard]] std::shared_ptr<ServedModels> attached() const;
  void route();
  // Runs `endpoint` (an entry of the route tables) on the model attached now.
  void serve_route(const Endpoint& endpoint, const httplib::Request& http, httplib::Response& response);
  void health(httplib::Response& response) const;
  [[nodiscard]] std::string metrics() const;

  ServeOptions options_;
  Metrics metrics_;
  std::unique_ptr<HttpListener> http_;
  std::unique_ptr<AccessLog> access_log_;  // null unless options_.access_log
  std::unique_ptr<RequestTracer> tracer_;  // null unless options_.tracing.otlp_endpoint
  std::thread listener_;
  std::atomic<bool> serving_{false};
  std::atomic<bool> draining_{false};
  mutable std::mutex mutex_;
  std::shared_ptr<ServedModels> attached_;
  std::once_flag stopped_;
};

}  // namespace accel::serve
