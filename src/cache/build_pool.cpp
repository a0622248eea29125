#include "cache/build_pool.hpp"

#include <fmt/format.h>

#include <system_error>
#include <utility>

namespace accel::cache {

Result<std::unique_ptr<BuildPool>> BuildPool::start(int threads) {
  if (threads <= 0) return invalid_argument(fmt::format("build pool: {} threads, needs at least 1", threads));
  std::unique_ptr<BuildPool> pool(new BuildPool());
  try {
    for (int i = 0; i < threads; ++i) pool->threads_.emplace_back([raw = pool.get()] { raw->work(); });
  } catch (const std::system_error& error) {
    // The destructor joins the threads that did start.
    return resource_exhausted(fmt::format("build pool: could not start its threads: {}", error.what()));
  }
  return pool;
}

BuildPool::~BuildPool() {
  std::deque<Job> abandoned;
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
    abandoned.swap(queue_);
  }
  ready_.notify_all();
  for (Job& job : abandoned) job.cancel();
  for (std::thread& thread : threads_) thread.join();
}

void BuildPool::submit(Job job) {
  {
    std::lock_guard lock(mutex_);
    if (!closing_) {
      queue_.push_back(std::move(job));
      ready_.notify_one();
      return;
    }
  }
  job.cancel();
}

void BuildPool::work() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      // Jobs still queued are the destructor's to cancel.
      if (closing_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job.run();
  }
}

}  // namespace accel::cache
