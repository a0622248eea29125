// Recorded host copies on the CPU device, the reference: a recording of upload, FFT, inverse FFT, GEMM, scal and
// download launched many times, with its host memory and a buffer rebound between launches, equals the same
// requests sent one by one; host rebinding refuses other sizes, dtypes and memory the recording does not use; an
// isolated device refuses a launch with a host copy by name before anything runs, and its wire refuses host copies.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "accel/device/recording.hpp"
#include "device/host_copy_pipeline.hpp"
#include "device/isolated/staged_requests.hpp"
#include "libs/blas/blas_testing.hpp"

namespace accel {
namespace {

using accel::testing::HostCopyPipeline;
using accel::testing::IsOk;
using accel::testing::StatusIs;

class RecordingHostCopiesTest : public blas::testing::BlasDeviceTest {};

TEST_F(RecordingHostCopiesTest, ALaunchWithAnUploadAndADownloadEqualsTheRequestsOneByOne) {
  struct Shape {
    std::int64_t m, n;
  };
  for (const Shape& s : {Shape{3, 8}, Shape{16, 5}, Shape{1, 33}, Shape{7, 2}}) {
    SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n);
    const std::vector<float> b = random<float>(s.n * s.n);
    const HostCopyPipeline direct = *HostCopyPipeline::make(device_, s.m, s.n, b);
    const HostCopyPipeline replayed = *HostCopyPipeline::make(device_, s.m, s.n, b);
    std::vector<std::vector<float>> inputs = {random<float>(s.m * s.n), random<float>(s.m * s.n)};
    std::vector<std::vector<float>> outputs(2, std::vector<float>(s.m * s.n, -7.0f));
    std::vector<float> want(s.m * s.n);
    Result<Recording> recording = replayed.record(device_, inputs[0], outputs[0]);
    ASSERT_THAT(recording, IsOk());
    EXPECT_EQ(recording->names(),
              (std::vector<std::string>{"CopyToDevice", "Fft", "Fft", "Gemm", "blas::Scal", "CopyToHost"}));
    for (int launch = 0; launch < 6; ++launch) {
      const std::size_t now = launch % 2, before = 1 - now;
      if (launch > 0) {  // the other input and output memory: no recording again
        ASSERT_THAT(recording->rebind(HostSource::of(std::span<const float>(inputs[before])),
                                      HostSource::of(std::span<const float>(inputs[now]))),
                    IsOk());
        ASSERT_THAT(recording->rebind(HostDestination::of(std::span<float>(outputs[before])),
                                      HostDestination::of(std::span<float>(outputs[now]))),
                    IsOk());
      }
      const std::vector<float> fresh = random<float>(s.m * s.n);  // read by the launch, not when it was recorded
      std::copy(fresh.begin(), fresh.end(), inputs[now].begin());
      ASSERT_THAT(direct.run_one_by_one(device_, inputs[now], want), IsOk());
      ASSERT_THAT(recording->launch().wait(), IsOk());
      EXPECT_EQ(outputs[now], want) << "launch " << launch;
    }
  }
}

TEST_F(RecordingHostCopiesTest, ABufferAndHostMemoryReboundTogether) {
  const std::vector<float> b0 = random<float>(4 * 4), b1 = random<float>(4 * 4);
  const HostCopyPipeline direct = *HostCopyPipeline::make(device_, 3, 4, b1);
  const HostCopyPipeline replayed = *HostCopyPipeline::make(device_, 3, 4, b0);
  Buffer<float> other_b = upload(b1);
  const std::vector<float> in = random<float>(12);
  std::vector<float> out(12), other_out(12), want(12);
  Result<Recording> recording = replayed.record(device_, in, out);
  ASSERT_THAT(recording, IsOk());
  ASSERT_THAT(recording->rebind(replayed.b, other_b), IsOk());
  ASSERT_THAT(
      recording->rebind(HostDestination::of(std::span<float>(out)), HostDestination::of(std::span<float>(other_out))),
      IsOk());
  ASSERT_THAT(recording->launch().wait(), IsOk());
  ASSERT_THAT(direct.run_one_by_one(device_, in, want), IsOk());
  EXPECT_EQ(other_out, want);
  EXPECT_EQ(out, std::vector<float>(12, 0.0f));  // no longer written
}

TEST_F(RecordingHostCopiesTest, HostRebindingRefusesAnotherSizeOrDtypeOrMemoryItDoesNotUse) {
  Buffer<float> x = upload(random<float>(8));
  std::vector<float> in(8), out(8), shorter(7), unused(8);
  std::vector<double> wider(8);
  Recording recording(device_);
  ASSERT_THAT(recording.record(CopyToDevice{.source = HostSource::of(std::span<const float>(in)), .destination = x}),
              IsOk());
  ASSERT_THAT(recording.record(CopyToHost{.source = x, .destination = HostDestination::of(std::span<float>(out))}),
              IsOk());
  const HostSource from = HostSource::of(std::span<const float>(in));
  EXPECT_THAT(recording.rebind(from, HostSource::of(std::span<const float>(shorter))),
              StatusIs(Code::invalid_argument, "same dtype and count"));
  EXPECT_THAT(recording.rebind(from, HostSource::of(std::span<const double>(wider))),
              StatusIs(Code::invalid_argument, "same dtype and count"));
  EXPECT_THAT(recording.rebind(from, HostSource{.count = 8}), StatusIs(Code::invalid_argument, "non-null"));
  EXPECT_THAT(recording.rebind(HostSource::of(std::span<const float>(unused)), from),
              StatusIs(Code::invalid_argument, "no host copy of the recording uses this HostSource"));
  // A download's memory is not an upload's: each kind rebinds its own.
  EXPECT_THAT(recording.rebind(HostSource::of(std::span<const float>(out)), from),
              StatusIs(Code::invalid_argument, "HostSource"));
  EXPECT_THAT(recording.rebind(HostDestination::of(std::span<float>(in)), HostDestination::of(std::span<float>(out))),
              StatusIs(Code::invalid_argument, "HostDestination"));
}

TEST_F(RecordingHostCopiesTest, AFailingHostCopyIsNamedAndTheOtherStepsRun) {
  const std::vector<float> y0 = random<float>(8);
  Buffer<float> y = upload(y0);
  std::vector<float> out(9, -1.0f);  // one element too many
  Recording recording(device_);
  ASSERT_THAT(recording.record(blas::Scal{.n = 8, .alpha = 2.0, .x = y}), IsOk());
  ASSERT_THAT(recording.record(CopyToHost{.source = y, .destination = HostDestination::of(std::span<float>(out))}),
              IsOk());
  EXPECT_THAT(recording.launch().wait(), StatusIs(Code::invalid_argument, "step 1 (CopyToHost)"));
  EXPECT_EQ(out, std::vector<float>(9, -1.0f));
  std::vector<float> want = y0;
  for (float& v : want) v *= 2;
  EXPECT_EQ(download(y), want);
}

TEST_F(RecordingHostCopiesTest, AnIsolatedDeviceRefusesHostCopiesByNameBeforeAnythingRuns) {
  Result<Device> isolated = Device::open(system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  const std::vector<float> y0 = random<float>(8);
  Buffer<float> y = upload(*isolated, y0);
  std::vector<float> out(8, -1.0f);
  Recording recording(*isolated);
  ASSERT_THAT(recording.record(blas::Scal{.n = 8, .alpha = 2.0, .x = y}), IsOk());
  ASSERT_THAT(recording.record(CopyToHost{.source = y, .destination = HostDestination::of(std::span<float>(out))}),
              IsOk());
  EXPECT_THAT(recording.launch().wait(),
              StatusIs(Code::not_supported, "step 1 (CopyToHost): an isolated device cannot record host copies"));
  EXPECT_EQ(out, std::vector<float>(8, -1.0f));
  EXPECT_EQ(download(*isolated, y), y0);  // the scal before it did not run
}

TEST(RunRecordedHostCopiesWireTest, AWorkerRefusesAHostCopyThatCrossed) {
  const BufferHandle x{.device = 1, .slot = 2, .generation = 3, .dtype = DType::f32, .count = 8};
  std::vector<float> host(8);
  RunRecorded run{.recording = 42};
  run.steps = {blas::Scal{.n = 8, .alpha = 2.0, .x = x},
               CopyToDevice{.source = HostSource::of(std::span<const float>(host)), .destination = x}};
  const std::vector<std::byte> encoding = device::isolated::encode_staged(run);
  EXPECT_THAT(device::isolated::decode_staged<RunRecorded>(encoding),
              StatusIs(Code::not_supported, "step 1 (CopyToDevice): an isolated device cannot record host copies"));
}

}  // namespace
}  // namespace accel
