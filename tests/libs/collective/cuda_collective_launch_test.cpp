// Two processes, one GPU each, started as torchrun would (collective_rank's launch mode): every dtype across
// processes, then a rank SIGKILLed and a rank SIGSTOPped mid-collective — the survivor answers within the timeout
// and a new communicator works. Label gpu; skipped with fewer than 2 GPUs.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

// collective_rank sits beside this test, in the build tree as in a gpu-bundle's bin/.
std::filesystem::path sibling(const char* name) {
  char self[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  return std::filesystem::path(std::string(self, length > 0 ? length : 0)).parent_path() / name;
}

class CudaCollectiveLaunchTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) GTEST_SKIP() << "needs 2 GPUs, found " << count;
  }
};

TEST_P(CudaCollectiveLaunchTest, TwoRanks) {
  const std::string command = sibling("collective_rank").string() + " launch " + GetParam();
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaCollectiveLaunchTest, ::testing::Values("check", "kill", "stop"));

}  // namespace
