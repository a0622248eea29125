#include "serve/embedding_server.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "serve/deadline_http_server.hpp"
#include "serve/openai_routes.hpp"
#include "serve/tei_routes.hpp"

namespace accel::serve {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kJson = "application/json";

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// When the route's handler on this thread returned, until cpp-httplib has written its response (and calls the
// logger): the Stage::respond histogram's start. Unset for what no route of the model answered.
thread_local std::optional<Clock::time_point> handler_returned;
// The metrics of the model that answered it, which the Stage::respond histogram is of.
thread_local Metrics* responding_model = nullptr;
// What the request this thread is answering did: filled by serve_route and its route, written to the access log
// and cleared by the logger, which cpp-httplib calls on the same thread once the response is written.
thread_local RequestTrace current_trace;

// Every route of the server: the model's, by API family. Built once; the server registers each entry.
const std::vector<Endpoint>& endpoints() {
  static const std::vector<Endpoint> table = [] {
    std::vector<Endpoint> all = openai_endpoints();
    for (std::vector<Endpoint> family : {tei_endpoints(), tei_token_endpoints()})
      all.insert(all.end(), std::make_move_iterator(family.begin()), std::make_move_iterator(family.end()));
    return all;
  }();
  return table;
}

const Endpoint* endpoint_at(std::string_view path) {
  for (const Endpoint& endpoint : endpoints())
    if (endpoint.path == path) return &endpoint;
  return nullptr;
}

// Requests are counted by route; anything else is one label, so that scanners cannot grow the label set.
std::string_view endpoint_label(const std::string& path) {
  if (const Endpoint* endpoint = endpoint_at(path)) return endpoint->path;
  for (std::string_view own : {"/health", "/metrics"})
    if (path == own) return own;
  return "other";
}

// An error in the shape of the family of the route at `path`; OpenAI's for a path no route of ours owns.
void send_error(httplib::Response& response, const ApiError& error, std::string_view path) {
  const Endpoint* endpoint = endpoint_at(path);
  response.status = error.status;
  if (error.status == 429) response.set_header("Retry-After", "1");
  response.set_content(error_body(endpoint ? endpoint->family : ApiFamily::openai, error), kJson);
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

}  // namespace

// cpp-httplib's server held to a deadline per request (DeadlineHttpServer), with a listen backlog that holds many
// connections arriving at once: the library's is 5, fixed when Debian built it, so that of 64 clients connecting
// together most wait for a SYN retransmission (a second or more) or give up. Linux takes a second listen() on a
// listening socket as a new backlog.
class HttpListener final : public DeadlineHttpServer {
 public:
  void widen_backlog() { ::listen(svr_sock_, SOMAXCONN); }
};

EmbeddingServer::EmbeddingServer(ServeOptions options)
    : options_(std::move(options)), http_(std::make_unique<HttpListener>()) {}

EmbeddingServer::~EmbeddingServer() { stop(); }

Result<int> EmbeddingServer::start() {
  if (!options_.access_log.empty()) {
    ACCEL_ASSIGN_OR_RETURN(access_log_, AccessLog::open(options_.access_log));
  }
  if (!options_.tracing.otlp_endpoint.empty()) {
    ACCEL_ASSIGN_OR_RETURN(tracer_, RequestTracer::start(options_.tracing));
  }
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

void EmbeddingServer::attach(std::shared_ptr<embed::Model> model, Device device, InferenceService::Reload reload) {
  std::vector<ServedModel> one;
  one.push_back({std::move(model), std::move(device), std::move(reload), {}});
  static_cast<void>(attach(std::move(one)));  // one model, which has a name: nothing to refuse
}

Status EmbeddingServer::attach(std::vector<ServedModel> models) {
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<ServedModels> served, ServedModels::make(std::move(models), options_));
  std::lock_guard lock(mutex_);
  attached_ = std::move(served);
  return Status();
}

void EmbeddingServer::stop() {
  std::call_once(stopped_, [this] {
    draining_ = true;
    http_->stop();
    if (listener_.joinable()) listener_.join();
    // Every handler has returned, so nothing waits on the queue any more; this only joins the batcher.
    if (std::shared_ptr<ServedModels> attached = this->attached()) attached->stop();
    // Every request's spans are queued: send them.
    if (tracer_) tracer_->stop();
  });
}

std::shared_ptr<ServedModels> EmbeddingServer::attached() const {
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
    current_trace = {};  // a request whose answer was never written (its client gone) left its trace here
    if (options_.api_key.empty() || http.path == "/health" || authorized(http, options_.api_key))
      return httplib::Server::HandlerResponse::Unhandled;
    // No detail: which part was wrong (no header, another scheme, another key) helps only a guesser.
    response.set_header("WWW-Authenticate", "Bearer");
    send_error(response, {401, "unauthorized", "", "unauthorized"}, http.path);
    return httplib::Server::HandlerResponse::Handled;
  });

  for (const Endpoint& endpoint : endpoints()) {
    auto handler = [this, &endpoint](const httplib::Request& http, httplib::Response& response) {
      serve_route(endpoint, http, response);
    };
    if (endpoint.method == Endpoint::Method::get) {
      http_->Get(std::string(endpoint.path), handler);
    } else {
      http_->Post(std::string(endpoint.path), handler);
    }
  }
  http_->Get("/health", [this](const httplib::Request&, httplib::Response& response) { health(response); });
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(metrics(), "text/plain; version=0.0.4");
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
        send_error(response, error, http.path);
        return httplib::Server::HandlerResponse::Handled;
      }));
  http_->set_exception_handler([](const httplib::Request& http, httplib::Response& response, std::exception_ptr) {
    send_error(response, {500, "the server failed on this request", "", "internal"}, http.path);
  });
  http_->set_logger([this](const httplib::Request& http, const httplib::Response& response) {
    // Before the count, which a client reading the metrics may wait for.
    if (handler_returned && responding_model != nullptr)
      responding_model->observe_stage(Stage::respond, seconds_since(*handler_returned));
    handler_returned.reset();
    responding_model = nullptr;
    const std::string_view route = endpoint_label(http.path);
    metrics_.count_request(route, response.status, current_trace.model);
    if (tracer_ || access_log_) {
      // Several traceparent headers are not one trace: a new one is started, as for a malformed header.
      const std::optional<TraceContext> parent = http.get_header_value_count("traceparent") == 1
                                                     ? parse_traceparent(http.get_header_value("traceparent"))
                                                     : std::nullopt;
      if (tracer_) {
        RequestTracer::identify(current_trace, parent);
      } else if (parent) {
        current_trace.trace_id = parent->trace_id;
      }
      if (access_log_) access_log_->write(http.method, route, response.status, current_trace);
      if (tracer_) {
        const Clock::time_point now = Clock::now(), began = DeadlineHttpServer::request_began();
        tracer_->finish(current_trace,
                        {.method = http.method,
                         .route = route,
                         .status = response.status,
                         .began = began == Clock::time_point{} ? now : began,
                         .ended = now},
                        parent);
      }
    }
    current_trace = {};
  });
}

void EmbeddingServer::health(httplib::Response& response) const {
  std::shared_ptr<ServedModels> attached = this->attached();
  std::string reason;
  if (draining_) {
    reason = "shutting down";
  } else if (!attached) {
    reason = "the model is loading";
  } else {
    reason = attached->unready_reason();
  }
  response.status = reason.empty() ? 200 : 503;
  nlohmann::json body =
      reason.empty() ? nlohmann::json{{"status", "ok"}} : nlohmann::json{{"status", "unavailable"}, {"reason", reason}};
  // Served on several devices: each model's replicas, whether each is up and why not.
  if (attached && !draining_) {
    nlohmann::json replicas = nlohmann::json::array();
    for (const auto& slot : attached->slots()) {
      if (!slot->service.pooled()) continue;
      for (const ReplicaStatus& replica : slot->service.replicas()) {
        nlohmann::json entry{{"model", slot->name}, {"device", replica.device}, {"up", replica.up}};
        if (!replica.reason.empty()) entry["reason"] = replica.reason;
        replicas.push_back(std::move(entry));
      }
    }
    if (!replicas.empty()) body["replicas"] = std::move(replicas);
  }
  response.set_content(body.dump(), kJson);
}

std::string EmbeddingServer::metrics() const {
  std::shared_ptr<ServedModels> attached = this->attached();
  std::vector<ModelMetrics> models;
  if (!attached) {
    // Before the models are there, the server's own counts and an unready gauge.
    static const Metrics nothing;
    models.push_back({.name = "", .metrics = &nothing});
  } else {
    for (const auto& slot : attached->slots()) {
      const bool device_ok = slot->service.pooled() || slot->device.health().ok();
      const bool ready = !draining_ && device_ok && !slot->service.recovering();
      models.push_back({.name = slot->name,
                        .metrics = &slot->metrics,
                        .depth = slot->service.depth(),
                        .ready = ready,
                        .stats = slot->stats.latest(),
                        .replicas = slot->service.replicas()});
    }
  }
  std::string text = render_metrics(metrics_, models);
  if (tracer_) text += tracer_->render_metrics();
  return text;
}

void EmbeddingServer::serve_route(const Endpoint& endpoint, const httplib::Request& http, httplib::Response& response) {
  const Clock::time_point arrived = Clock::now();
  std::shared_ptr<ServedModels> attached = this->attached();
  if (!attached) return send_error(response, {503, "the model is loading", "", "model_not_ready"}, endpoint.path);
  // Which model: only looked for when there is a choice (the body is parsed once more for it).
  std::string wanted;
  if (attached->slots().size() > 1) {
    if (endpoint.method == Endpoint::Method::get) {
      wanted = http.get_param_value("model");
    } else {
      ApiResult<std::string> named = requested_model(http.body);
      if (const auto* error = std::get_if<ApiError>(&named)) return send_error(response, *error, endpoint.path);
      wanted = std::move(std::get<std::string>(named));
    }
  }
  ApiResult<ModelSlot*> chosen = attached->select(wanted);
  if (const auto* error = std::get_if<ApiError>(&chosen)) return send_error(response, *error, endpoint.path);
  ModelSlot& slot = *std::get<ModelSlot*>(chosen);
  if (const Clock::time_point began = DeadlineHttpServer::request_began(); began != Clock::time_point{})
    slot.metrics.observe_stage(Stage::receive, std::chrono::duration<double>(arrived - began).count());
  current_trace = {.model = slot.name};
  RouteContext context{.name = slot.name,
                       .model = slot.service.model(),
                       .service = slot.service,
                       .limits = slot.limits,
                       .options = slot.options,
                       .metrics = slot.metrics,
                       .models = attached->names(),
                       .trace = current_trace};
  ApiResult<std::string> answered = endpoint.handle(http.body, context);
  current_trace.total_seconds = seconds_since(arrived);
  if (const auto* error = std::get_if<ApiError>(&answered)) return send_error(response, *error, endpoint.path);
  response.set_content(std::move(std::get<std::string>(answered)), kJson);
  slot.metrics.observe_request(current_trace.total_seconds);
  handler_returned = Clock::now();
  responding_model = &slot.metrics;
}

}  // namespace accel::serve
