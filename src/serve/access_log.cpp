#include "serve/access_log.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

namespace accel::serve {
namespace {

// UTC with milliseconds, as ISO 8601 writes it.
std::string now_utc() {
  const auto now = std::chrono::system_clock::now();
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", std::chrono::floor<std::chrono::seconds>(now), millis);
}

double milliseconds(double seconds) { return std::round(seconds * 1e6) / 1e3; }  // to the microsecond

}  // namespace

Result<std::unique_ptr<AccessLog>> AccessLog::open(const std::string& destination) {
  if (destination == "-") return std::unique_ptr<AccessLog>(new AccessLog(stdout, false));
  std::FILE* file = std::fopen(destination.c_str(), "a");
  if (file == nullptr)
    return unavailable(fmt::format("--access-log {}: cannot open: {}", destination, std::strerror(errno)));
  return std::unique_ptr<AccessLog>(new AccessLog(file, true));
}

AccessLog::~AccessLog() {
  if (owned_) std::fclose(file_);
}

void AccessLog::write(std::string_view method, std::string_view route, int status, const RequestTrace& trace) {
  const nlohmann::json line = {{"time", now_utc()},
                               {"method", method},
                               {"route", route},
                               {"model", trace.model},
                               {"status", status},
                               {"inputs", trace.inputs},
                               {"tokens", trace.tokens},
                               {"ms",
                                {{"total", milliseconds(trace.total_seconds)},
                                 {"queue", milliseconds(trace.queue_seconds)},
                                 {"tokenize", milliseconds(trace.tokenize_seconds)},
                                 {"compute", milliseconds(trace.compute_seconds)},
                                 {"serialize", milliseconds(trace.serialize_seconds)}}},
                               {"trace_id", is_zero(trace.trace_id) ? std::string() : to_hex(trace.trace_id)}};
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mutex_);
  std::fwrite(text.data(), 1, text.size(), file_);
  std::fflush(file_);
}

}  // namespace accel::serve
