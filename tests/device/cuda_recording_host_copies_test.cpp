// Recordings with host copies on a CUDA device, on every way it runs requests (each completion strategy, and
// isolated): issue 47's pipeline (upload from pinned memory, FFT and inverse, GEMM, scal, download into pinned memory)
// launched 1,000 times with host memory and a buffer rebound between launches equals direct execution bit for bit;
// pageable host memory is refused by name, also where it was pinned at earlier launches of a kept graph, and an
// isolated device refuses host copies by name. Skipped without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "accel/device/recording.hpp"
#include "accel/libs/blas/level1.hpp"
#include "device/cuda_recording_fixture.hpp"
#include "device/host_copy_pipeline.hpp"

namespace accel {
namespace {

using accel::testing::download;
using accel::testing::HostCopyPipeline;
using accel::testing::IsOk;
using accel::testing::recorded_graphs;
using accel::testing::relative_error;
using accel::testing::StatusIs;

// Pinned host memory of `count` floats (cudaHostAlloc), freed when it goes.
class PinnedFloats {
 public:
  explicit PinnedFloats(std::size_t count) : count_(count) {
    void* data = nullptr;
    EXPECT_EQ(cudaHostAlloc(&data, count * sizeof(float), cudaHostAllocPortable), cudaSuccess);
    data_ = static_cast<float*>(data);
  }
  ~PinnedFloats() { (void)cudaFreeHost(data_); }
  PinnedFloats(const PinnedFloats&) = delete;
  PinnedFloats& operator=(const PinnedFloats&) = delete;
  [[nodiscard]] std::span<float> span() noexcept { return {data_, count_}; }
  [[nodiscard]] std::vector<float> values() const { return {data_, data_ + count_}; }

 private:
  std::size_t count_;
  float* data_ = nullptr;
};

class CudaRecordingHostCopiesTest : public accel::testing::CudaRecordingFixture {};

TEST_P(CudaRecordingHostCopiesTest, HostCopiesLaunchedAThousandTimesWithRebindingEqualDirectExecution) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  constexpr std::int64_t m = 48, n = 64;
  const std::vector<float> b0 = random(n * n), b1 = random(n * n);
  Result<HostCopyPipeline> direct = HostCopyPipeline::make(gpu, m, n, b0);
  Result<HostCopyPipeline> replayed = HostCopyPipeline::make(gpu, m, n, b0);
  ASSERT_THAT(direct, IsOk());
  ASSERT_THAT(replayed, IsOk());
  Buffer<float> other_b = *gpu.allocate<float>(n * n).wait(), direct_other_b = *gpu.allocate<float>(n * n).wait();
  ASSERT_THAT(gpu.upload(std::span<const float>(b1), other_b).wait(), IsOk());
  ASSERT_THAT(gpu.upload(std::span<const float>(b1), direct_other_b).wait(), IsOk());
  HostCopyPipeline direct_other = *direct;
  direct_other.b = direct_other_b;
  PinnedFloats in0(m * n), in1(m * n), out0(m * n), out1(m * n);
  PinnedFloats* ins[] = {&in0, &in1};
  PinnedFloats* outs[] = {&out0, &out1};
  std::vector<float> want(m * n);
  Result<Recording> recording = replayed->record(gpu, in0.span(), out0.span());
  ASSERT_THAT(recording, IsOk());
  if (GetParam().isolation != Isolation::in_process) {
    EXPECT_THAT(recording->launch().wait(),
                StatusIs(Code::not_supported, "step 0 (CopyToDevice): an isolated device cannot record host copies"));
    return;
  }
  Device cpu = *Device::open(system_, {.kind = DeviceKind::cpu});
  Result<HostCopyPipeline> reference = HostCopyPipeline::make(cpu, m, n, b0);
  ASSERT_THAT(reference, IsOk());
  for (int launch = 0; launch < 1000; ++launch) {
    const std::size_t now = launch % 2;
    const bool other_b_now = launch % 3 == 1;
    if (launch > 0) {  // the other host memory every launch, the other B every third: never recorded again
      const std::size_t before = 1 - now;
      ASSERT_THAT(recording->rebind(HostSource::of(std::span<const float>(ins[before]->span())),
                                    HostSource::of(std::span<const float>(ins[now]->span()))),
                  IsOk());
      ASSERT_THAT(recording->rebind(HostDestination::of(outs[before]->span()), HostDestination::of(outs[now]->span())),
                  IsOk());
      const BufferHandle b = other_b_now ? other_b.handle() : replayed->b.handle();
      if (recording->bound(replayed->b) != b) {
        ASSERT_THAT(recording->rebind(recording->bound(replayed->b), b), IsOk());
      }
    }
    const std::vector<float> x = random(m * n);
    std::copy(x.begin(), x.end(), ins[now]->span().begin());
    ASSERT_THAT((other_b_now ? direct_other : *direct).run_one_by_one(gpu, x, want), IsOk());
    ASSERT_THAT(recording->launch().wait(), IsOk()) << "launch " << launch;
    ASSERT_EQ(outs[now]->values(), want) << "launch " << launch;  // bit for bit
    if (launch == 0) {
      std::vector<float> on_cpu(m * n);
      ASSERT_THAT(reference->run_one_by_one(cpu, x, on_cpu), IsOk());
      EXPECT_LE(relative_error(outs[now]->values(), on_cpu), 1e-5);
    }
  }
  const std::optional<CacheStats> stats = recorded_graphs(gpu, GetParam(), true);
  if (stats) {
    EXPECT_EQ(stats->build_failures, 0u);
  }
}

TEST_P(CudaRecordingHostCopiesTest, PageableHostMemoryIsRefusedByNameBeforeAnythingRuns) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  const std::vector<float> y0 = random(64);
  Buffer<float> y = *gpu.allocate<float>(64).wait();
  ASSERT_THAT(gpu.upload(std::span<const float>(y0), y).wait(), IsOk());
  std::vector<float> pageable(64, -1.0f);
  Recording recording(gpu);
  ASSERT_THAT(recording.record(blas::Scal{.n = 64, .alpha = 2.0, .x = y}), IsOk());
  ASSERT_THAT(recording.record(CopyToHost{.source = y, .destination = HostDestination::of(std::span<float>(pageable))}),
              IsOk());
  const char* why = GetParam().isolation == Isolation::in_process
                        ? "step 1 (CopyToHost): CopyToHost: the host destination is pageable host memory"
                        : "step 1 (CopyToHost): an isolated device cannot record host copies";
  EXPECT_THAT(recording.launch().wait(), StatusIs(Code::not_supported, why));
  EXPECT_EQ(pageable, std::vector<float>(64, -1.0f));
  if (GetParam().isolation == Isolation::in_process) {  // the scal ran: a refused step is left out, as on the CPU
    std::vector<float> want = y0;
    for (float& v : want) v *= 2;
    EXPECT_EQ(download(gpu, y), want);
  } else {
    EXPECT_EQ(download(gpu, y), y0);  // refused whole before it crossed
  }
}

// A kept recording's launch looks only at its host copies' memory (cuda_recorded.cpp): memory unpinned after
// launches is still refused at the next; pinned again (another registration at the same address), it is captured
// anew, not launched through the kept graph's copy of the old registration (which faulted: a sticky error).
TEST_P(CudaRecordingHostCopiesTest, HostMemoryUnpinnedAfterLaunchesIsRefusedAtTheNext) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  const std::vector<float> y0 = random(64);
  Buffer<float> y = *gpu.allocate<float>(64).wait();
  ASSERT_THAT(gpu.upload(std::span<const float>(y0), y).wait(), IsOk());
  std::vector<float> host(64, -1.0f);
  ASSERT_EQ(cudaHostRegister(host.data(), host.size() * sizeof(float), cudaHostRegisterDefault), cudaSuccess);
  Recording recording(gpu);
  ASSERT_THAT(recording.record(blas::Scal{.n = 64, .alpha = 2.0, .x = y}), IsOk());
  ASSERT_THAT(recording.record(CopyToHost{.source = y, .destination = HostDestination::of(std::span<float>(host))}),
              IsOk());
  if (GetParam().isolation != Isolation::in_process) {
    EXPECT_THAT(recording.launch().wait(),
                StatusIs(Code::not_supported, "step 1 (CopyToHost): an isolated device cannot record host copies"));
    ASSERT_EQ(cudaHostUnregister(host.data()), cudaSuccess);
    return;
  }
  std::vector<float> want = y0;
  for (int launch = 0; launch < 3; ++launch) {  // the first captures; the others launch the kept graph
    ASSERT_THAT(recording.launch().wait(), IsOk()) << "launch " << launch;
    for (float& v : want) v *= 2;
    ASSERT_EQ(host, want) << "launch " << launch;
  }
  ASSERT_EQ(cudaHostUnregister(host.data()), cudaSuccess);
  std::fill(host.begin(), host.end(), -1.0f);
  EXPECT_THAT(
      recording.launch().wait(),
      StatusIs(Code::not_supported, "step 1 (CopyToHost): CopyToHost: the host destination is pageable host memory"));
  EXPECT_EQ(host, std::vector<float>(64, -1.0f));
  for (float& v : want) v *= 2;  // the scal ran: a refused step is left out
  ASSERT_EQ(cudaHostRegister(host.data(), host.size() * sizeof(float), cudaHostRegisterDefault), cudaSuccess);
  ASSERT_THAT(recording.launch().wait(), IsOk());
  for (float& v : want) v *= 2;
  EXPECT_EQ(host, want);
  ASSERT_EQ(cudaHostUnregister(host.data()), cudaSuccess);
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, CudaRecordingHostCopiesTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel
