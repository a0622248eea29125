#include "serve/api_error.hpp"

#include <nlohmann/json.hpp>

namespace accel::serve {
namespace {

std::string openai_type(int status) {
  if (status == 429) return "rate_limit_error";
  return status >= 500 ? "server_error" : "invalid_request_error";
}

// TEI's error types, and the statuses TEI answers them with (413 Validation, 429 Overloaded, 503 Unhealthy,
// 424 Backend: also a route the model cannot serve, as TEI answers /rerank on an embedding model); a malformed body,
// which TEI's framework rejects before its own code, is answered 400 here.
std::string tei_type(int status) {
  switch (status) {
    case 413: return "Validation";
    case 424: return "Backend";
    case 429: return "Overloaded";
    case 503: return "Unhealthy";
    default: return status >= 500 ? "Backend" : "Validation";
  }
}

}  // namespace

ApiError ApiError::from(const Status& status) {
  int http = 500;
  switch (status.code()) {
    case Code::invalid_argument: http = 400; break;
    case Code::resource_exhausted: http = 429; break;
    case Code::failed_precondition:
    case Code::unavailable:
    case Code::context_lost:
    case Code::stale_handle: http = 503; break;
    default: break;
  }
  return {http, std::string(status.message()), "", std::string(to_string(status.code()))};
}

ApiError ApiError::refused(const Status& status) {
  const bool full = status.code() == Code::resource_exhausted;
  return {full ? 429 : 503, std::string(status.message()), "", full ? "queue_full" : "shutting_down"};
}

std::string ApiError::openai_body() const {
  nlohmann::json error = {{"message", message},
                          {"type", openai_type(status)},
                          {"param", param.empty() ? nlohmann::json() : nlohmann::json(param)},
                          {"code", code.empty() ? nlohmann::json() : nlohmann::json(code)}};
  return nlohmann::json{{"error", std::move(error)}}.dump();
}

std::string ApiError::tei_body() const {
  return nlohmann::json{{"error", message}, {"error_type", tei_type(status)}}.dump();
}

ApiError bad_type(const std::string& field, std::string_view expected) {
  return {400, "'" + field + "' must be " + std::string(expected), field, "invalid_type"};
}

std::string error_body(ApiFamily family, const ApiError& error) {
  return family == ApiFamily::tei ? error.tei_body() : error.openai_body();
}

}  // namespace accel::serve
