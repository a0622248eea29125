#include "serve/api_error.hpp"

#include <nlohmann/json.hpp>

namespace accel::serve {
namespace {

std::string openai_type(int status) {
  if (status == 429) return "rate_limit_error";
  return status >= 500 ? "server_error" : "invalid_request_error";
}

// TEI's error types, and the statuses TEI answers them with (413 Validation, 429 Overloaded, 503 Unhealthy,
// 424 Backend); a malformed body, which TEI's framework rejects before its own code, is answered 400 here.
std::string tei_type(int status) {
  switch (status) {
    case 413: return "Validation";
    case 429: return "Overloaded";
    case 503: return "Unhealthy";
    default: return status >= 500 ? "Backend" : "Validation";
  }
}

}  // namespace

ApiError ApiError::from(const Status& status) {
  std::string message(status.message());
  switch (status.code()) {
    case Code::invalid_argument: return {400, std::move(message), "", "invalid_argument"};
    case Code::resource_exhausted: return {429, std::move(message), "", "queue_full"};
    case Code::failed_precondition: return {503, std::move(message), "", "shutting_down"};
    case Code::unavailable:
    case Code::context_lost:
    case Code::stale_handle: return {503, std::move(message), "", std::string(to_string(status.code()))};
    default: return {500, std::move(message), "", std::string(to_string(status.code()))};
  }
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

}  // namespace accel::serve
