// The embedding server over real HTTP on loopback (server_fixture.hpp) as it stops, and as its isolated device's
// worker is killed under load.
#include "serve/server_fixture.hpp"

namespace accel::serve {
namespace {

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
