// accel::DevicePool on the CPU: device lists and their errors, the placement policies, the counters, and health:
// a device whose requests fail with its own failure is skipped until refresh() finds it answering again, an
// isolated device whose worker was killed is used again once its supervisor replaced the worker, and one whose
// restart budget is spent is skipped for good.
#include "accel/device/pool.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "testing/process_probe.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing::IsOk;
using testing::StatusIs;

std::vector<std::string> texts(const std::vector<DeviceSpec>& specs) {
  std::vector<std::string> out;
  for (const DeviceSpec& spec : specs) out.push_back(spec.text);
  return out;
}

TEST(DeviceListTest, ParsesEveryKindOfEntry) {
  Result<std::vector<DeviceSpec>> specs = parse_device_list("cpu, cpu-isolated,cuda,cuda:1,cuda-isolated:1,0", 2);
  ASSERT_THAT(specs, IsOk());
  ASSERT_EQ(specs->size(), 6u);
  EXPECT_EQ((*specs)[0].options.kind, DeviceKind::cpu);
  EXPECT_EQ((*specs)[1].options.isolation, Isolation::worker_process);
  EXPECT_EQ((*specs)[1].options.kind, DeviceKind::cpu);
  EXPECT_EQ((*specs)[2].options.kind, DeviceKind::cuda);
  EXPECT_EQ((*specs)[2].options.ordinal, 0);
  EXPECT_EQ((*specs)[3].options.ordinal, 1);
  EXPECT_EQ((*specs)[4].options.isolation, Isolation::worker_process);
  EXPECT_EQ((*specs)[4].options.ordinal, 1);
  EXPECT_EQ((*specs)[5].options.kind, DeviceKind::cuda);
  EXPECT_EQ((*specs)[5].options.ordinal, 0);
  EXPECT_EQ((*specs)[3].text, "cuda:1");
}

TEST(DeviceListTest, AllIsEveryGpuOrTheCpuWhereThereIsNone) {
  EXPECT_EQ(texts(*parse_device_list("all", 2)), (std::vector<std::string>{"cuda:0", "cuda:1"}));
  EXPECT_EQ(texts(*parse_device_list("all", 0)), (std::vector<std::string>{"cpu"}));
  EXPECT_EQ(texts(*parse_device_list("all,cpu", 1)), (std::vector<std::string>{"cuda:0", "cpu"}));
}

TEST(DeviceListTest, KeepsTheBaseOptions) {
  Result<std::vector<DeviceSpec>> specs = parse_device_list("cpu,cpu", 0, {.memory_limit_bytes = 4096});
  ASSERT_THAT(specs, IsOk());
  for (const DeviceSpec& spec : *specs) EXPECT_EQ(spec.options.memory_limit_bytes, 4096u);
}

TEST(DeviceListTest, ErrorsNameTheBadEntry) {
  EXPECT_THAT(parse_device_list("cpu,gpu", 1), StatusIs(Code::invalid_argument, "unknown device 'gpu'"));
  EXPECT_THAT(parse_device_list("cuda:x", 1), StatusIs(Code::invalid_argument, "bad GPU ordinal in 'cuda:x'"));
  EXPECT_THAT(parse_device_list("cudax", 1), StatusIs(Code::invalid_argument, "unknown device 'cudax'"));
  EXPECT_THAT(parse_device_list("cpu,,cpu", 1), StatusIs(Code::invalid_argument, "empty entry"));
  EXPECT_THAT(parse_device_list("", 1), StatusIs(Code::invalid_argument, "device list is empty"));
  EXPECT_THAT(parse_device_list("cuda:2", 2),
              StatusIs(Code::invalid_argument, "'cuda:2' names GPU 2, but this host has 2 usable GPUs"));
  EXPECT_THAT(parse_device_list("cuda-isolated", 0), StatusIs(Code::invalid_argument, "has 0 usable GPUs"));
}

TEST(DeviceChoiceTest, NamesOneDeviceAsAListEntryDoesOrAuto) {
  EXPECT_EQ(parse_device_choice("auto", 0)->kind, DeviceKind::cpu);
  const Result<DeviceOptions> gpu = parse_device_choice("auto", 2);
  ASSERT_THAT(gpu, IsOk());
  EXPECT_EQ(gpu->kind, DeviceKind::cuda);
  EXPECT_EQ(gpu->ordinal, 0);
  EXPECT_EQ(gpu->isolation, Isolation::in_process);
  const Result<DeviceOptions> isolated = parse_device_choice("cuda-isolated:1", 2, {.memory_limit_bytes = 4096});
  ASSERT_THAT(isolated, IsOk());
  EXPECT_EQ(isolated->kind, DeviceKind::cuda);
  EXPECT_EQ(isolated->ordinal, 1);
  EXPECT_EQ(isolated->isolation, Isolation::worker_process);
  EXPECT_EQ(isolated->memory_limit_bytes, 4096u);
  const Result<DeviceOptions> worker_cpu = parse_device_choice("cpu-isolated", 0);
  ASSERT_THAT(worker_cpu, IsOk());
  EXPECT_EQ(worker_cpu->kind, DeviceKind::cpu);
  EXPECT_EQ(worker_cpu->isolation, Isolation::worker_process);
  EXPECT_EQ(parse_device_choice("1", 2)->ordinal, 1);
  EXPECT_EQ(parse_device_choice("cpu")->kind, DeviceKind::cpu);  // counts no GPU
  // Nor does an isolated GPU: its worker, not this process, initialises the CUDA driver and finds its ordinal.
  const Result<DeviceOptions> uncounted = parse_device_choice("cuda-isolated:3");
  ASSERT_THAT(uncounted, IsOk());
  EXPECT_EQ(uncounted->ordinal, 3);
  EXPECT_EQ(uncounted->isolation, Isolation::worker_process);
}

TEST(DeviceChoiceTest, ErrorsNameTheChoiceAndWhatIsTaken) {
  EXPECT_THAT(parse_device_choice("tpu", 1),
              StatusIs(Code::invalid_argument, "unknown device 'tpu' (auto, cpu, cpu-isolated, cuda[:N]"));
  EXPECT_THAT(parse_device_choice("all", 1), StatusIs(Code::invalid_argument, "unknown device 'all'"));
  EXPECT_THAT(parse_device_choice("cpu,cpu", 1), StatusIs(Code::invalid_argument, "unknown device 'cpu,cpu'"));
  EXPECT_THAT(parse_device_choice("cuda:1", 1),
              StatusIs(Code::invalid_argument, "'cuda:1' names GPU 1, but this host has 1 usable GPU"));
  EXPECT_THAT(parse_device_choice("cuda", 0), StatusIs(Code::invalid_argument, "has 0 usable GPUs"));
  EXPECT_THAT(parse_device_choice("", 1), StatusIs(Code::invalid_argument, "''"));
  // An ordinal is digits: a sign makes no GPU (the fuzzer found "-8" taken as cuda:-8).
  EXPECT_THAT(parse_device_choice("-8", 0), StatusIs(Code::invalid_argument, "unknown device '-8'"));
  EXPECT_THAT(parse_device_choice("cuda:-1", 2), StatusIs(Code::invalid_argument, "bad GPU ordinal in 'cuda:-1'"));
  EXPECT_THAT(parse_device_list("cpu,+1", 2), StatusIs(Code::invalid_argument, "unknown device '+1'"));
}

TEST(DeviceListTest, PolicyNames) {
  for (PlacementPolicy policy :
       {PlacementPolicy::least_loaded, PlacementPolicy::round_robin, PlacementPolicy::most_free_memory}) {
    EXPECT_EQ(*parse_placement_policy(to_string(policy)), policy);
  }
  EXPECT_EQ(*parse_placement_policy("round-robin"), PlacementPolicy::round_robin);
  EXPECT_THAT(parse_placement_policy("random"), StatusIs(Code::invalid_argument, "'random'"));
}

class DevicePoolTest : public ::testing::Test {
 protected:
  DevicePool open(std::string_view list, DeviceOptions base = {}) {
    Result<DevicePool> pool = DevicePool::open(system_, list, base);
    EXPECT_THAT(pool, IsOk());
    return std::move(*pool);
  }
  System system_;
};

TEST_F(DevicePoolTest, OpensEveryDeviceOfTheList) {
  DevicePool pool = open("cpu,cpu,cpu-isolated", {.memory_limit_bytes = 1 << 20});
  ASSERT_EQ(pool.size(), 3u);
  EXPECT_NE(pool.device(0).id(), pool.device(1).id());
  for (const PooledDeviceState& state : pool.states()) {
    EXPECT_TRUE(state.usable) << state.spec;
    EXPECT_EQ(state.memory_capacity_bytes, 1u << 20) << state.spec;
    EXPECT_EQ(state.memory_free_bytes, 1u << 20) << state.spec;
    EXPECT_EQ(state.requests_in_flight, 0u);
  }
  EXPECT_EQ(pool.state(2).isolation, Isolation::worker_process);
  EXPECT_EQ(pool.spec(2), "cpu-isolated");
  EXPECT_THAT(DevicePool::open(system_, std::span<const DeviceSpec>{}), StatusIs(Code::invalid_argument));
}

TEST_F(DevicePoolTest, RoundRobinTakesTurns) {
  DevicePool pool = open("cpu,cpu,cpu");
  std::vector<std::size_t> picked;
  for (int i = 0; i < 6; ++i) picked.push_back(pool.place(PlacementPolicy::round_robin)->index);
  EXPECT_EQ(picked, (std::vector<std::size_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(pool.state(1).requests_in_flight, 2u);
  EXPECT_EQ(pool.state(1).requests_placed, 2u);
}

TEST_F(DevicePoolTest, LeastLoadedGoesByWeightInFlight) {
  DevicePool pool = open("cpu,cpu,cpu");
  Placement heavy = *pool.place(PlacementPolicy::least_loaded, 100);
  EXPECT_EQ(heavy.index, 0u);
  EXPECT_EQ(pool.place(PlacementPolicy::least_loaded, 10)->index, 1u);
  EXPECT_EQ(pool.place(PlacementPolicy::least_loaded, 30)->index, 2u);
  // 100, 10, 30 in flight: the lightest takes the next two.
  EXPECT_EQ(pool.place(PlacementPolicy::least_loaded, 5)->index, 1u);
  EXPECT_EQ(pool.place(PlacementPolicy::least_loaded, 5)->index, 1u);
  EXPECT_EQ(pool.state(1).weight_in_flight, 20u);
  pool.finish(heavy, Status());
  EXPECT_EQ(pool.state(0).weight_in_flight, 0u);
  EXPECT_EQ(pool.state(0).requests_in_flight, 0u);
  EXPECT_EQ(pool.place(PlacementPolicy::least_loaded, 1)->index, 0u);
  EXPECT_EQ(pool.state(0).weight_placed, 101u);
}

TEST_F(DevicePoolTest, MostFreeMemoryAsOfTheLastRefresh) {
  DevicePool pool = open("cpu,cpu,cpu", {.memory_limit_bytes = 1 << 20});
  Result<Buffer<float>> big = pool.device(0).allocate<float>(64 << 10).wait();
  Result<Buffer<float>> small = pool.device(2).allocate<float>(16 << 10).wait();
  ASSERT_THAT(big, IsOk());
  ASSERT_THAT(small, IsOk());
  // Not refreshed yet: all equally free, so the policy takes turns.
  EXPECT_EQ(pool.place(PlacementPolicy::most_free_memory, 1)->index, 0u);
  ASSERT_THAT(pool.refresh(), IsOk());
  EXPECT_EQ(pool.state(0).memory_free_bytes, (1u << 20) - (256u << 10));
  EXPECT_EQ(pool.state(0).memory_in_use_bytes, 256u << 10);
  EXPECT_EQ(pool.place(PlacementPolicy::most_free_memory, 1)->index, 1u);
  EXPECT_EQ(pool.place(PlacementPolicy::most_free_memory, 1)->index, 1u);
}

TEST_F(DevicePoolTest, ADeviceFailureMarksItDownUntilRefresh) {
  DevicePool pool = open("cpu,cpu");
  Placement first = *pool.place(PlacementPolicy::round_robin);
  Placement second = *pool.place(PlacementPolicy::round_robin);
  pool.finish(second, invalid_argument("the request's own fault"));
  EXPECT_TRUE(pool.state(1).usable) << "a request's own error says nothing about the device";
  EXPECT_EQ(pool.state(1).requests_failed, 1u);
  pool.finish(first, context_lost("the worker died"));
  EXPECT_FALSE(pool.state(0).usable);
  EXPECT_THAT(pool.state(0).down, StatusIs(Code::context_lost));
  EXPECT_EQ(pool.state(0).times_down, 1u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(pool.place(PlacementPolicy::least_loaded)->index, 1u);
  pool.mark_down(1, unavailable("drained"));
  EXPECT_THAT(pool.place(PlacementPolicy::round_robin),
              StatusIs(Code::unavailable, "cpu: context_lost: the worker died; cpu: unavailable: drained"));
  ASSERT_THAT(pool.refresh(), IsOk());
  EXPECT_TRUE(pool.state(0).usable);
  EXPECT_TRUE(pool.state(1).usable);
  EXPECT_THAT(pool.place(PlacementPolicy::round_robin), IsOk());
}

TEST_F(DevicePoolTest, APoolWithOwnCountersSharesTheDevicesOnly) {
  DevicePool pool = open("cpu,cpu");
  DevicePool other = pool.with_own_counters();
  ASSERT_EQ(other.size(), 2u);
  EXPECT_TRUE(other.device(1) == pool.device(1));
  const Placement placed = *pool.place(PlacementPolicy::round_robin, 7);
  pool.finish(placed, context_lost("lost"));
  EXPECT_FALSE(pool.state(0).usable);
  EXPECT_TRUE(other.state(0).usable);
  EXPECT_EQ(other.state(0).requests_placed, 0u);
  EXPECT_EQ(other.place(PlacementPolicy::round_robin)->index, 0u);
  ASSERT_THAT(pool.refresh(1), IsOk());
  EXPECT_FALSE(pool.state(0).usable) << "refresh(1) refreshed device 1 alone";
  ASSERT_THAT(pool.refresh(0), IsOk());
  EXPECT_TRUE(pool.state(0).usable);
}

TEST_F(DevicePoolTest, AnIsolatedDeviceIsUsedAgainOnceItsWorkerWasReplaced) {
  DevicePool pool = open("cpu,cpu-isolated");
  ASSERT_EQ(pool.place(PlacementPolicy::round_robin)->index, 0u);
  const Placement isolated = *pool.place(PlacementPolicy::round_robin);
  ASSERT_EQ(isolated.index, 1u);
  // The worker crashes under the request: it is answered context_lost and the pool takes the device out.
  const Status crashed = pool.device(1).inject_fault(FaultKind::worker_crash).wait().status();
  EXPECT_THAT(crashed, StatusIs(Code::context_lost));
  pool.finish(isolated, crashed);
  EXPECT_FALSE(pool.state(1).usable);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(pool.place(PlacementPolicy::round_robin)->index, 0u);
  // Killed from outside as well: the supervisor replaces it, and refresh() finds the device answering.
  Result<DeviceInfo> info = pool.device(1).info().wait();
  ASSERT_THAT(info, IsOk());
  ASSERT_TRUE(testing::kill_process(info->worker_pid));
  ASSERT_THAT(pool.refresh(), IsOk());
  const PooledDeviceState back = pool.state(1);
  EXPECT_TRUE(back.usable);
  EXPECT_GE(back.worker_restarts, 1u);
  EXPECT_EQ(pool.place(PlacementPolicy::least_loaded)->index, 1u) << "device 0 holds 5 requests, device 1 none";
}

TEST_F(DevicePoolTest, ADeviceThatFailedForGoodIsSkippedForGood) {
  DeviceOptions base{.worker = {.restarts = {.max_restarts = 0, .window = 60'000ms}}};
  DevicePool pool = open("cpu-isolated,cpu", base);
  Result<DeviceInfo> info = pool.device(0).info().wait();
  ASSERT_THAT(info, IsOk());
  ASSERT_TRUE(testing::kill_process(info->worker_pid));
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (pool.device(0).health().ok() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_FALSE(pool.device(0).health().ok()) << "the worker's loss never failed the device";
  EXPECT_FALSE(pool.state(0).usable);
  EXPECT_THAT(pool.state(0).health, StatusIs(Code::unavailable));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(pool.place(PlacementPolicy::round_robin)->index, 1u);
  EXPECT_THAT(pool.refresh(), StatusIs(Code::unavailable, "device 'cpu-isolated'"));
  EXPECT_FALSE(pool.state(0).usable);
  EXPECT_EQ(pool.place(PlacementPolicy::most_free_memory)->index, 1u);
}

}  // namespace
}  // namespace accel
