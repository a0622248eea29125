// Isolated devices with a CPU context in the worker: the channel, the staging region, and supervision (crash,
// kill -9, hang, restart budget, client death) run here without a GPU. The GPU side is cuda_isolated_test.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "accel/device/device.hpp"
#include "testing/process_probe.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using namespace std::chrono_literals;
using testing::IsOk;
using testing::StatusIs;

// Waits that end at once when the code works, and otherwise only keep a broken run from hanging: far beyond any
// delay of a loaded machine, so reaching one is a failure of the code, not of the machine.
constexpr std::chrono::seconds kHangGuard{60};

DeviceOptions isolated_cpu(WorkerOptions worker = {}) {
  return DeviceOptions{.kind = DeviceKind::cpu, .isolation = Isolation::worker_process, .worker = std::move(worker)};
}

class IsolatedDeviceTest : public ::testing::Test {
 protected:
  Device open(DeviceOptions options = isolated_cpu()) {
    Result<Device> device = Device::open(system_, std::move(options));
    EXPECT_THAT(device, IsOk());
    return *device;
  }
  static pid_t worker_of(const Device& device) {
    Result<DeviceInfo> info = device.info().wait();
    EXPECT_THAT(info, IsOk());
    return info.ok() ? info->worker_pid : 0;
  }
  System system_;
};

TEST_F(IsolatedDeviceTest, ServesFromAnotherProcessWithTheSameRequests) {
  Device dev = open();
  DeviceInfo info = *dev.info().wait();
  EXPECT_GT(info.worker_pid, 0);
  EXPECT_NE(info.worker_pid, ::getpid());
  EXPECT_EQ(info.worker_restarts, 0u);
  EXPECT_EQ(info.device_id, dev.id());

  const std::int64_t m = 37, n = 29, k = 41;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> a(m * k), b(k * n), c(m * n, 0.0), expected(m * n, 0.0);
  for (double& x : a) x = uniform(rng);
  for (double& x : b) x = uniform(rng);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < k; ++p) expected[i * n + j] += a[i * k + p] * b[p * n + j];

  Buffer<double> da = *dev.allocate<double>(a.size()).wait();
  Buffer<double> db = *dev.allocate<double>(b.size()).wait();
  Buffer<double> dc = *dev.allocate<double>(c.size()).wait();
  auto up_a = dev.upload(std::span<const double>(a), da);
  auto up_b = dev.upload(std::span<const double>(b), db);
  auto product = dev.gemm(Gemm{.shape = {.m = m, .n = n, .k = k, .input_type = DType::f64, .output_type = DType::f64},
                               .a = da,
                               .b = db,
                               .c = dc});
  auto down = dev.download(dc, std::span<double>(c));
  for (auto* f : {&up_a, &up_b, &product, &down}) ASSERT_THAT(f->wait(), IsOk());
  for (std::size_t i = 0; i < c.size(); ++i) EXPECT_NEAR(c[i], expected[i], 1e-12) << i;
}

TEST_F(IsolatedDeviceTest, CopiesLargerThanTheStagingRegionGoInPieces) {
  Device dev = open(isolated_cpu({.staging_bytes = 64 << 10}));
  std::vector<std::int32_t> host(1 << 18);  // 1 MiB through 64 KiB of staging
  std::iota(host.begin(), host.end(), 11);
  Buffer<std::int32_t> buffer = *dev.allocate<std::int32_t>(host.size() + 5).wait();
  ASSERT_THAT(dev.upload(std::span<const std::int32_t>(host), buffer, 5).wait(), IsOk());
  std::vector<std::int32_t> back(host.size(), 0);
  ASSERT_THAT(dev.download(buffer, std::span<std::int32_t>(back), 5).wait(), IsOk());
  EXPECT_EQ(back, host);
  std::vector<std::int32_t> too_many(host.size() + 1);
  EXPECT_THAT(dev.upload(std::span<const std::int32_t>(too_many), buffer, 5).wait(),
              StatusIs(Code::invalid_argument, "lie outside"));
}

TEST_F(IsolatedDeviceTest, BadRequestsGetTheSameErrorsAsInProcess) {
  Device dev = open();
  Buffer<float> buffer = *dev.allocate<float>(10).wait();
  std::vector<float> host(8);
  EXPECT_THAT(dev.upload(std::span<const float>(host), buffer, 3).wait(),
              StatusIs(Code::invalid_argument, "lie outside"));
  EXPECT_THAT(dev.ask(CopyToDevice{.source = {.data = nullptr, .count = 4}, .destination = buffer}).wait(),
              StatusIs(Code::invalid_argument, "null host source"));
  EXPECT_THAT(dev.allocate<float>(0).wait(), StatusIs(Code::invalid_argument));
  const BufferHandle old = buffer;
  ASSERT_THAT(dev.free(old).wait(), IsOk());
  EXPECT_THAT(dev.free(old).wait(), StatusIs(Code::stale_handle));
  EXPECT_THAT(dev.inject_fault(FaultKind::illegal_address).wait(), StatusIs(Code::not_supported, "CUDA"));
  EXPECT_THAT(dev.open_stream(), StatusIs(Code::not_supported));

  Device in_process = *Device::open(system_, {});
  EXPECT_THAT(in_process.inject_fault(FaultKind::worker_crash).wait(), StatusIs(Code::not_supported, "isolated"));
}

// Fences cross byte for byte like the other plain requests; a new worker's context makes the old ones stale.
TEST_F(IsolatedDeviceTest, FencesAreCheckedByTheWorkerAndStaleAfterItIsReplaced) {
  Device dev = open();
  const Fence fence = *dev.record_fence().wait();
  EXPECT_EQ(fence.device, dev.id());
  EXPECT_THAT(dev.wait_fence(fence).wait(), IsOk());
  EXPECT_THAT(dev.wait_fence(Fence{}).wait(), StatusIs(Code::invalid_argument, "null"));
  EXPECT_THAT(dev.inject_fault(FaultKind::worker_crash).wait(), StatusIs(Code::context_lost));
  EXPECT_THAT(dev.wait_fence(fence).wait(), StatusIs(Code::stale_handle, "rebuilt"));
}

TEST_F(IsolatedDeviceTest, ACrashedWorkerIsReplacedAndOldHandlesAreStale) {
  Device dev = open();
  const pid_t first = worker_of(dev);
  const std::uint32_t first_epoch = dev.info().wait()->epoch;
  Buffer<float> buffer = *dev.allocate<float>(16).wait();
  EXPECT_THAT(dev.inject_fault(FaultKind::worker_crash).wait(), StatusIs(Code::context_lost, "signal"));

  DeviceInfo info = *dev.info().wait();
  EXPECT_NE(info.worker_pid, first);
  EXPECT_EQ(info.worker_restarts, 1u);
  EXPECT_GT(info.epoch, first_epoch);
  EXPECT_TRUE(testing::process_gone(first));
  std::vector<float> host(16, 1.0f);
  EXPECT_THAT(dev.upload(std::span<const float>(host), buffer).wait(), StatusIs(Code::stale_handle));
  Buffer<float> fresh = *dev.allocate<float>(16).wait();
  EXPECT_THAT(dev.upload(std::span<const float>(host), fresh).wait(), IsOk());
  EXPECT_THAT(dev.health(), IsOk());
}

TEST_F(IsolatedDeviceTest, AKilledWorkerIsReplacedBeforeTheNextRequest) {
  Device dev = open();
  const pid_t first = worker_of(dev);
  ASSERT_TRUE(testing::kill_process(first));
  Result<DeviceInfo> info = dev.info().wait();
  ASSERT_THAT(info, IsOk());
  EXPECT_NE(info->worker_pid, first);
  EXPECT_EQ(info->worker_restarts, 1u);
}

// The heartbeat, not a deadline of the test's, is what answers the hang: a supervisor that never noticed it would
// leave the request waiting for ever, which the hang guard turns into a failure (the timeout that is in force is
// checked by AHangIsFoundWithinTheHeartbeatTimeout).
TEST_F(IsolatedDeviceTest, AHungWorkerIsKilledAndRequestsQueuedBehindItRunOnTheNext) {
  Device dev = open(isolated_cpu({.heartbeat_timeout = 300ms}));
  const pid_t first = worker_of(dev);
  auto hang = dev.inject_fault(FaultKind::worker_hang);
  std::vector<Future<DeviceInfo>> behind;
  for (int i = 0; i < 20; ++i) behind.push_back(dev.info());
  ASSERT_THAT(hang.wait_for(kHangGuard), StatusIs(Code::context_lost, "heartbeat"))
      << "hang guard: the hang was not answered within " << kHangGuard.count() << " s";
  for (auto& f : behind) {
    Result<DeviceInfo> info = f.wait();
    ASSERT_THAT(info, IsOk());
    EXPECT_NE(info->worker_pid, first);
  }
  EXPECT_TRUE(testing::process_gone(first));
}

// The silence the supervisor reports is its own measure of when it found the hang: never before the timeout, and
// with the timeout configured here in force rather than the default one. How soon past the timeout it wakes is a
// matter of scheduling, which a unit test on a loaded machine cannot bound (10 ms of slack failed on a 2-core CI
// machine); each trial's figures are recorded as properties instead. The answer comes only once the killed worker
// has been reaped, which is an order of events, not a time.
TEST_F(IsolatedDeviceTest, AHangIsFoundWithinTheHeartbeatTimeout) {
  constexpr auto kTimeout = 300ms;
  // 4.7 s beyond the timeout: a supervisor waking that late would be stalled, not slow.
  const std::chrono::milliseconds unconfigured = WorkerOptions{}.heartbeat_timeout;
  ASSERT_GE(unconfigured, 10 * kTimeout) << "the default must stand apart from the timeout configured here";
  Device dev = open(isolated_cpu({.heartbeat_timeout = kTimeout}));
  for (int trial = 0; trial < 3; ++trial) {
    const pid_t worker = worker_of(dev);  // a worker serves
    ASSERT_GT(worker, 0);
    const auto start = std::chrono::steady_clock::now();
    Result<Done> hang = dev.inject_fault(FaultKind::worker_hang).wait_for(kHangGuard);
    const auto answered_after =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    ASSERT_THAT(hang, StatusIs(Code::context_lost, "no heartbeat for "))
        << "(a deadline_exceeded here is the test's hang guard: the hang was never found)";
    const std::string message(hang.status().message());
    const auto found_after =
        std::chrono::milliseconds(std::stoi(message.substr(message.find("no heartbeat for ") + 17)));
    RecordProperty("hang_found_after_ms_" + std::to_string(trial), static_cast<int>(found_after.count()));
    RecordProperty("hang_answered_after_ms_" + std::to_string(trial), static_cast<int>(answered_after.count()));
    EXPECT_GE(found_after, kTimeout);
    EXPECT_LT(found_after, unconfigured) << "the default heartbeat timeout was in force, not the one configured";
    char state = 0;
    pid_t parent = 0;
    EXPECT_FALSE(testing::read_stat(worker, state, parent)) << "answered before the killed worker was reaped";
  }
}

TEST_F(IsolatedDeviceTest, ASpentRestartBudgetClosesTheDeviceWithAClearError) {
  Device dev = open(isolated_cpu({.restarts = {.max_restarts = 2, .window = 60'000ms}}));
  for (int i = 0; i < 2; ++i)
    EXPECT_THAT(dev.inject_fault(FaultKind::worker_crash).wait(), StatusIs(Code::context_lost));
  EXPECT_THAT(dev.info().wait(), IsOk());
  EXPECT_THAT(dev.inject_fault(FaultKind::worker_crash).wait(), StatusIs(Code::context_lost));
  EXPECT_THAT(dev.info().wait(), StatusIs(Code::unavailable, "restart budget exhausted"));
  EXPECT_THAT(dev.health(), StatusIs(Code::unavailable));
  std::vector<float> host(4);
  EXPECT_THAT(dev.allocate<float>(4).wait(), StatusIs(Code::unavailable));
}

// The loss that spends the budget is answered only once the device has failed: a caller who hears of it (here in
// a continuation, run by the thread that answers) finds health() failed, and so does every later request.
TEST_F(IsolatedDeviceTest, HealthFailsNoLaterThanTheRequestsWhenTheBudgetIsSpent) {
  Device dev = open(isolated_cpu({.restarts = {.max_restarts = 1, .window = 60'000ms}}));
  EXPECT_THAT(dev.inject_fault(FaultKind::worker_crash).wait(), StatusIs(Code::context_lost));
  Status health_when_answered;
  Future<Done> answered = dev.inject_fault(FaultKind::worker_crash).then([&](Result<Done> crashed) {
    EXPECT_THAT(crashed, StatusIs(Code::context_lost));
    health_when_answered = dev.health();
    return Done{};
  });
  ASSERT_THAT(answered.wait(), IsOk());
  EXPECT_THAT(health_when_answered, StatusIs(Code::unavailable, "restart budget exhausted"));
  EXPECT_THAT(dev.info().wait(), StatusIs(Code::unavailable, "restart budget exhausted"));
}

// Many client threads, the worker killed twice in the middle: every request is answered exactly once, each
// with success or with the error its buffer's fate explains.
TEST_F(IsolatedDeviceTest, EveryRequestIsAnsweredOnceWhenTheWorkerIsKilledUnderLoad) {
  Device dev = open();
  constexpr int kThreads = 16;
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> sent{0}, answered{0}, succeeded{0}, lost{0}, stale{0}, other{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&, t] {
      std::vector<float> host(256, static_cast<float>(t)), back(256);
      while (!stop.load()) {
        Result<Buffer<float>> buffer = dev.allocate<float>(256).wait();
        sent.fetch_add(1);
        answered.fetch_add(1);
        if (!buffer.ok()) {
          (buffer.status().code() == Code::context_lost ? lost : other).fetch_add(1);
          continue;
        }
        succeeded.fetch_add(1);
        std::vector<Future<Done>> futures;
        futures.push_back(dev.upload(std::span<const float>(host), *buffer));
        futures.push_back(dev.download(*buffer, std::span<float>(back)));
        sent.fetch_add(2);
        for (auto& f : futures) {
          Result<Done> done = f.wait_for(30s);
          answered.fetch_add(done.status().code() == Code::deadline_exceeded ? 0 : 1);
          switch (done.status().code()) {
            case Code::ok: succeeded.fetch_add(1); break;
            case Code::context_lost: lost.fetch_add(1); break;
            case Code::stale_handle: stale.fetch_add(1); break;
            default: other.fetch_add(1); ADD_FAILURE() << done.status().to_string();
          }
        }
      }
    });
  }
  // Each kill lands in traffic, and traffic goes on after the last: for a while, and until the clients have seen
  // successes, so that a slow machine cannot kill a worker before any request has reached it.
  const auto served_more = [&] {
    const std::int64_t from = succeeded.load();
    std::this_thread::sleep_for(300ms);
    const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
    while (succeeded.load() < from + kThreads && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    return succeeded.load() >= from + kThreads;
  };
  std::string hung;  // what a hang guard ran out waiting for; the clients are stopped before the test fails on it
  // What the device says of itself when a guard runs out (a replacement that did not start names its deadline in the
  // health): under TSan this test waited out the guard after its first kill twice on 2026-12-05 (once in the suite,
  // once in 20 runs beside scripts/check-package; none in about 150 other runs), and its message said no more.
  const auto device_state = [&] {
    Result<DeviceInfo> info = dev.info().wait_for(5s);
    return "; health: " + dev.health().to_string() + "; worker " +
           (info.ok()
                ? std::to_string(info->worker_pid) + " after " + std::to_string(info->worker_restarts) + " restarts"
                : info.status().to_string());
  };
  pid_t killed = 0;
  for (int kill = 0; kill < 2 && hung.empty(); ++kill) {
    if (!served_more()) {
      hung = "successes before kill " + std::to_string(kill) + device_state();
      break;
    }
    // The worker serving now: once the last one killed has been replaced (while it is, the device may report none).
    pid_t worker = 0;
    for (const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
         (worker <= 0 || worker == killed) && std::chrono::steady_clock::now() < deadline;) {
      Result<DeviceInfo> info = dev.info().wait();
      worker = info.ok() ? info->worker_pid : 0;
    }
    if (worker <= 0 || worker == killed || !testing::kill_process(worker)) {
      hung = "a new worker to kill (kill " + std::to_string(kill) + ")" + device_state();
      break;
    }
    killed = worker;
  }
  if (hung.empty() && !served_more()) hung = "successes after the last kill" + device_state();
  stop.store(true);
  for (auto& client : clients) client.join();
  ASSERT_TRUE(hung.empty()) << "hang guard: waited " << kHangGuard.count() << " s for " << hung;
  EXPECT_EQ(answered.load(), sent.load());
  EXPECT_EQ(succeeded.load() + lost.load() + stale.load() + other.load(), sent.load());
  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(succeeded.load(), 0);
  EXPECT_EQ(dev.info().wait()->worker_restarts, 2u);
}

// The standby (the worker's child count of two) takes over at once, and a new standby follows it.
TEST_F(IsolatedDeviceTest, AStandbyWorkerTakesOverAndIsItselfReplaced) {
  Device dev = open(isolated_cpu({.standby = true}));
  const pid_t first = worker_of(dev);
  auto wait_for_children = [](std::size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
    while (testing::live_children().size() != count && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(2ms);
    }
    return testing::live_children();
  };
  std::vector<pid_t> both = wait_for_children(2);
  ASSERT_EQ(both.size(), 2u);
  const pid_t standby = both[0] == first ? both[1] : both[0];
  Buffer<float> buffer = *dev.allocate<float>(8).wait();

  EXPECT_THAT(dev.inject_fault(FaultKind::worker_crash).wait(), StatusIs(Code::context_lost, "signal"));
  DeviceInfo info = *dev.info().wait();
  EXPECT_EQ(info.worker_pid, standby);
  EXPECT_EQ(info.worker_restarts, 1u);
  std::vector<float> host(8, 2.0f);
  EXPECT_THAT(dev.upload(std::span<const float>(host), buffer).wait(), StatusIs(Code::stale_handle));
  EXPECT_EQ(wait_for_children(2).size(), 2u);

  // A lost standby is replaced without troubling the serving worker.
  const std::vector<pid_t> now = testing::live_children();
  const pid_t next_standby = now[0] == standby ? now[1] : now[0];
  ASSERT_TRUE(testing::kill_process(next_standby));
  EXPECT_THAT(dev.info().wait(), IsOk());
  const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::vector<pid_t> children = testing::live_children();
    if (children.size() == 2 && std::find(children.begin(), children.end(), next_standby) == children.end()) break;
    std::this_thread::sleep_for(2ms);
  }
  const std::vector<pid_t> after = testing::live_children();
  EXPECT_EQ(after.size(), 2u);
  EXPECT_EQ(std::find(after.begin(), after.end(), next_standby), after.end());
  EXPECT_EQ(worker_of(dev), standby);
}

TEST_F(IsolatedDeviceTest, ClosingLeavesNoProcessDescriptorOrSegmentBehind) {
  const int fds_before = testing::count_open_fds();
  pid_t worker = 0;
  {
    System system;
    Device dev = *Device::open(system, isolated_cpu());
    Device second = *Device::open(system, isolated_cpu({.standby = true}));
    EXPECT_NE(worker_of(dev), worker_of(second));
    EXPECT_GE(testing::live_children().size(), 2u);  // and the second device's standby, once it has started
    for (int i = 0; i < 3; ++i)
      EXPECT_THAT(dev.inject_fault(FaultKind::worker_crash).wait(), StatusIs(Code::context_lost));
    worker = worker_of(dev);
  }
  EXPECT_TRUE(testing::process_gone(worker));
  EXPECT_TRUE(testing::live_children().empty());
  EXPECT_EQ(testing::count_open_fds(), fds_before);
}

// The client's pthread_atfork handlers (libomp registers one, which allocates) never run in a worker being started:
// in a threaded process they would run between fork and exec, where only async-signal-safe calls are safe. Here one
// ends the child at once, as a deadlocked one would never exec; the first worker and its replacement both start.
std::atomic<bool> fork_children_exit{false};

TEST_F(IsolatedDeviceTest, WorkersStartWithoutRunningTheClientsForkHandlers) {
  static std::once_flag registered;
  std::call_once(registered, [] {
    ::pthread_atfork(nullptr, nullptr, [] {
      if (fork_children_exit.load()) ::_exit(97);
    });
  });
  struct ExitingForkChildren {  // for this test only, whichever way it ends: later tests fork children of their own
    ExitingForkChildren() { fork_children_exit = true; }
    ~ExitingForkChildren() { fork_children_exit = false; }
  } exiting;
  Result<Device> dev = Device::open(system_, isolated_cpu());
  ASSERT_THAT(dev, IsOk());
  EXPECT_THAT(dev->inject_fault(FaultKind::worker_crash).wait(), StatusIs(Code::context_lost));
  Result<DeviceInfo> info = dev->info().wait();
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->worker_restarts, 1u);
}

TEST_F(IsolatedDeviceTest, TheWorkerEndsWhenItsClientIsKilled) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t client = ::fork();
  ASSERT_GE(client, 0);
  if (client == 0) {
    ::close(pipe_fds[0]);
    System system;
    Result<Device> dev = Device::open(system, isolated_cpu());
    pid_t worker = dev.ok() ? dev->info().wait()->worker_pid : 0;
    [[maybe_unused]] auto written = ::write(pipe_fds[1], &worker, sizeof worker);
    ::raise(SIGKILL);
  }
  ::close(pipe_fds[1]);
  pid_t worker = 0;
  ASSERT_EQ(::read(pipe_fds[0], &worker, sizeof worker), static_cast<ssize_t>(sizeof worker));
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(client, &status, 0), client);
  ASSERT_GT(worker, 0);
  const auto deadline = std::chrono::steady_clock::now() + kHangGuard;  // PR_SET_PDEATHSIG: at once
  while (!testing::process_gone(worker) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(testing::process_gone(worker));
}

}  // namespace
}  // namespace accel
