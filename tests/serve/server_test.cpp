// The embedding server over real HTTP on loopback, with the real model (all-MiniLM-L6-v2) on the CPU device: its
// APIs, refusals, queue, batching and metrics (server_lifecycle_test.cpp: stopping, and a worker killed under load).
#include "serve/server_fixture.hpp"

namespace accel::serve {
namespace {

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

}  // namespace
}  // namespace accel::serve
