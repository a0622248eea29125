// NCCL collectives in one process on two GPUs (label gpu): every collective and dtype against integer arithmetic on
// fresh random data, on in-process devices and on isolated ones (the communicators then live in the workers), and
// an all-reduce ordered after a copy into its buffer with no host wait between. With one GPU the world has one rank:
// NCCL's communicators, groups, watchdog and the device path all run, its transport between GPUs does not. Skipped
// without a GPU.
#include <cuda_runtime.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "collective_cases.hpp"
#include "testing/test_seed.hpp"

namespace accel::collective {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using namespace testing;  // NOLINT(google-build-using-namespace): the collective test helpers

// Isolated or not; collectives on the split blocking communicator or on the non-blocking one alone.
class CudaCollectiveTest : public ::testing::TestWithParam<std::tuple<Isolation, bool>> {
 protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) GTEST_SKIP() << "needs a GPU";
    const auto [isolation, blocking_collectives] = GetParam();
    for (int i = 0; i < std::min(count, 2); ++i) {
      Result<Device> device = Device::open(system_, {.kind = DeviceKind::cuda, .ordinal = i, .isolation = isolation});
      ASSERT_THAT(device.status(), IsOk());
      devices_.push_back(*device);
    }
    Result<std::vector<Communicator>> comms =
        init_all(devices_, {.timeout_ms = 60'000, .blocking_collectives = blocking_collectives});
    ASSERT_THAT(comms.status(), IsOk());
    comms_ = std::move(*comms);
  }
  // Every rank's destroy is sent before any is waited for: across processes (isolated devices) NCCL's destroy
  // returns only once the other ranks of the host destroy theirs.
  void TearDown() override {
    std::vector<Future<Done>> destroyed;
    for (const Communicator& comm : comms_) destroyed.push_back(comm.destroy());
    for (Future<Done>& done : destroyed) EXPECT_THAT(done.wait().status(), IsOk());
  }
  System system_;
  std::vector<Device> devices_;
  std::vector<Communicator> comms_;
  std::mt19937 rng_{accel::testing::test_seed()};
};

// Every dtype but fp8, which the next test takes on its own terms.
TEST_P(CudaCollectiveTest, EveryCollectiveAndDTypeButFp8) {
  for (DType dtype : kAllDTypes)
    if (dtype != DType::fp8_e4m3 && dtype != DType::fp8_e5m2) check_every_collective(comms_, rng_, dtype);
}

// fp8 (e4m3, e5m2): every reduction but avg matches the host's result; avg, which NCCL refuses over fp8 (and an
// argument error leaves a non-blocking communicator in error), is refused before NCCL sees it, and the communicator
// still runs an all-reduce after; copies (all-gather, broadcast) run.
TEST_P(CudaCollectiveTest, Fp8CollectivesRunAndAvgIsRefusedBeforeNccl) {
  const std::size_t n = 37;
  for (DType dtype : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max}) {
      SCOPED_TRACE(::testing::Message() << to_string(dtype) << " " << to_string(op));
      check_step(
          comms_, rng_, dtype, n, n, false,
          [&](Comm c, BufferHandle s, BufferHandle r) { return all_reduce(c, s, r, n, dtype, op); },
          [&](std::int32_t, const auto& all) {
            std::vector<std::vector<double>> firsts;
            for (const auto& s : all) firsts.push_back(part(s, 0, n));
            return expected(dtype, op, firsts);
          });
    }
    std::vector<Future<Done>> pending;
    for (const Communicator& comm : comms_) {
      Result<BufferHandle> buffer = upload(comm.device(), dtype, random_values(rng_, dtype, n));
      ASSERT_THAT(buffer.status(), IsOk());
      pending.push_back(comm.ask(all_reduce(comm.comm(), *buffer, *buffer, n, dtype, ReduceOp::avg)));
    }
    for (Future<Done>& done : pending) EXPECT_THAT(done.wait(), StatusIs(Code::not_supported));
    check_step(
        comms_, rng_, DType::f32, n, n, false,
        [&](Comm c, BufferHandle s, BufferHandle r) { return all_reduce(c, s, r, n, DType::f32, ReduceOp::sum); },
        [&](std::int32_t, const auto& all) { return expected(DType::f32, ReduceOp::sum, all); });
    check_step(
        comms_, rng_, dtype, n, n * comms_.size(), false,
        [&](Comm c, BufferHandle s, BufferHandle r) { return all_gather(c, s, r, n, dtype); },
        [&](std::int32_t, const auto& all) {
          std::vector<double> want;
          for (const auto& s : all) {
            const std::vector<double> mine = part(s, 0, n);
            want.insert(want.end(), mine.begin(), mine.end());
          }
          return want;
        });
    check_step(
        comms_, rng_, dtype, n, n, false,
        [&](Comm c, BufferHandle s, BufferHandle r) { return broadcast(c, s, r, n, dtype, 0); },
        [&](std::int32_t, const auto& all) { return part(all[0], 0, n); });
  }
}

// The copy and the all-reduce are sent back to back; the all-reduce waits for the copy by events only.
TEST_P(CudaCollectiveTest, OrdersAfterEarlierRequestsOnItsBuffers) {
  const std::size_t n = 1 << 20;
  std::vector<Future<Done>> pending;
  std::vector<BufferHandle> buffers;
  std::vector<std::vector<float>> hosts;
  for (const Communicator& comm : comms_) {
    buffers.push_back(*comm.device().ask(Allocate{.dtype = DType::f32, .count = n}).wait());
    hosts.emplace_back(n, static_cast<float>(comm.rank() + 1));
  }
  for (std::size_t r = 0; r < comms_.size(); ++r) {
    const Communicator& comm = comms_[r];
    pending.push_back(comm.ask(CopyToDevice{.source = {hosts[r].data(), n, DType::f32}, .destination = buffers[r]}));
    pending.push_back(comm.ask(all_reduce(comm.comm(), buffers[r], buffers[r], n, DType::f32, ReduceOp::sum)));
  }
  for (Future<Done>& done : pending) ASSERT_THAT(done.wait().status(), IsOk());
  const double sum = static_cast<double>(comms_.size() * (comms_.size() + 1) / 2);  // of every rank's rank + 1
  for (std::size_t r = 0; r < comms_.size(); ++r) {
    Result<std::vector<double>> got = download(comms_[r].device(), buffers[r]);
    ASSERT_THAT(got.status(), IsOk());
    EXPECT_EQ((*got)[0], sum);
    EXPECT_EQ((*got)[n - 1], sum);
  }
}

INSTANTIATE_TEST_SUITE_P(Isolation, CudaCollectiveTest,
                         ::testing::Combine(::testing::Values(Isolation::in_process, Isolation::worker_process),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<Isolation, bool>>& info) {
                           return std::string(to_string(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_split" : "_one_communicator");
                         });

}  // namespace
}  // namespace accel::collective
