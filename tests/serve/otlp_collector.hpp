// An OpenTelemetry collector for tests: a cpp-httplib server on a free loopback port that takes OTLP/HTTP JSON
// POSTs at /v1/traces, keeps every body, and answers `status` (200 unless told). With hold(), a POST waits inside
// the collector until release(): an exporter stuck on a slow collector, on demand.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace accel::testing {

class OtlpCollector {
 public:
  OtlpCollector() {
    server_.Post("/v1/traces", [this](const httplib::Request& request, httplib::Response& response) {
      std::unique_lock lock(mutex_);
      content_types_.push_back(request.get_header_value("Content-Type"));
      bodies_.push_back(nlohmann::json::parse(request.body, nullptr, false));
      changed_.notify_all();
      changed_.wait(lock, [&] { return !held_; });
      response.status = status_;
      response.set_content("{}", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~OtlpCollector() {
    release();
    server_.stop();
    thread_.join();
  }

  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  void answer(int status) {
    std::lock_guard lock(mutex_);
    status_ = status;
  }
  void hold() {
    std::lock_guard lock(mutex_);
    held_ = true;
  }
  void release() {
    std::lock_guard lock(mutex_);
    held_ = false;
    changed_.notify_all();
  }

  // Waits (5 s at most) until `count` POSTs have arrived; whether they have.
  bool wait_for_posts(std::size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(5), [&] { return bodies_.size() >= count; });
  }

  [[nodiscard]] std::vector<nlohmann::json> bodies() const {
    std::lock_guard lock(mutex_);
    return bodies_;
  }
  [[nodiscard]] std::vector<std::string> content_types() const {
    std::lock_guard lock(mutex_);
    return content_types_;
  }

  // Every span of every POST, in the order received.
  [[nodiscard]] std::vector<nlohmann::json> spans() const {
    std::vector<nlohmann::json> all;
    for (const nlohmann::json& body : bodies())
      for (const nlohmann::json& resource : body["resourceSpans"])
        for (const nlohmann::json& scope : resource["scopeSpans"])
          for (const nlohmann::json& span : scope["spans"]) all.push_back(span);
    return all;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<nlohmann::json> bodies_;
  std::vector<std::string> content_types_;
  int status_ = 200;
  bool held_ = false;
};

// The value of attribute `key` of an OTLP JSON span (its AnyValue object); null when it has none.
inline nlohmann::json attribute(const nlohmann::json& span, const std::string& key) {
  for (const nlohmann::json& attribute : span.value("attributes", nlohmann::json::array()))
    if (attribute["key"] == key) return attribute["value"];
  return nullptr;
}

}  // namespace accel::testing
