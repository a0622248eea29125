// accel::serve::Batcher<Item> — dynamic batching by a token budget with a bounded wait, over a bounded queue.
//
// Requests are submitted with their token counts; one thread forms batches of them, first come first served, and
// hands each batch to `run`, which answers the batch's requests itself and returns a future that is ready when the
// batch's work is done. At most `in_flight` batches run at once: while they run, the queue fills up and the next
// batch grows, which is where batching pays.
//
// When a batch goes: a device is idle (fewer batches in flight than `replicas`) — waiting then only adds latency,
// unless more requests happen to arrive —, or the queued tokens reach the budget, or the oldest request has waited
// `max_wait` for a second batch to fill up behind the running one. A request larger than the budget runs alone.
// Over several replicas a batch takes at most its replica's share of the work outstanding (the tokens queued and in
// flight, over `replicas`): one replica running the whole queue while another idles would make the busy one the
// server's pace (at 64 connections, two H200s ran 1.44x one before the share, docs/PERFORMANCE.md).
// A request that finds a batch slot free goes at once from the submitting thread: on a quiet server, handing it
// to the batching thread would add that thread's wake-up (tens to hundreds of µs on a virtual machine) to it.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accel/core/future.hpp"
#include "accel/core/status.hpp"

namespace accel::serve {

struct BatcherOptions {
  std::uint32_t batch_tokens = 16384;  // a batch takes requests until the next would exceed this
  std::size_t max_requests = 0;        // ... or until it holds this many (TEI's --max-batch-requests); 0: no bound
  std::chrono::microseconds max_wait{2000};
  std::size_t queue_requests = 1024;  // requests waiting (not yet in a batch) before submit refuses
  std::uint64_t queue_tokens = 1u << 20;
  // embed::Model's calls share its staging buffers, so the device runs them one after the other: a second batch
  // in flight would wait there, smaller than it would have grown in our queue.
  unsigned in_flight = 1;
  // The devices the batches spread over (a model's replicas); `in_flight` counts the batches of all of them.
  unsigned replicas = 1;
};

struct QueueDepth {
  std::size_t requests = 0;
  std::uint64_t tokens = 0;
  unsigned batches_in_flight = 0;
};

template <class Item>
class Batcher {
 public:
  using Run = std::function<Future<Done>(std::vector<Item>)>;

  Batcher(BatcherOptions options, Run run) : options_(options), run_(std::move(run)) {
    if (options_.in_flight == 0) options_.in_flight = 1;
    if (options_.replicas == 0) options_.replicas = 1;
    thread_ = std::thread([this] { loop(); });
  }
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;
  ~Batcher() { stop(); }

  // resource_exhausted when the queue is full (naming the bound), failed_precondition once stopping.
  Status submit(Item item, std::uint32_t tokens) {
    {
      std::unique_lock lock(mutex_);
      if (stopping_) return failed_precondition("the server is shutting down");
      if (queue_.size() >= options_.queue_requests)
        return resource_exhausted("the queue is full: " + std::to_string(queue_.size()) +
                                  " requests waiting (queue_requests)");
      if (!queue_.empty() && queued_tokens_ + tokens > options_.queue_tokens)
        return resource_exhausted("the queue is full: " + std::to_string(queued_tokens_) +
                                  " tokens waiting (queue_tokens)");
      queue_.push_back({std::move(item), tokens, std::chrono::steady_clock::now()});
      queued_tokens_ += tokens;
      if (in_flight_ < options_.in_flight && should_go()) {
        dispatch(lock);
        return {};
      }
    }
    cv_.notify_all();
    return {};
  }

  // Refuses new requests, runs every one queued, waits for the batches in flight. Idempotent.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  [[nodiscard]] QueueDepth depth() const {
    std::lock_guard lock(mutex_);
    return {queue_.size(), queued_tokens_, in_flight_};
  }

 private:
  struct Queued {
    Item item;
    std::uint32_t tokens;
    std::chrono::steady_clock::time_point queued;
  };

  [[nodiscard]] bool should_go() const {
    return stopping_ || in_flight_ < options_.replicas || queued_tokens_ >= options_.batch_tokens ||
           (options_.max_requests > 0 && queue_.size() >= options_.max_requests);
  }

  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock,
               [&] { return (stopping_ && queue_.empty()) || (!queue_.empty() && in_flight_ < options_.in_flight); });
      if (queue_.empty()) break;
      if (!should_go()) {
        const auto deadline = queue_.front().queued + options_.max_wait;
        if (std::chrono::steady_clock::now() < deadline) {
          cv_.wait_until(lock, deadline, [&] { return should_go(); });
          continue;
        }
      }
      dispatch(lock);
      lock.lock();
    }
    cv_.wait(lock, [&] { return in_flight_ == 0; });
  }

  // Takes the next batch off the queue into a free slot and runs it, `lock` released (run_ may answer at once).
  void dispatch(std::unique_lock<std::mutex>& lock) {
    std::vector<Item> batch;
    std::uint64_t tokens = 0;
    const std::uint64_t share = (queued_tokens_ + in_flight_tokens_ + options_.replicas - 1) / options_.replicas;
    const std::uint64_t limit = std::min<std::uint64_t>(options_.batch_tokens, share);
    while (!queue_.empty() &&
           (batch.empty() || (tokens + queue_.front().tokens <= limit &&
                              (options_.max_requests == 0 || batch.size() < options_.max_requests)))) {
      tokens += queue_.front().tokens;
      batch.push_back(std::move(queue_.front().item));
      queue_.pop_front();
    }
    queued_tokens_ -= tokens;
    in_flight_tokens_ += tokens;
    ++in_flight_;
    lock.unlock();
    // run_ answered the batch's requests itself: its outcome only frees the slot.
    (void)run_(std::move(batch)).then([this, tokens](Result<Done>) {
      std::lock_guard finished(mutex_);
      in_flight_tokens_ -= tokens;
      --in_flight_;
      cv_.notify_all();
    });
  }

  BatcherOptions options_;
  Run run_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Queued> queue_;
  std::uint64_t queued_tokens_ = 0;
  std::uint64_t in_flight_tokens_ = 0;
  unsigned in_flight_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace accel::serve
