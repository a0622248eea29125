// An isolated device's health() against the answers its requests get once the worker's restart budget is spent
// (issue 42): no caller may hear `unavailable` from a request and then find the device healthy. Requests are in
// flight from several threads when the budget-spending loss comes (an injected crash, or kill -9 of the worker,
// with and without a standby): each one answered `unavailable` asks health() at once, in a continuation that the
// answering thread runs. The single-request orderings are in isolated_device_test.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

// Far beyond any delay of a loaded machine: reaching it means the device never failed.
constexpr auto kHangGuard = 60s;

enum class Loss { injected_crash, killed_worker };

// Threads sending QueryDevice until told to stop; every answer `unavailable` checks health() right there.
class RequestFlood {
 public:
  RequestFlood(const Device& device, int threads) {
    for (int t = 0; t < threads; ++t) {
      threads_.emplace_back([this, device] {
        while (!stop_.load()) {
          (void)device.info()
              .then([this, device](Result<DeviceInfo> info) {
                if (info.status().code() == Code::unavailable) {
                  ++unavailable_answers_;
                  if (device.health().ok()) ++healthy_when_unavailable_;
                }
                return Done{};
              })
              .wait();
        }
      });
    }
  }
  // Stops once `answers` requests were answered `unavailable`, or at the hang guard.
  void stop_after_unavailable(int answers) {
    const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
    while (unavailable_answers_.load() < answers && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    stop_.store(true);
    threads_.clear();
  }
  int unavailable_answers() const { return unavailable_answers_.load(); }
  int healthy_when_unavailable() const { return healthy_when_unavailable_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> unavailable_answers_{0};
  std::atomic<int> healthy_when_unavailable_{0};
  std::vector<std::jthread> threads_;
};

class IsolatedHealthTest : public ::testing::TestWithParam<bool> {
 protected:
  // Spends a budget of one restart under load: one loss is replaced, the next fails the device for good.
  void spend_the_budget_under_load(Loss loss) {
    WorkerOptions worker{.standby = GetParam(), .restarts = {.max_restarts = 1, .window = 60'000ms}};
    Result<Device> opened =
        Device::open(system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process, .worker = worker});
    ASSERT_THAT(opened, IsOk());
    const Device device = *opened;
    RequestFlood flood(device, 4);
    for (int lost = 0; lost < 2; ++lost) {
      ASSERT_THAT(device.health(), IsOk()) << "the device failed before its budget was spent";
      if (loss == Loss::injected_crash) {
        EXPECT_THAT(device.inject_fault(FaultKind::worker_crash).wait(), StatusIs(Code::context_lost));
      } else {
        Result<DeviceInfo> info = device.info().wait();
        ASSERT_THAT(info, IsOk());
        ASSERT_TRUE(testing::kill_process(info->worker_pid));
      }
    }
    flood.stop_after_unavailable(32);
    EXPECT_GE(flood.unavailable_answers(), 32) << "the requests were never refused";
    EXPECT_EQ(flood.healthy_when_unavailable(), 0)
        << "of " << flood.unavailable_answers() << " requests answered unavailable, these found health() OK";
    EXPECT_THAT(device.health(), StatusIs(Code::unavailable, "restart budget exhausted"));
  }
  System system_;
};

TEST_P(IsolatedHealthTest, EveryRequestAnsweredUnavailableFindsHealthFailedAfterACrash) {
  for (int trial = 0; trial < 3 && !HasFailure(); ++trial) spend_the_budget_under_load(Loss::injected_crash);
}

TEST_P(IsolatedHealthTest, EveryRequestAnsweredUnavailableFindsHealthFailedAfterAKill) {
  for (int trial = 0; trial < 3 && !HasFailure(); ++trial) spend_the_budget_under_load(Loss::killed_worker);
}

INSTANTIATE_TEST_SUITE_P(Standby, IsolatedHealthTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "with_standby" : "without_standby";
                         });

}  // namespace
}  // namespace accel
