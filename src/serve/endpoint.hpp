// accel::serve::Endpoint — one route of the server as one entry of its table: the method and path, the API family
// whose error shape its refusals take, and the route's three stages, parse (the body into a request, every field's
// type checked), run (the request through the model) and render (the response's JSON).
//
// Each route family has one file that lists its entries (openai_routes.cpp, tei_routes.cpp); the server registers
// whatever the tables hold, counts requests by their paths, and writes every error of a route — its own, and those
// cpp-httplib answers for it — in the route's family's shape. A route whose model head does not fit (a rerank on an
// embedding model) is still in the table and says why in its error.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "accel/embed/model.hpp"
#include "serve/access_log.hpp"
#include "serve/api_error.hpp"
#include "serve/embed_request.hpp"
#include "serve/inference_service.hpp"
#include "serve/metrics.hpp"
#include "serve/request_trace.hpp"
#include "serve/serve_options.hpp"

namespace accel::serve {

// What a route's run sees: the model the request is for (as served when it arrived), the service that batches its
// work, the limits its body was checked against, and the server's options.
struct RouteContext {
  std::string_view name;  // the model's served name (requests' "model", responses' "model", /info's model_id)
  std::shared_ptr<embed::Model> model;
  InferenceService& service;
  const RequestLimits& limits;
  const ServeOptions& options;             // the server's, with the model's own (ModelSlot::options)
  Metrics& metrics;                        // the model's
  const std::vector<std::string>& models;  // the names of every model served, the default first
  RequestTrace& trace;                     // what this request did, for the access log and its spans
};

struct Endpoint {
  enum class Method : std::uint8_t { get, post };
  using Handle = std::function<ApiResult<std::string>(std::string_view body, RouteContext& context)>;

  Method method = Method::post;
  std::string_view path;
  ApiFamily family = ApiFamily::openai;
  // parse, run and render in one: the JSON to answer 200 with, or the error to answer in `family`'s shape.
  Handle handle;
};

// The entry of a route type with the three stages as static functions:
//   static ApiResult<Request> parse(std::string_view body, const RouteContext&);
//   static ApiResult<Response> run(Request&, RouteContext&);
//   static std::string render(const Response&, const Request&);
template <class Route>
Endpoint endpoint_of(Endpoint::Method method, std::string_view path, ApiFamily family) {
  return {method, path, family, [](std::string_view body, RouteContext& context) -> ApiResult<std::string> {
            auto request = Route::parse(body, context);
            if (auto* error = std::get_if<ApiError>(&request)) return std::move(*error);
            auto response = Route::run(std::get<0>(request), context);
            if (auto* error = std::get_if<ApiError>(&response)) return std::move(*error);
            const auto serializing = std::chrono::steady_clock::now();
            std::string body_out = Route::render(std::get<0>(response), std::get<0>(request));
            const auto serialized = std::chrono::steady_clock::now();
            context.trace.serialize_seconds = std::chrono::duration<double>(serialized - serializing).count();
            context.trace.record(Stage::serialize, serializing, serialized);
            context.metrics.observe_stage(Stage::serialize, context.trace.serialize_seconds);
            return body_out;
          }};
}

}  // namespace accel::serve
