// OneTimeStart: a process's one-time start-up of a library (cuBLASLt's load and first call), begun ahead of need on a
// thread of its own, run exactly once however many callers race for it, and waited for by whoever needs it. The CUDA
// use of it (the device starting cuBLASLt when it opens) is checked by cuda_gemm_startup_test.
#include "operation/one_time_start.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::StatusIs;

TEST(OneTimeStartTest, BeginRunsTheWorkOnceOnAThreadOfItsOwn) {
  OneTimeStart start;
  std::atomic<int> runs{0};
  std::thread::id ran_on;
  auto work = [&] {
    ++runs;
    ran_on = std::this_thread::get_id();
    return Status();
  };
  std::jthread first = start.begin(work);
  EXPECT_TRUE(first.joinable());
  std::jthread second = start.begin(work);
  EXPECT_FALSE(second.joinable()) << "a second begin started the work again";
  EXPECT_THAT(start.run_or_wait(work), IsOk());
  first.join();
  EXPECT_EQ(runs.load(), 1);
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_TRUE(start.finished());
}

// The caller must not go on before the work it needs has finished: what it sees right after run_or_wait returns is
// the work's end. A short pause lets the caller arrive while the work is held; the check holds either way.
TEST(OneTimeStartTest, ACallerThatNeedsTheWorkWhileItRunsWaitsForItToFinish) {
  OneTimeStart start;
  std::promise<void> started, release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> work_finished{false};
  std::atomic<int> runs{0};
  auto work = [&] {
    ++runs;
    started.set_value();
    released.wait();
    work_finished = true;
    return Status();
  };
  EXPECT_FALSE(start.running());
  std::jthread running = start.begin(work);
  started.get_future().wait();
  EXPECT_FALSE(start.finished());
  EXPECT_TRUE(start.running());
  bool finished_when_answered = false;
  std::jthread caller([&] {
    EXPECT_THAT(start.run_or_wait(work), IsOk());
    finished_when_answered = work_finished.load();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  release.set_value();
  caller.join();
  EXPECT_TRUE(finished_when_answered) << "run_or_wait returned while the work was still running";
  EXPECT_EQ(runs.load(), 1);
  EXPECT_FALSE(start.running());
}

TEST(OneTimeStartTest, ACallerThatFindsItNotBegunRunsItHereAndNothingStartsItAgain) {
  OneTimeStart start;
  std::atomic<int> runs{0};
  std::thread::id ran_on;
  auto work = [&] {
    ++runs;
    ran_on = std::this_thread::get_id();
    return Status();
  };
  EXPECT_FALSE(start.finished());
  EXPECT_THAT(start.run_or_wait(work), IsOk());
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_FALSE(start.begin(work).joinable());
  EXPECT_EQ(runs.load(), 1);
}

TEST(OneTimeStartTest, TheWorksErrorIsEveryCallersAnswer) {
  OneTimeStart start;
  auto work = [] { return unavailable("libexample.so.1: cannot open shared object file"); };
  start.begin(work).join();
  EXPECT_TRUE(start.finished());
  EXPECT_THAT(start.run_or_wait(work), StatusIs(Code::unavailable, "libexample"));
  EXPECT_THAT(start.run_or_wait(work), StatusIs(Code::unavailable, "libexample"));
}

TEST(OneTimeStartTest, ManyCallersAtOnceRunTheWorkOnceAndAllGetItsStatus) {
  OneTimeStart start;
  std::atomic<int> runs{0};
  auto work = [&] {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return invalid_argument("the one answer");
  };
  std::vector<std::jthread> begun(4);
  std::vector<Status> answers(8);
  {
    std::vector<std::jthread> callers;
    for (std::size_t i = 0; i < answers.size(); ++i) {
      callers.emplace_back([&, i] {
        if (i < begun.size()) begun[i] = start.begin(work);
        answers[i] = start.run_or_wait(work);
      });
    }
  }
  begun.clear();
  EXPECT_EQ(runs.load(), 1);
  for (const Status& answer : answers) EXPECT_THAT(answer, StatusIs(Code::invalid_argument, "the one answer"));
}

}  // namespace
}  // namespace accel
