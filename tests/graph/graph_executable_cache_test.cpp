// The executable cache seen from outside: one compile per key under 16 threads, weights never copied into
// variants, executables found on disk by a second process (and damaged entries rebuilt), and graph::Execute on an
// isolated device (the request crosses to the worker as the graph's encoding). Every run's outputs are checked
// against the naive double reference: a cache that hands back the wrong executable fails here, not only one that
// compiles too often.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/graph/execute.hpp"
#include "testing/encoder_graph.hpp"
#include "testing/numeric_error.hpp"
#include "testing/process_probe.hpp"
#include "testing/scratch_directory.hpp"
#include "testing/status_matchers.hpp"

namespace accel::graph {
namespace {

using accel::testing::IsOk;
using accel::testing::max_abs_error;
using testing::EncoderShape;

// One run's inputs and what the reference makes of them. Fixed seeds: a child process must build the same graph
// and inputs as its parent, and these tests are about the cache, not about the inputs.
struct Case {
  std::vector<std::vector<float>> params;
  std::vector<float> x;
  std::vector<std::int32_t> offsets;
  testing::EncoderReference reference;
};

Case make_case(const Graph& graph, const EncoderShape& shape, std::int32_t tokens) {
  std::mt19937 rng(1);
  Case c;
  c.params = testing::random_parameters(graph, rng);
  // Distinct rows: with equal ones every token attends alike and a wrong attention span goes unseen.
  c.x.resize(static_cast<std::size_t>(tokens * shape.width));
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& e : c.x) e = dist(rng);
  c.offsets = {0, tokens / 2, tokens};
  c.reference = testing::reference_encoder(shape, graph, c.params, c.x, c.offsets);
  return c;
}

struct Outputs {
  std::vector<float> y, pooled;
};

// Runs `graph` once on `device` with the case's inputs in two sequences; the outputs it wrote.
Result<Outputs> run_once(const Device& device, const std::shared_ptr<const Graph>& graph, const Case& c) {
  const std::vector<std::uint8_t> bytes = testing::weight_bytes_f32(*graph, c.params);
  ACCEL_ASSIGN_OR_RETURN(Buffer<std::uint8_t> weights, device.allocate<std::uint8_t>(bytes.size()).wait());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const std::uint8_t>(bytes), weights).wait().status());
  ACCEL_ASSIGN_OR_RETURN(Buffer<float> xb, device.allocate<float>(c.x.size()).wait());
  ACCEL_ASSIGN_OR_RETURN(Buffer<std::int32_t> ob, device.allocate<std::int32_t>(c.offsets.size()).wait());
  ACCEL_ASSIGN_OR_RETURN(Buffer<float> y, device.allocate<float>(c.x.size()).wait());
  ACCEL_ASSIGN_OR_RETURN(Buffer<float> pooled, device.allocate<float>(c.reference.pooled.size()).wait());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const float>(c.x), xb).wait().status());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const std::int32_t>(c.offsets), ob).wait().status());
  ACCEL_RETURN_IF_ERROR(device
                            .ask(Execute{.graph = graph,
                                         .symbols = {{"tokens", c.offsets.back()}, {"sequences", 2}},
                                         .weights = weights,
                                         .inputs = {{"x", xb}, {"offsets", ob}},
                                         .outputs = {{"y", y}, {"pooled", pooled}}})
                            .wait()
                            .status());
  Outputs out{.y = std::vector<float>(c.x.size(), NAN), .pooled = std::vector<float>(c.reference.pooled.size(), NAN)};
  ACCEL_RETURN_IF_ERROR(device.download(y, std::span<float>(out.y)).wait().status());
  ACCEL_RETURN_IF_ERROR(device.download(pooled, std::span<float>(out.pooled)).wait().status());
  return out;
}

// The tolerances of cpu_graph_execute_test's sweep (f32 kernels against the double reference, a wider layer).
void expect_matches_reference(const Result<Outputs>& run, const Case& c) {
  ASSERT_THAT(run, IsOk());
  EXPECT_LT(max_abs_error(run->y, c.reference.out), 2e-4);
  EXPECT_LT(max_abs_error(run->pooled, c.reference.pooled), 1e-5);
}

CacheStats executables(const Device& device) {
  const DeviceInfo info = *device.info().wait();
  const CacheStats* stats = info.cache("graph-executables");
  return stats == nullptr ? CacheStats{} : *stats;
}

TEST(GraphExecutableCacheTest, SixteenThreadsMissingOneKeyCompileItOnce) {
  const EncoderShape shape{.width = 48, .heads = 3, .hidden = 96};
  auto graph = testing::encoder_graph(shape, Ladder::powers_of_two(16, 512), Ladder::powers_of_two(1, 8));
  const Case c = make_case(*graph, shape, 40);
  System system;
  std::vector<Device> devices;
  for (int i = 0; i < 16; ++i) devices.push_back(*Device::open(system, {.kind = DeviceKind::cpu}));
  const CacheStats before = executables(devices[0]);
  std::vector<Result<Outputs>> results(devices.size(), Result<Outputs>(internal_error("did not run")));
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < devices.size(); ++i)
      threads.emplace_back([&, i] { results[i] = run_once(devices[i], graph, c); });
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    SCOPED_TRACE("thread " + std::to_string(i));
    expect_matches_reference(results[i], c);
  }
  const CacheStats after = executables(devices[0]);
  EXPECT_EQ(after.misses - before.misses, 1u);
  EXPECT_EQ(after.hits - before.hits, 15u);
}

TEST(GraphExecutableCacheTest, VariantsHoldArenasNotWeights) {
  const EncoderShape shape{.width = 256, .heads = 4, .hidden = 1024, .max_length = 32};
  auto graph = testing::encoder_graph(shape, Ladder::powers_of_two(16, 64), Ladder::powers_of_two(1, 8));
  System system;
  Device device = *Device::open(system, {.kind = DeviceKind::cpu});
  const CacheStats before = executables(device);
  for (std::int32_t tokens : {10, 20, 40}) {
    SCOPED_TRACE("tokens " + std::to_string(tokens));
    const Case c = make_case(*graph, shape, tokens);
    expect_matches_reference(run_once(device, graph, c), c);
  }
  const CacheStats after = executables(device);
  EXPECT_EQ(after.entries - before.entries, 3u);
  // Three variants together take less than one copy of the weights: none of them holds one.
  EXPECT_LT(after.bytes - before.bytes, graph->weight_bytes());
}

// Set in the child process that PersistsAcrossProcesses starts: the same test then runs its child half only. The
// child is the parent test itself rather than a test of its own, so that nothing registered with ctest skips.
constexpr const char* kChildVariable = "ACCEL_GRAPH_CACHE_CHILD";

// The child half: one run, checked, then the cache's counts on stdout for the parent to read.
void run_child_half() {
  const EncoderShape shape{.width = 40, .heads = 2, .hidden = 56};
  auto graph = testing::encoder_graph(shape, Ladder::powers_of_two(16, 512), Ladder::powers_of_two(1, 8));
  const Case c = make_case(*graph, shape, 30);
  System system;
  Device device = *Device::open(system, {.kind = DeviceKind::cpu});
  expect_matches_reference(run_once(device, graph, c), c);
  const CacheStats stats = executables(device);
  std::printf("counts builds=%llu loads=%llu rejects=%llu\n", static_cast<unsigned long long>(stats.builds),
              static_cast<unsigned long long>(stats.disk_loads), static_cast<unsigned long long>(stats.disk_rejects));
  std::fflush(stdout);
}

struct Child {
  int exit_code = -1;
  std::string output;
  unsigned long long builds = 99, loads = 99, rejects = 99;
};

// This binary run again on the current test alone, as the child, with its cache in `cache`.
Child run_child(const std::filesystem::path& cache) {
  const ::testing::TestInfo& test = *::testing::UnitTest::GetInstance()->current_test_info();
  const std::string command = std::string(kChildVariable) + "=1 ACCEL_CACHE_DIR=" + cache.string() + " /proc/" +
                              std::to_string(getpid()) + "/exe --gtest_filter=" + test.test_suite_name() + "." +
                              test.name() + " 2>&1";
  Child child;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return child;
  char line[512];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    child.output += line;
    std::sscanf(line, "counts builds=%llu loads=%llu rejects=%llu", &child.builds, &child.loads, &child.rejects);
  }
  const int status = pclose(pipe);
  child.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return child;
}

TEST(GraphExecutableCacheTest, PersistsAcrossProcessesAndRebuildsDamagedEntries) {
  if (std::getenv(kChildVariable) != nullptr) {
    run_child_half();
    return;
  }
  accel::testing::ScratchDirectory cache("graph-cache");
  const Child first = run_child(cache.path());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.builds, 1u);
  EXPECT_EQ(first.loads, 0u);
  const Child second = run_child(cache.path());
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.builds, 0u);
  EXPECT_EQ(second.loads, 1u);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(cache.path())) {
    if (!entry.is_regular_file() || entry.file_size() < 16) continue;
    std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(entry.file_size() - 3));
    file.put('\x7f');
  }
  const Child third = run_child(cache.path());
  ASSERT_EQ(third.exit_code, 0) << third.output;
  EXPECT_EQ(third.builds, 1u);
  EXPECT_EQ(third.rejects, 1u);
}

TEST(GraphExecutableCacheTest, RunsOnAnIsolatedWorker) {
  const EncoderShape shape{.width = 32, .heads = 2, .hidden = 40};
  auto graph = testing::encoder_graph(shape, Ladder::powers_of_two(16, 512), Ladder::powers_of_two(1, 8));
  const Case c = make_case(*graph, shape, 24);
  System system;
  Device isolated = *Device::open(system, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  Device local = *Device::open(system, {.kind = DeviceKind::cpu});
  {
    SCOPED_TRACE("isolated");
    expect_matches_reference(run_once(isolated, graph, c), c);
  }
  SCOPED_TRACE("in process");
  expect_matches_reference(run_once(local, graph, c), c);
}

// x [tokens, 512] through `steps` equal layers tanh(x w^T): a run of many steps of one size each.
std::shared_ptr<const Graph> chain_graph(int steps) {
  GraphBuilder b;
  b.bucket("tokens", Ladder::powers_of_two(16, 1 << 15));
  const Dim width = Dim::of(512);
  Tensor x = b.input("x", DType::f32, {Dim::sym("tokens"), width});
  for (int i = 0; i < steps; ++i) {
    const Tensor w = b.parameter("w" + std::to_string(i), DType::f32, {width, width});
    x = b.matmul(x, w, {.transpose_b = true, .activation = Activation::tanh});
  }
  b.output("y", x);
  return *b.build();
}

Result<std::vector<float>> run_chain(const Device& device, const std::shared_ptr<const Graph>& graph,
                                     const std::vector<std::uint8_t>& weights, const std::vector<float>& x) {
  ACCEL_ASSIGN_OR_RETURN(Buffer<std::uint8_t> wb, device.allocate<std::uint8_t>(weights.size()).wait());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const std::uint8_t>(weights), wb).wait().status());
  ACCEL_ASSIGN_OR_RETURN(Buffer<float> xb, device.allocate<float>(x.size()).wait());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const float>(x), xb).wait().status());
  ACCEL_ASSIGN_OR_RETURN(Buffer<float> yb, device.allocate<float>(x.size()).wait());
  ACCEL_RETURN_IF_ERROR(device
                            .ask(Execute{.graph = graph,
                                         .symbols = {{"tokens", static_cast<std::int64_t>(x.size() / 512)}},
                                         .weights = wb,
                                         .inputs = {{"x", xb}},
                                         .outputs = {{"y", yb}}})
                            .wait()
                            .status());
  std::vector<float> y(x.size(), NAN);
  ACCEL_RETURN_IF_ERROR(device.download(yb, std::span<float>(y)).wait().status());
  return y;
}

// One graph run that computes for four heartbeat timeouts on an isolated CPU worker: the worker's compute watch
// stamps its heartbeat while it uses processor time, so its supervisor does not take the work for a hang (before, it
// stamped only between requests and a healthy worker was killed: a 512-text embedding chunk under ASan did so). The
// rows are chosen from a timed run in process, so that the run outlasts the timeout on any machine.
TEST(GraphExecutableCacheTest, AWorkerComputingPastItsHeartbeatTimeoutIsNotTakenForHung) {
  constexpr int kSteps = 24;
  const auto graph = chain_graph(kSteps);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f / std::sqrt(512.0f));
  std::vector<std::vector<float>> parameters(kSteps, std::vector<float>(512 * 512));
  for (auto& w : parameters)
    for (float& e : w) e = normal(rng);
  const std::vector<std::uint8_t> weights = testing::weight_bytes_f32(*graph, parameters);
  const auto inputs = [&](std::int64_t tokens) {
    std::vector<float> x(static_cast<std::size_t>(tokens * 512));
    for (float& e : x) e = normal(rng) * 20.0f;
    return x;
  };
  System system;
  Device local = *Device::open(system, {.kind = DeviceKind::cpu});
  const std::vector<float> probe = inputs(1024);
  ASSERT_THAT(run_chain(local, graph, weights, probe), IsOk());  // packs the weights
  const auto start = std::chrono::steady_clock::now();
  ASSERT_THAT(run_chain(local, graph, weights, probe), IsOk());
  const double probe_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::int64_t tokens = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(1024 * 1.6 / std::max(probe_seconds, 1e-6)) / 16 * 16, 1024, 1 << 15);
  const double run_seconds = probe_seconds * static_cast<double>(tokens) / 1024;
  const auto timeout = std::max(std::chrono::milliseconds(100),
                                std::chrono::milliseconds(static_cast<std::int64_t>(run_seconds * 1000 / 4)));
  ASSERT_GT(run_seconds * 1000, 2.0 * static_cast<double>(timeout.count()))
      << "this machine ran " << tokens << " rows faster than the test can show anything";
  RecordProperty("rows", static_cast<int>(tokens));
  RecordProperty("heartbeat_timeout_ms", static_cast<int>(timeout.count()));

  Device isolated = *Device::open(
      system,
      {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process, .worker = {.heartbeat_timeout = timeout}});
  const pid_t worker = isolated.info().wait()->worker_pid;
  const std::vector<float> x = inputs(tokens);
  const Result<std::vector<float>> in_worker = run_chain(isolated, graph, weights, x);
  ASSERT_THAT(in_worker, IsOk());
  const DeviceInfo after = *isolated.info().wait();
  EXPECT_EQ(after.worker_pid, worker);
  EXPECT_EQ(after.worker_restarts, 0u);
  const Result<std::vector<float>> in_process = run_chain(local, graph, weights, x);
  ASSERT_THAT(in_process, IsOk());
  EXPECT_LT(max_abs_error(*in_worker, *in_process), 1e-5);
}

// The CPU worker of an isolated device keeps its executables on disk: the worker that replaces a killed one runs
// the same graph without compiling.
TEST(GraphExecutableCacheTest, AReplacedWorkerLoadsExecutablesFromDisk) {
  accel::testing::ScratchDirectory cache("graph-worker-cache");
  ASSERT_EQ(setenv("ACCEL_CACHE_DIR", cache.path().c_str(), 1), 0);  // every worker started inherits it
  const EncoderShape shape{.width = 24, .heads = 2, .hidden = 40};
  auto graph = testing::encoder_graph(shape, Ladder::powers_of_two(16, 512), Ladder::powers_of_two(1, 8));
  const Case c = make_case(*graph, shape, 24);
  System system;
  Device device = *Device::open(system, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  expect_matches_reference(run_once(device, graph, c), c);
  const DeviceInfo first = *device.info().wait();
  ASSERT_EQ(executables(device).builds, 1u);
  ASSERT_TRUE(accel::testing::kill_process(first.worker_pid));
  Result<Outputs> again = run_once(device, graph, c);
  if (!again.ok()) again = run_once(device, graph, c);  // the one in flight when the worker died
  expect_matches_reference(again, c);
  const DeviceInfo second = *device.info().wait();
  EXPECT_NE(second.worker_pid, first.worker_pid);
  const CacheStats stats = executables(device);
  EXPECT_EQ(stats.builds, 0u);
  EXPECT_EQ(stats.disk_loads, 1u);
  unsetenv("ACCEL_CACHE_DIR");
}

}  // namespace
}  // namespace accel::graph
