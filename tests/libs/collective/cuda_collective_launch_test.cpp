// Two processes, one GPU each, started as torchrun would (collective_rank's launch mode): every dtype across
// processes, then a rank SIGKILLed and a rank SIGSTOPped mid-collective — the survivor answers within the timeout
// and a new communicator works. Label gpu; skipped with fewer than 2 GPUs.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

class CudaCollectiveLaunchTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) GTEST_SKIP() << "needs 2 GPUs, found " << count;
  }
};

TEST_P(CudaCollectiveLaunchTest, TwoRanks) {
  const std::string command = std::string(ACCEL_COLLECTIVE_RANK) + " launch " + GetParam();
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaCollectiveLaunchTest, ::testing::Values("check", "kill", "stop"));

}  // namespace
