// Recording on the CPU device, the reference: a recorded pipeline (random fill, GEMM, axpy, scal, FFT) launched
// equals the same requests sent one by one, over several shapes and launches; requests that cannot be captured are
// refused by name before anything runs; a freed buffer or a rebuilt context fails the launch with stale_handle
// before any step runs; rebinding replaces a buffer of the same dtype and count without recording again. Host
// copies: recording_host_copies_test.cpp. Every BLAS routine of levels 1-3 recorded, in process and isolated, equals
// the requests sent one by one.
#include "accel/device/recording.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <span>
#include <thread>
#include <vector>

#include "accel/libs/solver/dense.hpp"
#include "device/blas_recording_pipeline.hpp"
#include "device/isolated/staged_requests.hpp"
#include "device/recording_pipeline.hpp"
#include "libs/blas/blas_testing.hpp"
#include "testing/buffer_values.hpp"

namespace accel {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;

using accel::testing::RecordingPipeline;

class RecordingTest : public blas::testing::BlasDeviceTest {};

TEST_F(RecordingTest, ALaunchEqualsTheRequestsSentOneByOne) {
  struct Shape {
    std::int64_t m, n, k;
  };
  for (const Shape& s : {Shape{3, 5, 4}, Shape{16, 8, 32}, Shape{7, 1, 9}, Shape{1, 33, 2}}) {
    SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k);
    const std::vector<float> b = random<float>(s.k * s.n), d = random<float>(s.m * s.n);
    const RecordingPipeline direct = *RecordingPipeline::make(device_, s.m, s.n, s.k, b, d);
    const RecordingPipeline replayed = *RecordingPipeline::make(device_, s.m, s.n, s.k, b, d);
    Result<Recording> recording = replayed.record(device_);
    ASSERT_THAT(recording, IsOk());
    EXPECT_EQ(recording->names(),
              (std::vector<std::string>{"rand::Generate", "Gemm", "blas::Axpy", "blas::Scal", "Fft"}));
    for (int launch = 0; launch < 3; ++launch) {  // axpy accumulates into D: every launch changes the result
      ASSERT_THAT(direct.run_one_by_one(device_), IsOk());
      ASSERT_THAT(recording->launch().wait(), IsOk());
      EXPECT_EQ(download(replayed.c), download(direct.c));
      EXPECT_EQ(download(replayed.d), download(direct.d));
      EXPECT_EQ(download(replayed.e), download(direct.e));
    }
  }
}

// Every BLAS routine beside GEMM (blas_recording_pipeline.hpp), recorded once and launched three times, in process
// and in a worker (the steps cross byte for byte), equals the same requests sent one by one, element for element.
template <class T>
void expect_blas_routines_recorded_equal_one_by_one(const Device& device, std::int64_t n, std::uint64_t seed) {
  using Pipeline = accel::testing::BlasRoutinesPipeline<T>;
  SCOPED_TRACE(::testing::Message() << device.name() << " " << to_string(dtype_of<T>()) << " n=" << n);
  Result<Pipeline> direct = Pipeline::make(device, n, seed), replayed = Pipeline::make(device, n, seed);
  ASSERT_THAT(direct, IsOk());
  ASSERT_THAT(replayed, IsOk());
  Result<Recording> recording = replayed->record(device);
  ASSERT_THAT(recording, IsOk());
  ASSERT_EQ(recording->size(), 14u);
  const auto values = [&]<class E>(const Buffer<E>& buffer) { return accel::testing::contents(device, buffer); };
  for (int launch = 0; launch < 3; ++launch) {
    SCOPED_TRACE(::testing::Message() << "launch " << launch);
    ASSERT_THAT(direct->run_one_by_one(device), IsOk());
    ASSERT_THAT(recording->launch().wait(), IsOk());
    const auto got = replayed->outputs(), want = direct->outputs();
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(values(*got[i]), values(*want[i])) << "output " << i;
    EXPECT_EQ(values(replayed->at_most), values(direct->at_most));
    EXPECT_EQ(values(replayed->at_least), values(direct->at_least));
    EXPECT_GT(values(replayed->at_most)[0], 0);
  }
}

TEST_F(RecordingTest, EveryBlasRoutineRecordedEqualsTheRequestsSentOneByOneInProcessAndIsolated) {
  Result<Device> isolated = Device::open(system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  for (const Device& device : {device_, *isolated}) {
    for (const std::int64_t n : {1, 5, 33}) {
      expect_blas_routines_recorded_equal_one_by_one<float>(device, n, rng_());
      expect_blas_routines_recorded_equal_one_by_one<double>(device, n, rng_());
    }
  }
}

TEST_F(RecordingTest, RefusesRequestsThatCannotBeCapturedByNameAndKeepsNothing) {
  Buffer<float> x = upload(random<float>(4));
  Recording recording(device_);
  EXPECT_THAT(recording.record(Allocate{.count = 4}), StatusIs(Code::not_supported, "Allocate: it allocates"));
  EXPECT_THAT(recording.record(Free{.buffer = x}), StatusIs(Code::not_supported, "Free: it frees"));
  EXPECT_THAT(recording.record(ResetContext{}), StatusIs(Code::not_supported, "ResetContext"));
  EXPECT_THAT(recording.record(QueryDevice{}), StatusIs(Code::not_supported, "QueryDevice"));
  EXPECT_THAT(recording.record(solver::Getrf{.dtype = DType::f32, .n = 2, .a = x}),
              StatusIs(Code::not_supported, "solver::Getrf: its contract is not known to be capturable"));
  EXPECT_THAT(recording.record(graph::Execute{.weights = x}),
              StatusIs(Code::not_supported, "graph::Execute: it replays its own CUDA graph"));
  EXPECT_THAT(recording.record(RunRecorded{}), StatusIs(Code::not_supported, "RunRecorded"));
  EXPECT_EQ(recording.size(), 0u);
  ASSERT_THAT(recording.launch().wait(), IsOk());  // nothing to run
}

TEST_F(RecordingTest, RefusesABufferOfAnotherDevice) {
  Device other = *Device::open(system_, {.kind = DeviceKind::cpu});
  Buffer<float> mine = upload(random<float>(4)), theirs = upload(other, random<float>(4));
  Recording recording(device_);
  EXPECT_THAT(recording.record(blas::Axpy{.n = 4, .x = theirs, .y = mine}),
              StatusIs(Code::invalid_argument, "blas::Axpy"));
  EXPECT_EQ(recording.size(), 0u);
}

TEST_F(RecordingTest, AFreedBufferFailsTheLaunchBeforeAnyStepRuns) {
  const std::vector<float> y0 = random<float>(8);
  Buffer<float> x = upload(random<float>(8)), y = upload(y0);
  Recording recording(device_);
  ASSERT_THAT(recording.record(blas::Scal{.n = 8, .alpha = 2.0, .x = y}), IsOk());
  ASSERT_THAT(recording.record(blas::Axpy{.n = 8, .x = x, .y = y}), IsOk());
  ASSERT_THAT(device_.free(x).wait(), IsOk());
  EXPECT_THAT(recording.launch().wait(), StatusIs(Code::stale_handle, "step 1 (blas::Axpy)"));
  EXPECT_EQ(download(y), y0);  // the scal before it did not run either
}

TEST_F(RecordingTest, ARebuiltContextFailsTheLaunchWithStaleHandle) {
  Buffer<float> x = upload(random<float>(8));
  Recording recording(device_);
  ASSERT_THAT(recording.record(blas::Scal{.n = 8, .alpha = 2.0, .x = x}), IsOk());
  ASSERT_THAT(device_.reset().wait(), IsOk());
  EXPECT_THAT(recording.launch().wait(), StatusIs(Code::stale_handle, "step 0 (blas::Scal)"));
}

TEST_F(RecordingTest, AFailingStepIsNamedAndTheStepsBeforeItRan) {
  const std::vector<float> y0 = random<float>(8);
  Buffer<float> x = upload(random<float>(8)), y = upload(y0);
  Recording recording(device_);
  ASSERT_THAT(recording.record(blas::Scal{.n = 8, .alpha = 2.0, .x = y}), IsOk());
  ASSERT_THAT(recording.record(blas::Axpy{.n = 9, .x = x, .y = y}), IsOk());  // one element too many
  EXPECT_THAT(recording.launch().wait(), StatusIs(Code::invalid_argument, "step 1 (blas::Axpy)"));
  std::vector<float> want = y0;
  for (float& v : want) v *= 2;
  EXPECT_EQ(download(y), want);
}

TEST_F(RecordingTest, RebindingReplacesABufferWithoutRecordingAgain) {
  const std::vector<float> x0 = random<float>(8), x1 = random<float>(8), y0 = random<float>(8);
  Buffer<float> x = upload(x0), other_x = upload(x1), y = upload(y0);
  Recording recording(device_);
  ASSERT_THAT(recording.record(blas::Axpy{.n = 8, .alpha = 1.0, .x = x, .y = y}), IsOk());
  ASSERT_THAT(recording.record(blas::Axpy{.n = 8, .alpha = 3.0, .x = x, .y = y}), IsOk());
  ASSERT_THAT(recording.rebind(x, other_x), IsOk());
  EXPECT_EQ(recording.bound(x), other_x.handle());
  ASSERT_THAT(device_.free(x).wait(), IsOk());  // no longer used by the recording
  ASSERT_THAT(recording.launch().wait(), IsOk());
  std::vector<double> want(y0.begin(), y0.end());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] += 4.0 * x1[i];
  EXPECT_LE(blas::testing::relative_error(download(y), want), blas::testing::kTolerance<float>);

  // Rebinding the new buffer again: a chain of rebinds follows the last one.
  Buffer<float> third_x = upload(x0);
  ASSERT_THAT(recording.rebind(other_x, third_x), IsOk());
  EXPECT_EQ(recording.bound(x), third_x.handle());
  ASSERT_THAT(recording.launch().wait(), IsOk());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] += 4.0 * x0[i];
  EXPECT_LE(blas::testing::relative_error(download(y), want), blas::testing::kTolerance<float>);
}

TEST_F(RecordingTest, RebindingRefusesAnotherSizeOrDtypeOrABufferItDoesNotUse) {
  Buffer<float> x = upload(random<float>(8)), y = upload(random<float>(8)), shorter = upload(random<float>(7)),
                unused = upload(random<float>(8));
  Buffer<double> wider = upload(random<double>(8));
  Recording recording(device_);
  ASSERT_THAT(recording.record(blas::Axpy{.n = 8, .x = x, .y = y}), IsOk());
  EXPECT_THAT(recording.rebind(x, shorter), StatusIs(Code::invalid_argument, "same device, dtype and count"));
  EXPECT_THAT(recording.rebind(x, wider), StatusIs(Code::invalid_argument, "same device, dtype and count"));
  EXPECT_THAT(recording.rebind(x, BufferHandle{}), StatusIs(Code::invalid_argument));
  EXPECT_THAT(recording.rebind(unused, x), StatusIs(Code::invalid_argument, "does not use"));
  EXPECT_EQ(recording.bound(x), x.handle());
}

TEST_F(RecordingTest, ALaunchKeepsWhatItSentWhenTheRecordingChangesAfter) {
  const std::vector<float> y0 = random<float>(4);
  Buffer<float> y = upload(y0);
  Recording recording(device_);
  ASSERT_THAT(recording.record(blas::Scal{.n = 4, .alpha = 2.0, .x = y}), IsOk());
  Future<Done> first = recording.launch();
  ASSERT_THAT(recording.record(blas::Scal{.n = 4, .alpha = 3.0, .x = y}), IsOk());
  ASSERT_THAT(first.wait(), IsOk());
  ASSERT_THAT(recording.launch().wait(), IsOk());
  std::vector<float> want = y0;
  for (float& v : want) v *= 12;
  EXPECT_EQ(download(y), want);
}

TEST_F(RecordingTest, AnIsolatedDeviceLaunchesWhatTheInProcessOneDoes) {
  Result<Device> isolated = Device::open(system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  const std::vector<float> b = random<float>(6 * 5), d = random<float>(4 * 5);
  const RecordingPipeline here = *RecordingPipeline::make(device_, 4, 5, 6, b, d);
  const RecordingPipeline there = *RecordingPipeline::make(*isolated, 4, 5, 6, b, d);
  Result<Recording> recorded_here = here.record(device_), recorded_there = there.record(*isolated);
  ASSERT_THAT(recorded_here, IsOk());
  ASSERT_THAT(recorded_there, IsOk());
  for (int launch = 0; launch < 2; ++launch) {
    ASSERT_THAT(recorded_here->launch().wait(), IsOk());
    ASSERT_THAT(recorded_there->launch().wait(), IsOk());
  }
  EXPECT_EQ(download(*isolated, there.d), download(here.d));
  EXPECT_EQ(download(*isolated, there.e), download(here.e));
  EXPECT_THAT(recorded_here->record(blas::Axpy{.n = 1, .x = there.c, .y = here.d}),
              StatusIs(Code::invalid_argument, "belongs to another device"));
}

TEST_F(RecordingTest, ACopySharesTheStepsUntilOneOfThemChanges) {
  Buffer<float> x = upload(random<float>(4)), y = upload(random<float>(4)), other_x = upload(random<float>(4));
  Recording original(device_);
  ASSERT_THAT(original.record(blas::Axpy{.n = 4, .x = x, .y = y}), IsOk());
  Recording copy = original;
  ASSERT_THAT(copy.record(blas::Scal{.n = 4, .x = y}), IsOk());
  ASSERT_THAT(copy.rebind(x, other_x), IsOk());
  EXPECT_EQ(original.names(), std::vector<std::string>{"blas::Axpy"});
  EXPECT_EQ(copy.names(), (std::vector<std::string>{"blas::Axpy", "blas::Scal"}));
  EXPECT_EQ(original.bound(x), x.handle());
  EXPECT_EQ(copy.bound(x), other_x.handle());
}

TEST_F(RecordingTest, CopiesLaunchFromSeveralThreadsAtOnceEachWithItsOwnBindings) {
  // A launch sends the steps as bound at the first launch after a change, shared with the launches after it;
  // copies share them until one changes. So the copy left as it was and the original send the one list the first
  // launch made, from two threads at once, while each rebound copy binds a list of its own in its thread and sends
  // its own buffer.
  constexpr int kThreads = 3, kLaunches = 51;  // odd: a buffer negated by one thread only ends negated
  const std::vector<float> x0 = random<float>(4);
  std::vector<float> negated = x0;
  for (float& v : negated) v = -v;
  Buffer<float> x = upload(x0);
  Recording original(device_);
  ASSERT_THAT(original.record(blas::Scal{.n = 4, .alpha = -1.0, .x = x}), IsOk());
  ASSERT_THAT(original.launch().wait(), IsOk());  // its bound steps made before the copies are
  std::vector<Recording> copies(kThreads, original);
  std::vector<Buffer<float>> own;
  for (int i = 1; i < kThreads; ++i) {
    own.push_back(upload(x0));
    ASSERT_THAT(copies[i].rebind(x, own.back()), IsOk());
  }
  std::vector<std::thread> threads;
  std::vector<Status> failed(kThreads + 1);
  for (int i = 0; i <= kThreads; ++i) {
    threads.emplace_back([&, i] {
      const Recording& recording = i == kThreads ? original : copies[i];
      for (int launch = 0; launch < kLaunches && failed[i].ok(); ++launch)
        failed[i] = recording.launch().wait().status();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& status : failed) EXPECT_THAT(status, IsOk());
  EXPECT_EQ(download(x), negated);  // once, then by the original and the unchanged copy 51 times each
  for (const Buffer<float>& b : own) EXPECT_EQ(download(b), negated);
}

TEST_F(RecordingTest, ALongRecordingLaunchesInProcessAndIsolated) {
  Result<Device> isolated = Device::open(system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  for (const Device& device : {device_, *isolated}) {
    SCOPED_TRACE(device.name());
    Buffer<float> x = upload(device, std::vector<float>{1.0f});
    Recording recording(device);
    for (int i = 0; i < 10000; ++i) ASSERT_THAT(recording.record(blas::Scal{.n = 1, .alpha = -1.0, .x = x}), IsOk());
    for (int launch = 0; launch < 3; ++launch) ASSERT_THAT(recording.launch().wait(), IsOk());
    EXPECT_EQ(download(device, x), std::vector<float>{1.0f});
  }
}

TEST_F(RecordingTest, AFailedStepIsTheLaunchsStatusAndEveryOtherStepRuns) {
  Buffer<float> x = upload(std::vector<float>{1.0f});
  Recording recording(device_);
  for (int i = 0; i < 601; ++i) {  // three windows of steps; the 11th and the 300th fail
    const std::int64_t n = i == 10 || i == 299 ? 2 : 1;
    ASSERT_THAT(recording.record(blas::Scal{.n = n, .alpha = -1.0, .x = x}), IsOk());
  }
  EXPECT_THAT(recording.launch().wait(), StatusIs(Code::invalid_argument, "step 10 (blas::Scal)"));
  EXPECT_EQ(download(x), std::vector<float>{-1.0f});  // 599 sign changes
}

TEST(RunRecordedWireTest, CrossesTheStagingRegionWholeAndADamagedEncodingIsRefused) {
  const BufferHandle x{.device = 1, .slot = 2, .generation = 3, .dtype = DType::f32, .count = 8};
  RunRecorded run{.recording = 42};
  run.steps = {blas::Scal{.n = 8, .alpha = 2.0, .x = x}, CopyOnDevice{.source = x, .destination = x, .count = 4},
               rand::Generate{.seed = 7, .count = 8, .output = x}};
  const std::vector<std::byte> encoding = device::isolated::encode_staged(run);
  // The size an isolated stream reserves in the staging region before it encodes there, and that encoding.
  ASSERT_EQ(device::isolated::staged_bytes(run), encoding.size());
  std::vector<std::byte> region(encoding.size() + 3, std::byte{0x5a});
  ByteWriter in_place(std::span<std::byte>(region).first(encoding.size()));
  device::isolated::encode_staged(in_place, run);
  EXPECT_FALSE(in_place.overflowed());
  EXPECT_TRUE(std::equal(encoding.begin(), encoding.end(), region.begin()));
  EXPECT_EQ(region.back(), std::byte{0x5a});
  Result<RunRecorded> decoded = device::isolated::decode_staged<RunRecorded>(encoding);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->recording, 42u);
  ASSERT_EQ(decoded->steps.size(), 3u);
  EXPECT_EQ(std::get<blas::Scal>(decoded->steps[0]).x, x);
  EXPECT_EQ(std::get<CopyOnDevice>(decoded->steps[1]).count, 4u);
  EXPECT_EQ(std::get<rand::Generate>(decoded->steps[2]).seed, 7u);

  const std::vector<std::byte> cut(encoding.begin(), encoding.end() - 1);
  EXPECT_THAT(device::isolated::decode_staged<RunRecorded>(cut), StatusIs(Code::internal, "damaged"));
  std::vector<std::byte> unknown = encoding;
  unknown[16] = std::byte{200};  // the first step's index, past the last alternative
  EXPECT_THAT(device::isolated::decode_staged<RunRecorded>(unknown), StatusIs(Code::internal, "damaged"));
}

}  // namespace
}  // namespace accel
