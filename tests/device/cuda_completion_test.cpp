// CompletionQueue::Watched (Note [Watching one's own work] in cuda_stream.hpp): a stream's thread answers the work it
// watches once its event has completed, never before, and what it hands over the completion thread answers. The
// stream is held by a host function that waits for the test, so the work finishes exactly when the test says.
#include "device/cuda/completion_queue.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <initializer_list>
#include <memory>
#include <thread>
#include <vector>

#include "accel/device/device.hpp"
#include "testing/status_matchers.hpp"

namespace accel::device::cuda {
namespace {

using namespace std::chrono_literals;
using testing::IsOk;

class CudaCompletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Device::count(DeviceKind::cuda) == 0) GTEST_SKIP() << "no CUDA GPU here";
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    release_ = true;
    if (stream_ != nullptr) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
  }

  // One piece of work a future, each finishing when release_ is set, and the replies waiting for them.
  std::vector<DeferredReply> held_work(std::initializer_list<Future<Done>*> futures) {
    std::vector<DeferredReply> replies;
    for (Future<Done>* future : futures) {
      EXPECT_EQ(cudaLaunchHostFunc(
                    stream_,
                    [](void* flag) {
                      while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::yield();
                    },
                    &release_),
                cudaSuccess);
      Result<EventRef> event = events_->record(stream_);
      EXPECT_THAT(event, IsOk());
      replies.push_back(DeferredReply{.work = {.event = *event}});
      *future = replies.back().reply.future();
    }
    return replies;
  }

  std::atomic<bool> release_{false};
  cudaStream_t stream_ = nullptr;
  std::shared_ptr<EventPool> events_ = std::make_shared<EventPool>();
  CompletionQueue queue_{CompletionStrategy::poller, std::make_shared<Health>("cuda:test"), "cuda:test"};
};

TEST_F(CudaCompletionTest, WatchedWorkIsAnsweredOnTheWatchingThreadOnceItsEventCompletes) {
  Future<Done> done;
  std::vector<DeferredReply> replies = held_work({&done});
  CompletionQueue::Watched watched(queue_);
  watched.add(stream_, replies);
  EXPECT_TRUE(queue_.owes_replies());
  for (int look = 0; look < 1000; ++look) watched.answer_finished();
  EXPECT_FALSE(done.ready());  // its work has not finished
  std::thread::id answered_on;
  Future<Done> then = done.then([&](Done value) {
    answered_on = std::this_thread::get_id();
    return value;
  });
  release_ = true;
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!watched.empty() && std::chrono::steady_clock::now() < give_up) watched.answer_finished();
  ASSERT_TRUE(then.ready());
  EXPECT_THAT(then.wait(), IsOk());
  EXPECT_EQ(answered_on, std::this_thread::get_id());
  EXPECT_FALSE(queue_.owes_replies());
}

TEST_F(CudaCompletionTest, HandedOverWorkIsAnsweredByTheCompletionThread) {
  Future<Done> first, second;
  std::vector<DeferredReply> replies = held_work({&first, &second});
  CompletionQueue::Watched watched(queue_);
  watched.add(stream_, replies);
  watched.hand_over();
  EXPECT_TRUE(watched.empty());
  EXPECT_TRUE(queue_.owes_replies());
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(first.ready());
  release_ = true;
  EXPECT_THAT(first.wait(), IsOk());
  EXPECT_THAT(second.wait(), IsOk());
}

TEST_F(CudaCompletionTest, WatchedWorkGoesToTheCompletionThreadWhenTheWatchEnds) {
  Future<Done> done;
  std::vector<DeferredReply> replies = held_work({&done});
  {
    CompletionQueue::Watched watched(queue_);
    watched.add(stream_, replies);
  }
  release_ = true;
  EXPECT_THAT(done.wait(), IsOk());
}

}  // namespace
}  // namespace accel::device::cuda
