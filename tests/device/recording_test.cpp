// Recording on the CPU device, the reference: a recorded pipeline (random fill, GEMM, axpy, scal, FFT) launched
// equals the same requests sent one by one, over several shapes and launches; requests that cannot be captured are
// refused by name before anything runs; a freed buffer or a rebuilt context fails the launch with stale_handle
// before any step runs; rebinding replaces a buffer of the same dtype and count without recording again.
#include "accel/device/recording.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <vector>

#include "accel/libs/solver/dense.hpp"
#include "libs/blas/blas_testing.hpp"

namespace accel {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;

// C = A B (A filled by Philox, B given), D += 0.5 C, D scaled, then the rows of D transformed (r2c) into E.
struct Pipeline {
  std::int64_t m, n, k;
  Buffer<float> a, b, c, d;
  Buffer<std::complex<float>> e;

  rand::Generate fill() const { return {.seed = 1234, .count = static_cast<std::uint64_t>(m * k), .output = a}; }
  Gemm gemm() const { return {.shape = {.m = m, .n = n, .k = k}, .a = a, .b = b, .c = c}; }
  blas::Axpy axpy() const { return {.n = m * n, .alpha = 0.5, .x = c, .y = d}; }
  Fft fft() const {
    return {.shape = {.type = FftType::r2c, .precision = DType::f32, .rank = 1, .n = {n, 0, 0}, .batch = m},
            .input = d,
            .output = e};
  }
  blas::Scal scal() const { return {.n = m * n, .alpha = 0.25, .x = d}; }
};

class RecordingTest : public blas::testing::BlasDeviceTest {
 protected:
  Pipeline make_pipeline(std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<float>& b,
                         const std::vector<float>& d) {
    return {.m = m,
            .n = n,
            .k = k,
            .a = *device_.allocate<float>(m * k).wait(),
            .b = upload(b),
            .c = *device_.allocate<float>(m * n).wait(),
            .d = upload(d),
            .e = *device_.allocate<std::complex<float>>(m * (n / 2 + 1)).wait()};
  }
  Status run_one_by_one(const Pipeline& p) {
    for (Status s : {run(p.fill()), run(p.gemm()), run(p.axpy()), run(p.scal()), run(p.fft())}) {
      if (!s.ok()) return s;
    }
    return Status{};
  }
  Recording record(const Pipeline& p) {
    Recording recording(device_);
    EXPECT_THAT(recording.record(p.fill()), IsOk());
    EXPECT_THAT(recording.record(p.gemm()), IsOk());
    EXPECT_THAT(recording.record(p.axpy()), IsOk());
    EXPECT_THAT(recording.record(p.scal()), IsOk());
    EXPECT_THAT(recording.record(p.fft()), IsOk());
    return recording;
  }
};

TEST_F(RecordingTest, ALaunchEqualsTheRequestsSentOneByOne) {
  struct Shape {
    std::int64_t m, n, k;
  };
  for (const Shape& s : {Shape{3, 5, 4}, Shape{16, 8, 32}, Shape{7, 1, 9}, Shape{1, 33, 2}}) {
    SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k);
    const std::vector<float> b = random<float>(s.k * s.n), d = random<float>(s.m * s.n);
    const Pipeline direct = make_pipeline(s.m, s.n, s.k, b, d);
    const Pipeline replayed = make_pipeline(s.m, s.n, s.k, b, d);
    const Recording recording = record(replayed);
    EXPECT_EQ(recording.names(),
              (std::vector<std::string>{"rand::Generate", "Gemm", "blas::Axpy", "blas::Scal", "Fft"}));
    for (int launch = 0; launch < 3; ++launch) {  // axpy accumulates into D: every launch changes the result
      ASSERT_THAT(run_one_by_one(direct), IsOk());
      ASSERT_THAT(recording.launch().wait(), IsOk());
      EXPECT_EQ(download(replayed.c), download(direct.c));
      EXPECT_EQ(download(replayed.d), download(direct.d));
      EXPECT_EQ(download(replayed.e), download(direct.e));
    }
  }
}

TEST_F(RecordingTest, RefusesRequestsThatCannotBeCapturedByNameAndKeepsNothing) {
  Buffer<float> x = upload(random<float>(4));
  std::vector<float> host(4);
  Recording recording(device_);
  EXPECT_THAT(recording.record(Allocate{.count = 4}), StatusIs(Code::not_supported, "Allocate: it allocates"));
  EXPECT_THAT(recording.record(Free{.buffer = x}), StatusIs(Code::not_supported, "Free: it frees"));
  EXPECT_THAT(recording.record(CopyToHost{.source = x, .destination = HostDestination::of(std::span<float>(host))}),
              StatusIs(Code::not_supported, "CopyToHost"));
  EXPECT_THAT(recording.record(CopyToDevice{.source = HostSource::of(std::span<const float>(host)), .destination = x}),
              StatusIs(Code::not_supported, "CopyToDevice"));
  EXPECT_THAT(recording.record(ResetContext{}), StatusIs(Code::not_supported, "ResetContext"));
  EXPECT_THAT(recording.record(QueryDevice{}), StatusIs(Code::not_supported, "QueryDevice"));
  EXPECT_THAT(recording.record(solver::Getrf{.dtype = DType::f32, .n = 2, .a = x}),
              StatusIs(Code::not_supported, "solver::Getrf: its contract is not known to be capturable"));
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

}  // namespace
}  // namespace accel
