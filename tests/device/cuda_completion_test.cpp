// CompletionQueue::Watched (Note [Watching one's own work] in cuda_stream.hpp): a stream's thread answers the work it
// watches once its event has completed, never before, and what it hands over the completion thread answers. Done
// words (done_words.hpp): written after the work, counting on across leases, read before the event, and the event
// still answering work whose word never comes. The stream is held by a host function that waits for the test, so the
// work finishes exactly when the test says.
#include "device/cuda/completion_queue.hpp"
#include "device/cuda/done_words.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
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

  // Work on the stream that finishes when release_ is set.
  void hold_stream() {
    EXPECT_EQ(cudaLaunchHostFunc(
                  stream_,
                  [](void* flag) {
                    while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::yield();
                  },
                  &release_),
              cudaSuccess);
  }

  // Answers `watched` until it is empty or 10 s have passed.
  static void answer_until_empty(CompletionQueue::Watched& watched) {
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (!watched.empty() && std::chrono::steady_clock::now() < give_up) watched.answer_finished();
  }

  // One piece of work a future, each finishing when release_ is set, and the replies waiting for them.
  std::vector<DeferredReply> held_work(std::initializer_list<Future<Done>*> futures) {
    std::vector<DeferredReply> replies;
    for (Future<Done>* future : futures) {
      hold_stream();
      Result<EventRef> event = events_->record(stream_);
      EXPECT_THAT(event, IsOk());
      replies.push_back(DeferredReply{.work = {.event = *event}});
      *future = replies.back().reply.future();
    }
    return replies;
  }

  // held_work of one reply whose work has `word` as its done word, reached at `count`, watched by `watched`.
  void watch_with_word(Future<Done>& done, std::uint32_t& word, std::uint32_t count,
                       CompletionQueue::Watched& watched) {
    std::vector<DeferredReply> replies = held_work({&done});
    replies.front().work.done = {.word = &word, .count = count};
    watched.add(stream_, replies);
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
  answer_until_empty(watched);
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

TEST_F(CudaCompletionTest, ADoneWordIsWrittenAfterTheWorkBeforeIt) {
  const std::shared_ptr<DoneWords> words = DoneWords::create();
  // Every driver the CUDA 13 runtime runs on has cuStreamWriteValue32: no words here means the look-up broke.
  ASSERT_NE(words, nullptr) << "cuStreamWriteValue32 not found";
  DoneWords::Lease lease = words->lease();
  hold_stream();
  const DoneWord done = lease.write_after(stream_);
  ASSERT_TRUE(done);
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(done.reached());  // the work before it has not finished
  release_ = true;
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_TRUE(done.reached());
}

TEST_F(CudaCompletionTest, ADoneWordCountsOnAcrossLeasesAndEachLeaseHasItsOwn) {
  const std::shared_ptr<DoneWords> words = DoneWords::create();
  // Every driver the CUDA 13 runtime runs on has cuStreamWriteValue32: no words here means the look-up broke.
  ASSERT_NE(words, nullptr) << "cuStreamWriteValue32 not found";
  release_ = true;
  DoneWord last;
  {
    DoneWords::Lease lease = words->lease();
    for (int i = 0; i < 3; ++i) last = lease.write_after(stream_);
  }
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  ASSERT_TRUE(last.reached());
  // More leases than a page has words: every one its own word, the first freed one's count going on.
  std::vector<DoneWords::Lease> leases;
  std::vector<DoneWord> written;
  for (int i = 0; i < 200; ++i) {
    leases.push_back(words->lease());
    written.push_back(leases.back().write_after(stream_));
    ASSERT_TRUE(written.back());
  }
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  for (std::size_t i = 0; i < written.size(); ++i) {
    EXPECT_TRUE(written[i].reached()) << i;
    for (std::size_t j = 0; j < i; ++j) ASSERT_NE(written[i].word, written[j].word);
  }
  EXPECT_EQ(written.front().word, last.word);
  EXPECT_EQ(written.front().count, last.count + 1);
  EXPECT_TRUE(last.reached());
}

TEST_F(CudaCompletionTest, WorkWhoseDoneWordHasComeIsAnsweredBeforeItsEventCompletes) {
  Future<Done> done;
  std::uint32_t word = 0;
  CompletionQueue::Watched watched(queue_);
  watch_with_word(done, word, 7, watched);
  for (int look = 0; look < 1000; ++look) watched.answer_finished();
  EXPECT_FALSE(done.ready());
  std::atomic_ref<std::uint32_t>(word).store(7, std::memory_order_release);  // as the GPU would, after the work
  answer_until_empty(watched);
  EXPECT_TRUE(done.ready());
  EXPECT_THAT(done.wait(), IsOk());
  release_ = true;
}

TEST_F(CudaCompletionTest, WorkWhoseDoneWordNeverComesIsAnsweredByItsEvent) {
  // A faulted stream never writes its word: its event, queried less often, still answers.
  Future<Done> done;
  std::uint32_t word = 0;
  CompletionQueue::Watched watched(queue_);
  watch_with_word(done, word, 1, watched);
  release_ = true;
  answer_until_empty(watched);
  EXPECT_TRUE(done.ready());
  EXPECT_THAT(done.wait(), IsOk());
  EXPECT_EQ(word, 0u);
}

}  // namespace
}  // namespace accel::device::cuda
