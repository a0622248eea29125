// The embedding server with a replica of the model on each device of a DevicePool (`accel serve --devices
// cpu,cpu-isolated`), over real HTTP on loopback (server_fixture.hpp): both replicas serve, and when the isolated
// device's worker is killed the other replica answers every request while the lost one shows down in /health and
// /metrics, until (with a restart budget) its worker was replaced and its model loaded again.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include "accel/device/pool.hpp"
#include "server_fixture.hpp"

namespace accel::serve {
namespace {

using namespace std::chrono_literals;

constexpr const char* kQuestion = R"({"input":"the same question"})";

class ReplicaServerTest : public ServerTest {
 protected:
  // A server of the model with a replica on each device of `list`.
  std::unique_ptr<EmbeddingServer> serve_replicas(std::string_view list, DeviceOptions base = {}) {
    Result<DevicePool> pool = DevicePool::open(*system_, list, base);
    EXPECT_TRUE(pool.ok()) << pool.status().to_string();
    if (!pool.ok()) return nullptr;
    pool_ = *pool;
    const embed::ModelOptions options{.folder = kModelFolder};
    ServedModel served{.device = pool->device(0), .pool = *pool};
    for (std::size_t i = 0; i < pool->size(); ++i) {
      Result<std::shared_ptr<embed::Model>> model = embed::Model::load(pool->device(i), options);
      EXPECT_TRUE(model.ok()) << model.status().to_string();
      if (!model.ok()) return nullptr;
      served.replicas.push_back({.model = *model, .reload = [device = pool->device(i), options] {
                                   return embed::Model::load(device, options);
                                 }});
    }
    served.model = served.replicas.front().model;
    std::unique_ptr<EmbeddingServer> server = serve({}, /*attach=*/false);
    std::vector<ServedModel> models;
    models.push_back(std::move(served));
    EXPECT_TRUE(server->attach(std::move(models)).ok());
    return server;
  }

  double replica_metric(const std::string& family, const std::string& device) {
    return metric(metrics(), family + "{device=\"" + device + "\"}");
  }

  // The /health reply's replicas by device: up or not.
  std::map<std::string, bool> replicas_up(int& status) {
    httplib::Result health = client().Get("/health");
    status = health ? health->status : -1;
    std::map<std::string, bool> up;
    if (!health) return up;
    const json body = json::parse(health->body);
    for (const json& replica : body["replicas"]) up[replica["device"]] = replica["up"];
    return up;
  }

  // The isolated device's worker, killed.
  void kill_worker(std::size_t index) {
    Result<DeviceInfo> info = pool_->device(index).info().wait();
    ASSERT_TRUE(info.ok()) << info.status().to_string();
    ASSERT_TRUE(accel::testing::kill_process(info->worker_pid));
  }

  std::optional<DevicePool> pool_;
};

// Clients posting the same question until stopped, counting the statuses and checking every vector.
class Clients {
 public:
  void start(std::function<httplib::Client()> make, std::vector<float> want, int count) {
    for (int c = 0; c < count; ++c)
      threads_.emplace_back([this, make, want] {
        httplib::Client http = make();
        while (!done_) {
          httplib::Result result = http.Post("/v1/embeddings", kQuestion, "application/json");
          std::lock_guard lock(mutex_);
          const int status = result ? result->status : -1;
          ++statuses_[status];
          if (status == 200) expect_close(openai_vectors(json::parse(result->body)), {want}, "a replica's answer");
          if (status != 200 && result) bodies_.push_back(result->body);
        }
      });
  }
  std::map<int, int> stop() {
    done_ = true;
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    return statuses_;
  }
  std::vector<std::string> bodies() const { return bodies_; }

 private:
  std::atomic<bool> done_{false};
  std::mutex mutex_;
  std::map<int, int> statuses_;
  std::vector<std::string> bodies_;
  std::vector<std::thread> threads_;
};

TEST(ReplicaLabel, IsTheListEntryWithItsIndexWhenTheEntryRepeats) {
  System system;
  Result<DevicePool> pool = DevicePool::open(system, "cpu,cpu");
  ASSERT_TRUE(pool.ok()) << pool.status().to_string();
  EXPECT_EQ(replica_label(*pool, 0), "cpu#0");
  EXPECT_EQ(replica_label(*pool, 1), "cpu#1");
  Result<DevicePool> single = DevicePool::open(system, "cpu");
  ASSERT_TRUE(single.ok()) << single.status().to_string();
  EXPECT_EQ(replica_label(*single, 0), "cpu");
}

TEST_F(ReplicaServerTest, BothReplicasServeAndAKilledWorkersReplicaIsOutUntilItIsBack) {
  std::unique_ptr<EmbeddingServer> server = serve_replicas("cpu,cpu-isolated");
  ASSERT_NE(server, nullptr);
  const std::vector<float> want = openai_vectors(post("/v1/embeddings", kQuestion).second)[0];
  Clients clients;
  clients.start([this] { return client(); }, want, 4);
  // Both replicas answer: the pool gives ties to the device after the last one picked.
  for (int i = 0; i < 20'000 && (replica_metric("accel_serve_replica_requests_total", "cpu") < 5 ||
                                 replica_metric("accel_serve_replica_requests_total", "cpu-isolated") < 5);
       ++i)
    std::this_thread::sleep_for(1ms);
  EXPECT_GE(replica_metric("accel_serve_replica_requests_total", "cpu"), 5);
  EXPECT_GE(replica_metric("accel_serve_replica_requests_total", "cpu-isolated"), 5);
  EXPECT_GT(replica_metric("accel_serve_replica_tokens_total", "cpu-isolated"), 0);
  EXPECT_EQ(replica_metric("accel_serve_replica_up", "cpu-isolated"), 1);
  int status = 0;
  EXPECT_EQ(replicas_up(status), (std::map<std::string, bool>{{"cpu", true}, {"cpu-isolated", true}}));
  EXPECT_EQ(status, 200);

  // Killed under load: the batch on it runs again on the other replica, which answers while it is out.
  kill_worker(1);
  for (int i = 0; i < 20'000 && metric(metrics(), "accel_serve_batch_retries_total") < 1; ++i)
    std::this_thread::sleep_for(1ms);
  EXPECT_GE(metric(metrics(), "accel_serve_batch_retries_total"), 1) << "no batch found the worker gone";
  EXPECT_GE(pool_->state(1).times_down, 1u) << "the lost replica's device was never taken out";
  // Back once the worker was replaced and the model loaded again: it serves once more.
  const double before = replica_metric("accel_serve_replica_requests_total", "cpu-isolated");
  for (int i = 0; i < 30'000 && replica_metric("accel_serve_replica_requests_total", "cpu-isolated") <= before; ++i)
    std::this_thread::sleep_for(1ms);
  EXPECT_GT(replica_metric("accel_serve_replica_requests_total", "cpu-isolated"), before) << "never back";
  EXPECT_EQ(replica_metric("accel_serve_replica_up", "cpu-isolated"), 1);
  const std::map<int, int> statuses = clients.stop();
  EXPECT_EQ(statuses.size(), 1u) << "every request answered 200; the others: "
                                 << (clients.bodies().empty() ? "" : clients.bodies().front());
  EXPECT_GT(statuses.count(200) ? statuses.at(200) : 0, 10);
  EXPECT_EQ(replicas_up(status), (std::map<std::string, bool>{{"cpu", true}, {"cpu-isolated", true}}));
  EXPECT_EQ(status, 200);
  server->stop();
}

TEST_F(ReplicaServerTest, AReplicaWhoseDeviceFailedForGoodIsDownWhileTheOtherServes) {
  DeviceOptions base{.worker = {.restarts = {.max_restarts = 0, .window = 60'000ms}}};
  std::unique_ptr<EmbeddingServer> server = serve_replicas("cpu-isolated,cpu", base);
  ASSERT_NE(server, nullptr);
  const std::vector<float> want = openai_vectors(post("/v1/embeddings", kQuestion).second)[0];
  Clients clients;
  clients.start([this] { return client(); }, want, 4);
  for (int i = 0; i < 20'000 && replica_metric("accel_serve_replica_requests_total", "cpu-isolated") < 3; ++i)
    std::this_thread::sleep_for(1ms);
  kill_worker(0);
  for (int i = 0; i < 20'000 && pool_->device(0).health().ok(); ++i) std::this_thread::sleep_for(1ms);
  ASSERT_FALSE(pool_->device(0).health().ok());
  const double cpu_before = replica_metric("accel_serve_replica_requests_total", "cpu");
  for (int i = 0; i < 20'000 && replica_metric("accel_serve_replica_requests_total", "cpu") < cpu_before + 20; ++i)
    std::this_thread::sleep_for(1ms);
  const std::map<int, int> statuses = clients.stop();
  EXPECT_EQ(statuses.size(), 1u) << "every request answered 200; the others: "
                                 << (clients.bodies().empty() ? "" : clients.bodies().front());
  EXPECT_EQ(replica_metric("accel_serve_replica_up", "cpu-isolated"), 0);
  EXPECT_EQ(replica_metric("accel_serve_replica_up", "cpu"), 1);
  EXPECT_EQ(metric(metrics(), "accel_serve_ready"), 1);
  int status = 0;
  EXPECT_EQ(replicas_up(status), (std::map<std::string, bool>{{"cpu", true}, {"cpu-isolated", false}}));
  EXPECT_EQ(status, 200) << "one replica up is enough";
  httplib::Result health = client().Get("/health");
  ASSERT_TRUE(health);
  EXPECT_NE(health->body.find("restart budget exhausted"), std::string::npos) << health->body;
  server->stop();
}

// A device closed under load (Device::close: its queued requests answered `cancelled`, later ones
// `failed_precondition`) takes its replica out for good; the other replica answers every request.
TEST_F(ReplicaServerTest, ADeviceClosedUnderLoadLosesNoRequest) {
  std::unique_ptr<EmbeddingServer> server = serve_replicas("cpu,cpu-isolated");
  ASSERT_NE(server, nullptr);
  const std::vector<float> want = openai_vectors(post("/v1/embeddings", kQuestion).second)[0];
  Clients clients;
  clients.start([this] { return client(); }, want, 4);
  for (int i = 0; i < 20'000 && replica_metric("accel_serve_replica_requests_total", "cpu") < 3; ++i)
    std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(pool_->device(0).close().wait().ok());
  const double other_before = replica_metric("accel_serve_replica_requests_total", "cpu-isolated");
  for (int i = 0;
       i < 20'000 && replica_metric("accel_serve_replica_requests_total", "cpu-isolated") < other_before + 20; ++i)
    std::this_thread::sleep_for(1ms);
  const std::map<int, int> statuses = clients.stop();
  EXPECT_EQ(statuses.size(), 1u) << "every request answered 200; the others: "
                                 << (clients.bodies().empty() ? "" : clients.bodies().front());
  EXPECT_GE(replica_metric("accel_serve_replica_requests_total", "cpu-isolated"), other_before + 20);
  EXPECT_EQ(replica_metric("accel_serve_replica_up", "cpu"), 0);
  EXPECT_EQ(metric(metrics(), "accel_serve_ready"), 1);
  server->stop();
}

// The accel_model_* families count every replica's runs, not the first one's: 40 questions one after the other split
// between the replicas (ties go to the device after the last one picked), and the sequences the model ran reach
// both replicas' requests together once the statistics (read about every second) catch up.
TEST_F(ReplicaServerTest, TheModelsStatisticsAddUpEveryReplica) {
  std::unique_ptr<EmbeddingServer> server = serve_replicas("cpu,cpu-isolated");
  ASSERT_NE(server, nullptr);
  for (int i = 0; i < 40; ++i) ASSERT_EQ(post("/v1/embeddings", kQuestion).first, 200);
  const double first = replica_metric("accel_serve_replica_requests_total", "cpu");
  const double second = replica_metric("accel_serve_replica_requests_total", "cpu-isolated");
  ASSERT_GE(first, 10);
  ASSERT_GE(second, 10);
  double sequences = 0;
  for (int i = 0; i < 20'000 && sequences < first + second; ++i) {
    sequences = metric(metrics(), "accel_model_sequences_total");
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_GE(sequences, first + second) << "the model's statistics miss a replica's runs";
  EXPECT_GE(metric(metrics(), "accel_model_runs_total"), first + second);
  server->stop();
}

}  // namespace
}  // namespace accel::serve
