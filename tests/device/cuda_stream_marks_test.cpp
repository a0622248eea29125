// StreamMarks on a GPU: a mark is reached only once the work sent to its stream before it is done, marks of one
// stream rise in order, streams' marks are independent, and a stream past the page's words gets none (its requests
// go by their events). Skipped without a GPU.
#include "device/cuda/stream_marks.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace accel::device::cuda {
namespace {

using namespace std::chrono_literals;

class StreamMarksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      (void)cudaGetLastError();
      GTEST_SKIP() << "no CUDA GPU";
    }
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  }

  cudaStream_t new_stream() {
    cudaStream_t stream = nullptr;
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    streams_.push_back(stream);
    return stream;
  }
  void TearDown() override {
    for (cudaStream_t stream : streams_) {
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    }
  }

  // Holds `stream` (a host function that waits) until release() is called.
  void hold(cudaStream_t stream) {
    ASSERT_EQ(cudaLaunchHostFunc(
                  stream,
                  [](void* gate) {
                    while (!static_cast<std::atomic<bool>*>(gate)->load(std::memory_order_acquire))
                      std::this_thread::sleep_for(100us);
                  },
                  &released_),
              cudaSuccess);
  }
  void release() { released_.store(true, std::memory_order_release); }

  static bool reached_within(const StreamMarks::Mark& mark, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!mark.reached())
      if (std::chrono::steady_clock::now() > end) return false;
    return true;
  }

  std::vector<cudaStream_t> streams_;
  std::atomic<bool> released_{false};
};

TEST_F(StreamMarksTest, AMarkIsReachedOnlyAfterTheWorkBeforeItAndMarksOfAStreamRiseInOrder) {
  StreamMarks marks;
  cudaStream_t held = new_stream();
  cudaStream_t free_running = new_stream();
  hold(held);
  const std::optional<StreamMarks::Mark> first = marks.mark(held);
  const std::optional<StreamMarks::Mark> second = marks.mark(held);
  const std::optional<StreamMarks::Mark> other = marks.mark(free_running);
  ASSERT_TRUE(first && second && other) << "the driver wrote no marks";
  EXPECT_EQ(first->word, second->word);
  EXPECT_NE(first->word, other->word);
  EXPECT_EQ(second->value, first->value + 1);
  // The other stream is not held by this one.
  EXPECT_TRUE(reached_within(*other, 5000ms));
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(first->reached());
  EXPECT_FALSE(second->reached());
  release();
  EXPECT_TRUE(reached_within(*second, 5000ms));
  EXPECT_TRUE(first->reached());
}

TEST_F(StreamMarksTest, AStreamPastThePagesWordsGetsNoMark) {
  StreamMarks marks;
  std::size_t marked = 0;
  std::optional<StreamMarks::Mark> last;
  for (int i = 0; i < 1100; ++i) {
    const std::optional<StreamMarks::Mark> mark = marks.mark(new_stream());
    if (!mark) break;
    ++marked;
    last = mark;
  }
  EXPECT_EQ(marked, 1024u);
  ASSERT_TRUE(last);
  EXPECT_TRUE(reached_within(*last, 5000ms));
  // A stream that has a word keeps it.
  const std::optional<StreamMarks::Mark> again = marks.mark(streams_.front());
  ASSERT_TRUE(again);
  EXPECT_TRUE(reached_within(*again, 5000ms));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // every write into the page done before it is freed
}

}  // namespace
}  // namespace accel::device::cuda
