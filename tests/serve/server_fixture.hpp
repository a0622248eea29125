// ServerTest: the embedding server over real HTTP on loopback, with the real model (all-MiniLM-L6-v2) loaded
// once per suite on the CPU device, and what its tests read replies with.
#pragma once

#include "serve/embedding_server.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "testing/model_folder.hpp"
#include "testing/process_probe.hpp"

namespace accel::serve {

using nlohmann::json;
using Vectors = std::vector<std::vector<float>>;

const std::filesystem::path kModelFolder = testing::model_folder(ACCEL_TEST_MODEL_DIR);

// The float32 values of a base64 string of their little-endian bytes.
inline std::vector<float> decode_base64_floats(const std::string& text) {
  auto value = [](char c) -> std::uint32_t {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : 63;
  };
  std::vector<unsigned char> bytes;
  for (std::size_t i = 0; i + 4 <= text.size(); i += 4) {
    const std::uint32_t group = value(text[i]) << 18 | value(text[i + 1]) << 12 |
                                (text[i + 2] == '=' ? 0 : value(text[i + 2]) << 6) |
                                (text[i + 3] == '=' ? 0 : value(text[i + 3]));
    bytes.push_back(static_cast<unsigned char>(group >> 16));
    if (text[i + 2] != '=') bytes.push_back(static_cast<unsigned char>(group >> 8));
    if (text[i + 3] != '=') bytes.push_back(static_cast<unsigned char>(group));
  }
  std::vector<float> floats(bytes.size() / sizeof(float));
  std::memcpy(floats.data(), bytes.data(), floats.size() * sizeof(float));
  return floats;
}

// Batches of different makeup may sum in different orders: equal to within float rounding.
inline void expect_close(const Vectors& got, const Vectors& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].size(), want[i].size()) << what;
    for (std::size_t j = 0; j < got[i].size(); ++j)
      ASSERT_NEAR(got[i][j], want[i][j], 2e-5) << what << " [" << i << "]";
  }
}

inline Vectors openai_vectors(const json& body) {
  Vectors vectors;
  for (const json& item : body["data"]) vectors.push_back(item["embedding"].get<std::vector<float>>());
  return vectors;
}

// The value of the sample `name` (with its labels, if any) of the model served: every family, the requests' too,
// carries the model's label first.
inline double metric(const std::string& text, const std::string& name) {
  const std::string label = "model=\"" + kModelFolder.filename().string() + "\"";
  const std::size_t brace = name.find('{');
  const std::string line_start = brace == std::string::npos
                                     ? name + "{" + label + "}"
                                     : name.substr(0, brace + 1) + label + "," + name.substr(brace + 1);
  const std::size_t at = text.find("\n" + line_start + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + line_start.size() + 2));
}

class ServerTest : public ::testing::Test {
 protected:
  // The model loads once for the suite. Only an absent folder skips; a folder that does not load fails every test.
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kModelFolder)) return;
    system_ = std::make_unique<System>();
    Result<Device> device = Device::open(*system_, {.kind = DeviceKind::cpu});
    if (!device.ok()) {
      load_failure_ = device.status().to_string();
      return;
    }
    device_ = std::make_unique<Device>(*device);
    Result<std::shared_ptr<embed::Model>> model = embed::Model::load(*device_, {.folder = kModelFolder});
    if (!model.ok()) {
      load_failure_ = model.status().to_string();
      return;
    }
    model_ = *model;
  }
  static void TearDownTestSuite() {
    model_.reset();
    device_.reset();
    system_.reset();
  }

  void SetUp() override {
    ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kModelFolder);
    ASSERT_NE(model_, nullptr) << "the model at " << kModelFolder << " did not load: " << load_failure_;
  }

  // A server on a free loopback port, serving the model unless `attach` is false.
  std::unique_ptr<EmbeddingServer> serve(ServeOptions options = {}, bool attach = true) {
    options.port = 0;
    options.keep_alive_seconds = 1;
    auto server = std::make_unique<EmbeddingServer>(options);
    Result<int> port = server->start();
    EXPECT_TRUE(port.ok()) << port.status().to_string();
    port_ = port.value_or(0);
    if (attach) server->attach(model_, *device_);
    return server;
  }

  // The read timeout is a hang guard only (ctest's own is 900 s under the sanitizers): the full-queue test's batch of
  // about 1,500 tokens on the CPU device outlasted 60 s under ASan with three suites' tests on two cores.
  httplib::Client client() const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(300, 0);
    return client;
  }

  // POSTs `body` and returns the status and the parsed JSON reply.
  std::pair<int, json> post(const std::string& path, const std::string& body) const {
    httplib::Result result = client().Post(path.c_str(), body, "application/json");
    if (!result) return {-1, json()};
    EXPECT_EQ(result->get_header_value("Content-Type"), "application/json") << path << " " << body;
    return {result->status, json::parse(result->body, nullptr, false)};
  }

  std::string metrics() const {
    httplib::Result result = client().Get("/metrics");
    return result ? result->body : std::string();
  }

  static inline std::unique_ptr<System> system_;
  static inline std::unique_ptr<Device> device_;
  static inline std::shared_ptr<embed::Model> model_;
  static inline std::string load_failure_;
  int port_ = 0;
};

}  // namespace accel::serve
