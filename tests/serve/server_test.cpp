// The embedding server over real HTTP on loopback, with the real model (all-MiniLM-L6-v2) on the CPU device.
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
namespace {

using nlohmann::json;
using Vectors = std::vector<std::vector<float>>;

const std::filesystem::path kModelFolder = testing::model_folder(ACCEL_TEST_MODEL_DIR);

// The float32 values of a base64 string of their little-endian bytes.
std::vector<float> decode_base64_floats(const std::string& text) {
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
void expect_close(const Vectors& got, const Vectors& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].size(), want[i].size()) << what;
    for (std::size_t j = 0; j < got[i].size(); ++j)
      ASSERT_NEAR(got[i][j], want[i][j], 2e-5) << what << " [" << i << "]";
  }
}

Vectors openai_vectors(const json& body) {
  Vectors vectors;
  for (const json& item : body["data"]) vectors.push_back(item["embedding"].get<std::vector<float>>());
  return vectors;
}

// The value of the sample `name` (with its labels, if any) of the model served: every family but the requests'
// carries the model's label first.
double metric(const std::string& text, const std::string& name) {
  std::string line_start = name;
  if (!name.starts_with("accel_serve_requests_total")) {
    const std::string label = "model=\"" + kModelFolder.filename().string() + "\"";
    const std::size_t brace = name.find('{');
    line_start = brace == std::string::npos ? name + "{" + label + "}"
                                            : name.substr(0, brace + 1) + label + "," + name.substr(brace + 1);
  }
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

  httplib::Client client() const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(60, 0);
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

TEST_F(ServerTest, HealthAnswers503UntilTheModelIsAttachedThen200) {
  std::unique_ptr<EmbeddingServer> server = serve({}, /*attach=*/false);
  httplib::Result health = client().Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 503);
  auto [status, body] = post("/v1/embeddings", R"({"input":"hello"})");
  EXPECT_EQ(status, 503);
  EXPECT_EQ(body["error"]["code"], "model_not_ready");
  EXPECT_EQ(post("/embed", R"({"inputs":"hello"})").second["error_type"], "Unhealthy");

  server->attach(model_, *device_);
  health = client().Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200) << health->body;
}

TEST_F(ServerTest, OpenAiFloatBase64AndTeiAgreeWithTheModel) {
  std::unique_ptr<EmbeddingServer> server = serve();
  const std::vector<std::string> texts{"The cat sat on the mat.", "A second, rather different sentence about GPUs."};
  const Result<embed::Embeddings> direct = model_->embed(texts).wait();
  ASSERT_TRUE(direct.ok()) << direct.status().to_string();
  Vectors want;
  for (std::size_t i = 0; i < direct->count(); ++i) want.emplace_back(direct->row(i).begin(), direct->row(i).end());

  auto [status, body] = post("/v1/embeddings", json{{"input", texts}, {"model", "mini"}}.dump());
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["object"], "list");
  EXPECT_EQ(body["model"], "mini");
  ASSERT_EQ(body["data"].size(), 2u);
  EXPECT_EQ(body["data"][1]["index"], 1);
  EXPECT_EQ(body["data"][0]["embedding"].size(), model_->info().dimensions);
  EXPECT_EQ(body["usage"]["prompt_tokens"], direct->tokens[0] + direct->tokens[1]);
  EXPECT_EQ(body["usage"]["total_tokens"], body["usage"]["prompt_tokens"]);
  const Vectors floats = openai_vectors(body);
  expect_close(floats, want, "float vs Model::embed");

  auto [b64_status, b64] = post("/v1/embeddings", json{{"input", texts}, {"encoding_format", "base64"}}.dump());
  ASSERT_EQ(b64_status, 200) << b64;
  EXPECT_EQ(b64["model"], model_->info().name);
  Vectors decoded;
  for (const json& item : b64["data"]) decoded.push_back(decode_base64_floats(item["embedding"].get<std::string>()));
  EXPECT_EQ(decoded, floats);  // the same batch makeup: the same bits

  auto [tei_status, tei] = post("/embed", json{{"inputs", texts}}.dump());
  ASSERT_EQ(tei_status, 200) << tei;
  EXPECT_EQ(tei.get<Vectors>(), floats);
  auto [one_status, one] = post("/embed", json{{"inputs", texts[0]}, {"normalize", true}}.dump());
  ASSERT_EQ(one_status, 200) << one;
  expect_close(one.get<Vectors>(), {want[0]}, "TEI single string");
}

TEST_F(ServerTest, TokenArraysEmbedLikeTheirText) {
  std::unique_ptr<EmbeddingServer> server = serve();
  const std::vector<std::string> texts{"hello world", "token arrays"};
  Result<embed::TokenBatch> tokens = model_->tokenize(texts);
  ASSERT_TRUE(tokens.ok());
  std::vector<std::vector<std::int32_t>> arrays;
  for (std::size_t i = 0; i < tokens->sequences(); ++i)
    arrays.emplace_back(tokens->ids.begin() + tokens->offsets[i], tokens->ids.begin() + tokens->offsets[i + 1]);

  auto [text_status, text] = post("/v1/embeddings", json{{"input", texts}}.dump());
  auto [ids_status, ids] = post("/v1/embeddings", json{{"input", arrays}}.dump());
  auto [one_status, one] = post("/v1/embeddings", json{{"input", arrays[0]}}.dump());
  ASSERT_EQ(text_status, 200);
  ASSERT_EQ(ids_status, 200) << ids;
  ASSERT_EQ(one_status, 200) << one;
  expect_close(openai_vectors(ids), openai_vectors(text), "token arrays vs texts");
  expect_close(openai_vectors(one), {openai_vectors(text)[0]}, "one token array vs its text");
  EXPECT_EQ(ids["usage"]["prompt_tokens"], tokens->ids.size());
}

TEST_F(ServerTest, RefusesBadRequestsWithJsonNamingTheFieldOrLimit) {
  std::unique_ptr<EmbeddingServer> server = serve({.max_body_bytes = 4096, .max_inputs = 3});
  const std::uint32_t dims = model_->info().dimensions;
  std::string long_text;
  for (int i = 0; i < 400; ++i) long_text += "word ";
  struct Case {
    std::string path, body;
    int status;
    std::string needle;  // in the message
  };
  const std::vector<Case> cases{
      {"/v1/embeddings", "{\"input\": [", 400, "not valid JSON"},
      {"/v1/embeddings", R"({"input": 42})", 400, "'input'"},
      {"/v1/embeddings", R"({"input": ["a", {}]})", 400, "input[1]"},
      {"/v1/embeddings", json{{"input", "a"}, {"dimensions", dims + 1}}.dump(), 400, "dimensions"},
      {"/v1/embeddings", R"({"input": ["a","b","c","d"]})", 413, "max_inputs"},
      {"/v1/embeddings", json{{"input", long_text.substr(0, 1900)}}.dump(), 413, "max_sequence_length"},
      {"/v1/embeddings", std::string(5000, ' ') + R"({"input":"a"})", 413, "max_body_bytes"},
      {"/embed", R"({"inputs": [1]})", 400, "inputs[0]"},
      {"/embed", R"({"inputs": "a", "normalize": false})", 400, "normalize"},
      {"/embed", json{{"inputs", long_text.substr(0, 1900)}}.dump(), 413, "max_sequence_length"},
      {"/embed", std::string(5000, ' ') + R"({"inputs":"a"})", 413, "max_body_bytes"},
      {"/v2/nothing", "{}", 404, "no route"},
  };
  for (const Case& c : cases) {
    auto [status, body] = post(c.path, c.body);
    EXPECT_EQ(status, c.status) << c.path << " " << c.body.substr(0, 80) << " -> " << body;
    const json& message = c.path == "/embed" ? body["error"] : body["error"]["message"];
    ASSERT_TRUE(message.is_string()) << body;
    EXPECT_NE(message.get<std::string>().find(c.needle), std::string::npos) << message;
  }
  // The same long input is cut when TEI's truncate asks for it.
  auto [status, body] = post("/embed", json{{"inputs", long_text.substr(0, 1900)}, {"truncate", true}}.dump());
  EXPECT_EQ(status, 200) << body;
  httplib::Result wrong_method = client().Get("/v1/embeddings");
  ASSERT_TRUE(wrong_method);
  EXPECT_EQ(wrong_method->status, 404);
  EXPECT_TRUE(json::parse(wrong_method->body, nullptr, false)["error"].is_object()) << wrong_method->body;
}

TEST_F(ServerTest, AFullQueueAnswers429WhileTheDeviceIsBusy) {
  std::unique_ptr<EmbeddingServer> server = serve({.batching = {.queue_requests = 1, .in_flight = 1}});
  // A request long enough (about 1500 tokens: a second or more on the CPU device) to keep the one batch slot busy
  // while the others arrive.
  std::vector<std::string> passages(6, std::string());
  for (std::size_t i = 0; i < passages.size(); ++i)
    for (int w = 0; w < 200; ++w) passages[i] += "passage " + std::to_string(i + w) + " ";
  std::thread big([&] { EXPECT_EQ(post("/embed", json{{"inputs", passages}, {"truncate", true}}.dump()).first, 200); });
  // Each step waits for the server's own metrics to show the state it needs. The deadline is only a hang guard: far
  // beyond any delay of a loaded machine, so reaching it is a failure of the server.
  auto wait_for = [&](const std::string& line, double value) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (metric(metrics(), line) != value) {
      if (std::chrono::steady_clock::now() > deadline)
        return ADD_FAILURE() << "hang guard: " << line << " never read " << value;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  wait_for("accel_serve_batches_in_flight", 1);
  std::thread queued([&] { EXPECT_EQ(post("/v1/embeddings", R"({"input":"queued"})").first, 200); });
  wait_for("accel_serve_queue_requests", 1);
  // From here the queue stays full until the long batch is done: the two refusals take milliseconds of CPU, that
  // batch a second or more of the device thread's (more under a sanitizer, and more on a loaded machine, which
  // slows both alike), so a scheduler sharing the cores among runnable threads lets them arrive first. The batches
  // dispatched by the time they were answered go in the failure message: 1 means the queued request waited
  // throughout, so that a status other than 429 is the server's fault for certain.
  auto [status, body] = post("/v1/embeddings", R"({"input":"refused"})");
  auto [tei_status, tei] = post("/embed", R"({"inputs":"refused"})");
  const double dispatched = metric(metrics(), "accel_serve_batch_requests_count");
  big.join();
  queued.join();
  EXPECT_EQ(status, 429) << body << " (batches dispatched by then: " << dispatched << ")";
  EXPECT_EQ(body["error"]["code"], "queue_full");
  EXPECT_EQ(tei_status, 429) << tei;
  EXPECT_EQ(tei["error_type"], "Overloaded");
}

TEST_F(ServerTest, ConcurrentClientsEachGetTheirOwnEmbeddings) {
  std::unique_ptr<EmbeddingServer> server = serve();
  constexpr int kThreads = 16, kRequests = 6;
  auto text_of = [](int thread, int request) {
    return "client " + std::to_string(thread) + " asks question number " + std::to_string(request) + " about batching";
  };
  // What each text embeds to alone, one request at a time.
  std::vector<Vectors> alone(kThreads);
  for (int t = 0; t < kThreads; ++t)
    for (int r = 0; r < kRequests; ++r) {
      auto [status, body] = post("/v1/embeddings", json{{"input", text_of(t, r)}}.dump());
      ASSERT_EQ(status, 200) << body;
      alone[t].push_back(openai_vectors(body)[0]);
    }
  const double batches_before = metric(metrics(), "accel_serve_batch_requests_count");

  std::vector<Vectors> together(kThreads);
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t)
    clients.emplace_back([&, t] {
      httplib::Client http = client();  // one kept-alive connection per client
      for (int r = 0; r < kRequests; ++r) {
        httplib::Result result = http.Post("/v1/embeddings", json{{"input", text_of(t, r)}}.dump(), "application/json");
        if (!result || result->status != 200) return ADD_FAILURE() << "client " << t << " request " << r;
        together[t].push_back(openai_vectors(json::parse(result->body))[0]);
      }
    });
  for (std::thread& thread : clients) thread.join();
  for (int t = 0; t < kThreads; ++t) expect_close(together[t], alone[t], "client " + std::to_string(t));
  // The concurrent requests shared batches.
  const double batches = metric(metrics(), "accel_serve_batch_requests_count") - batches_before;
  EXPECT_LT(batches, kThreads * kRequests);
}

TEST_F(ServerTest, MetricsCountRequestsTokensBatchesAndTheModel) {
  std::unique_ptr<EmbeddingServer> server = serve();
  ASSERT_EQ(post("/v1/embeddings", R"({"input":["one","two"]})").first, 200);
  ASSERT_EQ(post("/embed", R"({"inputs":"three"})").first, 200);
  ASSERT_EQ(post("/embed", "nope").first, 400);
  // A request is counted once its response is written, which its client may see first.
  const std::vector<std::string> counted{"accel_serve_requests_total{endpoint=\"/v1/embeddings\",status=\"200\"}",
                                         "accel_serve_requests_total{endpoint=\"/embed\",status=\"200\"}",
                                         "accel_serve_requests_total{endpoint=\"/embed\",status=\"400\"}"};
  auto all_counted = [&](const std::string& text) {
    return std::all_of(counted.begin(), counted.end(),
                       [&](const std::string& line) { return metric(text, line) == 1; });
  };
  std::string text = metrics();
  for (int i = 0; i < 1000 && !all_counted(text); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    text = metrics();
  }
  EXPECT_TRUE(all_counted(text)) << text;
  EXPECT_EQ(metric(text, "accel_serve_inputs_total"), 3);
  EXPECT_GE(metric(text, "accel_serve_tokens_total"), 9);  // [CLS] word [SEP] at least, three times
  EXPECT_EQ(metric(text, "accel_serve_batch_sequences_count"), 2);
  EXPECT_EQ(metric(text, "accel_serve_stage_seconds_count{stage=\"serialize\"}"), 2);
  // Around the stages: every request a route handled was received; the two answered waited and were written.
  EXPECT_EQ(metric(text, "accel_serve_stage_seconds_count{stage=\"receive\"}"), 3);
  EXPECT_EQ(metric(text, "accel_serve_stage_seconds_count{stage=\"wait\"}"), 2);
  EXPECT_EQ(metric(text, "accel_serve_stage_seconds_count{stage=\"respond\"}"), 2);
  EXPECT_EQ(metric(text, "accel_serve_ready"), 1);
  // The model's own counts are read once a second (ModelStatsCache): at least the warm-up run is there.
  EXPECT_GE(metric(text, "accel_model_runs_total"), 1);
  EXPECT_GE(metric(text, "accel_model_compiles_total{cache=\"graph-executables\"}"), 0) << text;
}

// stop() shows that it answers what it accepted only if a request is still in flight when it begins. Nothing here
// can hold a batch back, so the device may outrun this thread to the last answer (its last batch takes tens of
// milliseconds or more, this thread's look at the metrics a few); a run that found nothing in flight shows nothing and
// is run again, each run checking every answer, until one did. All runs finding nothing would take this thread kept off
// the cores through each run's last batch, a stalled machine rather than a loaded one.
TEST_F(ServerTest, StopAnswersEveryRequestItAcceptedThenRefusesConnections) {
  constexpr int kClients = 12, kRuns = 3;
  std::vector<std::string> texts;
  for (int i = 0; i < 8; ++i) texts.push_back("a sentence of moderate length, number " + std::to_string(i));
  bool in_flight_at_stop = false;
  for (int run = 0; run < kRuns && !in_flight_at_stop; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    std::unique_ptr<EmbeddingServer> server = serve({.batching = {.in_flight = 1}});
    std::atomic<int> answered{0};
    std::vector<int> statuses(kClients, 0);
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c)
      clients.emplace_back([&, c] {
        auto [status, body] = post("/v1/embeddings", json{{"input", texts}, {"user", std::to_string(c)}}.dump());
        statuses[c] = status;
        ++answered;
      });
    // Every request has been read and tokenised (so it is accepted) before the server is told to stop. The deadline
    // is only a hang guard.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (metric(metrics(), "accel_serve_stage_seconds_count{stage=\"tokenize\"}") < kClients) {
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "hang guard: the " << kClients << " requests were not all read within 60 s";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    in_flight_at_stop = answered.load() < kClients;
    server->stop();
    for (std::thread& thread : clients) thread.join();
    for (int c = 0; c < kClients; ++c) EXPECT_EQ(statuses[c], 200) << "client " << c;
    EXPECT_FALSE(client().Get("/health")) << "the server still accepts connections after stop()";
  }
  EXPECT_TRUE(in_flight_at_stop) << "no request was still in flight when stop() began, in " << kRuns << " runs";
}

// A CPU device whose context lives in a worker process, killed twice under load: each kill costs the requests in
// flight an error or one retry (on the model loaded again), never the server.
TEST_F(ServerTest, AKilledIsolatedWorkerCostsRequestsARetryOrAnErrorNeverTheServer) {
  Result<Device> isolated = Device::open(*system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_TRUE(isolated.ok()) << isolated.status().to_string();
  const embed::ModelOptions options{.folder = kModelFolder};
  Result<std::shared_ptr<embed::Model>> model = embed::Model::load(*isolated, options);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  std::unique_ptr<EmbeddingServer> server = serve({}, /*attach=*/false);
  server->attach(*model, *isolated, [device = *isolated, options]() -> Result<std::shared_ptr<embed::Model>> {
    return embed::Model::load(device, options);
  });
  const std::vector<float> want = openai_vectors(post("/v1/embeddings", R"({"input":"the same question"})").second)[0];

  std::atomic<bool> done{false};
  std::mutex mutex;
  std::map<int, int> statuses;
  std::set<std::string> codes;
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c)
    clients.emplace_back([&] {
      httplib::Client http = client();
      while (!done) {
        httplib::Result result = http.Post("/v1/embeddings", R"({"input":"the same question"})", "application/json");
        std::lock_guard lock(mutex);
        const int status = result ? result->status : -1;
        ++statuses[status];
        if (status == 200) {
          expect_close(openai_vectors(json::parse(result->body)), {want}, "after a kill");
        } else if (status == 503) {
          codes.insert(json::parse(result->body)["error"]["code"].get<std::string>());
        }
      }
    });
  pid_t killed = 0;
  for (int kill = 0; kill < 2; ++kill) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    // The worker serving now: the one that replaced the last one killed.
    pid_t worker = killed;
    for (int i = 0; i < 5000 && (worker <= 0 || worker == killed); ++i) {
      Result<DeviceInfo> info = isolated->info().wait();
      if (info.ok()) worker = info->worker_pid;
    }
    ASSERT_TRUE(worker > 0 && worker != killed);
    ASSERT_TRUE(accel::testing::kill_process(worker));
    killed = worker;
    // Until the model is back, requests wait for it or fail; afterwards they succeed again, which /health says. The
    // next kill waits for that: killed earlier, a worker may go before the reloaded model has touched it.
    for (int i = 0; i < 5000 && metric(metrics(), "accel_serve_batch_retries_total") <= kill; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int i = 0; i < 5000; ++i) {
      if (httplib::Result health = client().Get("/health"); health && health->status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  done = true;
  for (std::thread& thread : clients) thread.join();

  EXPECT_EQ(statuses.count(-1), 0u) << "requests without a response";
  for (const auto& [status, count] : statuses) EXPECT_TRUE(status == 200 || status == 503) << status << " x" << count;
  for (const std::string& code : codes) EXPECT_TRUE(code == "context_lost" || code == "stale_handle") << code;
  EXPECT_GE(metric(metrics(), "accel_serve_batch_retries_total"), 2);
  EXPECT_GT(statuses[200], 10);
  auto [status, body] = post("/v1/embeddings", R"({"input":"the same question"})");
  EXPECT_EQ(status, 200) << body;
  httplib::Result health = client().Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200) << health->body;
  server->stop();
  EXPECT_TRUE(isolated->close().wait().ok());
}

}  // namespace
}  // namespace accel::serve
