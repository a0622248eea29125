// accel::cache::BuildPool — the few threads a cache runs its background builds on (compiles that take seconds),
// so that a requester can go on while its value is built.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "accel/core/result.hpp"

namespace accel::cache {

class BuildPool {
 public:
  struct Job {
    std::function<void()> run;     // must not throw: the pool has no one to report to
    std::function<void()> cancel;  // instead of run, for a job the pool closes before starting it
  };

  // resource_exhausted when the threads cannot be started; invalid_argument for fewer than one thread.
  static Result<std::unique_ptr<BuildPool>> start(int threads);
  // Cancels the queued jobs and waits for the running ones.
  ~BuildPool();
  BuildPool(const BuildPool&) = delete;
  BuildPool& operator=(const BuildPool&) = delete;

  // Jobs run in the order they were submitted. A job submitted while the pool closes is cancelled at once.
  void submit(Job job);

 private:
  BuildPool() = default;
  void work();

  std::mutex mutex_;
  std::condition_variable ready_;  // a job queued, or closing_
  bool closing_ = false;
  std::deque<Job> queue_;
  std::vector<std::thread> threads_;
};

}  // namespace accel::cache
