// The fixture of the route tests (routes_test.cpp, tei_text_routes_test.cpp, ...): the server over real HTTP on
// loopback, on the CPU device, serving one tiny model of tests/embed/data/families/; and the helpers that compare its
// answers with references.json.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "embed/family_references.hpp"
#include "serve/embedding_server.hpp"

namespace accel::serve {

using embed::testing::references;
using embed::testing::strings;
using nlohmann::json;

// The reference rows with their first `dimensions` kept and scaled to unit length (Matryoshka).
inline json cut_and_normalize(const json& rows, std::size_t dimensions) {
  json out = json::array();
  for (const json& row : rows) {
    std::vector<double> kept = row.get<std::vector<double>>();
    kept.resize(dimensions);
    double norm = 0;
    for (double v : kept) norm += v * v;
    for (double& v : kept) v /= std::sqrt(norm);
    out.push_back(kept);
  }
  return out;
}

// Rows of a JSON array of arrays as Embeddings, for the references' checks.
inline embed::Embeddings rows_of(const json& body) {
  embed::Embeddings rows;
  for (const json& row : body) {
    rows.dimensions = static_cast<std::uint32_t>(row.size());
    for (const json& v : row) rows.values.push_back(v.get<float>());
    rows.tokens.push_back(0);
  }
  return rows;
}

// As close as the model layer's own check of a score against transformers (families_test).
inline const double kScoreTolerance = embed::testing::Tolerance{}.score;

inline float sigmoid(double logit) { return static_cast<float>(1.0 / (1.0 + std::exp(-logit))); }

class RoutesTest : public ::testing::Test {
 protected:
  // Serves the tiny model `name` on a free loopback port.
  void serve(const std::string& name, ServeOptions options = {}) {
    server_.reset();
    Result<std::shared_ptr<embed::Model>> model =
        embed::Model::load(device_, {.folder = embed::testing::kFamilies / name, .batch_tokens = 512});
    ASSERT_TRUE(model.ok()) << name << ": " << model.status().to_string();
    model_ = *model;
    options.port = 0;
    options.keep_alive_seconds = 1;
    server_ = std::make_unique<EmbeddingServer>(options);
    Result<int> port = server_->start();
    ASSERT_TRUE(port.ok()) << port.status().to_string();
    port_ = *port;
    server_->attach(model_, device_);
  }

  std::pair<int, json> post(const std::string& path, const json& body) const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(60, 0);
    httplib::Result result = client.Post(path, body.dump(), "application/json");
    if (!result) return {-1, json()};
    EXPECT_EQ(result->get_header_value("Content-Type"), "application/json") << path;
    return {result->status, json::parse(result->body, nullptr, false)};
  }

  // /metrics once it holds every one of `lines` (each a whole line), or after 5 s as it is then. A request is counted
  // after its response is written, so a client may read the metrics before the count of the request it just had
  // answered.
  std::string metrics_with(const std::vector<std::string>& lines) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
      httplib::Client client("127.0.0.1", port_);
      httplib::Result result = client.Get("/metrics");
      const std::string text = result ? "\n" + result->body : std::string();
      bool all = true;
      for (const std::string& line : lines) all = all && text.find("\n" + line + "\n") != std::string::npos;
      if (all || std::chrono::steady_clock::now() > deadline) return text;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  // A TEI error: the status, error_type, and a message holding `needle`.
  void expect_tei_error(const std::string& path, const json& body, int status, const std::string& error_type,
                        const std::string& needle) const {
    auto [got, reply] = post(path, body);
    EXPECT_EQ(got, status) << path << " " << body.dump().substr(0, 120) << " -> " << reply.dump().substr(0, 300);
    ASSERT_TRUE(reply["error"].is_string()) << reply.dump().substr(0, 300);
    EXPECT_EQ(reply["error_type"], error_type) << reply;
    EXPECT_NE(reply["error"].get<std::string>().find(needle), std::string::npos) << reply;
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::shared_ptr<embed::Model> model_;
  std::unique_ptr<EmbeddingServer> server_;
  int port_ = 0;
};

}  // namespace accel::serve
