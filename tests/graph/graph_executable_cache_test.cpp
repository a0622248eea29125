// The executable cache seen from outside: one compile per key under 16 threads, weights never copied into
// variants, executables found on disk by a second process (and damaged entries rebuilt), and graph::Execute on an
// isolated device (the request crosses to the worker as the graph's encoding).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "accel/device/device.hpp"
#include "accel/graph/execute.hpp"
#include "testing/encoder_graph.hpp"
#include "testing/process_probe.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::graph {
namespace {

using testing::EncoderShape;

// Runs `graph` once on `device` with `tokens` tokens in two sequences; the status of the run.
Status run_once(const Device& device, const std::shared_ptr<const Graph>& graph, const EncoderShape& shape,
                std::int32_t tokens, std::uint32_t seed = 1) {
  std::mt19937 rng(seed);
  const std::vector<std::uint8_t> bytes = testing::weight_bytes_f32(*graph, testing::random_parameters(*graph, rng));
  Buffer<std::uint8_t> weights = *device.allocate<std::uint8_t>(bytes.size()).wait();
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const std::uint8_t>(bytes), weights).wait().status());
  const std::vector<float> x(static_cast<std::size_t>(tokens * shape.width), 0.5f);
  const std::vector<std::int32_t> offsets{0, tokens / 2, tokens};
  Buffer<float> xb = *device.allocate<float>(x.size()).wait();
  Buffer<std::int32_t> ob = *device.allocate<std::int32_t>(3).wait();
  Buffer<float> y = *device.allocate<float>(x.size()).wait();
  Buffer<float> pooled = *device.allocate<float>(2 * static_cast<std::uint64_t>(shape.width)).wait();
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const float>(x), xb).wait().status());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const std::int32_t>(offsets), ob).wait().status());
  return device
      .ask(Execute{.graph = graph,
                   .symbols = {{"tokens", tokens}, {"sequences", 2}},
                   .weights = weights,
                   .inputs = {{"x", xb}, {"offsets", ob}},
                   .outputs = {{"y", y}, {"pooled", pooled}}})
      .wait()
      .status();
}

CacheStats executables(const Device& device) {
  const DeviceInfo info = *device.info().wait();
  const CacheStats* stats = info.cache("graph-executables");
  return stats == nullptr ? CacheStats{} : *stats;
}

TEST(GraphExecutableCacheTest, SixteenThreadsMissingOneKeyCompileItOnce) {
  const EncoderShape shape{.width = 48, .heads = 3, .hidden = 96};
  auto graph = testing::encoder_graph(shape, Ladder::powers_of_two(16, 512), Ladder::powers_of_two(1, 8));
  System system;
  std::vector<Device> devices;
  for (int i = 0; i < 16; ++i) devices.push_back(*Device::open(system, {.kind = DeviceKind::cpu}));
  const CacheStats before = executables(devices[0]);
  std::vector<Status> results(devices.size());
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < devices.size(); ++i)
      threads.emplace_back([&, i] { results[i] = run_once(devices[i], graph, shape, 40); });
  }
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s.to_string();
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
    const Status s = run_once(device, graph, shape, tokens);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  const CacheStats after = executables(device);
  EXPECT_EQ(after.entries - before.entries, 3u);
  // Three variants together take less than one copy of the weights: none of them holds one.
  EXPECT_LT(after.bytes - before.bytes, graph->weight_bytes());
}

// The child half of the next test: one run, then the cache's counts on stdout.
TEST(GraphExecutableCacheChild, RunOnceAndReport) {
  if (std::getenv("ACCEL_GRAPH_CACHE_CHILD") == nullptr) GTEST_SKIP() << "run by PersistsAcrossProcesses";
  const EncoderShape shape{.width = 40, .heads = 2, .hidden = 56};
  auto graph = testing::encoder_graph(shape, Ladder::powers_of_two(16, 512), Ladder::powers_of_two(1, 8));
  System system;
  Device device = *Device::open(system, {.kind = DeviceKind::cpu});
  ASSERT_TRUE(run_once(device, graph, shape, 30).ok());
  const CacheStats stats = executables(device);
  std::printf("counts builds=%llu loads=%llu rejects=%llu\n", static_cast<unsigned long long>(stats.builds),
              static_cast<unsigned long long>(stats.disk_loads), static_cast<unsigned long long>(stats.disk_rejects));
}

struct Counts {
  unsigned long long builds = 99, loads = 99, rejects = 99;
};

Counts run_child(const std::filesystem::path& cache) {
  const std::string command = "ACCEL_GRAPH_CACHE_CHILD=1 ACCEL_CACHE_DIR=" + cache.string() + " /proc/" +
                              std::to_string(getpid()) + "/exe --gtest_filter=GraphExecutableCacheChild.* 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  Counts counts;
  char line[512];
  while (std::fgets(line, sizeof line, pipe) != nullptr)
    std::sscanf(line, "counts builds=%llu loads=%llu rejects=%llu", &counts.builds, &counts.loads, &counts.rejects);
  pclose(pipe);
  return counts;
}

TEST(GraphExecutableCacheTest, PersistsAcrossProcessesAndRebuildsDamagedEntries) {
  accel::testing::ScratchDirectory cache("graph-cache");
  Counts first = run_child(cache.path());
  EXPECT_EQ(first.builds, 1u);
  EXPECT_EQ(first.loads, 0u);
  Counts second = run_child(cache.path());
  EXPECT_EQ(second.builds, 0u);
  EXPECT_EQ(second.loads, 1u);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(cache.path())) {
    if (!entry.is_regular_file() || entry.file_size() < 16) continue;
    std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(entry.file_size() - 3));
    file.put('\x7f');
  }
  Counts third = run_child(cache.path());
  EXPECT_EQ(third.builds, 1u);
  EXPECT_EQ(third.rejects, 1u);
}

TEST(GraphExecutableCacheTest, RunsOnAnIsolatedWorker) {
  const EncoderShape shape{.width = 32, .heads = 2, .hidden = 40};
  auto graph = testing::encoder_graph(shape, Ladder::powers_of_two(16, 512), Ladder::powers_of_two(1, 8));
  System system;
  Device isolated = *Device::open(system, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  Device local = *Device::open(system, {.kind = DeviceKind::cpu});
  const Status s = run_once(isolated, graph, shape, 24);
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_TRUE(run_once(local, graph, shape, 24).ok());
}

// The CPU worker of an isolated device keeps its executables on disk: the worker that replaces a killed one runs
// the same graph without compiling.
TEST(GraphExecutableCacheTest, AReplacedWorkerLoadsExecutablesFromDisk) {
  accel::testing::ScratchDirectory cache("graph-worker-cache");
  ASSERT_EQ(setenv("ACCEL_CACHE_DIR", cache.path().c_str(), 1), 0);  // every worker started inherits it
  const EncoderShape shape{.width = 24, .heads = 2, .hidden = 40};
  auto graph = testing::encoder_graph(shape, Ladder::powers_of_two(16, 512), Ladder::powers_of_two(1, 8));
  System system;
  Device device = *Device::open(system, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_TRUE(run_once(device, graph, shape, 24).ok());
  const DeviceInfo first = *device.info().wait();
  ASSERT_EQ(executables(device).builds, 1u);
  ASSERT_TRUE(accel::testing::kill_process(first.worker_pid));
  Status again = run_once(device, graph, shape, 24);
  if (!again.ok()) again = run_once(device, graph, shape, 24);  // the one in flight when the worker died
  ASSERT_TRUE(again.ok()) << again.to_string();
  const DeviceInfo second = *device.info().wait();
  EXPECT_NE(second.worker_pid, first.worker_pid);
  const CacheStats stats = executables(device);
  EXPECT_EQ(stats.builds, 0u);
  EXPECT_EQ(stats.disk_loads, 1u);
  unsetenv("ACCEL_CACHE_DIR");
}

}  // namespace
}  // namespace accel::graph
