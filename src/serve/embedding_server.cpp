#include "serve/embedding_server.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "serve/deadline_http_server.hpp"
#include "serve/model_stats_cache.hpp"
#include "serve/openai_api.hpp"
#include "serve/tei_api.hpp"

namespace accel::serve {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kJson = "application/json";

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Requests are counted by route; anything else is one label, so that scanners cannot grow the label set.
std::string_view endpoint_label(const std::string& path) {
  for (std::string_view known : {"/v1/embeddings", "/embed", "/health", "/metrics"})
    if (path == known) return known;
  return "other";
}

void send_error(httplib::Response& response, const ApiError& error, bool tei) {
  response.status = error.status;
  if (error.status == 429) response.set_header("Retry-After", "1");
  response.set_content(tei ? error.tei_body() : error.openai_body(), kJson);
}

// Whether the request carries "Authorization: Bearer <key>", compared in constant time: the time taken depends on
// the key's length, never on how much of it a guess got right.
bool authorized(const httplib::Request& http, std::string_view key) {
  constexpr std::string_view kScheme = "Bearer ";
  const std::string& header = http.get_header_value("Authorization");
  if (header.size() != kScheme.size() + key.size() || !header.starts_with(kScheme)) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < key.size(); ++i)
    difference |= static_cast<unsigned char>(header[kScheme.size() + i] ^ key[i]);
  return difference == 0;
}

// Token ids of the request's inputs. A text over the maximum is refused as too long (413) only when cutting it
// would have tokenised it: the model's refusal does not say which of its checks refused.
ApiResult<embed::TokenBatch> tokenize(const embed::Model& model, const EmbedRequest& request) {
  if (request.texts.empty()) {
    embed::TokenBatch batch;
    for (const auto& sequence : request.token_inputs) batch.append(sequence);
    return batch;
  }
  Result<embed::TokenBatch> tokens = model.tokenize(
      request.texts, {.truncation = request.truncate ? embed::Truncation::right : embed::Truncation::refuse});
  if (tokens.ok()) return std::move(*tokens);
  ApiError error = ApiError::from(tokens.status());
  if (tokens.code() == Code::invalid_argument && !request.truncate &&
      model.tokenize(request.texts, {.truncation = embed::Truncation::right}).ok()) {
    error.status = 413;
    error.code = "input_too_long";
    error.message += fmt::format(" (max_sequence_length {})", model.info().max_sequence_length);
  }
  return error;
}

}  // namespace

// cpp-httplib's server held to a deadline per request (DeadlineHttpServer), with a listen backlog that holds many
// connections arriving at once: the library's is 5, fixed when Debian built it, so that of 64 clients connecting
// together most wait for a SYN retransmission (a second or more) or give up. Linux takes a second listen() on a
// listening socket as a new backlog.
class HttpListener final : public DeadlineHttpServer {
 public:
  void widen_backlog() { ::listen(svr_sock_, SOMAXCONN); }
};

struct EmbeddingServer::Attached {
  Attached(std::shared_ptr<embed::Model> model, Device device, EmbeddingService::Reload reload,
           const ServeOptions& options, Metrics& metrics)
      : device(std::move(device)),
        limits{.max_inputs = options.max_inputs,
               .max_sequence_length = model->info().max_sequence_length,
               .dimensions = model->info().dimensions,
               .vocabulary = model->info().vocabulary},
        service(std::move(model), std::move(reload), options.batching, metrics),
        stats([this] { return service.model()->stats(); }, std::chrono::seconds(1)) {}

  Device device;
  RequestLimits limits;
  EmbeddingService service;
  ModelStatsCache stats;  // after the service it reads
};

EmbeddingServer::EmbeddingServer(ServeOptions options)
    : options_(std::move(options)), http_(std::make_unique<HttpListener>()) {}

EmbeddingServer::~EmbeddingServer() { stop(); }

Result<int> EmbeddingServer::start() {
  route();
  int port = options_.port;
  if (port == 0) {
    port = http_->bind_to_any_port(options_.host);
  } else if (!http_->bind_to_port(options_.host, port)) {
    port = -1;
  }
  if (port < 0)
    return unavailable(fmt::format("cannot listen on {}:{}: {}", options_.host, options_.port, std::strerror(errno)));
  http_->widen_backlog();
  serving_ = true;
  listener_ = std::thread([this] {
    http_->listen_after_bind();
    serving_ = false;
  });
  // stop() does nothing to a server that has not begun listening: wait until it has.
  while (!http_->is_running() && serving_) std::this_thread::yield();
  return port;
}

void EmbeddingServer::attach(std::shared_ptr<embed::Model> model, Device device, EmbeddingService::Reload reload) {
  auto attached =
      std::make_shared<Attached>(std::move(model), std::move(device), std::move(reload), options_, metrics_);
  std::lock_guard lock(mutex_);
  attached_ = std::move(attached);
}

void EmbeddingServer::stop() {
  std::call_once(stopped_, [this] {
    draining_ = true;
    http_->stop();
    if (listener_.joinable()) listener_.join();
    // Every handler has returned, so nothing waits on the queue any more; this only joins the batcher.
    if (std::shared_ptr<Attached> attached = this->attached()) attached->service.stop();
  });
}

std::shared_ptr<EmbeddingServer::Attached> EmbeddingServer::attached() const {
  std::lock_guard lock(mutex_);
  return attached_;
}

void EmbeddingServer::route() {
  http_->new_task_queue = [threads = options_.http_threads] { return new httplib::ThreadPool(threads); };
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_keep_alive_max_count(std::numeric_limits<std::size_t>::max());
  http_->set_keep_alive_timeout(options_.keep_alive_seconds);
  http_->set_tcp_nodelay(true);
  http_->set_read_timeout(options_.io_timeout_seconds, 0);
  http_->set_write_timeout(options_.io_timeout_seconds, 0);
  http_->set_request_timeout(std::chrono::seconds(options_.request_timeout_seconds));
  http_->set_pre_routing_handler([this](const httplib::Request& http, httplib::Response& response) {
    if (options_.api_key.empty() || http.path == "/health" || authorized(http, options_.api_key))
      return httplib::Server::HandlerResponse::Unhandled;
    // No detail: which part was wrong (no header, another scheme, another key) helps only a guesser.
    response.set_header("WWW-Authenticate", "Bearer");
    send_error(response, {401, "unauthorized", "", "unauthorized"}, http.path == "/embed");
    return httplib::Server::HandlerResponse::Handled;
  });

  http_->Post("/v1/embeddings", [this](const httplib::Request& http, httplib::Response& response) {
    embed(http, response, Api::openai);
  });
  http_->Post("/embed",
              [this](const httplib::Request& http, httplib::Response& response) { embed(http, response, Api::tei); });
  http_->Get("/health", [this](const httplib::Request&, httplib::Response& response) { health(response); });
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    std::shared_ptr<Attached> attached = this->attached();
    std::optional<embed::ModelStats> model;
    if (attached) model = attached->stats.latest();
    const bool ready = attached && !draining_ && attached->device.health().ok() && !attached->service.recovering();
    response.set_content(metrics_.render(attached ? attached->service.depth() : QueueDepth{}, ready, model),
                         "text/plain; version=0.0.4");
  });

  // What cpp-httplib answers itself (an unknown route, a body over the limit, a malformed request) gets a JSON
  // body too; a body a handler wrote is left alone.
  http_->set_error_handler(
      httplib::Server::HandlerWithResponse([this](const httplib::Request& http, httplib::Response& response) {
        if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        ApiError error{response.status, fmt::format("HTTP {}", response.status), "", "http_error"};
        if (DeadlineHttpServer::request_timed_out()) {
          // cpp-httplib says 400 for any read that failed; this one failed because the client was too slow.
          error = {408,
                   fmt::format("the request did not arrive whole within request_timeout_seconds ({})",
                               options_.request_timeout_seconds),
                   "", "request_timeout"};
          response.set_header("Connection", "close");
        } else if (response.status == 404) {
          error = {404, fmt::format("no route for {} {}", http.method, http.path), "", "not_found"};
        } else if (response.status == 413) {
          error = {413, fmt::format("the request body is larger than max_body_bytes ({})", options_.max_body_bytes), "",
                   "body_too_large"};
        }
        send_error(response, error, http.path == "/embed");
        return httplib::Server::HandlerResponse::Handled;
      }));
  http_->set_exception_handler([](const httplib::Request& http, httplib::Response& response, std::exception_ptr) {
    send_error(response, {500, "the server failed on this request", "", "internal"}, http.path == "/embed");
  });
  http_->set_logger([this](const httplib::Request& http, const httplib::Response& response) {
    metrics_.count_request(endpoint_label(http.path), response.status);
  });
}

void EmbeddingServer::health(httplib::Response& response) const {
  std::shared_ptr<Attached> attached = this->attached();
  std::string reason;
  if (draining_) {
    reason = "shutting down";
  } else if (!attached) {
    reason = "the model is loading";
  } else if (Status device = attached->device.health(); !device.ok()) {
    reason = "the device cannot serve: " + device.to_string();
  } else if (attached->service.recovering()) {
    reason = "the device lost its context and is being replaced";
  }
  response.status = reason.empty() ? 200 : 503;
  response.set_content(reason.empty() ? nlohmann::json{{"status", "ok"}}.dump()
                                      : nlohmann::json{{"status", "unavailable"}, {"reason", reason}}.dump(),
                       kJson);
}

void EmbeddingServer::embed(const httplib::Request& http, httplib::Response& response, Api api) {
  const Clock::time_point arrived = Clock::now();
  const bool tei = api == Api::tei;
  std::shared_ptr<Attached> attached = this->attached();
  if (!attached) return send_error(response, {503, "the model is loading", "", "model_not_ready"}, tei);

  ApiResult<EmbedRequest> parsed =
      tei ? parse_tei_request(http.body, attached->limits) : parse_openai_request(http.body, attached->limits);
  if (const auto* error = std::get_if<ApiError>(&parsed)) return send_error(response, *error, tei);
  EmbedRequest& request = std::get<EmbedRequest>(parsed);
  if (request.model.empty()) request.model = attached->service.model()->info().name;

  const Clock::time_point tokenizing = Clock::now();
  ApiResult<embed::TokenBatch> tokens = tokenize(*attached->service.model(), request);
  metrics_.observe_stage(Stage::tokenize, seconds_since(tokenizing));
  if (const auto* error = std::get_if<ApiError>(&tokens)) return send_error(response, *error, tei);
  const std::size_t token_count = std::get<embed::TokenBatch>(tokens).ids.size();

  Result<Future<embed::Embeddings>> queued = attached->service.submit(std::move(std::get<embed::TokenBatch>(tokens)));
  if (!queued.ok()) return send_error(response, ApiError::refused(queued.status()), tei);
  Result<embed::Embeddings> embeddings = queued->wait();
  if (!embeddings.ok()) return send_error(response, ApiError::from(embeddings.status()), tei);
  metrics_.count_inputs(request.inputs(), token_count);

  const Clock::time_point serializing = Clock::now();
  response.set_content(tei ? tei_response(*embeddings) : openai_response(*embeddings, request), kJson);
  metrics_.observe_stage(Stage::serialize, seconds_since(serializing));
  metrics_.observe_request(seconds_since(arrived));
}

}  // namespace accel::serve
